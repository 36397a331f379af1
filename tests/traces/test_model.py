from __future__ import annotations

import pytest
from pydantic import ValidationError

from mastkit.traces import Event, Label, SourceRef, ToolCall, ToolResult, Trace, Usage


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
    with pytest.raises(ValueError, match="tool_call is set but kind is 'message'"):
        Event(seq=0, kind="message", tool_call=ToolCall(name="x"))
    with pytest.raises(ValidationError, match="tool_result is set but kind is 'message'"):
        Event.validate({"seq": 0, "kind": "message", "tool_result": {"output": "ok"}})


def test_unknown_fields_rejected() -> None:
    with pytest.raises(TypeError):
        Event(seq=0, kind="message", colour="red")  # type: ignore[call-arg]
    with pytest.raises(ValidationError):
        Event.validate({"seq": 0, "kind": "message", "colour": "red"})


def test_events_are_validated_where_they_come_in() -> None:
    # a dataclass: building one directly does not check field types (importers go through the
    # builder, which does) ...
    loose = Event(seq=0, kind="message", content=5)  # type: ignore[arg-type]
    # ... but a Trace validates the events it is given, and Event.validate checks every field
    with pytest.raises(ValidationError, match="content"):
        Trace(trace_id="x", source_format="t", events=[loose])
    with pytest.raises(ValidationError, match="kind"):
        Event.validate({"seq": 0, "kind": "mystery"})
    assert Event.validate({"seq": "3", "kind": "message"}).seq == 3  # coerced as for a model


def test_tool_parts_are_checked_on_construction() -> None:
    # the small dataclasses check their values as pydantic models did: exact types pass, others
    # are coerced where pydantic would, or rejected
    assert ToolResult(exit_code="3", duration_ms=5).exit_code == 3  # type: ignore[arg-type]
    assert ToolResult(duration_ms=5).duration_ms == 5.0
    with pytest.raises(ValidationError):
        ToolCall(name=None)  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        SourceRef(line="three")  # type: ignore[arg-type]


def test_future_schema_version_rejected() -> None:
    with pytest.raises(ValidationError, match="unsupported canonical schema_version"):
        Trace.model_validate({"schema_version": "2.0", "trace_id": "x", "source_format": "t"})


def test_tool_call_pairing_by_id_then_order() -> None:
    pairs = [(c.seq, r.seq if r else None) for c, r in _trace().tool_calls()]
    assert pairs == [(1, 2), (3, 4)]


def test_tool_call_pairing_with_reused_and_foreign_ids() -> None:
    # gpt-4o in tau-bench reuses a call id within a run (49 of 200 runs): each call takes the
    # first result with its id after it, not the first one of the run.
    def call(seq: int, cid: str | None) -> Event:
        return Event(seq=seq, kind="tool_call", tool_call=ToolCall(name="book", call_id=cid))

    def result(seq: int, cid: str | None) -> Event:
        return Event(seq=seq, kind="tool_result", tool_result=ToolResult(call_id=cid, output=str(seq)))

    events = [call(0, "x"), result(1, "x"), call(2, "x"), result(3, "x"), call(4, None), result(5, "zz")]
    events += [result(6, "y"), call(7, "y")]  # a result logged before its call still pairs
    t = Trace(trace_id="t", source_format="test", events=events)
    pairs = [(c.seq, r.seq if r else None) for c, r in t.tool_calls()]
    assert pairs == [(0, 1), (2, 3), (4, 5), (7, 6)]


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


def test_labels_are_checked_on_construction() -> None:
    assert Label(step="3", present=True).step == 3  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        Label(kind="opinion")  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        Label(source="crowd")  # type: ignore[arg-type]
    t = Trace(trace_id="x", source_format="t", labels=[Label(code="FM-1.3", present=True, source="human")])
    assert Trace.model_validate_json(t.model_dump_json()) == t


def test_label_extra_keys_are_checked_like_the_model() -> None:
    # Label.extra is dict[str, Any]: a non-str key was a ValidationError when Label was a model; a
    # dataclass that kept it would write {"1": 2} and load back unequal
    with pytest.raises(ValidationError):
        Label(extra={1: 2})  # type: ignore[dict-item]

    class Key(str):
        pass

    lab = Label(extra={Key("k"): 1})
    assert [type(k) for k in lab.extra] == [str]  # what pydantic makes of a str subclass


@pytest.mark.parametrize(
    ("actor", "role", "kind", "expected"),
    [
        ("user", "user", "message", True),
        ("Human", "user", "message", True),
        ("Coder", "user", "message", False),  # an agent whose messages carry the user role
        (None, "user", "message", False),
        ("user", "user", "tool_call", False),
        ("user", "system", "message", False),
        ("system", "system", "message", False),
    ],
)
def test_is_user_message(actor: str | None, role: str, kind: str, expected: bool) -> None:
    e = Event(seq=0, kind=kind, actor=actor, role=role, content="hello")  # type: ignore[arg-type]
    assert e.is_user_message() is expected
