"""Small helpers for the guard tests: a Guardian with one guard, a fake clock, events."""

from __future__ import annotations

from typing import Any

from mastkit.guard import Guard, Guardian, RunConfig
from mastkit.traces import Event, ToolCall, ToolResult


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def only(guard: Guard, **kwargs: Any) -> Guardian:
    """A Guardian running just ``guard`` (times not stamped, so traces are deterministic)."""
    kwargs.setdefault("stamp_times", False)
    return Guardian([guard], **kwargs)


def call(g: Guardian, name: str, args: Any = None, result: str | None = "ok", **result_kw: Any) -> str:
    """Check a tool call; when allowed, record ``result`` for it. Returns the decision's action."""
    d = g.check_tool_call(name, args)
    if d.allowed and result is not None:
        g.record_tool_result(result, **result_kw)
    return d.action


def tool_call_event(name: str, args: Any = None, call_id: str | None = None) -> Event:
    return Event(
        seq=0,
        kind="tool_call",
        role="assistant",
        tool_call=ToolCall(name=name, arguments=args, call_id=call_id),
    )


def tool_result_event(output: str, call_id: str | None = None, **kw: Any) -> Event:
    return Event(
        seq=0, kind="tool_result", role="tool", tool_result=ToolResult(output=output, call_id=call_id, **kw)
    )


def config(**kw: Any) -> RunConfig:
    return RunConfig(**kw)
