"""The user-side signals that compare the simulated user with its own instructions or its last word:
``user_withholds`` and ``user_ends_on_yes``, alone and inside the rules."""

from __future__ import annotations

import pytest

from mastkit.attribute import heuristics as h
from mastkit.attribute.rule_attributor import CONFIDENCE, attribute_by_rules
from mastkit.traces.model import Termination

from .test_heuristics import call, result, say, seq_of, trace

GOAL = "You are ivan_rossi_8555. You want to change your flight from EWR on May 21 to a nonstop one."
ASKED = [
    say(0, "user", "Hi, I need to change my flight from EWR on May 21 to a nonstop one."),
    say(1, "assistant", "I can help. Could you please provide your user ID and reservation ID?"),
]


def test_a_user_who_says_it_lacks_the_id_its_instructions_give_is_blamed() -> None:
    events = [*ASKED, say(2, "user", "I'm sorry, I don't have my user ID with me right now.")]
    found = h.user_withholds(events, GOAL)
    assert found is not None and (found.agent, found.step.seq, found.signal) == ("user", 2, "user_withholds")
    assert found.reason == (
        "the user says it lacks its user identifier, which its instructions give (ivan_rossi_8555)"
    )
    # a pronoun points back at what the question asked for
    those = [*ASKED, say(2, "user", "Sorry, I don't have those with me. Is there another way?")]
    assert seq_of(h.user_withholds(those, GOAL)) == 2
    # "Your user id is X" names the kind as plainly as "You are X"
    tau2 = "Known info: Your name is Ivan Rossi.\nYour user id is ivan_rossi_8555."
    assert seq_of(h.user_withholds([*ASKED, say(2, "user", "I can't find my user id.")], tau2)) == 2
    # and the rules put it first: nothing else was tried
    t = trace(*events, say(3, "assistant", "I need your user ID to continue. Anything else?"))
    a = attribute_by_rules(t.model_copy(update={"task": GOAL}))
    assert (a.agent, a.step, a.confidence) == ("user", 2, CONFIDENCE["user_withholds"])
    assert (a.reason or "").startswith("user_withholds: the user says")
    assert attribute_by_rules(t).agent == "assistant"  # no instructions, no user blame


@pytest.mark.parametrize(
    "reply",
    [
        "I don't have the reservation ID on me.",  # true: the goal gives no reservation id
        "My user ID is ivan_rossi_8555, but I don't know the reservation number.",  # it gave it
        "Sure, it's ivan_rossi_8555.",  # no claim of lacking anything
        "I don't have the dates handy.",  # a kind the goal's identifier is not
    ],
)
def test_no_withholding_when_the_user_truly_lacks_it_or_gives_it(reply: str) -> None:
    assert h.user_withholds([*ASKED, say(2, "user", reply)], GOAL) is None


def test_no_withholding_without_a_question_a_goal_or_when_something_was_written() -> None:
    lacks = say(2, "user", "I don't have my user ID.")
    assert h.user_withholds([*ASKED, lacks], None) is None
    assert h.user_withholds([*ASKED, lacks], "You want a nonstop flight.") is None  # no identifier
    # the agent did not ask anything before the claim
    told = [ASKED[0], say(1, "assistant", "Nonstop flights are listed below."), lacks]
    assert h.user_withholds(told, GOAL) is None
    # something was written: the run went its way elsewhere
    wrote = [*ASKED, lacks, call(3, "update_reservation_flights", reservation_id="X1Y2Z3"), result(4, "ok")]
    assert h.user_withholds(wrote, GOAL) is None
    # the user says its id later in the run: nothing was withheld in the end
    later = [*ASKED, lacks, say(3, "assistant", "Can you look?"), say(4, "user", "Found it: ivan_rossi_8555")]
    assert h.user_withholds(later, GOAL) is None


PROPOSED = [
    say(0, "user", "Please fix the passenger name on 3RK2T9 to Mei Garcia."),
    say(1, "assistant", "I will change the name to Mei Garcia. Do you confirm this update (yes/no)?"),
]


def test_a_user_who_approves_and_ends_in_one_message_is_blamed() -> None:
    events = [*PROPOSED, say(2, "user", "Yes, please go ahead. ###STOP###")]
    found = h.user_ends_on_yes(events)
    assert found is not None and (found.agent, found.step.seq, found.signal) == (
        "user",
        2,
        "user_ends_on_yes",
    )
    assert found.reason == "the user approves event 1 and ends the run before it is done"
    assert seq_of(h.user_ends_on_yes(events, ended_by="user")) == 2
    assert seq_of(h.user_ends_on_yes(events, ended_by="unknown")) == 2
    # the agent's own look-ups after its question do not hide the question
    looked = [
        *PROPOSED,
        call(2, "get_reservation_details", reservation_id="3RK2T9"),
        result(3, "{}"),
        events[2],
    ]
    assert seq_of(h.user_ends_on_yes(looked)) == events[2].seq
    a = attribute_by_rules(trace(*events))
    assert (a.agent, a.step, a.confidence) == ("user", 2, CONFIDENCE["user_ends_on_yes"])
    # a limit cut the run: the user did not end it
    assert h.user_ends_on_yes(events, ended_by="limit") is None
    cut = trace(*events).model_copy(update={"termination": Termination(reason="max_steps", by="limit")})
    assert attribute_by_rules(cut).agent == "assistant"


@pytest.mark.parametrize(
    "ask",
    [
        "Shall I proceed with the change?",
        "Just let me know how you'd like to proceed!",
        "Does everything look correct?",
        "Please confirm and I'll book it.",
    ],
)
def test_approval_requests(ask: str) -> None:
    events = [PROPOSED[0], say(1, "assistant", ask), say(2, "user", "Yes, that's right.")]
    assert seq_of(h.user_ends_on_yes(events)) == 2


@pytest.mark.parametrize(
    ("ask", "reply"),
    [
        # a report, not a request for approval
        ("I'm pleased to confirm the change is done.", "Thanks, that's great!"),
        # approving a hand-off ends the conversation by design
        ("I can't do that. Shall I transfer you to a human agent?", "Sure. ###TRANSFER###"),
        # approval words and a question, but in different sentences
        ("I'm pleased to confirm the change. Anything else?", "Yes, that's all, thanks."),
        # the user says no
        ("Shall I proceed with the change?", "No, don't proceed yet."),
        # a question that asks for information, not approval
        ("What is your user ID?", "Yes, it is ivan_rossi_8555."),
    ],
)
def test_no_blame_for_a_report_a_handoff_a_no_or_an_information_question(ask: str, reply: str) -> None:
    events = [PROPOSED[0], say(1, "assistant", ask), say(2, "user", reply)]
    assert h.user_ends_on_yes(events) is None


def test_no_blame_when_the_run_does_not_end_on_the_user() -> None:
    events = [
        *PROPOSED,
        say(2, "user", "Yes."),
        call(3, "update_reservation_passengers", reservation_id="3RK2T9"),
    ]
    assert h.user_ends_on_yes(events) is None
    assert h.user_ends_on_yes([]) is None
    assert h.user_ends_on_yes([say(0, "user", "Yes, proceed.")]) is None  # no agent message before it
    # the agent's question may open the log
    assert seq_of(h.user_ends_on_yes([say(0, "assistant", "Shall I proceed?"), say(1, "user", "Yes.")])) == 1


def test_withholding_edges() -> None:
    lacks = say(2, "user", "I don't have my user ID.")
    # the first claim came before any question; a later one, after a question, counts
    early = [
        say(0, "user", "I don't have my user ID, sorry."),
        say(1, "assistant", "Could you please provide your user ID?"),
        say(3, "user", "I don't know my user ID."),
    ]
    assert seq_of(h.user_withholds(early, GOAL)) == 3
    # a claim with nothing at all before it, or only the user's own question before it
    assert h.user_withholds([lacks], GOAL) is None
    own = [say(0, "assistant", "Hello."), say(1, "user", "Can you check it?"), lacks]
    assert h.user_withholds(own, GOAL) is None
    # only the question's own sentences say what "that" refers to
    asked = say(1, "assistant", "Your user profile is locked. Could you give me the reservation code?")
    assert h.user_withholds([ASKED[0], asked, say(2, "user", "I don't have that.")], GOAL) is None
    # the reason names every kind the claim and the instructions share
    both = h.user_withholds([*ASKED, say(2, "user", "I can't find my user account.")], GOAL)
    assert both is not None and "lacks its account user identifier" in both.reason


@pytest.mark.parametrize(
    ("goal", "reply", "fires"),
    [
        # one-letter words say nothing ("a")
        ("You have a pass: a1b2c3d4.", "Sorry, I don't have a clue.", False),
        # two-letter kinds count ("PO")
        ("Your PO is PO123456.", "I don't have the PO.", True),
        # what a sentence before the identifier's own says is not its kind
        ("You want your user id. HAT12345 is your flight.", "I don't have my user ID.", False),
        # only the four words before the identifier say its kind
        ("Your user login code for today is X1234567.", "I don't have my login.", False),
        # "you are" adds the identity words to the words before it, it does not replace them
        ("As the booking owner you are owner_1234.", "I don't have the booking code.", True),
    ],
)
def test_what_kind_of_identifier_the_instructions_give(goal: str, reply: str, fires: bool) -> None:
    events = [*ASKED, say(2, "user", reply)]
    assert (h.user_withholds(events, goal) is not None) is fires
