"""Behaviour of FM-2.1 (conversation_reset), FM-2.5 (ignored_input), FM-2.4
(information_withholding), FM-2.2 (no_clarification) and FM-1.3 (step_repetition), helpers and
main functions: exact verdicts, rationales, evidence spans and notes, written to kill the mutants
mutation testing left alive in these modules."""

from __future__ import annotations

from typing import Any

import pytest

from mastkit.annotate.detectors._base import detector_for
from mastkit.annotate.model import ModeVerdict
from mastkit.taxonomy import load_taxonomy
from mastkit.traces.model import ToolCall, ToolResult

from ._tracebuild import T, verdict

MAST = load_taxonomy("mast")

_NAMES = {
    "FM-2.1": "conversation_reset",
    "FM-2.5": "ignored_input",
    "FM-2.4": "information_withholding",
    "FM-2.2": "no_clarification",
    "FM-1.3": "step_repetition",
}


def test_each_detector_is_registered_under_its_rule_name() -> None:
    assert {code: detector_for(MAST, code).name for code in _NAMES} == _NAMES  # type: ignore[union-attr]


def spans(v: ModeVerdict) -> list[tuple[int | None, int | None, str | None]]:
    return [(e.seq_start, e.seq_end, e.note) for e in v.evidence]


def quotes(v: ModeVerdict) -> list[str | None]:
    return [e.quote for e in v.evidence]


# FM-2.1 conversation_reset ----------------------------------------------------------------------

PROMPT = "Write a parser for ISO dates that returns the weekday."  # 54 characters
RESET_ABSENT = "the task is issued once and nobody starts over"


def fm21(t: T, **kw: Any) -> ModeVerdict:
    return verdict("FM-2.1", t.build(**kw))


def test_fm21_needs_four_structured_events() -> None:
    t = T().user("hi").say("hello").say("bye")
    v = fm21(t)
    assert (v.verdict, v.rationale) == ("unknown", "too few structured events")
    t.say("done")
    assert (fm21(t).verdict, fm21(t).rationale) == ("unknown", "too short to judge")
    assert fm21(t, segmentation="raw_unsegmented").rationale == "too few structured events"


def test_fm21_absent_from_six_live_events_copied_ones_do_not_count() -> None:
    t = T().user("Book a table.").say("Sure.").say("Checking.").say("Found one.").say("Booked.")
    t.call("read", copied=True)
    assert fm21(t).rationale == "too short to judge"
    t2 = T().user("Book a table.").say("Sure.").say("Checking.").say("Found one.").say("Booked.")
    t2.say("Bye.")
    v = fm21(t2)
    assert (v.verdict, v.rationale) == ("absent", RESET_ABSENT)


def test_fm21_the_task_issued_again_after_work_is_a_reset() -> None:
    t = T(task=PROMPT).user(PROMPT).say("Here is a draft.").sh("pytest", "2 passed").user(PROMPT)
    v = fm21(t)
    note = "the user prompt of event 0 is issued again"
    assert (v.verdict, v.rationale) == ("present", note)
    assert spans(v) == [(4, 4, note)]
    assert quotes(v) == [PROMPT]
    assert v.evidence[0].agent == "user"


def test_fm21_the_repeat_is_matched_ignoring_case_and_spacing() -> None:
    again = "  write a parser   for ISO DATES that\nreturns the weekday. "
    t = T(task=None).user(PROMPT).say("Here is a draft.").say("Done.").user(again)
    v = fm21(t)
    assert v.verdict == "present" and spans(v)[0][:2] == (3, 3)


def test_fm21_the_third_issue_still_points_at_the_first() -> None:
    t = T(task=None).system(PROMPT).say("Draft one.").system(PROMPT).say("Draft two.").system(PROMPT)
    v = fm21(t)
    note = "the system prompt of event 0 is issued again"
    assert spans(v) == [(2, 2, note), (4, 4, note)]
    assert v.rationale == f"{note}; {note}"


@pytest.mark.parametrize(("size", "fires"), [(50, True), (49, False)])
def test_fm21_a_prompt_must_have_fifty_characters(size: int, fires: bool) -> None:
    text = ("Parse the dates please " * 4)[:size]
    assert len(text) == size
    t = T(task=None).user(text).say("Draft.").say("More.").user(text).say("Again.").say("Bye.")
    assert fm21(t).verdict == ("present" if fires else "absent")


def test_fm21_a_repeat_before_any_work_is_no_reset() -> None:
    t = T(task=None).user(PROMPT).user(PROMPT).say("On it.").say("Draft.").say("Done.").say("Bye.")
    assert fm21(t).rationale == RESET_ABSENT


@pytest.mark.parametrize("work", ["call", "result", "message"])
def test_fm21_each_kind_of_work_counts(work: str) -> None:
    t = T(task=None).user(PROMPT)
    if work == "call":
        t.call("read_file", path="a.py")
    elif work == "result":
        t.call("read_file", copied=True, path="a.py").result("text")
    else:
        t.say("A draft.")
    t.user(PROMPT).user("More.").user("Even more.").user("Last.")
    v = fm21(t)
    assert v.verdict == "present"
    assert v.evidence[0].seq_start == (3 if work == "result" else 2)


def test_fm21_agent_reasoning_or_a_user_message_is_no_work() -> None:
    t = T(task=None).user(PROMPT).say("Thinking about it.", kind="reasoning").user("Hello there.")
    t.user(PROMPT).user("More.").user("Last.")
    assert fm21(t).rationale == RESET_ABSENT


def test_fm21_only_the_first_three_live_messages_and_the_task_are_the_opening() -> None:
    t = T(task=None).say("Hi.").say("Ready.").say("Waiting.").user(PROMPT).say("Draft.").user(PROMPT)
    assert fm21(t).rationale == RESET_ABSENT
    t2 = T(task=None).say("Hi.").say("Ready.").user(PROMPT).say("Draft.").say("More.").user(PROMPT)
    assert spans(fm21(t2)) == [(5, 5, "the user prompt of event 2 is issued again")]
    t3 = T(task=PROMPT).say("Hi.").say("Ready.").say("Waiting.").user(PROMPT).say("Draft.").user(PROMPT)
    assert spans(fm21(t3)) == [(5, 5, "the user prompt of event 3 is issued again")]
    # copied context is not part of the run, so it does not take a place in the opening
    t4 = T(task=None).say("Old.", kind="reasoning").user("Old.").user("Old.").user(PROMPT).say("Draft.")
    t4.user(PROMPT)
    for e in t4.events[:3]:
        e.is_copied_context = True
    assert spans(fm21(t4)) == [(5, 5, "the user prompt of event 3 is issued again")]


def test_fm21_an_opening_event_that_is_no_user_or_system_message_is_no_prompt() -> None:
    t = T(task=None).event(kind="system", actor="system", role="system", content=PROMPT)
    t.say("Ready.").say("Waiting.").user(PROMPT).say("Draft.").user(PROMPT)
    assert fm21(t).rationale == RESET_ABSENT
    t2 = T(task=None).say(PROMPT).say("Ready.").say("Waiting.").user(PROMPT).say("Draft.").user(PROMPT)
    assert fm21(t2).rationale == RESET_ABSENT


def test_fm21_an_empty_opening_message_is_skipped() -> None:
    t = T(task=None).event(kind="message", actor="user", role="user", content=None).user(PROMPT)
    t.say("Draft.").user(PROMPT).say("More.").say("Done.")
    assert spans(fm21(t)) == [(3, 3, "the user prompt of event 1 is issued again")]


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("OK, let's start over from the beginning.", "let's start over"),
        ("LETS START FROM SCRATCH.", "LETS START FROM SCRATCH"),
        ("Resetting the conversation now.", "Resetting the conversation"),
        ("Forget everything above, new plan.", "Forget everything above"),
        ("I am starting a new session.", "starting a new session"),
    ],
)
def test_fm21_an_agent_starting_over_is_a_reset(text: str, said: str) -> None:
    t = T(task=None).user("Build it.").say("Draft.").say(text).say("Next.")
    v = fm21(t)
    assert (v.verdict, v.rationale) == ("present", "an agent starts over")
    assert spans(v) == [(2, 2, "an agent starts over")]
    assert quotes(v) == [said]


def test_fm21_an_agent_message_without_text_is_skipped() -> None:
    t = T(task=None).user("Build it.").event(kind="message", actor="agent", role="assistant", content=None)
    t.say("Draft.").say("Done.").say("More.").say("Bye.")
    assert fm21(t).rationale == RESET_ABSENT


def test_fm21_reasoning_and_system_messages_starting_over_count() -> None:
    t = T(task=None).user("Build it.").say("Let's start over.", kind="reasoning").say("Draft.").say("Done.")
    assert fm21(t).evidence[0].seq_start == 1
    t2 = T(task=None).user("Build it.").say("Draft.").system("Starting over.").say("Done.")
    assert fm21(t2).evidence[0].seq_start == 2


def test_fm21_starting_over_said_by_the_user_or_a_tool_is_not_an_agent_restart() -> None:
    t = T(task=None).user("Let's start over.").say("Draft.").sh("ls", "starting over").say("Done.")
    t.event(kind="plan", actor="agent", role="assistant", content="Starting over.").say("Bye.")
    assert fm21(t).rationale == RESET_ABSENT


def test_fm21_a_word_near_the_phrase_is_no_restart() -> None:
    t = T(task=None).user("Build it.").say("I restart the service.").say("Reset done.").say("Forgot it.")
    t.say("Start again later.").say("Bye.")
    assert fm21(t).rationale == RESET_ABSENT


def test_fm21_both_signals_are_reported_in_order() -> None:
    t = T(task=PROMPT).user(PROMPT).say("Let's start over.").user(PROMPT).say("Draft.")
    v = fm21(t)
    assert v.rationale == "an agent starts over; the user prompt of event 0 is issued again"
    assert [s[:2] for s in spans(v)] == [(1, 1), (2, 2)]


# FM-2.5 ignored_input ---------------------------------------------------------------------------

CORRECTION = "The fix misses the empty case. Please add a guard."
IGNORED = "reviewer's correction to coder is neither applied nor answered"


def fm25(t: T) -> ModeVerdict:
    return verdict("FM-2.5", t.build())


def change(t: T, actor: str = "coder") -> T:
    return t.call("edit_file", actor=actor, path="a.py", old="a", new="b").result("ok")


def test_fm25_a_correction_the_worker_passes_over_is_ignored() -> None:
    t = change(T().user("Fix a.py.")).say(CORRECTION, actor="reviewer").say("All done.", actor="coder")
    v = fm25(t)
    assert (v.verdict, v.rationale) == ("present", IGNORED)
    assert spans(v) == [(3, 4, IGNORED)]
    assert quotes(v) == ["misses"]
    assert v.evidence[0].agent == "reviewer"


def test_fm25_needs_two_agents() -> None:
    t = change(T().user("Please fix a.py, it is wrong.")).say(CORRECTION, actor="coder")
    t.say("Done.", actor="coder")
    v = fm25(t)
    assert (v.verdict, v.rationale) == ("unknown", "not a multi-agent run")


def test_fm25_needs_a_change_by_an_agent() -> None:
    t = T().user("Fix a.py.").call("read_file", actor="coder", path="a.py").result("text")
    t.say(CORRECTION, actor="reviewer").say("All done.", actor="coder")
    t.call("edit_file", actor="environment", path="a.py").result("ok")
    v = fm25(t)
    assert (v.verdict, v.rationale) == (
        "unknown",
        "no agent changes anything: whether advice was heeded needs the judge",
    )


def test_fm25_a_correction_before_any_change_or_to_oneself_is_none() -> None:
    t = T().user("Fix a.py.").say(CORRECTION, actor="reviewer").say("Sure.", actor="coder")
    change(t).say("Please add tests too, it is wrong.", actor="coder").say("Done.", actor="coder")
    t.say("Looks fine.", actor="reviewer")
    v = fm25(t)
    assert (v.verdict, v.rationale) == ("unknown", "no correction from one agent to another")


def test_fm25_a_correction_must_be_a_message_of_an_agent() -> None:
    t = change(T().user("Fix a.py.")).say(CORRECTION, actor="reviewer", kind="reasoning")
    t.user(CORRECTION).say("All done.", actor="coder")
    assert fm25(t).rationale == "no correction from one agent to another"


def test_fm25_a_correction_the_worker_never_answers_is_counted_not_flagged() -> None:
    t = change(T().user("Fix a.py.")).say(CORRECTION, actor="reviewer")
    v = fm25(t)
    assert (v.verdict, v.rationale) == ("absent", "1 correction(s) between agents were applied or answered")


def test_fm25_a_change_after_the_correction_applies_it() -> None:
    t = change(T().user("Fix a.py.")).say(CORRECTION, actor="reviewer").say("Working.", actor="coder")
    change(t)
    assert fm25(t).verdict == "absent"


def test_fm25_a_read_after_the_correction_does_not_apply_it() -> None:
    t = change(T().user("Fix a.py.")).say(CORRECTION, actor="reviewer")
    t.call("read_file", actor="coder", path="a.py").result("text").say("Done.", actor="coder")
    v = fm25(t)
    assert spans(v) == [(3, 4, IGNORED)]


@pytest.mark.parametrize("reply", ["Good catch, adding it.", "I disagree because it cannot be empty."])
def test_fm25_an_answer_in_a_message_answers_it(reply: str) -> None:
    t = change(T().user("Fix a.py.")).say(CORRECTION, actor="reviewer").say(reply, actor="coder")
    assert fm25(t).verdict == "absent"


def test_fm25_an_answer_only_in_reasoning_does_not_answer_it() -> None:
    t = change(T().user("Fix a.py.")).say(CORRECTION, actor="reviewer")
    t.say("Good catch, but no time.", actor="coder", kind="reasoning").say("Submitting.", actor="coder")
    v = fm25(t)
    assert spans(v) == [(3, 4, IGNORED)]


def test_fm25_the_worker_is_the_agent_of_the_last_change() -> None:
    t = change(T().user("Fix a.py.")).call("edit_file", actor="tester", path="t.py").result("ok")
    t.say(CORRECTION, actor="reviewer").say("Fixed it.", actor="coder").say("Done.", actor="tester")
    v = fm25(t)
    note = "reviewer's correction to tester is neither applied nor answered"
    assert (v.rationale, spans(v)) == (note, [(5, 7, note)])


def test_fm25_each_correction_is_judged_on_its_own() -> None:
    t = change(T().user("Fix a.py.")).say(CORRECTION, actor="reviewer")  # coder never acts again
    change(t, "tester").say("Please update the docs.", actor="reviewer").say("Done.", actor="tester")
    v = fm25(t)
    note = "reviewer's correction to tester is neither applied nor answered"
    assert spans(v) == [(6, 7, note)] and quotes(v) == ["Please update"]


@pytest.mark.parametrize("answer", ["applied", "answered"])
def test_fm25_a_correction_met_does_not_stop_the_next_one(answer: str) -> None:
    t = change(T().user("Fix a.py.")).say(CORRECTION, actor="reviewer")
    if answer == "applied":
        change(t)
    else:
        t.say("Good catch.", actor="coder")
    t.say("It still fails on None.", actor="reviewer").say("Done.", actor="coder")
    v = fm25(t)
    assert v.verdict == "present" and len(v.evidence) == 1
    assert v.evidence[0].quote == "still fails"


def test_fm25_two_ignored_corrections_and_two_answered_ones_are_counted() -> None:
    t = change(T().user("Fix a.py.")).say(CORRECTION, actor="reviewer").say("Done.", actor="coder")
    t.say("It still fails on None.", actor="reviewer").say("Submitted.", actor="coder")
    v = fm25(t)
    assert v.rationale == f"{IGNORED}; {IGNORED}" and [s[:2] for s in spans(v)] == [(3, 4), (5, 6)]
    t2 = change(T().user("Fix a.py.")).say(CORRECTION, actor="reviewer").say("Added.", actor="coder")
    t2.say("It still fails on None.", actor="reviewer").say("Fixed.", actor="coder")
    assert fm25(t2).rationale == "2 correction(s) between agents were applied or answered"


# FM-2.4 information_withholding -----------------------------------------------------------------

KEUR = "rows: 12\n# note: amounts are in kEUR"
WITHHELD = "analyst saw 'keur' and told the team nothing of it before planner acted"
DB_NOTE = "exitcode: 0\nwarning: TEST_DB=replica-2 is read-only"
DB_WITHHELD = (
    "analyst saw 'read-only, test_db=replica-2' and told the team nothing of it before planner acted"
)
PASSED_ON = "1 noted fact(s) observed were passed on"


def fm24(t: T) -> ModeVerdict:
    return verdict("FM-2.4", t.build())


def queried(output: str = KEUR) -> T:
    return T(task=None).call("query_db", actor="analyst", sql="select").result(output)


def result_for(t: T, call_id: str | None, output: str | None, actor: str = "environment") -> T:
    return t.event(
        kind="tool_result", actor=actor, role="tool", tool_result=ToolResult(call_id=call_id, output=output)
    )


def test_fm24_a_note_kept_by_the_agent_that_saw_it_is_withheld() -> None:
    t = queried().say("The total is 12.", actor="analyst").say("Report 12 million.", actor="planner")
    v = fm24(t)
    assert (v.verdict, v.rationale) == ("present", WITHHELD)
    assert spans(v) == [(1, 2, WITHHELD)]
    assert quotes(v) == ["rows: 12 # note: amounts are in kEUR"]


def test_fm24_needs_two_agents_that_are_not_executors() -> None:
    t = queried().say("The total is 12.", actor="analyst").say("Ran it.", actor="Computer_terminal")
    t.user("Report it.")
    v = fm24(t)
    assert (v.verdict, v.rationale) == ("unknown", "not a multi-agent run")


def test_fm24_without_a_note_withholding_needs_the_judge() -> None:
    t = queried("rows: 12\nTEST_DB=replica-2\n# note: see the docs").say("Total 12.", actor="analyst")
    t.say("Report it.", actor="planner")
    v = fm24(t)
    assert (v.verdict, v.rationale) == (
        "unknown",
        "no explicit note in what the agents observed; withholding needs the judge",
    )


def test_fm24_a_note_passed_on_before_the_next_agent_acts_is_shared() -> None:
    t = queried().say("The total is 12 KEUR.", actor="analyst").say("Report it.", actor="planner")
    v = fm24(t)
    assert (v.verdict, v.rationale) == ("absent", PASSED_ON)


def test_fm24_passing_it_on_after_the_next_agent_acted_is_too_late() -> None:
    t = queried().say("The total is 12.", actor="analyst").say("Report 12 million.", actor="planner")
    t.say("Oh, that was kEUR.", actor="analyst")
    assert spans(fm24(t)) == [(1, 2, WITHHELD)]


def test_fm24_the_next_agent_seeing_it_itself_is_no_withholding() -> None:
    t = queried().say("The total is 12.", actor="analyst").say("12 kEUR then.", actor="planner")
    assert fm24(t).rationale == PASSED_ON
    t2 = queried().say("The total is 12.", actor="analyst").say("Report 12 million.", actor="planner")
    t2.say("12 kEUR then.", actor="planner")
    assert spans(fm24(t2)) == [(1, 2, WITHHELD)]


@pytest.mark.parametrize("order", ["other first", "no word", "reasoning only", "nobody else"])
def test_fm24_no_finding_without_a_word_of_the_agent_before_another_acts(order: str) -> None:
    t = queried()
    if order == "other first":
        t.say("Report it.", actor="planner").say("The total is 12.", actor="analyst")
    elif order == "no word":
        t.call("query_db", actor="analyst", sql="again").say("Report it.", actor="planner")
    elif order == "reasoning only":
        t.say("Keep it.", actor="analyst", kind="reasoning").say("Report it.", actor="planner")
    else:
        t = T(task=None).say("Start.", actor="planner").call("query_db", actor="analyst").result(KEUR)
        t.say("The total is 12.", actor="analyst").say("Done.", actor="analyst").user("ok")
    v = fm24(t)
    assert (v.verdict, v.rationale) == ("absent", PASSED_ON)


def test_fm24_an_executors_reply_is_observed_by_the_last_agent_who_spoke() -> None:
    t = T(task=None).say("Run it.", actor="planner").say("Running the code.", actor="analyst")
    t.say("started", actor="Computer_terminal").user("Go on.").say("Hm.", actor="planner", kind="reasoning")
    t.say(DB_NOTE, actor="Computer_terminal").say("Finished.", actor="analyst").say("Great.", actor="planner")
    v = fm24(t)
    assert (v.verdict, v.rationale) == ("present", DB_WITHHELD)
    assert spans(v) == [(5, 6, DB_WITHHELD)]


def test_fm24_an_executors_reply_before_anyone_spoke_is_no_observation() -> None:
    t = T(task=None).say(DB_NOTE, actor="Computer_terminal").say("Finished.", actor="analyst")
    t.say("Great.", actor="planner").say("Bye.", actor="analyst")
    assert fm24(t).verdict == "unknown"


def test_fm24_the_keys_are_compared_ignoring_case() -> None:
    t = T(task=None).say("Run it.", actor="analyst").say(DB_NOTE, actor="Computer_terminal")
    t.say("Use test_db=REPLICA-2.", actor="analyst").say("Great.", actor="planner")
    assert fm24(t).rationale == PASSED_ON


def test_fm24_a_result_belongs_to_the_agent_whose_call_it_answers() -> None:
    t = T(task=None).call("query_db", actor="analyst", sql="a").call("query_db", actor="planner", sql="b")
    result_for(t, "c0", KEUR).say("Total 12.", actor="analyst").say("Report it.", actor="planner")
    v = fm24(t)
    assert spans(v) == [(2, 3, WITHHELD)]


def test_fm24_a_reused_call_id_belongs_to_its_latest_call() -> None:
    t = T(task=None).call("query_db", actor="planner", sql="a")
    t.call("query_db", actor="analyst", sql="b").call("list_files", actor="planner")
    t.events[1].tool_call.call_id = "c0"  # type: ignore[union-attr]
    result_for(t, "c0", KEUR).say("Total 12.", actor="analyst").say("Report it.", actor="planner")
    assert spans(fm24(t)) == [(3, 4, WITHHELD)]


@pytest.mark.parametrize("call_id", ["zz", None])
def test_fm24_a_result_of_an_unknown_call_belongs_to_the_last_caller(call_id: str | None) -> None:
    t = T(task=None).call("query_db", actor="analyst", sql="a").say("Waiting.", actor="planner")
    t.event(kind="tool_call", actor=None, role="assistant", tool_call=ToolCall(name="noop", call_id="n"))
    t.event(kind="message", actor=None, role="assistant", content="(no speaker)")
    result_for(t, call_id, KEUR).say("Total 12.", actor="analyst").say("Report it.", actor="planner")
    assert spans(fm24(t)) == [(4, 5, WITHHELD)]


def test_fm24_a_call_without_an_id_is_not_remembered_by_id() -> None:
    t = T(task=None).call("query_db", actor="planner", sql="a").call("query_db", actor="analyst", sql="b")
    t.events[0].tool_call.call_id = None  # type: ignore[union-attr]
    t.events[1].tool_call.call_id = None  # type: ignore[union-attr]
    result_for(t, None, KEUR).say("Total 12.", actor="analyst").say("Report it.", actor="planner")
    assert spans(fm24(t)) == [(2, 3, WITHHELD)]


def test_fm24_a_result_nobody_called_for_is_no_observation() -> None:
    t = result_for(T(task=None), "c9", KEUR).say("Total 12.", actor="analyst").say("Ok.", actor="planner")
    t.say("Bye.", actor="analyst")
    assert fm24(t).verdict == "unknown"


def test_fm24_an_empty_result_carries_no_note() -> None:
    t = T(task=None).call("query_db", actor="analyst", sql="a")
    result_for(t, "c0", None).say("Total 12.", actor="analyst").say("Ok.", actor="planner")
    assert fm24(t).verdict == "unknown"


def test_fm24_a_result_recorded_under_another_agents_name_is_not_that_agent_acting() -> None:
    t = T(task=None).call("query_db", actor="analyst", sql="a")
    result_for(t, "c0", KEUR, actor="planner").say("Total 12.", actor="analyst").say("Ok.", actor="planner")
    assert spans(fm24(t)) == [(1, 2, WITHHELD)]


def test_fm24_each_note_is_judged_and_all_findings_are_reported() -> None:
    t = queried().say("The total is 12.", actor="analyst").say("Report it.", actor="planner")
    t.call("query_db", actor="analyst", sql="b").result("warning: units are in thousands")
    t.say("Also 5.", actor="analyst").say("Ok.", actor="planner")
    v = fm24(t)
    second = "analyst saw 'thousands' and told the team nothing of it before planner acted"
    assert v.rationale == f"{WITHHELD}; {second}"
    assert spans(v) == [(1, 2, WITHHELD), (5, 6, second)]
    t2 = queried().say("The total is 12 kEUR.", actor="analyst").say("Report it.", actor="planner")
    t2.call("query_db", actor="analyst", sql="b").result("warning: units are in thousands")
    t2.say("Also 5 thousands.", actor="analyst").say("Ok.", actor="planner")
    assert fm24(t2).rationale == "2 noted fact(s) observed were passed on"


# FM-2.2 no_clarification ------------------------------------------------------------------------

ENV_NOTE = "the environment reports '3 matches found', then the agent acts without asking (event 3)"
ASKED = "each ambiguity seen was met with a question before acting"
NO_SIGN = "no sign of an ambiguous request; whether the instructions were clear needs the judge"
ASSUME = "The task does not specify which region, so I will deploy to us-east."
TOWER = "Assuming 'the tower' means the Eiffel Tower."


def fm22(t: T) -> ModeVerdict:
    return verdict("FM-2.2", t.build())


def several() -> T:
    t = T(task=None).user("Update John's address.").call("find_user", who="John")
    return t.result("3 matches found: u1, u2, u3")


def update(t: T) -> T:
    return t.call("update_address", user_id="u1").result("ok")


def test_fm22_acting_on_one_of_several_matches_without_asking() -> None:
    v = fm22(update(several()))
    assert (v.verdict, v.rationale) == ("present", ENV_NOTE)
    assert spans(v) == [(2, 3, ENV_NOTE)]
    assert quotes(v) == ["3 matches found"]
    assert v.evidence[0].agent == "environment"


@pytest.mark.parametrize("ask", ["message", "tool"])
def test_fm22_asking_first_is_the_right_reaction(ask: str) -> None:
    t = several()
    if ask == "message":
        t.say("There are three Johns. Which one is yours?")
    else:
        t.call("ask_user", question="Which John?").result("the second")
    v = fm22(update(t))
    assert (v.verdict, v.rationale) == ("absent", ASKED)


def test_fm22_reads_and_talk_before_the_change_are_no_reaction() -> None:
    t = several().call("get_user", user_id="u1").result("John Smith").say("Found him.")
    t.say("Which one do you mean?", kind="reasoning")
    t.event(kind="message", actor="environment", role="environment", content="Can you retry?")
    v = fm22(update(t))
    note = ENV_NOTE.replace("event 3", "event 8")
    assert spans(v) == [(2, 8, note)]


def test_fm22_a_change_by_the_environment_is_not_the_agent_acting() -> None:
    t = several().call("update_address", actor="environment", user_id="u1").result("ok")
    v = fm22(t)
    assert (v.verdict, v.rationale) == ("unknown", NO_SIGN)


def test_fm22_the_user_speaking_first_takes_the_choice_away() -> None:
    t = update(several().user("It is the one in Paris."))
    assert fm22(t).rationale == NO_SIGN


@pytest.mark.parametrize(("pause", "fires"), [(11, True), (12, False)])
def test_fm22_the_reaction_is_looked_for_in_the_next_twelve_events(pause: int, fires: bool) -> None:
    t = several()
    for _ in range(pause):
        t.say("Thinking.", kind="reasoning")
    v = fm22(update(t))
    assert v.verdict == ("present" if fires else "unknown")


@pytest.mark.parametrize(("pad", "fires"), [(3990, True), (3991, False)])
def test_fm22_only_the_first_4000_characters_of_a_result_are_read(pad: int, fires: bool) -> None:
    t = T(task=None).user("Update John.").call("find_user", who="John").result("x" * pad + " ambiguous")
    assert fm22(update(t)).verdict == ("present" if fires else "unknown")


def test_fm22_an_ambiguous_copied_result_is_not_part_of_the_run() -> None:
    t = T(task=None).user("Update John.").call("find_user", who="John", copied=True)
    t.result("3 matches found", copied=True)
    assert fm22(update(t)).rationale == NO_SIGN


@pytest.mark.parametrize("kind", ["message", "reasoning"])
def test_fm22_an_agent_saying_it_assumes_then_acting(kind: str) -> None:
    t = T(task=None).user("Deploy the service.").say(ASSUME, kind=kind).call("deploy", region="us-east")
    v = fm22(t)
    note = "the agent says 'does not specify which', then the agent acts without asking (event 2)"
    assert (v.rationale, spans(v), quotes(v)) == (note, [(1, 2, note)], ["does not specify which"])
    assert v.evidence[0].agent == "agent"


def test_fm22_an_assumption_said_with_a_question_or_by_the_user_is_no_trigger() -> None:
    t = T(task=None).user(ASSUME).say(ASSUME + " Could you confirm?").call("deploy", region="us-east")
    assert fm22(t).rationale == NO_SIGN


def test_fm22_in_a_chat_only_run_the_next_agent_message_acts() -> None:
    t = T(task=None).user("How tall is the tower?").say(TOWER).say("Hm.", kind="reasoning")
    t.event(kind="message", actor="environment", role="environment", content="Still there?")
    t.say("It is 330 m tall.").call("search", copied=True, q="tower")
    v = fm22(t)
    note = "the agent says 'Assuming 'the tower' means', then the agent acts without asking (event 4)"
    assert (v.verdict, v.rationale, spans(v)) == ("present", note, [(1, 4, note)])


def test_fm22_in_a_run_with_tools_a_message_is_no_action() -> None:
    t = T(task=None).user("How tall is the tower?").say(TOWER).say("It is 330 m tall.")
    t.call("search", q="tower")
    assert fm22(t).rationale == NO_SIGN


def test_fm22_in_a_chat_only_run_the_user_answering_first_is_no_action() -> None:
    t = T(task=None).user("How tall is the tower?").say(TOWER).user("Yes, that one.").say("It is 330 m.")
    assert fm22(t).rationale == NO_SIGN


def test_fm22_every_finding_is_reported_and_a_question_elsewhere_does_not_clear_them() -> None:
    t = update(several().say("Which John do you mean?"))
    t.call("find_order", item="lamp").result("Did you mean lamp-1 or lamp-2?").call("cancel_order", id="1")
    v = fm22(t)
    note = "the environment reports 'Did you mean', then the agent acts without asking (event 8)"
    assert (v.rationale, spans(v)) == (note, [(7, 8, note)])
    t2 = update(several()).call("find_order", item="lamp").result("ambiguous").call("cancel_order", id="1")
    v2 = fm22(t2)
    second = "the environment reports 'ambiguous', then the agent acts without asking (event 7)"
    assert v2.rationale == f"{ENV_NOTE}; {second}"


# FM-1.3 step_repetition -------------------------------------------------------------------------

NO_REPEAT = "no tool call or message is repeated without progress"
TOO_FEW = "too few tool calls or messages to judge repetition"
LONG = "I will now run the full test suite again to check."  # 50 characters
STEP = "Run the parser on input"  # 23 characters
ERROR = "ValueError: bad date 2024"  # 25 characters


def fm13(t: T, **kw: Any) -> ModeVerdict:
    return verdict("FM-1.3", t.build(**kw))


def one(v: ModeVerdict) -> str:
    return f"{len(v.evidence)} repeated step(s) without a change of state"


def test_fm13_needs_four_structured_events() -> None:
    t = T().user("Fix it.").sh("ls", "a.py")
    v = fm13(t)
    assert (v.verdict, v.rationale) == ("unknown", "too few structured events to judge repetition")
    t.say("Done.")
    assert fm13(t).rationale == TOO_FEW
    assert fm13(t, segmentation="raw_unsegmented").verdict == "unknown"
    assert (
        fm13(t, segmentation="raw_unsegmented").rationale == "too few structured events to judge repetition"
    )


def test_fm13_three_identical_calls_with_the_same_output_repeat_a_step() -> None:
    t = T().user("Fix it.").sh("pytest", "1 failed").sh("pytest", "1  failed\n").sh("pytest", "1 failed")
    v = fm13(t)
    note = "3 identical calls with identical output"
    assert (v.verdict, v.rationale) == ("present", "1 repeated step(s) without a change of state")
    assert spans(v) == [(1, 5, note)]
    assert quotes(v) == ["bash({'command': 'pytest'})"]
    t.sh("pytest", "1 failed")
    assert spans(fm13(t)) == [(1, 7, "4 identical calls with identical output")]


def test_fm13_two_identical_calls_are_not_enough() -> None:
    t = T().user("Fix it.").sh("pytest", "1 failed").sh("pytest", "1 failed").sh("ls", "a.py")
    v = fm13(t)
    assert (v.verdict, v.rationale) == ("absent", NO_REPEAT)


def test_fm13_repeats_must_return_what_the_first_call_returned() -> None:
    t = T().user("Fix it.").sh("pytest", "2 failed").sh("pytest", "1 failed").sh("pytest", "1 failed")
    assert fm13(t).rationale == NO_REPEAT
    t2 = T().user("Fix it.").sh("pytest", "1 failed").sh("pytest", "1 failed").sh("pytest", "0 failed")
    t2.sh("pytest", "1 failed")
    v = fm13(t2)
    assert spans(v) == [(1, 7, "3 identical calls with identical output")]


def test_fm13_calls_without_results_repeat_alike() -> None:
    t = T().user("Fix it.").call("restart", svc="api").call("restart", svc="api").call("restart", svc="api")
    assert spans(fm13(t)) == [(1, 3, "3 identical calls with identical output")]
    t2 = T().user("Fix it.").call("restart", svc="api").result("ok").call("restart", svc="api")
    t2.call("restart", svc="api")
    assert fm13(t2).rationale == NO_REPEAT


def test_fm13_a_copied_call_is_not_a_repeat() -> None:
    t = T().user("Fix it.").sh("pytest", "1 failed").sh("pytest", "1 failed")
    t.call("bash", copied=True, command="pytest").result("1 failed", copied=True)
    assert fm13(t).rationale == TOO_FEW


@pytest.mark.parametrize(("calls", "rationale"), [(3, NO_REPEAT), (2, TOO_FEW)])
def test_fm13_three_calls_are_enough_to_judge(calls: int, rationale: str) -> None:
    t = T().user("Fix it.")
    for i in range(calls):
        t.sh(f"cmd{i}", "ok")
    assert fm13(t).rationale == rationale


@pytest.mark.parametrize(("msgs", "rationale"), [(6, NO_REPEAT), (5, TOO_FEW)])
def test_fm13_six_agent_messages_are_enough_to_judge(msgs: int, rationale: str) -> None:
    t = T().user("Fix it.").user("Now.").user("Please.").user("Go.").user("Hurry.").user("Again.")
    t.event(kind="message", actor="agent", role="assistant", content=None)
    for i in range(msgs):
        t.say(f"Step {i}.")
    t.say("A copied step.").events[-1].is_copied_context = True
    assert fm13(t).rationale == rationale


def test_fm13_the_same_long_message_three_times_is_a_repeat() -> None:
    again = "  I will now run the FULL test suite again\nto check. "
    t = T().user("Fix it.").say(LONG).say("ok.").say(again).say("ok!").say(LONG)
    v = fm13(t)
    assert (v.verdict, v.rationale) == ("present", "1 repeated step(s) without a change of state")
    assert spans(v) == [(1, 5, "same message sent 3 times")]
    assert quotes(v) == [LONG]


@pytest.mark.parametrize(("size", "fires"), [(40, True), (39, False)])
def test_fm13_a_repeated_message_must_have_forty_characters(size: int, fires: bool) -> None:
    text = LONG[:size]
    t = T().user("Fix it.").say(text).say("ok.").say(text).say("no.").say(text).say("Bye.")
    assert fm13(t).verdict == ("present" if fires else "absent")


def test_fm13_messages_repeated_by_users_other_agents_or_a_log_are_no_repeat() -> None:
    log = "2024-05-01 12:00:00 polling the build server for status"
    t = T().user(LONG).say(LONG).user(LONG).say("ok.").say(LONG, actor="other").say("no.").say(LONG)
    t.say(log).say("a.").say(log).say("b.").say(log)
    assert fm13(t).rationale == NO_REPEAT


def test_fm13_a_copied_message_is_no_repeat() -> None:
    t = T().user("Fix it.").say(LONG).say("ok.").say(LONG).say("no.").say(LONG).say("Bye.").say("Done.")
    t.events[5].is_copied_context = True
    assert fm13(t).rationale == NO_REPEAT


def test_fm13_a_message_and_its_reply_repeated_word_for_word() -> None:
    t = T().user("Fix it.").say(STEP).user(ERROR).say("Trying again now.").say(STEP).user(ERROR.upper())
    v = fm13(t)
    assert (v.verdict, v.rationale) == ("present", "1 repeated step(s) without a change of state")
    assert spans(v) == [(4, 5, "events 1-2 repeated word for word")]
    assert quotes(v) == [STEP]
    t.say("Hm.").say(STEP).user(ERROR)
    assert spans(fm13(t)) == [
        (4, 5, "events 1-2 repeated word for word"),
        (7, 8, "events 1-2 repeated word for word"),
    ]


def test_fm13_an_exchange_opened_by_the_user_or_system_is_not_an_agent_step() -> None:
    for opener in ("user", "system"):
        t = T().user("Fix it.")
        getattr(t, opener)(ERROR)
        t.say(STEP).say("Hm.")
        getattr(t, opener)(ERROR)
        t.say(STEP)
        assert fm13(t).rationale == TOO_FEW


@pytest.mark.parametrize(("side", "size"), [("step", 19), ("reply", 19), ("step", 20), ("reply", 20)])
def test_fm13_each_side_of_a_repeated_exchange_needs_twenty_characters(side: str, size: int) -> None:
    step = STEP[:size] if side == "step" else STEP
    reply = ERROR[:size] if side == "reply" else ERROR
    t = T().user("Fix it.").say(step).user(reply).say("Hm.").say(step).user(reply)
    assert fm13(t).verdict == ("present" if size == 20 else "unknown")


def test_fm13_a_log_line_exchange_is_no_repeat() -> None:
    log = "2024-05-01 12:00:00 polling"
    t = T().user("Fix it.").say(log).user(ERROR).say("Hm.").say(log).user(ERROR)
    assert fm13(t).rationale == TOO_FEW
    t2 = T().user("Fix it.").say(STEP).user(log).say("Hm.").say(STEP).user(log)
    assert fm13(t2).rationale == TOO_FEW


def test_fm13_a_copied_exchange_is_no_repeat() -> None:
    t = T().user("Fix it.").say(STEP).user(ERROR).say("Hm.").say(STEP).user(ERROR)
    t.events[1].is_copied_context = True
    assert fm13(t).rationale == TOO_FEW


def test_fm13_findings_are_listed_in_trace_order() -> None:
    t = T().user("Fix it.").say(LONG).say("ok.").say(LONG).say("no.").say(LONG)
    t.sh("pytest", "1 failed").sh("pytest", "1 failed").sh("pytest", "1 failed")
    v = fm13(t)
    assert [s[:2] for s in spans(v)] == [(1, 5), (6, 10)]
    assert v.rationale == "2 repeated step(s) without a change of state"


def test_fm22_an_agent_message_without_text_or_a_user_event_that_is_no_message_is_skipped() -> None:
    t = several().event(kind="message", actor="agent", role="assistant", content=None)
    t.event(kind="system", actor="user", role="user", content="User joined.")
    v = fm22(update(t))
    assert spans(v) == [(2, 5, ENV_NOTE.replace("event 3", "event 5"))]


def test_fm13_an_empty_output_and_a_missing_one_are_the_same() -> None:
    t = T().user("Fix it.").call("restart", svc="api").result("")
    for _ in range(2):
        t.call("restart", svc="api")
        t.event(
            kind="tool_result",
            actor="environment",
            role="tool",
            tool_result=ToolResult(call_id=t.events[-1].tool_call.call_id, output=None),  # type: ignore[union-attr]
        )
    assert spans(fm13(t)) == [(1, 5, "3 identical calls with identical output")]


@pytest.mark.parametrize("level", ["INFO", "DEBUG", "WARNING", "ERROR"])
def test_fm13_a_logger_line_with_its_level_in_capitals_is_no_repeated_message(level: str) -> None:
    log = f"autogen.agentchat - {level} - waiting for the build server to finish"
    t = T().user("Fix it.").say(log).say("ok.").say(log).say("no.").say(log).say("Bye.")
    assert fm13(t).rationale == NO_REPEAT
    t2 = T().user("Fix it.").say(log).user(ERROR).say("Hm.").say(log).user(ERROR)
    assert fm13(t2).rationale == TOO_FEW
    t3 = T().user("Fix it.").say(STEP).user(log).say("Hm.").say(STEP).user(log)
    assert fm13(t3).rationale == TOO_FEW


@pytest.mark.parametrize("first", ["other acted first", "passed on", "seen by the other"])
def test_fm24_a_note_without_a_finding_does_not_stop_the_next_one(first: str) -> None:
    t = queried()
    if first == "other acted first":
        t.say("Report it.", actor="planner").say("The total is 12.", actor="analyst")
    elif first == "passed on":
        t.say("The total is 12 kEUR.", actor="analyst").say("Report it.", actor="planner")
    else:
        t.say("The total is 12.", actor="analyst").say("So 12 kEUR.", actor="planner")
    t.call("query_db", actor="analyst", sql="b").result("warning: units are in thousands")
    t.say("Also 5.", actor="analyst").say("Ok.", actor="planner")
    note = "analyst saw 'thousands' and told the team nothing of it before planner acted"
    assert spans(fm24(t)) == [(5, 6, note)]


def test_fm22_an_ambiguity_the_user_settles_does_not_stop_the_next_one() -> None:
    t = update(several().user("It is the one in Paris."))
    t.call("find_order", item="lamp").result("ambiguous").call("cancel_order", id="1")
    note = "the environment reports 'ambiguous', then the agent acts without asking (event 8)"
    assert spans(fm22(t)) == [(7, 8, note)]


@pytest.mark.parametrize("first", ["before any change", "to itself"])
def test_fm25_a_correction_that_is_none_does_not_stop_the_next_one(first: str) -> None:
    t = T().user("Fix a.py.")
    if first == "before any change":
        t.say(CORRECTION, actor="reviewer")
        change(t)
    else:
        change(t).say("Please add tests, it is wrong.", actor="coder")
    t.say(CORRECTION, actor="reviewer").say("All done.", actor="coder")
    v = fm25(t)
    assert (v.rationale, [s[:2] for s in spans(v)]) == (IGNORED, [(4, 5)])


def test_fm13_the_quote_is_the_first_call_as_it_was_written() -> None:
    t = T().user("Fix it.").call("grep", pattern="x", path="a.py").result("none")
    for _ in range(2):
        t.call("grep", path="a.py", pattern="x").result("none")
    v = fm13(t)
    assert quotes(v) == ["grep({'pattern': 'x', 'path': 'a.py'})"]


# Case is folded with lower(): "ß" stays "ß", so "Straße" and "Strasse" are different words
# (upper() would turn both into "STRASSE").

STRASSE = "Close the Straße bridge ticket and update the road map."
STRASSE_SS = STRASSE.replace("ß", "ss")


def test_fm21_a_prompt_spelt_differently_is_not_the_same_prompt() -> None:
    t = T(task=None).user(STRASSE).say("Draft.").user(STRASSE_SS).say("More.").say("Done.").say("Bye.")
    assert fm21(t).rationale == RESET_ABSENT


def test_fm13_messages_spelt_differently_are_not_repeats() -> None:
    t = T().user("Fix it.").say(STRASSE).say("ok.").say(STRASSE_SS).say("no.").say(STRASSE).say("Bye.")
    assert fm13(t).rationale == NO_REPEAT
    t2 = T().user("Fix it.").say(STRASSE).user(ERROR).say("Hm.").say(STRASSE_SS).user(ERROR)
    assert fm13(t2).rationale == TOO_FEW


# FM-1.3: the same words with new work each time (found on tau2-bench runs) ------------------------

SCAN = "Let me check the next reservation now, one at a time."  # 53 characters


def scan(ids: list[str]) -> T:
    t = T().user("Which of my reservations goes to LaGuardia?")
    for rid in ids:
        t.say(SCAN).call("get_reservation_details", reservation_id=rid).result(f"{rid}: ...")
    return t


def test_fm13_the_same_lead_in_before_calls_on_different_records_is_a_scan() -> None:
    # the message 3 times, and the pair (message, next message) repeated: each time another record
    v = fm13(scan(["60RX9E", "S5IK51", "OUEA45"]))
    assert (v.verdict, v.rationale) == ("absent", NO_REPEAT)


def test_fm13_the_same_lead_in_before_the_same_call_is_a_repeat() -> None:
    # one record looked up again: that occurrence makes no new work
    v = fm13(scan(["60RX9E", "S5IK51", "60RX9E"]))
    assert v.verdict == "present"
    assert [e.note for e in v.evidence] == ["same message sent 3 times"]
    # words repeated with no call at all are still a repeat
    t = T().user("Cancel it.")
    for _ in range(3):
        t.say(SCAN).user("No, cancel it, please, I said so twice.")
    assert fm13(t).verdict == "present"


def test_fm13_one_occurrence_without_a_call_makes_the_rest_a_repeat() -> None:
    t = scan(["60RX9E", "S5IK51"]).say(SCAN).say("Hmm.")
    v = fm13(t)
    assert v.verdict == "present" and v.evidence[0].note == "same message sent 3 times"


def test_fm13_the_same_check_after_each_change_is_a_recheck() -> None:
    # tau2-bench telecom: the phone's speed test run again after a reboot, then after a toggle
    t = T().user("My data is slow.").call("run_speed_test").result("Poor: 0.2 Mbps")
    t.call("reboot_device").result("rebooted").call("run_speed_test").result("Poor: 0.2 Mbps")
    t.call("toggle_roaming").result("roaming on").call("run_speed_test").result("Poor: 0.2 Mbps")
    assert fm13(t).verdict == "absent"
    # with no change between them the same three tests are a repeat
    t = T().user("My data is slow.")
    for _ in range(3):
        t.call("run_speed_test").result("Poor: 0.2 Mbps")
    t.call("reboot_device").result("rebooted")
    assert fm13(t).evidence[0].note == "3 identical calls with identical output"
    # three identical tests after the reboot repeat among themselves
    t = T().user("My data is slow.").call("run_speed_test").result("Poor")
    t.call("reboot_device").result("rebooted")
    for _ in range(3):
        t.call("run_speed_test").result("Poor")
    assert [e.seq_start for e in fm13(t).evidence] == [5]
    # a read between the tests changes nothing: still a repeat
    t = T().user("My data is slow.")
    for i in range(3):
        t.call("run_speed_test").result("Poor").call("get_status", line=i).result("on")
    assert [e.seq_start for e in fm13(t).evidence] == [1]
    # a replayed (copied) change is not a change in this run
    t = T().user("My data is slow.").call("run_speed_test").result("Poor")
    t.call("reboot_device", copied=True).result("rebooted", copied=True)
    t.call("run_speed_test").result("Poor").call("run_speed_test").result("Poor")
    assert [e.seq_start for e in fm13(t).evidence] == [1]
    # a change after two tests: the third test is a re-check, so only two repeat
    t = T().user("My data is slow.")
    t.call("run_speed_test").result("Poor").call("run_speed_test").result("Poor")
    t.call("reboot_device").result("rebooted").call("run_speed_test").result("Poor")
    assert fm13(t).verdict == "absent"


def test_fm13_a_scan_after_replayed_context_or_with_call_text_is_still_a_scan() -> None:
    from mastkit.traces.model import ToolCall as TC

    # replayed context at the start is skipped, not the end of the scan
    t = T().event(kind="message", actor="user", role="user", content="(earlier)", is_copied_context=True)
    t.user("Which of my reservations goes to LaGuardia?")
    for rid in ("60RX9E", "S5IK51", "OUEA45"):
        t.say(SCAN).call("get_reservation_details", reservation_id=rid).result(f"{rid}: ...")
    assert fm13(t).verdict == "absent"
    # a call event that carries text is still the message's call, not a new message
    t = T().user("Which of my reservations goes to LaGuardia?")
    for rid in ("60RX9E", "S5IK51", "OUEA45"):
        call = TC(name="get_reservation_details", call_id=f"k{rid}", arguments={"reservation_id": rid})
        t.say(SCAN).event(kind="tool_call", actor="agent", role="assistant", content="lookup", tool_call=call)
        t.result(f"{rid}: ...")
    assert fm13(t).verdict == "absent"
