"""The framework-free wrapper: combining decisions, guard events, never raising, recording the run."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

import mastkit
from mastkit.guard import (
    GUARD_SUBTYPE,
    BudgetGuard,
    Decision,
    Guardian,
    LoopGuard,
    RunState,
    combine,
    guarded_run,
)
from mastkit.traces import Event, ToolCall

from ._kit import call, only, tool_call_event, tool_result_event


class Fixed:
    """A guard that always answers the same."""

    def __init__(self, name: str, decision: Decision) -> None:
        self.name = name
        self.decision = decision

    def check(self, event: Event, state: RunState) -> Decision:
        return self.decision


class Broken:
    name = "broken"

    def check(self, event: Event, state: RunState) -> Decision:
        raise RuntimeError("bug in a guard")


def test_the_most_severe_decision_wins_and_all_are_kept() -> None:
    warn = Decision("warn", "careful", "FM-1.3", "a")
    block = Decision("block", "no", "FM-2.6", "b")
    redirect = Decision("redirect", "ask", "FM-2.2", "c")
    d = combine([warn, redirect, block])
    assert d.action == "block" and d.guard == "b" and [p.guard for p in d.parts] == ["b", "c", "a"]
    assert combine([redirect, warn]).action == "redirect"
    g = Guardian([Fixed("a", warn), Fixed("b", block)], stamp_times=False)
    d = g.check_tool_call("x", {})
    assert d.action == "block" and d.stops and not d.allowed
    kinds = [(e.kind, e.subtype) for e in g.events]
    assert kinds == [("tool_call", None), ("system", GUARD_SUBTYPE), ("system", GUARD_SUBTYPE)]
    info = g.events[1].extra["guard"]
    assert info == {"action": "block", "guard": "b", "mode": "FM-2.6", "message": "no", "seqs": [],
                    "evidence": "", "checked_seq": 0}  # fmt: skip
    assert g.events[1].content == "no" and g.events[1].actor is None and g.events[1].role == "system"


def test_a_failing_guard_becomes_allow_and_a_logged_warning(caplog: pytest.LogCaptureFixture) -> None:
    g = Guardian([Broken(), LoopGuard(warn_at=2, block_at=3)], stamp_times=False)
    with caplog.at_level(logging.WARNING, logger="mastkit.guard"):
        actions = [call(g, "ls", {}) for _ in range(3)]
    assert actions == ["allow", "warn", "block"]  # the other guards still run
    assert "guard 'broken' failed" in caplog.text


def test_a_bad_event_never_raises(caplog: pytest.LogCaptureFixture) -> None:
    g = only(LoopGuard())
    bad = Event(seq=0, kind="tool_call", tool_call=ToolCall(name="x"))
    object.__setattr__(bad, "usage", "not usage")  # a host passing junk
    with caplog.at_level(logging.WARNING, logger="mastkit.guard"):
        assert g.check(bad).action == "allow"
    assert "could not record event" in caplog.text


def test_results_pair_by_call_id_and_seqs_are_renumbered() -> None:
    g = only(LoopGuard())
    g.check(tool_call_event("a", {}, call_id="c1"))
    g.check(tool_call_event("b", {}, call_id="c2"))
    g.check(tool_result_event("B", call_id="c2"))
    g.check(tool_result_event("A", call_id="c1"))
    assert [e.seq for e in g.events] == [0, 1, 2, 3]
    assert g.state.call_of(g.events[2]) is g.events[1] and g.state.call_of(g.events[3]) is g.events[0]


def test_the_hosts_event_is_not_changed() -> None:
    g = only(LoopGuard())
    g.check_message("hi")
    e = tool_call_event("a", {})
    g.check(e)
    assert e.seq == 0 and g.events[1].seq == 1


def test_replay_catches_up_without_emitting() -> None:
    g = only(LoopGuard())
    earlier = []
    for _ in range(4):
        earlier += [tool_call_event("ls", {}), tool_result_event("x")]
    g.replay(earlier)
    assert g.guard_events() == [] and g.decisions == []
    assert g.check_tool_call("ls", {}).action == "block"


def test_guarded_run_records_a_trace_that_loads_back(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    with guarded_run(spec={"guards": {"loop": {"warn_at": 2, "block_at": 3}}}, save_to=out,
                     task="List the files", trace_id="run-1", model="m1") as g:  # fmt: skip
        for _ in range(3):
            if g.check_tool_call("ls", {"p": "."}).allowed:
                g.record_tool_result("a.py")
        assert g.check_stop("Listed.").allowed
    [trace] = mastkit.load_traces(out)
    assert trace.trace_id == "run-1" and trace.source_format == "mastkit_guard" and trace.model == "m1"
    assert trace.task == "List the files" and trace.events[0].role == "user"
    guards = [e for e in trace.events if e.subtype == GUARD_SUBTYPE]
    assert [e.extra["guard"]["action"] for e in guards] == ["warn", "block"]
    assert trace.termination is not None and trace.termination.by == "agent"
    assert trace == g.trace(model="m1").model_copy(update={"ended_at": trace.ended_at})


def test_guarded_run_records_an_error_and_reraises(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    with pytest.raises(ValueError, match="agent crashed"), guarded_run(save_to=out) as g:
        g.check_tool_call("ls", {})
        raise ValueError("agent crashed")
    [trace] = mastkit.load_traces(out)
    assert trace.events[-1].kind == "error" and trace.termination is not None
    assert trace.termination.reason == "error"


def test_guarded_run_reuses_a_guardians_guards_with_a_fresh_state() -> None:
    base = Guardian([LoopGuard(warn_at=2, block_at=3)], stamp_times=False)
    for _ in range(2):
        with guarded_run(base) as g:
            assert [call(g, "ls", {}) for _ in range(3)] == ["allow", "warn", "block"]
    assert base.events == []


def test_a_budget_on_the_default_guardian_counts_steps_not_results() -> None:
    g = Guardian([BudgetGuard(max_steps=3)], stamp_times=False)
    actions = [call(g, "a", {"i": i}) for i in range(4)]
    assert actions == ["allow", "allow", "allow", "block"]  # 3 calls + 3 results: 3 steps
