"""Traces and notes for the taxonomy-learning tests."""

from __future__ import annotations

from mastkit.learn.notes import Note
from mastkit.traces.model import Event, Outcome, ToolCall, ToolResult, Trace


def tool_trace(trace_id: str, errors: list[str], *, success: bool = False, repeat: int = 1) -> Trace:
    """A run that calls a tool once per error message (each failing), ``repeat`` times each."""
    events: list[Event] = [Event(seq=0, kind="message", actor="user", role="user", content="Do the job.")]
    for msg in errors:
        for _ in range(repeat):
            cid = f"c{len(events)}"
            events.append(
                Event(seq=len(events), kind="tool_call", actor="agent", role="assistant",
                      tool_call=ToolCall(name="run", call_id=cid, arguments={"cmd": "deploy"}))
            )  # fmt: skip
            events.append(
                Event(seq=len(events), kind="tool_result", actor="environment", role="tool",
                      tool_result=ToolResult(call_id=cid, output=msg, is_error=True))
            )  # fmt: skip
    events.append(
        Event(seq=len(events), kind="message", actor="agent", role="assistant", content="Finished.")
    )
    return Trace(trace_id=trace_id, source_format="test", events=events, outcome=Outcome(success=success))


def notes(kind: str, traces: range, *, failed: bool = True) -> list[Note]:
    texts = {
        "perm": "tool call failed with error: permission denied on <path>",
        "loop": "the agent repeated the same call several times in a loop without new progress",
        "stop": "the agent gave up and stopped without completing the task",
    }
    signal = {"perm": "tool_error", "loop": "repetition", "stop": "stop"}[kind]
    return [
        Note(trace_id=f"{kind}{i}", text=texts[kind], signal=signal, seqs=[i], failed=failed) for i in traces
    ]
