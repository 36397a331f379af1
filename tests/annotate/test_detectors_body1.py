"""Behaviour of the main functions of FM-1.4 (loss_of_history), FM-1.1 (disobey_task) and FM-3.3
(incorrect_verification): exact verdicts, rationales, evidence spans and notes, written to kill
the mutants mutation testing left alive in these bodies."""

from __future__ import annotations

from mastkit.annotate.detectors._base import detector_for
from mastkit.annotate.model import ModeVerdict
from mastkit.taxonomy import load_taxonomy
from mastkit.traces.model import Trace

from ._tracebuild import T

MAST = load_taxonomy("mast")


def verdict(code: str, trace: Trace) -> ModeVerdict:
    det = detector_for(MAST, code)
    assert det is not None
    return det(trace)


def fm14(t: T, **kw: object) -> ModeVerdict:
    return verdict("FM-1.4", t.build(**kw))


def spans(v: ModeVerdict) -> list[tuple[int, int, str | None]]:
    return [(e.seq_start, e.seq_end, e.note) for e in v.evidence]


def compaction(t: T, subtype: str = "context_compaction") -> T:
    return t.event(kind="system", actor="system", subtype=subtype, content="summary")


# FM-1.4 loss_of_history -------------------------------------------------------------------------


def test_fm14_needs_four_structured_events() -> None:
    t = T().user("hi").say("hello").say("bye")
    v = fm14(t)
    assert (v.verdict, v.rationale, v.source) == (
        "unknown",
        "too few structured events",
        "rule:loss_of_history",
    )
    t.say("done")
    assert fm14(t).rationale == "too short to judge"
    assert fm14(t, segmentation="raw_unsegmented").rationale == "too few structured events"


def test_fm14_absent_from_six_live_events_and_copied_ones_do_not_count() -> None:
    t = T().user("Book a table.").say("Sure.").say("Checking.").say("Found one.").say("Booked.")
    assert fm14(t).rationale == "too short to judge"
    t.say("Enjoy.")
    v = fm14(t)
    assert (v.verdict, v.rationale) == ("absent", "no compaction and nothing asked twice")
    t2 = T().user("Book a table.").say("Sure.").say("Checking.").say("Found one.").say("Booked.")
    t2.event(kind="message", actor="agent", role="assistant", content="Enjoy.", is_copied_context=True)
    assert fm14(t2).rationale == "too short to judge"


def test_fm14_reask_exact_note_quote_and_span() -> None:
    t = T().user("My user id is mia_42, please rebook my flight.").say("Looking it up.")
    t.sh("get_user mia_42").say("What is your user id?")
    v = fm14(t)
    assert v.verdict == "present"
    assert spans(v) == [(0, 4, "asks again for 'user id', given at event 0")]
    assert v.evidence[0].quote == "What is your user id?"
    assert v.rationale == "asks again for 'user id', given at event 0"


def test_fm14_reask_names_the_first_compaction_between() -> None:
    t = T().user("My user id is mia_42, please rebook my flight.").say("Looking it up.")
    compaction(t)
    compaction(t, "context_condensation")
    t.say("Could you provide your user id again?")
    compaction(t)
    v = fm14(t)
    assert spans(v) == [(0, 4, "asks again for 'user id', given at event 0 (context compacted at event 2)")]


def test_fm14_compaction_before_the_given_value_is_not_between() -> None:
    t = T().user("Hello.")
    compaction(t)
    t.user("My user id is mia_42.").say("Looking it up.").say("What is your user id?")
    v = fm14(t)
    assert v.evidence[0].note == "asks again for 'user id', given at event 2"


def test_fm14_only_non_user_messages_with_your_are_asks() -> None:
    # The user asking, or an agent tool call, is no re-ask.
    t = T().user("My user id is mia_42.").say("Looking it up.").user("What is your user id?")
    t.say("Checking.").say("Done.").say("Bye.")
    assert fm14(t).verdict == "absent"
    t2 = T().user("My user id is mia_42.").say("Looking it up.")
    t2.event(kind="reasoning", actor="agent", role="assistant", content="What is your user id?")
    t2.say("Checking.").say("Done.").say("Bye.")
    assert fm14(t2).verdict == "absent"


def test_fm14_filler_only_thing_is_skipped_but_later_asks_in_the_message_count() -> None:
    t = T().user("My user id is mia_42.").say("Looking it up.")
    t.say("What is your the again? What is your user id?").say("ok")
    v = fm14(t)
    assert v.verdict == "present" and v.evidence[0].quote == "What is your user id?"


def test_fm14_at_most_three_words_of_the_thing() -> None:
    t = T().user("My home zip post code: 12345.").say("Looking it up.")
    t.say("What is your home zip post code?").say("ok").say("ok")
    v = fm14(t)
    assert v.evidence[0].note == "asks again for 'home zip post', given at event 0"


def test_fm14_the_value_must_be_given_by_the_user_as_a_statement_before() -> None:
    base = "What is your user id?"
    agent_gave = T().user("Rebook me.").say("Your user id is mia_42.").say("Checking.").say(base)
    assert fm14(agent_gave.say("ok").say("ok")).verdict == "absent"
    question = T().user("My user id is mia_42?").say("Checking.").say("Hm.").say(base)
    assert fm14(question.say("ok").say("ok")).verdict == "absent"
    after = T().user("Rebook me.").say("Checking.").say(base).user("My user id is mia_42.")
    assert fm14(after.say("ok").say("ok")).verdict == "absent"
    # The first user message that gives it is the one named.
    two = T().user("Rebook me.").user("My user id is mia_42.").user("My user id is mia_42.").say("Hm.")
    assert fm14(two.say(base)).evidence[0].note == "asks again for 'user id', given at event 1"


def test_fm14_reask_needs_an_agent_turn_after_the_value() -> None:
    t = T().say("Hi.").say("How can I help?").user("My user id is mia_42.").say("What is your user id?")
    t.say("ok").say("ok")
    assert fm14(t).verdict == "absent"


def test_fm14_user_complaint_exact_note_and_span() -> None:
    t = T().user("Cancel PEP4E0, a family emergency.").say("Looking it up.")
    t.sh("get_reservation PEP4E0").say("What is the reason?")
    t.user("As I mentioned, a family emergency.").say("Cancelled.")
    v = fm14(t)
    assert spans(v) == [(4, 5, "the user has to repeat information given before (event 5)")]
    assert v.evidence[0].quote == "As I mentioned"
    assert v.evidence[0].agent == "agent"


def test_fm14_user_complaint_names_the_last_compaction_before_the_question() -> None:
    t = T().user("Cancel PEP4E0, a family emergency.")
    compaction(t)
    t.say("Looking it up.")
    compaction(t)
    t.say("What is the reason?").user("Like I said, a family emergency.")
    compaction(t)
    t.say("Cancelled.")
    v = fm14(t)
    assert spans(v) == [
        (
            4,
            5,
            "the user has to repeat information given before (event 5) after the context was compacted at event 3",
        )
    ]


def test_fm14_user_complaint_needs_its_hint_word_and_an_agent_asker() -> None:
    # "as mentioned earlier" has no hint verb in this spelling: "As noted" is not a complaint.
    t = T().user("Cancel PEP4E0.").say("Looking it up.").say("What is the reason?")
    t.user("As noted before, an emergency.").say("Cancelled.").say("Bye.")
    assert fm14(t).verdict == "absent"
    # The question was asked by the user themself: no agent asker.
    t2 = T().user("Cancel PEP4E0.").user("Why?").user("I already told you: an emergency.")
    t2.user("ok").user("ok").user("ok")
    assert fm14(t2).verdict == "absent"


def test_fm14_teammate_repeat_exact_note() -> None:
    t = T().user("How tall is the Eiffel Tower?").say("Found: 330 m.", actor="Researcher")
    t.say("Researcher, what figure did you find?", actor="Writer")
    t.say("Same as above: 330 m.", actor="Researcher").say("Draft: 330 m.", actor="Writer")
    v = fm14(t)
    assert spans(v) == [(2, 3, "Researcher has to repeat information given before (event 3)")]
    assert v.evidence[0].quote == "Same as above"


def test_fm14_teammate_repeat_asker_is_the_latest_other_agent_message() -> None:
    # The latest message by another agent asks nothing, though an earlier one did.
    t = T().user("How tall is the Eiffel Tower?").say("Found: 330 m.", actor="Researcher")
    t.say("What figure did you find?", actor="Writer").say("Thinking.", actor="Writer")
    t.say("Same as above: 330 m.", actor="Researcher").say("Draft.", actor="Writer")
    assert fm14(t).verdict == "absent"


def test_fm14_teammate_repeat_needs_an_exchange_before_the_question() -> None:
    t = T().user("How tall is the Eiffel Tower?").say("What unit do you want?", actor="Writer")
    t.say("Same as above: metres.", actor="Researcher").say("ok", actor="Writer").say("ok").say("ok")
    assert fm14(t).verdict == "absent"


def test_fm14_repeated_calls_after_compaction() -> None:
    t = T().user("Rebook.")
    for i in range(6):
        t.call("get_item", item=i).result("ok")
    compaction(t)
    for i in range(6):
        t.call("get_item", item=i).result("ok")
    v = fm14(t)
    assert spans(v) == [(14, 22, "6 completed calls repeated after the compaction at event 13")]
    assert v.rationale == "6 completed calls repeated after the compaction at event 13"


def test_fm14_one_repeated_call_is_not_enough_and_leaves_the_compaction_unknown() -> None:
    t = T().user("Rebook.").call("get_item", item=1).result("ok").call("get_item", item=2).result("ok")
    compaction(t)
    compaction(t, "truncation")
    t.call("get_item", item=1).result("ok").call("get_item", item=3).result("ok").say("Done.")
    v = fm14(t)
    assert (v.verdict, v.rationale) == (
        "unknown",
        "the context was compacted, but no sign that needed history was lost",
    )
    assert v.extra["compactions"] == [5, 6]


def test_fm14_calls_must_be_repeated_after_not_before() -> None:
    t = T().user("Go.").call("a", x=1).result("ok").call("a", x=1).result("ok")
    compaction(t)
    t.call("b").result("ok").say("Done.")
    assert fm14(t).verdict == "unknown"


def test_fm14_system_messages_are_no_compaction() -> None:
    t = T().user("Go.").call("a", x=1).result("ok").system("context compaction").call("a", x=1).result("ok")
    t.call("a", x=1).result("ok")
    assert fm14(t).verdict == "absent"


def test_fm14_several_findings_join_their_notes() -> None:
    t = T().user("My user id is mia_42.").say("Looking it up.").say("What is your user id?")
    t.user("I already told you.").say("Sorry.")
    v = fm14(t)
    assert v.rationale == (
        "asks again for 'user id', given at event 0; "
        "the user has to repeat information given before (event 3)"
    )
