"""The small 'miles to km' run both LLM attributor test files ask about: agent steps (the
candidates) are 1 planner, 2 coder, 4 coder, 5 verifier; the coder's factor is wrong."""

from __future__ import annotations

from mastkit.providers import RetryPolicy
from mastkit.traces.model import Event, ToolCall, ToolResult

RETRY = RetryPolicy(max_attempts=2, initial_delay_s=0.01, max_delay_s=0.02, jitter=0.0)
"""Fast retries for the loopback server."""


def miles_events() -> list[Event]:
    return [
        Event(seq=0, kind="message", actor="user", role="user", content="Convert 5 miles to km."),
        Event(seq=1, kind="message", actor="planner", role="assistant", content="Plan: multiply by 1.6."),
        Event(
            seq=2,
            kind="tool_call",
            actor="coder",
            role="assistant",
            tool_call=ToolCall(name="python", arguments={"code": "print(5 * 1.5)"}),
        ),
        Event(seq=3, kind="tool_result", actor="python", role="tool", tool_result=ToolResult(output="7.5")),
        Event(seq=4, kind="message", actor="coder", role="assistant", content="The answer is 7.5 km."),
        Event(seq=5, kind="message", actor="verifier", role="assistant", content="Looks right. TERMINATE"),
    ]
