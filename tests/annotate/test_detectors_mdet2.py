"""FM-3.1 premature termination and FM-1.5 unaware of termination: the paths that the other
detector tests left weak (structured plans, refusals handed to a human, completing calls whose
result says no). Each case is a small hand-built trace: one that must fire and a near miss."""

from __future__ import annotations

from typing import Any

import pytest

from mastkit.annotate.detectors._base import detectors
from mastkit.annotate.model import ModeVerdict
from mastkit.traces.model import Termination, Trace

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
