"""Small synthetic rollouts for verifier tests: a tau-bench-like airline conversation whose
length, state-changing calls and hand-off are chosen per rollout."""

from __future__ import annotations

from typing import Any

from mastkit.traces.model import Event, Label, Outcome, ToolCall, ToolResult, Trace


def rollout(
    task: str,
    trial: int,
    *,
    success: bool | None = None,
    turns: int = 2,
    changes: int = 0,
    handoff: bool = False,
    info: Any = None,
    text: str = "",
) -> Trace:
    events: list[Event] = [
        Event(seq=0, kind="message", actor="user", role="user", content=f"help me {task} {text}")
    ]

    def add(**kw: Any) -> None:
        events.append(Event(seq=len(events), **kw))

    for i in range(turns):
        add(kind="message", actor="assistant", role="assistant", content=f"step {i} of {task}")
        add(kind="message", actor="user", role="user", content=f"ok {i}")
    for i in range(changes):
        call = ToolCall(name="update_reservation", call_id=f"c{i}", arguments_raw='{"id": 1}')
        add(kind="tool_call", actor="assistant", role="assistant", tool_call=call)
        add(
            kind="tool_result",
            actor="environment",
            role="tool",
            tool_result=ToolResult(call_id=f"c{i}", output="done"),
        )
    if handoff:
        call = ToolCall(name="transfer_to_human_agents", call_id="h", arguments_raw="{}")
        add(kind="tool_call", actor="assistant", role="assistant", tool_call=call)
    add(kind="message", actor="assistant", role="assistant", content="Anything else?")
    outcome = None if success is None else Outcome(success=success, score=float(success))
    return Trace(
        trace_id=f"{task}-t{trial}",
        source_format="test",
        task_id=task,
        task=f"the goal of {task}",
        events=events,
        outcome=outcome,
        raw={"reward": float(bool(success)), "info": info or {"task": {"actions": ["gold"]}}},
        labels=[Label(code="FM-3.1", present=not success)] if success is not None else [],
    )


def flipped(trace: Trace) -> Trace:
    """The same rollout with the opposite outcome, reward, labels and different grading info."""
    assert trace.outcome is not None
    ok = not trace.outcome.success
    return trace.model_copy(
        update={
            "outcome": Outcome(success=ok, score=float(ok), metrics={"reward": float(ok)}, ground_truth="X"),
            "raw": {
                "reward": float(ok),
                "info": {"reward_info": {"reward": float(ok)}, "task": {"actions": []}},
            },
            "labels": [],
            "extra": {"reward": float(ok), "grading": {"passed": ok}},
        }
    )
