"""The main functions of FM-3.1 premature termination, FM-1.5 unaware of termination and FM-3.2
no verification: each branch pinned by its verdict, its exact rationale, evidence spans and notes.
Small hand-built traces, one per path, with the near miss beside it."""

from __future__ import annotations

import pytest

from mastkit.annotate.detectors.no_verification import no_verification
from mastkit.annotate.detectors.premature_termination import premature_termination
from mastkit.annotate.detectors.unaware_of_termination import unaware_of_termination
from mastkit.annotate.model import ModeVerdict
from mastkit.traces.model import Outcome, Termination, Trace

from ._tracebuild import T

SUBMITTED = Termination(reason="submitted", by="agent")


def spans(v: ModeVerdict) -> list[tuple[int | None, int | None]]:
    return [(ev.seq_start, ev.seq_end) for ev in v.evidence]


def notes(v: ModeVerdict) -> list[str | None]:
    return [ev.note for ev in v.evidence]


def fm31(trace: Trace) -> ModeVerdict:
    v = premature_termination(trace)
    assert (v.code, v.source) == ("FM-3.1", "rule:premature_termination")
    return v


def fm15(trace: Trace) -> ModeVerdict:
    v = unaware_of_termination(trace)
    assert (v.code, v.source) == ("FM-1.5", "rule:unaware_of_termination")
    return v


def fm32(trace: Trace) -> ModeVerdict:
    v = no_verification(trace)
    assert (v.code, v.source) == ("FM-3.2", "rule:no_verification")
    return v


# FM-3.1 premature termination ----------------------------------------------------------------------

Q = "What is 6 times 7?"
P_UNKNOWN = "no open plan items or give-up seen, but no clear final answer either"
P_ABSENT = "the run ended with a final answer and no open work"


def test_fm31_too_few_events_is_unknown() -> None:
    v = fm31(T(task=Q).user(Q).say("I cannot complete this task.").build())
    assert v.verdict == "unknown"
    assert v.rationale == "too few structured events to judge termination"
    # three events are enough to judge
    v3 = fm31(T(task=Q).user(Q).sh("ls").build(termination=SUBMITTED))
    assert v3.verdict == "absent"


def test_fm31_raw_unsegmented_is_unknown() -> None:
    t = T(task=Q).user(Q).sh("ls").say("I cannot complete this task.")
    v = fm31(t.build(segmentation="raw_unsegmented"))
    assert (v.verdict, v.rationale) == ("unknown", "too few structured events to judge termination")


@pytest.mark.parametrize("by", ["limit", "user"])
def test_fm31_run_ended_by_limit_or_user_is_unknown(by: str) -> None:
    t = T(task=Q).user(Q).sh("ls").say("I cannot complete this task.")
    v = fm31(t.build(termination=Termination(reason="x", by=by)))  # type: ignore[arg-type]
    assert v.verdict == "unknown"
    assert v.rationale == f"the run was ended by the {by}, not by the agent"


@pytest.mark.parametrize("by", ["harness", "error", "unknown"])
def test_fm31_other_enders_are_still_judged(by: str) -> None:
    t = T(task=Q).user(Q).sh("ls").say("I cannot complete this task.")
    v = fm31(t.build(termination=Termination(reason="x", by=by)))  # type: ignore[arg-type]
    assert v.verdict == "present"
    assert v.rationale == "the agent gave up"


def test_fm31_open_plan_evidence_and_note() -> None:
    t = T(task=Q).user(Q).event(kind="plan", actor="agent", content="- [x] a\n- [ ] b\n- [ ] c")
    t.sh("ls").say("Answer: 42")
    v = fm31(t.build(termination=SUBMITTED))
    assert v.verdict == "present"
    assert spans(v) == [(1, 1)]
    assert notes(v) == ["last plan has 2 open item(s)"]
    assert v.rationale == "last plan has 2 open item(s)"


def test_fm31_only_the_last_plan_counts() -> None:
    t = T(task=Q).user(Q).event(kind="plan", actor="agent", content="- [ ] a\n- [ ] b")
    t.event(kind="plan", actor="agent", content="- [x] a\n- [x] b").sh("ls").say("Answer: 42")
    v = fm31(t.build(termination=SUBMITTED))
    assert (v.verdict, v.rationale) == ("absent", P_ABSENT)


def test_fm31_a_plan_written_by_the_user_is_not_the_agents() -> None:
    t = T(task=Q).user("- [ ] a\n- [ ] b").sh("ls").say("Answer: 42")
    v = fm31(t.build(termination=SUBMITTED))
    assert (v.verdict, v.rationale) == ("absent", P_ABSENT)


def test_fm31_give_up_evidence() -> None:
    t = T(task=Q).user(Q).sh("ls").say("I cannot complete this task.")
    v = fm31(t.build())
    assert v.verdict == "present"
    assert spans(v) == [(3, 3)]
    assert notes(v) == ["the agent gave up"]
    assert v.evidence[0].quote == "I cannot complete"
    assert v.evidence[0].agent == "agent"


def test_fm31_work_after_the_last_word_is_no_give_up() -> None:
    t = T(task=Q).user(Q).sh("ls").say("I cannot complete this task.").sh("ls -la")
    v = fm31(t.build())
    assert (v.verdict, v.rationale) == ("unknown", P_UNKNOWN)


def test_fm31_a_hand_off_call_after_the_last_word_keeps_the_give_up() -> None:
    t = T(task=Q).user(Q).sh("ls").say("I cannot complete this task.").call("finish")
    v = fm31(t.build())
    assert v.verdict == "present"
    assert notes(v) == ["the agent gave up"]


def test_fm31_copied_calls_after_the_last_word_do_not_count() -> None:
    t = T(task=Q).user(Q).sh("ls").say("I cannot complete this task.").call("bash", copied=True, command="ls")
    v = fm31(t.build())
    assert notes(v) == ["the agent gave up"]


def test_fm31_policy_refusal_is_not_a_give_up() -> None:
    t = T(task=Q).user(Q).call("get_reservation", id="R1").result('{"ok": 1}')
    t.say("I cannot complete this task.").call("transfer_to_human_agents", summary="x")
    v = fm31(t.build())
    assert (v.verdict, v.rationale) == ("unknown", P_UNKNOWN)


def test_fm31_give_up_in_submission() -> None:
    t = (
        T(task=Q)
        .user(Q)
        .sh("ls")
        .say("Working on it.")
        .call("submit", summary="I cannot complete this task.")
    )
    v = fm31(t.build())
    assert v.verdict == "present"
    assert spans(v) == [(4, 4)]
    assert notes(v) == ["the agent gave up in its submission"]
    assert v.evidence[0].quote == "I cannot complete"  # the give-up words, not the whole call


def test_fm31_give_up_in_submission_without_any_agent_text() -> None:
    t = T(task=Q).user(Q).sh("ls").call("submit", summary="I cannot complete this task.")
    v = fm31(t.build())
    assert notes(v) == ["the agent gave up in its submission"]


def test_fm31_a_later_word_overrides_the_submission() -> None:
    t = T(task=Q).user(Q).sh("ls").call("submit", summary="I cannot complete this task.").say("Answer: 42")
    v = fm31(t.build(termination=SUBMITTED))
    assert (v.verdict, v.rationale) == ("absent", P_ABSENT)


def test_fm31_a_submission_must_be_the_last_call() -> None:
    t = T(task=Q).user(Q).call("submit", summary="I cannot complete this task.").sh("ls")
    v = fm31(t.build(termination=SUBMITTED))
    assert (v.verdict, v.rationale) == ("absent", P_ABSENT)


def test_fm31_non_submit_last_call_is_not_read_as_submission() -> None:
    t = T(task=Q).user(Q).sh("ls").call("report", summary="I cannot complete this task.")
    v = fm31(t.build(termination=SUBMITTED))
    assert (v.verdict, v.rationale) == ("absent", P_ABSENT)


@pytest.mark.parametrize("reason", ["aborted", "turn_aborted"])
@pytest.mark.parametrize("by", ["agent", "error"])
def test_fm31_abort(reason: str, by: str) -> None:
    t = T(task=Q).user(Q).sh("ls")
    v = fm31(t.build(termination=Termination(reason=reason, by=by, native="ABORT!", at_seq=2)))  # type: ignore[arg-type]
    assert v.verdict == "present"
    assert spans(v) == [(2, 2)]
    assert [ev.quote for ev in v.evidence] == ["ABORT!"]
    assert v.rationale == "run aborted while working"


def test_fm31_abort_by_the_harness_is_not_the_agents() -> None:
    t = T(task=Q).user(Q).sh("ls")
    v = fm31(t.build(termination=Termination(reason="aborted", by="harness", at_seq=2)))
    assert (v.verdict, v.rationale) == ("unknown", P_UNKNOWN)


def test_fm31_findings_are_joined() -> None:
    t = T(task=Q).user(Q).event(kind="plan", actor="agent", content="- [ ] a").sh("ls")
    t.say("I cannot complete this task.")
    v = fm31(t.build(termination=Termination(reason="aborted", by="agent", native="x", at_seq=4)))
    assert notes(v) == ["last plan has 1 open item(s)", "the agent gave up", "run aborted while working"]
    assert v.rationale == "last plan has 1 open item(s); the agent gave up; run aborted while working"


def test_fm31_nothing_done() -> None:
    t = T(task="Please fix the login page.").user("x").sh("cat login.py").say("Here is what I found.")
    v = fm31(t.build(termination=SUBMITTED))
    assert v.verdict == "present"
    assert spans(v) == [(3, 3)]
    assert v.rationale == "the request asks for a change; the run ends with nothing changed"


def test_fm31_nothing_done_is_not_checked_after_other_findings() -> None:
    t = T(task="Please fix the login page.").user("x").sh("cat login.py")
    t.event(kind="plan", actor="agent", content="- [ ] a").say("Here is what I found.")
    v = fm31(t.build(termination=SUBMITTED))
    assert notes(v) == ["last plan has 1 open item(s)"]


@pytest.mark.parametrize("term", [None, Termination(by="unknown")])
def test_fm31_announced_next_step(term: Termination | None) -> None:
    t = T(task=Q).user(Q).sh("ls").say("Let me check the logs next.")
    v = fm31(t.build(termination=term))
    assert v.verdict == "present"
    assert spans(v) == [(3, 3)]
    assert v.evidence[0].quote == "Let me"
    assert v.rationale == "the run stops on an announced next step"


def test_fm31_announced_next_step_needs_an_open_ending() -> None:
    t = T(task=Q).user(Q).sh("ls").say("Let me check the logs next.")
    v = fm31(t.build(termination=Termination(reason="error", by="error")))
    assert (v.verdict, v.rationale) == ("unknown", P_UNKNOWN)


def test_fm31_announced_next_step_must_be_the_last_event() -> None:
    t = T(task=Q).user(Q).sh("ls").say("Let me check the logs next.").user("ok")
    v = fm31(t.build())
    assert (v.verdict, v.rationale) == ("unknown", P_UNKNOWN)


def test_fm31_announced_next_step_with_success_claim() -> None:
    t = T(task=Q).user(Q).sh("ls").say("I will stop: all tests pass.")
    v = fm31(t.build())
    assert (v.verdict, v.rationale) == ("unknown", P_UNKNOWN)


def test_fm31_plain_last_word_is_unknown() -> None:
    t = T(task=Q).user(Q).sh("ls").say("The answer is 42.")
    v = fm31(t.build())
    assert (v.verdict, v.rationale) == ("unknown", P_UNKNOWN)


@pytest.mark.parametrize("reason", ["submitted", "final_answer", "completed", "end_turn", "stop"])
def test_fm31_finished_reasons_are_absent(reason: str) -> None:
    t = T(task=Q).user(Q).sh("ls").say("The answer is 42.")
    v = fm31(t.build(termination=Termination(reason=reason, by="agent")))
    assert (v.verdict, v.rationale) == ("absent", P_ABSENT)


def test_fm31_finished_reason_needs_the_agent() -> None:
    t = T(task=Q).user(Q).sh("ls").say("The answer is 42.")
    v = fm31(t.build(termination=Termination(reason="submitted", by="harness")))
    assert (v.verdict, v.rationale) == ("unknown", P_UNKNOWN)
    v2 = fm31(t.build(termination=Termination(reason="crashed", by="agent")))
    assert (v2.verdict, v2.rationale) == ("unknown", P_UNKNOWN)


def test_fm31_final_output_is_absent() -> None:
    t = T(task=Q).user(Q).sh("ls").say("The answer is 42.")
    v = fm31(t.build(outcome=Outcome(final_output="42")))
    assert (v.verdict, v.rationale) == ("absent", P_ABSENT)
    v2 = fm31(t.build(outcome=Outcome(final_output="")))
    assert (v2.verdict, v2.rationale) == ("unknown", P_UNKNOWN)


# FM-1.5 unaware of termination ---------------------------------------------------------------------

U_UNKNOWN = "no limit hit and no loop, but no explicit termination by the agent either"
LIMIT = "the run was stopped by a limit"


def _plain() -> T:
    return T(task=Q).user(Q).sh("ls").say("The answer is 42.")


def test_fm15_limit_evidence_points_at_the_event() -> None:
    v = fm15(_plain().build(termination=Termination(reason="max_steps", by="limit", native="N", at_seq=2)))
    assert v.verdict == "present"
    assert spans(v) == [(2, 2)]
    assert [ev.quote for ev in v.evidence] == ["N"]
    assert v.rationale == LIMIT


def test_fm15_limit_quote_falls_back_to_the_reason() -> None:
    v = fm15(_plain().build(termination=Termination(reason="max_steps", by="limit")))
    assert spans(v) == [(None, None)]
    assert [ev.quote for ev in v.evidence] == ["max_steps"]


@pytest.mark.parametrize("at", [4, 9])
def test_fm15_limit_seq_past_the_end_is_dropped(at: int) -> None:
    v = fm15(_plain().build(termination=Termination(reason="max_steps", by="limit", at_seq=at)))
    assert spans(v) == [(None, None)]
    assert notes(v) == [LIMIT]


def test_fm15_limit_seq_at_the_last_event() -> None:
    v = fm15(_plain().build(termination=Termination(reason="max_steps", by="limit", at_seq=3)))
    assert spans(v) == [(3, 3)]


@pytest.mark.parametrize("by", ["harness", "error", "unknown", "user"])
def test_fm15_cap_reason_from_someone_else(by: str) -> None:
    v = fm15(_plain().build(termination=Termination(reason="context_length", by=by)))  # type: ignore[arg-type]
    assert v.verdict == "present"
    assert notes(v) == [LIMIT]


def test_fm15_cap_reason_from_the_agent_is_its_own_end() -> None:
    v = fm15(_plain().build(termination=Termination(reason="max_steps", by="agent")))
    assert (v.verdict, v.rationale) == ("absent", "the agent ended the run itself (max_steps)")


def test_fm15_no_cap_reason_from_the_harness() -> None:
    v = fm15(_plain().build(termination=Termination(reason="error", by="harness")))
    assert (v.verdict, v.rationale) == ("unknown", U_UNKNOWN)
    v2 = fm15(_plain().build(termination=Termination(reason=None, by="harness")))
    assert (v2.verdict, v2.rationale) == ("unknown", U_UNKNOWN)


def test_fm15_too_few_events() -> None:
    t = T(task=Q).user(Q).say("Answer: 42")
    v = fm15(t.build(termination=SUBMITTED))
    assert (v.verdict, v.rationale) == ("unknown", "too few structured events to judge termination")
    v2 = fm15(t.build(termination=Termination(reason="max_steps", by="limit", at_seq=1)))
    assert (v2.verdict, v2.rationale) == ("present", "the harness stopped the run at a limit")
    assert spans(v2) == [(1, 1)]


def test_fm15_raw_unsegmented() -> None:
    v = fm15(_plain().build(termination=SUBMITTED, segmentation="raw_unsegmented"))
    assert (v.verdict, v.rationale) == ("unknown", "too few structured events to judge termination")


def test_fm15_three_continue_messages() -> None:
    t = T(task=Q).user(Q).say("continue").say("Continue.", actor="critic").sh("ls").say("go on")
    v = fm15(t.build(termination=SUBMITTED))
    assert v.verdict == "present"
    assert spans(v) == [(1, 5)]
    assert v.rationale == "3 bare 'continue' messages"


def test_fm15_two_continue_messages_are_not_a_loop() -> None:
    t = T(task=Q).user(Q).say("continue").sh("ls").say("go on")
    v = fm15(t.build(termination=SUBMITTED))
    assert (v.verdict, v.rationale) == ("absent", "the agent ended the run itself (submitted)")


def test_fm15_continue_counts_only_live_messages() -> None:
    t = T(task=Q).user(Q).say("continue").sh("ls").say("go on")
    t.event(kind="message", actor="agent", role="assistant", content="continue", is_copied_context=True)
    t.say("continue", kind="reasoning")
    v = fm15(t.build(termination=SUBMITTED))
    assert v.verdict == "absent"


def test_fm15_talk_after_the_final_answer() -> None:
    t = T(task=Q).user(Q).sh("ls").say("FINAL ANSWER: 42").user("hm").say("a").say("b")
    t.say("FINAL ANSWER: 42").say("c")
    v = fm15(t.build(termination=SUBMITTED))
    assert v.verdict == "present"
    assert spans(v) == [(3, 8)]
    assert v.rationale == "3 more turns after the final answer"


def test_fm15_two_turns_after_the_final_answer_are_fine() -> None:
    t = T(task=Q).user(Q).sh("ls").say("FINAL ANSWER: 42").say("a").say("b")
    t.say("2026-01-01 12:00 log").user("x").say("", kind="message")
    t.say("c", kind="reasoning")
    v = fm15(t.build(termination=SUBMITTED))
    assert (v.verdict, v.rationale) == ("absent", "the agent ended the run itself (submitted)")


def test_fm15_final_answer_counted_from_the_first_one() -> None:
    t = T(task=Q).user(Q).sh("ls").say("a").say("FINAL ANSWER: 42").say("b").say("c").say("d")
    v = fm15(t.build(termination=SUBMITTED))
    assert spans(v) == [(4, 7)]


def test_fm15_tool_calls_after_completing_the_task() -> None:
    t = T(task=Q).user(Q).call("close_ticket", id=1).result("closed").sh("ls").sh("pwd")
    v = fm15(t.build(termination=SUBMITTED))
    assert v.verdict == "present"
    assert spans(v) == [(1, 5)]
    assert v.rationale == "2 more tool calls after the task was completed"


def test_fm15_missing_stop_signal() -> None:
    t = T(task=Q).system("Please reply with exactly DONE and stop.").user(Q).sh("ls").say("42")
    v = fm15(t.build(termination=Termination(reason="user_left", by="user", at_seq=4)))
    assert v.verdict == "present"
    assert spans(v) == [(0, 4)]
    assert (
        v.rationale
        == "the instructions' stop signal 'DONE' is never sent; the run was ended by user (user_left)"
    )


def test_fm15_findings_are_joined() -> None:
    t = T(task=Q).user(Q).say("continue").say("continue").say("continue")
    v = fm15(t.build(termination=Termination(reason="max_steps", by="limit")))
    assert notes(v) == [LIMIT, "3 bare 'continue' messages"]
    assert v.rationale == f"{LIMIT}; 3 bare 'continue' messages"


def test_fm15_absent_names_native_when_no_reason() -> None:
    v = fm15(_plain().build(termination=Termination(by="agent", native="exit_ok")))
    assert (v.verdict, v.rationale) == ("absent", "the agent ended the run itself (exit_ok)")


@pytest.mark.parametrize("term", [None, Termination(reason="stop", by="unknown")])
def test_fm15_no_agent_termination_is_unknown(term: Termination | None) -> None:
    v = fm15(_plain().build(termination=term))
    assert (v.verdict, v.rationale) == ("unknown", U_UNKNOWN)


# FM-3.2 no verification ----------------------------------------------------------------------------

FIX = "Fix the bug."
CLAIMED = "success is claimed without any check after the last change"


def test_fm32_no_calls_falls_to_the_team_check() -> None:
    v = fm32(T(task=FIX).user(FIX).say("The bug has been fixed.").build())
    assert v.verdict == "unknown"
    assert v.rationale == "no tool calls, and no checking role in a team to tell whether it checked"


def test_fm32_copied_calls_do_not_count() -> None:
    t = T(task=FIX).user(FIX).call("bash", copied=True, command="sed -i s/a/b/ x.py")
    t.result("", copied=True).say("The bug has been fixed.")
    v = fm32(t.build())
    assert v.rationale == "no tool calls, and no checking role in a team to tell whether it checked"


def test_fm32_no_claim() -> None:
    v = fm32(T(task=FIX).user(FIX).sh("sed -i s/a/b/ x.py").say("I edited the file.").build())
    assert (v.verdict, v.rationale) == (
        "unknown",
        "no asserted success claim or submission that ends the work",
    )


def test_fm32_no_change_before_the_claim() -> None:
    t = T(task=FIX).user(FIX).sh("cat x.py").say("The bug has been fixed.")
    v = fm32(t.build())
    assert (v.verdict, v.rationale) == ("unknown", "no state-changing action before the success claim")


def test_fm32_a_wrap_up_is_not_a_change() -> None:
    t = T(task=FIX).user(FIX).call("close_ticket", id=1).result("closed").say("The bug has been fixed.")
    v = fm32(t.build())
    assert (v.verdict, v.rationale) == ("unknown", "no state-changing action before the success claim")


def test_fm32_present_evidence() -> None:
    t = (
        T(task=FIX)
        .user(FIX)
        .sh("pytest", "1 failed", 1)
        .sh("sed -i s/a/b/ x.py")
        .say("The bug has been fixed.")
    )
    v = fm32(t.build())
    assert v.verdict == "present"
    assert spans(v) == [(3, 3), (5, 5)]
    assert notes(v) == ["last change before the claim", "success claimed with no check after the change"]
    assert v.evidence[1].quote == "has been fixed"
    assert v.rationale == CLAIMED


def test_fm32_the_last_of_several_changes_counts() -> None:
    t = T(task=FIX).user(FIX).sh("sed -i s/a/b/ x.py").sh("pytest").sh("sed -i s/c/d/ x.py")
    t.say("The bug has been fixed.")
    v = fm32(t.build())
    assert v.verdict == "present"
    assert spans(v) == [(5, 5), (7, 7)]


def test_fm32_a_wrap_up_after_the_change_is_no_check() -> None:
    t = T(task=FIX).user(FIX).sh("sed -i s/a/b/ x.py").call("send_message", text="done").result("sent")
    t.say("The bug has been fixed.")
    v = fm32(t.build())
    assert v.verdict == "present"
    assert spans(v) == [(1, 1), (5, 5)]


@pytest.mark.parametrize("cmd", ["pytest", "echo hi"])
def test_fm32_any_look_after_the_change_is_a_check(cmd: str) -> None:
    t = T(task=FIX).user(FIX).sh("sed -i s/a/b/ x.py").sh("pytest -x").sh(cmd).say("The bug has been fixed.")
    v = fm32(t.build())
    assert (v.verdict, v.rationale) == (
        "absent",
        "a check ran after the last change (event 5) before the claim",
    )


def test_fm32_a_look_before_the_change_is_no_check() -> None:
    t = T(task=FIX).user(FIX).sh("echo hi").sh("sed -i s/a/b/ x.py").say("The bug has been fixed.")
    v = fm32(t.build())
    assert v.verdict == "present"


def test_fm32_a_look_after_the_claim_is_not_before_it() -> None:
    t = T(task=FIX).user(FIX).sh("sed -i s/a/b/ x.py").say("The bug has been fixed.").sh("echo hi")
    v = fm32(t.build())
    assert v.verdict == "present"
    assert spans(v) == [(1, 1), (3, 3)]


def test_fm32_a_copied_look_is_no_check() -> None:
    t = T(task=FIX).user(FIX).sh("sed -i s/a/b/ x.py").call("bash", copied=True, command="pytest")
    t.result("ok", copied=True).say("The bug has been fixed.")
    v = fm32(t.build())
    assert v.verdict == "present"


def test_fm32_a_change_that_checks_itself() -> None:
    t = T(task=FIX).user(FIX).sh("sed -i s/a/b/ x.py && pytest").say("The bug has been fixed.")
    v = fm32(t.build())
    assert (v.verdict, v.rationale) == (
        "absent",
        "a check ran after the last change (event 1) before the claim",
    )


def test_fm32_an_earlier_change_that_checked_itself_does_not_cover_the_last() -> None:
    t = T(task=FIX).user(FIX).sh("sed -i s/a/b/ x.py && pytest").sh("sed -i s/c/d/ x.py")
    t.say("The bug has been fixed.")
    v = fm32(t.build())
    assert v.verdict == "present"
    assert spans(v) == [(3, 3), (5, 5)]


def test_fm32_a_write_that_returns_the_record() -> None:
    t = T(task="Update my booking.").user("x").call("update_reservation", id="R1")
    t.result('{"id": "R1", "date": "2026-01-02", "seat": "4A"}').say("The booking has been updated.")
    v = fm32(t.build())
    assert (v.verdict, v.rationale) == ("absent", "the change at event 1 returned the updated record")


def test_fm32_a_write_that_returns_nothing_useful() -> None:
    t = T(task="Update my booking.").user("x").call("update_reservation", id="R1")
    t.result("ok").say("The booking has been updated.")
    v = fm32(t.build())
    assert (v.verdict, v.rationale) == ("present", CLAIMED)
    assert spans(v) == [(1, 1), (3, 3)]


def test_fm32_a_checked_write_is_absent_by_the_check() -> None:
    t = T(task="Update my booking.").user("x").call("update_reservation", id="R1")
    t.result('{"id": "R1", "date": "2026-01-02", "seat": "4A"}').call("get_reservation", id="R1")
    t.result("{}").say("The booking has been updated.")
    v = fm32(t.build())
    assert (v.verdict, v.rationale) == (
        "absent",
        "a check ran after the last change (event 3) before the claim",
    )


def test_fm32_submission_is_the_claim() -> None:
    t = T(task=FIX).user(FIX).sh("sed -i s/a/b/ x.py").call("submit")
    v = fm32(t.build())
    assert v.verdict == "present"
    assert spans(v) == [(1, 1), (3, 3)]


# Near misses that separate the conditions of each main function ------------------------------------


def test_fm31_a_user_plan_after_the_answer_is_not_the_agents() -> None:
    t = T(task=Q).user(Q).sh("ls").say("Answer: 42").user("- [ ] a")
    v = fm31(t.build(termination=SUBMITTED))
    assert (v.verdict, v.rationale) == ("absent", P_ABSENT)


def test_fm31_a_user_message_after_the_give_up_does_not_take_it_back() -> None:
    t = T(task=Q).user(Q).sh("ls").say("I cannot complete this task.").user("ok")
    v = fm31(t.build())
    assert notes(v) == ["the agent gave up"]


def test_fm31_the_submission_is_the_last_call_not_the_last_agent_step() -> None:
    t = (
        T(task=Q)
        .user(Q)
        .sh("ls")
        .call("submit", summary="I cannot complete this task.")
        .say("", kind="message")
    )
    v = fm31(t.build())
    assert notes(v) == ["the agent gave up in its submission"]


def test_fm31_no_agent_text_and_a_change_request() -> None:
    t = T(task="Please fix the login page.").user("x").sh("cat login.py")
    v = fm31(t.build(termination=SUBMITTED))
    assert (v.verdict, v.rationale) == ("absent", P_ABSENT)


def test_fm15_final_answer_rationale_counts_only_later_turns() -> None:
    t = T(task=Q).user(Q).sh("ls").say("a").say("FINAL ANSWER: 42").say("b").say("c").say("d")
    v = fm15(t.build(termination=SUBMITTED))
    assert v.rationale == "3 more turns after the final answer"


def test_fm32_a_command_that_checks_before_its_change() -> None:
    t = T(task=FIX).user(FIX).sh("pytest && sed -i s/a/b/ x.py").say("The bug has been fixed.")
    v = fm32(t.build())
    assert (v.verdict, v.rationale) == ("present", CLAIMED)


@pytest.mark.parametrize("reason", [None, "stopped"])
def test_fm15_a_limit_ender_needs_no_cap_word(reason: str | None) -> None:
    v = fm15(_plain().build(termination=Termination(reason=reason, by="limit", native="N")))
    assert (v.verdict, v.rationale) == ("present", LIMIT)


def test_fm32_a_submission_carrying_a_command_is_not_its_own_last_change() -> None:
    t = T(task=FIX).user(FIX).sh("sed -i s/a/b/ x.py").call("submit", command="pytest")
    v = fm32(t.build())
    assert (v.verdict, v.rationale) == ("present", CLAIMED)
    assert spans(v) == [(1, 1), (3, 3)]
