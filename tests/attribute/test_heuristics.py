"""The single attribution heuristics and how the rules combine them, on small hand-built traces.

The traces follow the shape of a policy-following customer-service run: a system prompt, a
(simulated) user, an agent that calls tools, tool results.
"""

from __future__ import annotations

from typing import Any

import pytest

from mastkit.attribute import heuristics as h
from mastkit.attribute.rule_attributor import attribute_by_rules, decision_step
from mastkit.traces.model import Event, Outcome, ToolCall, ToolResult, Trace


def say(seq: int, actor: str, text: str) -> Event:
    role = {"user": "user", "system": "system"}.get(actor, "assistant")
    return Event(seq=seq, kind="message", actor=actor, role=role, content=text)


def call(seq: int, name: str, **args: Any) -> Event:
    tc = ToolCall(name=name, call_id=f"c{seq}", arguments=args)
    return Event(seq=seq, kind="tool_call", actor="assistant", role="assistant", tool_call=tc)


def result(seq: int, output: str, *, error: bool | None = None) -> Event:
    tr = ToolResult(call_id=f"c{seq - 1}", output=output, is_error=error)
    return Event(seq=seq, kind="tool_result", actor="environment", role="tool", tool_result=tr)


def trace(*events: Event) -> Trace:
    return Trace(trace_id="t", source_format="test", events=list(events))


def seq_of(found: h.Finding | None) -> int | None:
    return None if found is None else found.step.seq


# -- which tools write --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "writes"),
    [
        ("update_reservation_flights", True),
        ("cancel_reservation", True),
        ("bookFlight", True),
        ("send_certificate", True),
        ("transfer_to_human_agents", True),
        ("file_write", True),
        ("get_reservation_details", False),
        ("search_direct_flight", False),
        ("calculate", False),
        ("think", False),
        ("list_all_airports", False),
        ("bookkeeping_report", False),  # whole words only
        # state changes outside airline booking: telecom, SRE, admin tools
        ("enable_roaming", True),
        ("suspendLine", True),
        ("rollback_deployment", True),
        ("scale_service", True),
        ("grant_access", True),
        ("run_speed_test", False),
        ("check_network_status", False),
    ],
)
def test_write_tools_are_named_with_a_write_verb(name: str, writes: bool) -> None:
    assert h.is_write_tool(name) is writes


# -- first state-changing action ----------------------------------------------------------------------

BOOKING = [
    say(0, "system", "Airline policy. Cabins: economy, business."),
    say(1, "user", "Please look at reservation ABC123, my user id is mia_1."),
    call(2, "get_reservation_details", reservation_id="ABC123"),
    result(3, '{"reservation_id": "ABC123", "cabin": "economy"}'),
]


def test_first_write_is_the_first_write_that_took_effect() -> None:
    t = [
        *BOOKING,
        call(4, "cancel_reservation", reservation_id="ABC123"),
        result(5, "Error: reservation cannot be cancelled now"),
        call(6, "cancel_reservation", reservation_id="ABC123"),
        result(7, '{"status": "cancelled"}'),
    ]
    assert seq_of(h.first_write(t)) == 6
    assert seq_of(h.first_write(t[:6])) == 4  # none took effect: the first attempted
    assert (h.first_write(t[:6]) or h.Finding("x", t[0], "")).reason.endswith("(failed)")
    assert h.first_write_attempt(t) is t[4]
    assert h.first_write(BOOKING) is None and h.first_write_attempt(BOOKING) is None


# -- first unresolved tool error ----------------------------------------------------------------------


def test_an_error_redone_successfully_is_resolved() -> None:
    failing = [*BOOKING, call(4, "cancel_reservation", reservation_id="ABC123"), result(5, "Error: busy")]
    assert seq_of(h.first_unresolved_error(failing)) == 4
    assert seq_of(h.first_error(failing)) == 4
    redone = [*failing, call(6, "cancel_reservation", reservation_id="ABC123"), result(7, "done")]
    assert h.first_unresolved_error(redone) is None
    assert seq_of(h.first_error(redone)) == 4  # the plain signal still sees it
    # a retry that fails again, or a different tool that succeeds, does not resolve it
    again = [*failing, call(6, "cancel_reservation", reservation_id="ABC123"), result(7, "Error: busy")]
    assert seq_of(h.first_unresolved_error(again)) == 4
    other = [*failing, call(6, "get_reservation_details", reservation_id="ABC123"), result(7, "{}")]
    assert seq_of(h.first_unresolved_error(other)) == 4


def test_an_executor_error_is_resolved_by_a_clean_run_of_the_same_agent() -> None:
    failing = [
        say(0, "user", "compute it"),
        say(1, "Coder", "```python\nprint(1/0)\n```"),
        say(2, "Computer_terminal", "exitcode: 1 (execution failed)"),
    ]
    assert seq_of(h.first_unresolved_error(failing)) == 1
    fixed = [
        *failing,
        say(3, "Coder", "```python\nprint(1)\n```"),
        say(4, "Computer_terminal", "exitcode: 0\n1"),
    ]
    assert h.first_unresolved_error(fixed) is None
    other = [
        *failing,
        say(3, "Checker", "```python\nprint(2)\n```"),
        say(4, "Computer_terminal", "exitcode: 0"),
    ]
    assert seq_of(h.first_unresolved_error(other)) == 1


# -- acting on an unverified assumption ---------------------------------------------------------------


def test_a_write_with_a_value_nobody_gave_is_unverified() -> None:
    grounded = [*BOOKING, call(4, "cancel_reservation", reservation_id="ABC123")]
    assert h.unverified_action(grounded) is None
    invented = [*BOOKING, call(4, "cancel_reservation", reservation_id="XYZ999")]
    found = h.unverified_action(invented)
    assert seq_of(found) == 4 and found is not None
    assert found.reason == "cancel_reservation uses reservation_id='XYZ999', which nobody stated before"
    # the agent's own words do not verify a value
    claimed = [
        *BOOKING,
        say(4, "assistant", "I will cancel XYZ999."),
        call(5, "cancel_reservation", reservation_id="XYZ999"),
    ]
    assert seq_of(h.unverified_action(claimed)) == 5


def test_numbers_match_whole_and_read_calls_are_not_checked() -> None:
    paid = [*BOOKING, call(4, "calculate", expression="250 + 55"), result(5, "305.0")]
    assert h.unverified_action([*paid, call(6, "pay_invoice", amount=305)]) is None
    assert h.unverified_action([*paid, call(6, "pay_invoice", amount=305.0)]) is None
    assert seq_of(h.unverified_action([*paid, call(6, "pay_invoice", amount=30)])) == 6  # not part of 305
    assert h.unverified_action([*BOOKING, call(4, "search_direct_flight", date="2031-01-01")]) is None
    assert (
        seq_of(
            h.unverified_action([*BOOKING, call(4, "search_flight", date="2031-01-01")], writes_only=False)
        )
        == 4
    )
    # enumerations written with underscores match their spelled-out form
    assert (
        h.unverified_action(
            [*BOOKING, say(4, "user", "one way please"), call(5, "book_trip", kind="one_way")]
        )
        is None
    )


# -- the simulated user as the responsible agent ------------------------------------------------------

DECLINED = [
    *BOOKING,
    say(4, "user", "Actually, please remove my friend from ABC123."),
    say(5, "assistant", "I'm unable to remove a passenger from a reservation."),
    say(6, "user", "Then just cancel the whole reservation ABC123."),
    say(7, "assistant", "Shall I cancel ABC123?"),
    say(8, "user", "Yes."),
    call(9, "cancel_reservation", reservation_id="ABC123"),
    result(10, '{"status": "cancelled"}'),
]


def test_a_user_who_changes_the_request_after_a_refusal_is_blamed() -> None:
    found = h.user_pivot(DECLINED)
    assert seq_of(found) == 6 and found is not None and found.agent == "user"
    assert found.signal == "user_pivot"
    assert (
        found.reason
        == "after the agent declined at event 5, the user asks for cancel_reservation (done at 9)"
    )
    # the rules no longer use it (1 of 5 right on blind tau runs): the agent's proposal is blamed
    a = attribute_by_rules(trace(*DECLINED))
    assert (a.agent, a.step) == ("assistant", 7)
    assert a.reason is not None and a.reason.startswith("first_write: ")


def test_no_user_blame_when_the_request_is_not_new_or_not_carried_out() -> None:
    # the user asked to cancel before the refusal: the same request, not a change
    asked_before = [DECLINED[0], say(1, "user", "Cancel ABC123 or remove my friend."), *DECLINED[2:]]
    assert h.user_pivot(asked_before) is None
    # the write failed: nothing was carried out
    failed = [*DECLINED[:-1], result(10, "Error: cannot cancel")]
    assert h.user_pivot(failed) is None
    # no refusal before the request
    polite = [*DECLINED[:5], say(5, "assistant", "Sure, let me look."), *DECLINED[6:]]
    assert h.user_pivot(polite) is None
    # the request comes more than three user turns after the refusal
    late = [
        *DECLINED[:6],
        say(6, "user", "Hmm."),
        say(7, "assistant", "Anything else?"),
        say(8, "user", "Let me think."),
        say(9, "assistant", "Take your time."),
        say(10, "user", "Still thinking."),
        say(11, "assistant", "OK."),
        say(12, "user", "Then just cancel the whole reservation ABC123."),
        call(13, "cancel_reservation", reservation_id="ABC123"),
        result(14, "done"),
    ]
    assert h.user_pivot(late) is None
    assert seq_of(h.user_pivot(late, window=4)) == 12


def test_a_plan_stated_before_the_refusal_is_not_a_change_of_mind() -> None:
    booked = [
        say(0, "system", "You are an airline agent."),
        say(1, "user", "Please remove my friend from ABC123. If not, I'll cancel and rebook it myself."),
        say(2, "assistant", "I'm unable to remove a passenger from a reservation."),
        say(3, "user", "Then book me a new flight to Boston."),
        call(4, "book_reservation", destination="Boston"),
        result(5, '{"status": "booked"}'),
    ]
    assert h.user_pivot(booked) is None
    # the same run without the plan: the booking request is new
    fresh = [booked[0], say(1, "user", "Please remove my friend from ABC123."), *booked[2:]]
    assert seq_of(h.user_pivot(fresh)) == 3
    # "re" + a verb whose meaning changes ("remove" is not "move") is not a mention of it
    moved = [
        booked[0],
        say(1, "user", "Please remove my friend from ABC123."),
        booked[2],
        say(3, "user", "Then move me to the later flight."),
        call(4, "update_reservation_flights", reservation_id="ABC123"),
        result(5, '{"status": "updated"}'),
    ]
    assert seq_of(h.user_pivot(moved)) == 3


# -- the user disputes a record ----------------------------------------------------------------------

LOOKED_UP = [
    say(0, "system", "You are an airline agent."),
    say(1, "user", "My user id is raj_1 and the reservation is VA5SGQ."),
    call(2, "get_reservation_details", reservation_id="VA5SGQ"),
    result(3, '{"origin": "DTW", "destination": "LGA", "flights": ["DTW-PHX HAT035", "PHX-LGA HAT066"]}'),
    say(4, "assistant", "Your trip goes DTW to PHX to LGA on HAT035 and HAT066."),
    say(5, "user", "I think there's a mix-up. My flights are from DTW to LGA, not through PHX."),
    say(6, "assistant", "Shall I transfer you to a human agent?"),
    say(7, "user", "Yes."),
    call(8, "transfer_to_human_agents", summary="itinerary dispute"),
    result(9, "Transfer successful"),
]


def test_a_user_who_disputes_the_record_it_was_shown_is_blamed() -> None:
    found = h.user_dispute(LOOKED_UP)
    assert found is not None and (found.agent, found.step.seq) == ("user", 5)
    assert found.signal == "user_dispute"
    assert found.reason == "the user disputes the record looked up before it, naming DTW"
    a = attribute_by_rules(trace(*LOOKED_UP))
    assert (a.agent, a.step, a.confidence) == ("user", 5, 0.5)
    assert a.reason == "user_dispute: the user disputes the record looked up before it, naming DTW"


@pytest.mark.parametrize(
    "words",
    [
        "That's not right, it should be DTW to LGA.",
        "This is wrong: DTW to LGA only.",
        "There must be a mistake, DTW to LGA only.",
        "The itinerary is incorrect, DTW to LGA only.",
        "It doesn't look right, DTW to LGA only.",
        "We have a misunderstanding about DTW.",
    ],
)
def test_dispute_phrasings(words: str) -> None:
    disputed = [*LOOKED_UP[:5], say(5, "user", words), *LOOKED_UP[6:]]
    assert seq_of(h.user_dispute(disputed)) == 5


def test_no_user_blame_for_a_dispute_without_a_record_behind_it() -> None:
    # no dispute words
    calm = [*LOOKED_UP[:5], say(5, "user", "Great, DTW to LGA then."), *LOOKED_UP[6:]]
    assert h.user_dispute(calm) is None
    # the user names nothing the record holds
    vague = [*LOOKED_UP[:5], say(5, "user", "I think there's a mix-up with my trip."), *LOOKED_UP[6:]]
    assert h.user_dispute(vague) is None
    # the lookup failed: the agent's account had no record behind it
    failed = [*LOOKED_UP[:3], result(3, "Error: reservation VA5SGQ not found, DTW"), *LOOKED_UP[4:]]
    assert h.user_dispute(failed) is None
    # the record was read before the user's previous message: not what the dispute answers
    earlier = [*LOOKED_UP[:5], say(5, "user", "Ok."), say(6, "assistant", "Anything else?"),
               say(7, "user", "There's a mix-up: not through PHX."), *LOOKED_UP[6:]]  # fmt: skip
    assert h.user_dispute(earlier) is None
    # a token the record shows only as part of a longer word does not count
    partial = [*LOOKED_UP[:5], say(5, "user", "There's a mix-up: not HAT03."), *LOOKED_UP[6:]]
    assert h.user_dispute(partial) is None


def test_a_user_who_corrects_the_agent_with_the_record_is_not_blamed() -> None:
    # tau2 telecom: the agent picked the wrong line; the user's correction names its own number,
    # which the record shows but the agent did not say, and shares only a prefix with what it said
    lines = '{"lines": [{"id": "L1001", "phone": "555-123-2001"}, {"id": "L1002", "phone": "555-123-2002"}]}'
    events = [
        say(0, "user", "My data does not work. My number is 555-123-2002."),
        call(1, "get_customer_lines", customer_id="C1001"),
        result(2, lines),
        say(3, "assistant", "I enabled roaming on your line 555-123-2001."),
        say(4, "user", "That's not right: my number is 555-123-2002."),
    ]
    assert h.user_dispute(events) is None
    # the dispute must name what the agent relayed: the same words about the line it did say
    relayed = [*events[:4], say(4, "user", "That's not right, 555-123-2001 is not my line.")]
    assert seq_of(h.user_dispute(relayed)) == 4
    # a date is one token: a shared year is no match
    dated = [
        *events[:2],
        result(2, '{"created": "2024-05-14", "flights": [{"date": "2024-05-20"}]}'),
        say(3, "assistant", "Your flight is on 2024-05-20."),
        say(4, "user", "That's wrong, I booked it on 2024-05-01."),
    ]
    assert h.user_dispute(dated) is None


ASKED = [
    say(0, "assistant", "Hi! How can I help you today?"),
    say(1, "user", "My flight was delayed and I want compensation."),
    say(2, "assistant", "I'm sorry to hear that. What is your user id and the flight date?"),
    say(3, "user", "###OUT-OF-SCOPE###"),
]


def test_a_user_who_ends_the_run_instead_of_answering_is_blamed() -> None:
    found = h.user_quit(ASKED)
    assert found is not None and (found.agent, found.step.seq, found.signal) == ("user", 3, "user_quit")
    assert found.reason == "the user ends the run instead of answering event 2"
    # not in the rules' order (right once in four firings on runs it was not written from)
    a = attribute_by_rules(trace(*ASKED))
    assert (a.agent, a.step) == ("assistant", 2) and (a.reason or "").startswith("first_action")
    # the agent's own look-ups between its question and the user's exit do not matter
    looked = [*ASKED[:3], call(3, "get_user_details", user_id="x"), result(4, "{}"), say(5, "user", "Bye.")]
    assert seq_of(h.user_quit(looked)) == 5


def test_no_user_quit_when_the_agent_did_not_ask_or_already_acted() -> None:
    # the agent answered instead of asking
    told = [*ASKED[:2], say(2, "assistant", "You will get a $50 certificate."), ASKED[3]]
    assert h.user_quit(told) is None
    # the run does not end on the user
    after = [*ASKED, say(4, "assistant", "Goodbye?")]
    assert h.user_quit(after) is None
    # something was written: the write, not the exit, is where the run went its way
    wrote = [*ASKED[:2], call(2, "send_certificate", user_id="x"), result(3, "sent"), *ASKED[2:]]
    assert h.user_quit(wrote) is None
    # the user's only message opens the run: nothing to answer yet
    opening = [say(0, "assistant", "Hi! What can I do for you?"), say(1, "user", "Nothing, bye.")]
    assert h.user_quit(opening) is None
    # no agent message at all
    assert h.user_quit([say(0, "user", "Hi"), say(1, "user", "Anyone?")]) is None
    assert h.user_quit([]) is None


# -- how the rules combine the write heuristics -------------------------------------------------------


def test_a_confirmed_write_is_blamed_where_the_agent_proposed_it() -> None:
    proposed = [
        *BOOKING,
        say(4, "assistant", "I will cancel ABC123. Confirm?"),
        say(5, "user", "yes, go ahead"),
    ]
    t = [*proposed, call(6, "cancel_reservation", reservation_id="ABC123"), result(7, "done")]
    assert decision_step(t, t[6]) is t[4]
    a = attribute_by_rules(trace(*t))
    assert (a.agent, a.step, a.confidence) == ("assistant", 4, 0.57)
    assert (
        a.reason
        == "first_write: first state-changing action cancel_reservation at event 6, decided at event 4"
    )
    # the user did not confirm: the write is its own decision
    unconfirmed = [*BOOKING, say(4, "assistant", "Anything else?"), say(5, "user", "My dog is ill.")]
    t2 = [*unconfirmed, call(6, "cancel_reservation", reservation_id="ABC123"), result(7, "done")]
    assert decision_step(t2, t2[6]) is t2[6] and attribute_by_rules(trace(*t2)).step == 6
    assert (
        attribute_by_rules(trace(*t2)).reason
        == "first_write: first state-changing action cancel_reservation at event 6"
    )
    # two user turns between proposal and write: the write
    twice = [*proposed, say(6, "user", "yes really"), call(7, "cancel_reservation", reservation_id="ABC123")]
    assert decision_step(twice, twice[7]) is twice[7]
    # the agent's own look-ups and their results between proposal and write are skipped
    looked = [*proposed, call(6, "get_reservation", reservation_id="ABC123"), result(7, "ABC123: 2 seats")]
    t3 = [*looked, call(8, "cancel_reservation", reservation_id="ABC123")]
    assert decision_step(t3, t3[8]) is t3[4]


def test_a_greeting_before_the_users_request_is_not_a_proposal() -> None:
    # tau2-bench opens with the agent's greeting; "yeah, I need ..." reads as a yes
    greeted = [
        say(0, "assistant", "Hi! How can I help you today?"),
        say(1, "user", "Hi, yeah, I need to remove a passenger from ABC123."),
        call(2, "transfer_to_human_agents", summary="remove a passenger"),
        result(3, "Transfer successful"),
    ]
    assert decision_step(greeted, greeted[2]) is greeted[2]
    a = attribute_by_rules(trace(*greeted))
    assert (a.agent, a.step) == ("assistant", 2)
    # the same greeting once the user has spoken is a message like any other
    later = [say(0, "user", "Hello?"), *greeted]
    assert decision_step(later, later[3]) is later[1]
    # a run without a user: the agent's stated plan is the decision
    alone = [
        say(0, "assistant", "I will cancel ABC123 now."),
        call(1, "cancel_reservation", reservation_id="ABC123"),
    ]
    assert decision_step(alone, alone[1]) is alone[0]


def test_an_unverified_write_is_blamed_itself() -> None:
    t = [
        *BOOKING,
        say(4, "assistant", "I will send you a certificate. OK?"),
        say(5, "user", "ok"),
        call(6, "send_certificate", user_id="mia_1", amount=200),
        result(7, "sent"),
    ]
    a = attribute_by_rules(trace(*t))
    assert (a.agent, a.step) == ("assistant", 6)
    assert a.reason == "unverified: send_certificate uses amount='200', which nobody stated before"


def test_an_error_comes_before_the_first_write() -> None:
    t = [
        *BOOKING,
        call(4, "get_flight_status", flight="HAT1"),
        result(5, "Error: unknown flight"),
        call(6, "cancel_reservation", reservation_id="ABC123"),
        result(7, "done"),
    ]
    assert attribute_by_rules(trace(*t)).step == 4


# -- blinding -----------------------------------------------------------------------------------------


def test_the_rules_do_not_read_the_grade() -> None:
    t = trace(*DECLINED)
    graded = t.model_copy(
        update={
            "outcome": Outcome(
                success=True, score=1.0, final_output="all done", ground_truth="cancel ABC123"
            ),
            "raw": {"reward": 1.0, "info": {"actions": [{"name": "cancel_reservation"}]}},
            "task": "You are mia_1. You never want to cancel.",
        }
    )
    assert attribute_by_rules(graded) == attribute_by_rules(t)
    assert h.blind(graded).outcome is None and h.blind(graded).raw is None and h.blind(graded).task is None


def test_the_detectors_see_a_blinded_trace(monkeypatch: pytest.MonkeyPatch) -> None:
    """A detector that would fire only on a graded trace never fires in ``detector_finding``."""
    from mastkit.annotate.detectors import _base
    from mastkit.annotate.model import Evidence, ModeVerdict

    seen: list[Trace] = []

    def peeking(t: Trace) -> ModeVerdict:
        seen.append(t)
        if t.outcome is not None or t.raw is not None or t.task is not None:
            return _base.present("FM-9.9", "peek", [Evidence(seq_start=2, seq_end=2, note="peek")], "peek")
        return _base.unknown("FM-9.9", "peek", "nothing")

    _base.detectors()  # discover the real ones first
    peek = _base.Detector("FM-9.9", "peek", peeking, "")
    monkeypatch.setitem(_base._DETECTORS, peek.key, peek)
    quiet = trace(say(0, "user", "task"), say(1, "Planner", "plan it"), say(2, "Coder", "did it"))
    graded = quiet.model_copy(update={"outcome": Outcome(success=False), "raw": {"reward": 0}, "task": "t"})
    assert h.detector_finding(graded, h.live_events(graded)) is None
    assert attribute_by_rules(graded) == attribute_by_rules(quiet)
    assert seen and all(t.outcome is None and t.raw is None and t.task is None for t in seen)


def test_every_record_since_the_users_previous_message_counts_whole() -> None:
    told = say(6, "assistant", "Your flights go through PHX and DTW.")
    two = [
        *LOOKED_UP[:2],
        call(2, "get_flight", number="HAT035"),
        result(3, "route PHX DTW"),
        call(4, "get_flight", number="HAT066"),
        result(5, "route PHX LGA"),
        told,
        say(7, "user", "There's a mix-up: not DTW."),
    ]
    # DTW ends the first record; joined with the second it must stay a token of its own
    assert seq_of(h.user_dispute(two)) == 7
    # a record that opens the log, before any user message, is read too
    opening = [
        result(0, "route DTW PHX"),
        say(1, "assistant", "It is DTW."),
        say(2, "user", "That's wrong, not DTW."),
    ]
    assert seq_of(h.user_dispute(opening)) == 2
    # a tool output kept as plain content (no tool_result object) is a record as well
    plain = [say(0, "user", "Check R1."), Event(seq=1, kind="tool_result", actor="tool", role="tool",
             content="route DTW PHX"), say(2, "assistant", "DTW it is."),
             say(3, "user", "That's wrong, not DTW.")]  # fmt: skip
    assert seq_of(h.user_dispute(plain)) == 3
    # an empty output names nothing
    empty = [say(0, "user", "Check R1."), result(1, ""), say(2, "assistant", "XXXX."),
             say(3, "user", "That's wrong, not XXXX.")]  # fmt: skip
    assert h.user_dispute(empty) is None
    # no agent message since the user's last one: nothing was relayed
    assert h.user_dispute([result(0, "route XXXX PHX"), say(1, "user", "That's wrong, not XXXX.")]) is None
    # the agent relayed it before looking again: its message still counts
    again = [say(0, "user", "Check R1."), say(1, "assistant", "It goes through DTW."), call(2, "get_route"),
             result(3, "route DTW PHX"), say(4, "user", "That's wrong, not DTW.")]  # fmt: skip
    assert seq_of(h.user_dispute(again)) == 4
    # the agent repeats a token of a record read before the user's previous message: no new record
    repeated = [*LOOKED_UP[:5], say(5, "user", "Ok."), say(6, "assistant", "So PHX then. Anything else?"),
                say(7, "user", "There's a mix-up: not through PHX.")]  # fmt: skip
    assert h.user_dispute(repeated) is None
    # the agent relayed it before the user's last message, then looked again and said nothing
    stale = [say(0, "user", "Check R1."), say(1, "assistant", "It is DTW."), say(2, "user", "Look again."),
             call(3, "get_route"), result(4, "route DTW PHX"), say(5, "user", "That's wrong, not DTW.")]  # fmt: skip
    assert h.user_dispute(stale) is None
    # the record shows it but the agent did not say it: the user is not disputing what it was told
    unsaid = [*two[:6], say(6, "assistant", "Your flights go through PHX."), two[7]]
    assert h.user_dispute(unsaid) is None


def test_a_users_own_failed_tool_call_is_not_an_agent_error() -> None:
    # tau2-bench telecom: the user runs tools on its phone; a failed speed test reports the
    # device's state to the user, it is no agent's failed action
    def user_call(seq: int, name: str) -> Event:
        tc = ToolCall(name=name, call_id=f"c{seq}", arguments={})
        return Event(seq=seq, kind="tool_call", actor="user", role="user", tool_call=tc)

    events = [
        say(0, "user", "My mobile data does not work."),
        say(1, "assistant", "Please run a speed test and tell me what it says."),
        user_call(2, "run_speed_test"),
        result(3, "Speed test failed: No Connection.", error=True),
        say(4, "user", "It failed."),
    ]
    assert h.first_error(events) is None and h.first_bad_result(events) is None
    assert h.first_unresolved_error(events) is None and h.acting_step(events, 3) is None
    # the same result after the agent's own call is the agent's
    agent = [*events[:2], call(2, "run_speed_test"), *events[3:]]
    found = h.first_error(agent)
    assert found is not None and found.step.seq == 2 and found.agent == "assistant"
