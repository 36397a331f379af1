from __future__ import annotations

import pytest
from pydantic import ValidationError

from mastkit.traces import Event, ToolCall, ToolResult, Trace, Usage


def _trace(**kw: object) -> Trace:
    events = [
        Event(seq=0, kind="message", actor="user", role="user", content="fix the bug"),
        Event(
            seq=1,
            kind="tool_call",
            actor="coder",
            tool_call=ToolCall(name="bash", call_id="c1", arguments_raw="ls"),
        ),
        Event(
            seq=2,
            kind="tool_result",
            actor="environment",
            tool_result=ToolResult(call_id="c1", output="a.py"),
        ),
        Event(
            seq=3, kind="tool_call", actor="coder", tool_call=ToolCall(name="bash", arguments_raw="pytest")
        ),
        Event(
            seq=4,
            kind="tool_result",
            actor="environment",
            tool_result=ToolResult(output="1 failed", is_error=True),
        ),
    ]
    return Trace(trace_id="t1", source_format="test", events=events, **kw)  # type: ignore[arg-type]


def test_seq_must_be_dense_and_ordered() -> None:
    with pytest.raises(ValidationError, match=r"seq must be 0\.\.n-1"):
        Trace(trace_id="x", source_format="t", events=[Event(seq=1, kind="message")])


def test_payload_must_match_kind() -> None:
    with pytest.raises(ValidationError, match="tool_call is set but kind is 'message'"):
        Event(seq=0, kind="message", tool_call=ToolCall(name="x"))


def test_unknown_fields_rejected() -> None:
    with pytest.raises(ValidationError):
        Event(seq=0, kind="message", colour="red")  # type: ignore[call-arg]


def test_future_schema_version_rejected() -> None:
    with pytest.raises(ValidationError, match="unsupported canonical schema_version"):
        Trace.model_validate({"schema_version": "2.0", "trace_id": "x", "source_format": "t"})


def test_tool_call_pairing_by_id_then_order() -> None:
    pairs = [(c.seq, r.seq if r else None) for c, r in _trace().tool_calls()]
    assert pairs == [(1, 2), (3, 4)]


def test_usage_sums_and_falls_back_to_trace_total() -> None:
    t = _trace(usage=Usage(input_tokens=10))
    assert t.total_usage().input_tokens == 10
    t.events[1].usage = Usage(input_tokens=3, output_tokens=1, cost_usd=0.5)
    t.events[3].usage = Usage(input_tokens=4, cost_usd=0.25)
    total = t.total_usage()
    assert (total.input_tokens, total.output_tokens, total.cost_usd) == (7, 1, 0.75)


def test_json_round_trip_is_identical() -> None:
    t = _trace()
    t.events[0].raw = {"nested": [1, "two", {"three": None}]}
    assert Trace.model_validate_json(t.model_dump_json()) == t


def test_derived_views() -> None:
    t = _trace()
    assert t.actors() == ["user", "coder", "environment"]
    assert t.kind_counts()["tool_call"] == 2
    assert t.events[1].text() == "bash(ls)"
