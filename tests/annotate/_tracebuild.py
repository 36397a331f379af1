"""Tiny DSL to hand-build canonical traces for detector tests."""

from __future__ import annotations

from typing import Any

from mastkit.annotate.detectors._base import detector_for
from mastkit.annotate.model import ModeVerdict
from mastkit.taxonomy import load_taxonomy
from mastkit.traces.model import Event, Termination, ToolCall, ToolResult, Trace

MAST = load_taxonomy("mast")


def verdict(code: str, trace: Trace) -> ModeVerdict:
    """MAST's rule detector for ``code`` run on ``trace``, with what every verdict must hold checked:
    it names its mode and its rule, and a ``present`` verdict carries evidence."""
    det = detector_for(MAST, code)
    assert det is not None, code
    v = det(trace)
    assert (v.code, v.source) == (code, f"rule:{det.name}")
    if v.verdict == "present":
        assert v.evidence, "a present verdict must carry evidence"
    return v


class T:
    def __init__(self, task: str | None = "Fix the failing checkout service.") -> None:
        self.events: list[Event] = []
        self.task = task

    def _add(self, **kw: Any) -> T:
        self.events.append(Event(seq=len(self.events), **kw))
        return self

    def user(self, text: str) -> T:
        return self._add(kind="message", actor="user", role="user", content=text)

    def system(self, text: str) -> T:
        return self._add(kind="message", actor="system", role="system", content=text)

    def say(self, text: str, actor: str = "agent", kind: str = "message") -> T:
        return self._add(kind=kind, actor=actor, role="assistant", content=text)

    def call(self, name: str, actor: str = "agent", copied: bool = False, **args: Any) -> T:
        cid = f"c{len(self.events)}"
        return self._add(
            kind="tool_call",
            actor=actor,
            role="assistant",
            is_copied_context=copied,
            tool_call=ToolCall(name=name, call_id=cid, arguments=args),
        )

    def result(
        self, output: str, error: bool | None = None, exit_code: int | None = None, copied: bool = False
    ) -> T:
        cid = next(e.tool_call.call_id for e in reversed(self.events) if e.tool_call is not None)
        return self._add(
            kind="tool_result",
            actor="environment",
            role="tool",
            is_copied_context=copied,
            tool_result=ToolResult(call_id=cid, output=output, is_error=error, exit_code=exit_code),
        )

    def sh(self, cmd: str, output: str = "ok", exit_code: int = 0, actor: str = "agent") -> T:
        return self.call("bash", actor=actor, command=cmd).result(output, exit_code=exit_code)

    def event(self, **kw: Any) -> T:
        return self._add(**kw)

    def build(self, termination: Termination | None = None, **kw: Any) -> Trace:
        return Trace(
            trace_id="t",
            source_format="test",
            task=self.task,
            events=self.events,
            termination=termination,
            **kw,
        )
