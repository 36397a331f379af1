"""FM-3.1 premature termination and FM-1.5 unaware of termination: the paths that the other
detector tests left weak (structured plans, refusals handed to a human, completing calls whose
result says no). Each case is a small hand-built trace: one that must fire and a near miss."""

from __future__ import annotations

from typing import Any

import pytest

from mastkit.annotate.detectors._base import detectors
from mastkit.annotate.model import ModeVerdict
from mastkit.traces.model import Termination, ToolCall, Trace

from ._tracebuild import T

DET = {d.code: d for d in detectors()}
SUBMITTED = Termination(reason="submitted", by="agent")


def verdict(code: str, trace: Trace) -> ModeVerdict:
    v = DET[code](trace)
    assert v.code == code
    return v


# FM-3.1: open items in a structured plan ------------------------------------------------------------


def _with_plan(**args: Any) -> Trace:
    """A question answered after a plan tool call (no change asked for, so only the plan can fire)."""
    t = T(task="What is 6 times 7?").user("What is 6 times 7?").call("update_plan", **args)
    t.result("plan updated").say("Answer: 42")
    return t.build(termination=SUBMITTED)


_MIXED = [
    {"step": "read", "status": "completed"},
    {"step": "think", "status": "Pending"},
    {"step": "compute", "status": "in_progress"},
    {"step": "check", "status": "TODO"},
    {"step": "write", "status": "not_started"},
    {"step": "skip", "status": "cancelled"},
]


@pytest.mark.parametrize("key", ["plan", "todos", "items"])
def test_each_open_status_in_a_structured_plan_counts(key: str) -> None:
    v = verdict("FM-3.1", _with_plan(**{key: _MIXED}))
    assert v.verdict == "present"
    assert [(ev.seq_start, ev.seq_end) for ev in v.evidence] == [(1, 1)]
    assert v.evidence[0].note == "last plan has 4 open item(s)"


@pytest.mark.parametrize("status", ["pending", "in_progress", "todo", "not_started"])
def test_a_single_open_status_is_one_open_item(status: str) -> None:
    v = verdict("FM-3.1", _with_plan(todos=[{"status": "completed"}, {"status": status}]))
    assert v.verdict == "present"
    assert v.evidence[0].note == "last plan has 1 open item(s)"


def test_an_empty_plan_list_falls_through_to_the_todos() -> None:
    v = verdict("FM-3.1", _with_plan(plan=[], todos=[{"status": "pending"}, {"status": "pending"}]))
    assert v.verdict == "present"
    assert v.evidence[0].note == "last plan has 2 open item(s)"


@pytest.mark.parametrize(
    "items",
    [
        [{"status": "completed"}, {"status": "done"}, {"status": "cancelled"}],
        [{"step": "no status at all"}, {"status": ""}],
        ["write the code", "run the tests"],  # plain strings, not dicts: no status to read
    ],
)
def test_a_structured_plan_with_nothing_open_is_absent(items: list[Any]) -> None:
    v = verdict("FM-3.1", _with_plan(todos=items))
    assert v.verdict == "absent"
    assert v.evidence == []


def test_unknown_keys_are_not_read_as_a_plan() -> None:
    v = verdict("FM-3.1", _with_plan(steps=[{"status": "pending"}]))
    assert v.verdict == "absent"


# FM-3.1: giving up versus a refusal handed to a human ----------------------------------------------


def test_giving_up_with_no_tool_result_at_all() -> None:
    t = T(task="Find the root cause of the outage.").user("Find the root cause.").user("Any news?")
    t.say("I cannot complete this task.")
    v = verdict("FM-3.1", t.build())
    assert v.verdict == "present"
    assert [(ev.seq_start, ev.note, ev.quote) for ev in v.evidence] == [
        (2, "the agent gave up", "I cannot complete")
    ]


def _give_up_then(after: str) -> Trace:
    """A successful look-up, then the agent gives up; ``after`` says what follows its last word."""
    t = T(task="Find the root cause of the outage.").user("Find the root cause of the outage.")
    if after == "transfer_before":
        t.call("transfer_to_human_agents", summary="outage").result("Transfer successful")
    t.call("get_logs", service="cart").result('{"lines": 12}')
    t.say("I cannot complete this task.")
    if after == "user":
        t.user("OK.")
    if after == "transfer":
        t.call("transfer_to_human_agents", summary="outage").result("Transfer successful")
    return t.build()


@pytest.mark.parametrize(
    ("after", "present"),
    [("nothing", True), ("user", True), ("transfer_before", True), ("transfer", False)],
)
def test_only_a_hand_over_after_the_last_word_is_a_refusal(after: str, present: bool) -> None:
    v = verdict("FM-3.1", _give_up_then(after))
    assert (v.verdict == "present") is present
    if present:
        assert [ev.note for ev in v.evidence] == ["the agent gave up"]


def test_a_hand_over_after_a_failed_call_is_still_giving_up() -> None:
    t = T(task="Find the root cause of the outage.").user("Find the root cause of the outage.")
    t.call("get_logs", service="cart").result("Service unavailable", error=True)
    t.say("I cannot complete this task.").call("transfer_to_human_agents", summary="outage")
    v = verdict("FM-3.1", t.build())
    assert v.verdict == "present"
    assert [(ev.seq_start, ev.note) for ev in v.evidence] == [(3, "the agent gave up")]


# FM-1.5: a completing call only completes when its result says so ----------------------------------


def _submit_then_work(result: tuple[str, bool | None] | None) -> Trace:
    """A submission (with the given result, or none), then two more tool calls."""
    t = T(task="Find the flag.").user("Find the flag.").call("submit", answer="flag{a}")
    if result is not None:
        t.result(result[0], error=result[1])
    t.call("read_file", path="notes.txt").result("x").call("run", script="decode.py").result("flag{b}")
    return t.build()


@pytest.mark.parametrize(
    ("last_call", "present"), [("read_log", True), ("done", False), ("final_answer", False), ("close", False)]
)
def test_closing_calls_after_the_completion_are_not_more_work(last_call: str, present: bool) -> None:
    t = T(task="Find the flag.").user("Find the flag.").say("Submitting flag{a}.")
    t.call("submit", answer="flag{a}").result("Flag accepted.")
    t.call("read_file", path="notes.txt").result("x").call(last_call, note="wrap up").result("ok")
    v = verdict("FM-1.5", t.build())
    assert (v.verdict == "present") is present
    if present:
        assert [(ev.seq_start, ev.seq_end) for ev in v.evidence] == [(2, 6)]


def test_work_after_an_accepted_submission_is_present() -> None:
    v = verdict("FM-1.5", _submit_then_work(("Flag accepted.", None)))
    assert v.verdict == "present"
    assert [(ev.seq_start, ev.seq_end, ev.note) for ev in v.evidence] == [
        (1, 5, "2 more tool calls after the task was completed")
    ]


@pytest.mark.parametrize(
    "result",
    [
        None,  # never answered: nothing says the task was completed
        ("Service timeout", True),  # an error flag, no grader words
        ("Answer incorrect.", None),
        ("Submission rejected", None),
        ("wrong flag", None),
        ("Invalid format", None),
        ("Flag not accepted", None),
        ("Please try again", None),
    ],
)
def test_work_after_a_submission_that_did_not_complete_is_not_past_the_end(
    result: tuple[str, bool | None] | None,
) -> None:
    v = verdict("FM-1.5", _submit_then_work(result))
    assert v.verdict == "unknown"
    assert v.evidence == []


# FM-3.1: a change asked for and nothing changed ---------------------------------------------------

NOTHING_DONE = "the request asks for a change; the run ends with nothing changed"


def _lookup_then(ending: list[tuple[str, str]], task: str | None = None, opening: str | None = None) -> Trace:
    """A request to cancel a booking, a look-up, then ``ending``: ("say", text) or ("call", name)."""
    t = T(task=task)
    if opening is not None:
        t.system(opening)
    t.user("Please cancel reservation AB1.").call("get_reservation", reservation_id="AB1")
    t.result('{"id": "AB1", "status": "confirmed"}')
    for what, value in ending:
        if what == "say":
            t.say(value)
        else:
            t.call(value, reservation_id="AB1").result('{"status": "ok"}')
    return t.build()


def test_nothing_changed_is_present_on_the_last_word() -> None:
    v = verdict("FM-3.1", _lookup_then([("say", "This reservation cannot be cancelled under the policy.")]))
    assert v.verdict == "present"
    assert [(ev.seq_start, ev.note) for ev in v.evidence] == [(3, NOTHING_DONE)]


def test_the_request_is_the_first_user_message_not_the_system_prompt() -> None:
    trace = _lookup_then(
        [("say", "This reservation cannot be cancelled under the policy.")],
        opening="You are an airline agent. Follow the policy.",
    )
    v = verdict("FM-3.1", trace)
    assert v.verdict == "present"
    assert [(ev.seq_start, ev.note) for ev in v.evidence] == [(4, NOTHING_DONE)]


def test_the_task_is_the_request_when_no_user_speaks() -> None:
    t = T(task="Please cancel reservation AB1.").system("You are an airline agent.")
    t.call("get_reservation", reservation_id="AB1").result('{"id": "AB1"}')
    t.say("This reservation cannot be cancelled under the policy.")
    v = verdict("FM-3.1", t.build())
    assert v.verdict == "present"
    assert [ev.note for ev in v.evidence] == [NOTHING_DONE]


def test_an_agent_that_uses_no_tools_is_not_judged_on_changes() -> None:
    t = T(task=None).user("Please cancel reservation AB1.")
    t.say("Let me think about the policy first.").say(
        "This reservation cannot be cancelled under the policy."
    )
    v = verdict("FM-3.1", t.build())
    assert v.verdict == "unknown"
    assert v.evidence == []


def test_a_change_made_is_not_nothing_done() -> None:
    v = verdict("FM-3.1", _lookup_then([("call", "cancel_reservation"), ("say", "AB1 is cancelled.")]))
    assert v.verdict == "unknown"
    assert v.evidence == []


def test_a_submission_is_not_a_change() -> None:
    v = verdict("FM-3.1", _lookup_then([("say", "AB1 stays as it is."), ("call", "submit")]))
    assert v.verdict == "present"
    assert [(ev.seq_start, ev.note) for ev in v.evidence] == [(3, NOTHING_DONE)]


@pytest.mark.parametrize(
    ("last_word", "present"),
    [
        ("Would you like me to cancel it?", False),
        ("I checked AB1.\nCould you confirm the passenger name?", False),
        ("Could you confirm the passenger name?\nThe booking stays as it is.", True),
        (" \n ", True),  # blank words, no question back
    ],
)
def test_only_a_question_back_on_the_last_line_spares_the_run(last_word: str, present: bool) -> None:
    v = verdict("FM-3.1", _lookup_then([("say", last_word)]))
    assert (v.verdict == "present") is present
    assert [ev.note for ev in v.evidence] == ([NOTHING_DONE] if present else [])


# FM-1.5: talking past the user's goodbye ----------------------------------------------------------


@pytest.mark.parametrize(
    ("goodbye", "present"),
    [
        ("I'm all set.", True),  # a done phrase that is not only closing words
        ("Okay, thank you!", True),  # only closing words, none of them a done phrase
        ("Okay, thank you! Could you also add a bag?", False),
    ],
)
def test_either_kind_of_goodbye_ends_the_conversation(goodbye: str, present: bool) -> None:
    t = T(task=None).user("Change my seat.").call("update_seat", seat="4A").result('{"seat": "4A"}')
    t.say("Done: seat 4A. Anything else?").user(goodbye)
    t.say("Of course.").say("Let me know if there is anything else.")
    v = verdict("FM-1.5", t.build())
    assert (v.verdict == "present") is present
    if present:
        assert [(ev.seq_start, ev.seq_end, ev.note) for ev in v.evidence] == [
            (4, 6, "2 more agent messages after the user said they were done")
        ]


# FM-3.1: which events are plans -------------------------------------------------------------------


def _plans(*plans: tuple[str, str]) -> Trace:
    """A question, then agent events (kind, text) in order, then an answer."""
    t = T(task="What is 6 times 7?").user("What is 6 times 7?")
    for kind, text in plans:
        t.say(text, kind=kind)
    t.sh("python -c 'print(6*7)'", "42").say("Answer: 42")
    return t.build(termination=SUBMITTED)


@pytest.mark.parametrize(
    ("text", "open_items"),
    [("- [x] read\n- [ ] compute\n- [ ] check", 2), ("- [ ] compute\n- [ ] check", 2), ("1. [ ] compute", 1)],
)
def test_a_checklist_in_a_message_is_a_plan(text: str, open_items: int) -> None:
    v = verdict("FM-3.1", _plans(("message", text)))
    assert v.verdict == "present"
    assert [(ev.seq_start, ev.note) for ev in v.evidence] == [(1, f"last plan has {open_items} open item(s)")]


@pytest.mark.parametrize(
    ("kind", "later"),
    [
        ("message", "- [x] compute\n- [x] check"),  # every box ticked
        ("plan", "All steps are done."),  # a plan event needs no boxes
    ],
)
def test_a_later_plan_with_nothing_open_replaces_the_open_one(kind: str, later: str) -> None:
    v = verdict("FM-3.1", _plans(("message", "- [ ] compute\n- [ ] check"), (kind, later)))
    assert v.verdict == "absent"
    assert v.evidence == []


def test_a_box_that_is_not_a_list_item_is_no_plan() -> None:
    v = verdict("FM-3.1", _plans(("message", "The form has a [ ] box inline, and [x] another.")))
    assert v.verdict == "absent"


# FM-1.5: the agent's own completion signal (FINAL ANSWER, TERMINATE, task complete) ---------------


@pytest.mark.parametrize(
    ("final", "present"),
    [
        ("The result is 4.\nTERMINATE", True),
        ("The result is 4. TERMINATE", True),
        ("FINAL ANSWER: 4", True),
        ("**Final answer** 4", True),
        ("Task complete.", True),
        ("The task is not complete yet.", False),
        ("The result is 4. terminate", False),  # the signal is upper case
        ('Reply "TERMINATE" when you agree.', False),  # quoted: an instruction, not the signal
    ],
)
def test_turns_after_a_terminate_are_past_the_end(final: str, present: bool) -> None:
    t = T(task="Compute 2+2.").user("Compute 2+2.").say(final, actor="assistant")
    for i in range(3):
        t.say(f"Checking step {i} again.", actor="critic")
    v = verdict("FM-1.5", t.build())
    assert (v.verdict == "present") is present
    if present:
        assert [(ev.seq_start, ev.seq_end, ev.note) for ev in v.evidence] == [
            (1, 4, "3 more turns after the final answer")
        ]


# FM-1.5: a stop signal named in the instructions ---------------------------------------------------


@pytest.mark.parametrize(
    ("by", "said", "present"),
    [
        ("user", False, True),
        ("user", True, False),  # the agent sent the signal: it knew when to stop
        ("agent", False, False),  # the agent ended the run itself, signal or not
    ],
)
def test_a_stop_signal_never_sent(by: str, said: bool, present: bool) -> None:
    t = T(task=None).system("Work on the task. When finished, reply with exactly DONE and stop.")
    t.user("Summarise the report.").say("The report says sales rose.")
    if said:
        t.say("DONE")
    reason = "user" if by == "user" else "final_answer"
    term = Termination(reason=reason, by=by, at_seq=2)  # type: ignore[arg-type]
    v = verdict("FM-1.5", t.build(termination=term))
    assert (v.verdict == "present") is present
    if present:
        assert [(ev.seq_start, ev.seq_end) for ev in v.evidence] == [(0, 2)]
        assert v.evidence[0].note == (
            "the instructions' stop signal 'DONE' is never sent; the run was ended by user (user)"
        )
    elif by == "agent":
        assert v.verdict == "absent"


ENDED_BY_USER = Termination(reason="user", by="user", native="user_hangup", at_seq=3)
STOP = "When finished, reply with exactly DONE and stop."


def _stop_run(t: T, term: Termination = ENDED_BY_USER) -> ModeVerdict:
    """``t`` with an agent summary and a closing line appended, ended by ``term``."""
    t.say("The report says sales rose.").say("That is the summary.")
    return verdict("FM-1.5", t.build(termination=term))


def _stop_evidence(v: ModeVerdict) -> list[tuple[int | None, int | None, str | None]]:
    return [(ev.seq_start, ev.seq_end, ev.quote) for ev in v.evidence]


def test_the_stop_signal_evidence_runs_from_the_instruction_to_the_end() -> None:
    v = _stop_run(T(task=None).system("You are an analyst.").user(f"Summarise the report. {STOP}"))
    assert v.verdict == "present"
    assert _stop_evidence(v) == [(1, 3, "reply with exactly DONE")]
    assert v.evidence[0].agent is None
    assert v.evidence[0].note == (
        "the instructions' stop signal 'DONE' is never sent; the run was ended by user (user_hangup)"
    )


def test_without_an_end_seq_the_evidence_stays_on_the_instruction() -> None:
    term = Termination(reason="user", by="user")
    v = _stop_run(T(task=None).user(f"Summarise the report. {STOP}"), term)
    assert _stop_evidence(v) == [(0, 0, "reply with exactly DONE")]
    assert v.evidence[0].note is not None and v.evidence[0].note.endswith("ended by user (user)")


def test_a_system_kind_event_is_an_instruction_whatever_its_role() -> None:
    t = T(task=None).user("Summarise the report.")
    t.event(kind="system", actor="harness", role="assistant", content=STOP)  # a harness note
    v = _stop_run(t)
    assert v.verdict == "present"
    assert _stop_evidence(v) == [(1, 3, "reply with exactly DONE")]


@pytest.mark.parametrize("where", ["tool output", "agent note"])
def test_only_system_and_user_words_are_instructions(where: str) -> None:
    t = T(task=None).user("Summarise the report.")
    if where == "tool output":
        t.call("read_file", path="r.txt").result(f"Notes: {STOP}")
    else:
        t.say(f"Noted the house rule: {STOP}").say("Reading the report now.")
    v = _stop_run(t, ENDED_BY_USER.model_copy(update={"at_seq": 4}))
    assert v.verdict == "unknown"
    assert v.evidence == []


@pytest.mark.parametrize(("padding", "present"), [(5, True), (6, False)])
def test_only_the_first_six_events_are_read_for_instructions(padding: int, present: bool) -> None:
    t = T(task=None)
    for i in range(padding):
        t.user(f"Part {i} of the report follows.")
    t.user(STOP)
    v = _stop_run(t, ENDED_BY_USER.model_copy(update={"at_seq": padding + 2}))
    assert (v.verdict == "present") is present


def test_only_the_agent_sending_the_signal_counts() -> None:
    t = T(task=None).user(f"Summarise the report. {STOP}").user("Remember the DONE at the end.")
    v = _stop_run(t, ENDED_BY_USER.model_copy(update={"at_seq": 4}))
    assert v.verdict == "present"
    assert _stop_evidence(v) == [(0, 4, "reply with exactly DONE")]


def test_a_tool_call_without_text_does_not_send_the_signal() -> None:
    t = T(task=None).user("Summarise the report. When finished, reply with exactly XXXX and stop.")
    t.call("read_file", path="r.txt").result("sales rose")
    v = _stop_run(t, ENDED_BY_USER.model_copy(update={"at_seq": 4}))
    assert v.verdict == "present"
    assert _stop_evidence(v) == [(0, 4, "reply with exactly XXXX")]


def test_a_long_stop_token_is_quoted_at_200_characters() -> None:
    token = "D" * 300
    v = _stop_run(T(task=None).user(f"Please reply with exactly {token} and stop."))
    assert v.verdict == "present"
    assert v.evidence[0].quote == f"reply with exactly {token}"[:200]


def test_a_completing_call_made_by_the_user_is_not_a_reopening() -> None:
    t = T(task=None).user("Please close my ticket.").say("Looking at it.")
    t.event(
        kind="tool_call",
        actor="user",
        role="user",
        tool_call=ToolCall(name="close_ticket", call_id="u1", arguments={"id": "T1"}),
    ).result("Ticket closed.")
    t.call("read_file", path="notes.txt").result("x").call("run", script="report.py").result("ok")
    v = verdict("FM-1.5", t.build())
    assert v.verdict == "present"
    assert [(ev.seq_start, ev.seq_end, ev.note) for ev in v.evidence] == [
        (2, 6, "2 more tool calls after the task was completed")
    ]
