"""The fast constructors importers use: the same objects pydantic validation makes, or its errors."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from pathlib import Path

import pytest
from pydantic import TypeAdapter, ValidationError

from mastkit.errors import TraceLoadError
from mastkit.traces._build import TraceBuilder, make_event, read_json_file, source_ref, usage_from, with_cost
from mastkit.traces.model import Event, SourceRef, ToolCall, Trace, Usage


def _same(fast: Event | SourceRef, checked: Event | SourceRef) -> None:
    assert fast == checked
    adapter: TypeAdapter[Event | SourceRef] = TypeAdapter(type(checked))
    assert adapter.dump_json(fast) == adapter.dump_json(checked)


def test_make_event_equals_validated_event() -> None:
    fields = {
        "actor": "Coder",
        "role": "assistant",
        "content": "hi",
        "recipients": ["Reviewer"],
        "started_at": datetime(2025, 1, 1, tzinfo=UTC),
        "source": source_ref(line=3, offset=10),
        "raw": {"anything": [1, 2]},
    }
    _same(make_event(4, "message", dict(fields)), Event.validate({"seq": 4, "kind": "message", **fields}))
    call = ToolCall(name="bash", arguments={"cmd": "ls"})
    _same(
        make_event(0, "tool_call", {"tool_call": call}),
        Event.validate(
            {"seq": 0, "kind": "tool_call", "tool_call": {"name": "bash", "arguments": {"cmd": "ls"}}}
        ),
    )


def test_make_event_gives_each_event_its_own_extra() -> None:
    a, b = make_event(0, "message", {}), make_event(1, "message", {})
    a.extra["x"] = 1
    assert b.extra == {}


@pytest.mark.parametrize(
    ("kind", "fields"),
    [
        ("message", {"segment": None}),  # None for a non-optional field
        ("message", {"extra": None}),
        ("message", {"role": "robot"}),  # not a Role
        ("message", {"recipients": ["a", 3]}),
        ("message", {"colour": "red"}),  # unknown field
        ("mystery", {}),  # unknown kind
        ("message", {"tool_call": ToolCall(name="x")}),  # payload does not match kind
    ],
)
def test_make_event_leaves_bad_values_to_pydantic(kind: str, fields: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        make_event(0, kind, fields)


def test_make_event_coerces_like_pydantic_off_the_fast_path() -> None:
    # an int where a str is declared is not on the fast path: pydantic decides (it rejects it)
    with pytest.raises(ValidationError):
        make_event(0, "message", {"content": 5})

    # a str subclass takes the validating path and comes out as what pydantic makes of it
    class Text(str):
        pass

    ev = make_event(0, "message", {"content": Text("x")})
    assert type(ev.content) is str  # pydantic makes a plain str of it; the fast path would keep Text
    assert ev == Event.validate({"seq": 0, "kind": "message", "content": Text("x")})


def test_source_ref_equals_validated_ref() -> None:
    ref = TypeAdapter(SourceRef)
    _same(source_ref(pointer="/history/3"), ref.validate_python({"pointer": "/history/3"}))
    _same(
        source_ref(path="a.json", line=1, end_line=4, offset=0),
        ref.validate_python({"path": "a.json", "line": 1, "end_line": 4, "offset": 0}),
    )
    _same(source_ref(), ref.validate_python({}))


def test_source_ref_validates_other_types() -> None:
    with pytest.raises(ValidationError):
        source_ref(line="three")  # type: ignore[arg-type]
    assert source_ref(line=True) == SourceRef(line=True)  # bool is an int to mypy; pydantic decides


def test_builder_numbers_events_and_lists_agents() -> None:
    b = TraceBuilder("chat_messages", "run.json", trace_id="run")
    b.add("message", actor="user", role="user", content="hi")
    b.add("message", actor="Coder", role="assistant", content="hello")
    t = b.build()
    assert [e.seq for e in t.events] == [0, 1]
    assert [a.name for a in t.agents] == ["Coder"]


def test_pointer_refs_are_shared_and_frozen() -> None:
    a, b = source_ref(pointer="/history/7"), source_ref(pointer="/history/7")
    assert a is b
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.pointer = "/history/8"  # type: ignore[misc]
    assert source_ref(pointer="/history/7", line=2) is not a


def test_build_checks_the_event_list() -> None:
    b = TraceBuilder("chat_messages", "run.json", trace_id="run")
    b.add("message", content="a")
    b.add("message", content="b")
    t = b.build(task="x")
    assert t == Trace.model_validate(t.model_dump()) and "events" in t.model_fields_set
    b.events.reverse()  # an importer that reorders events must renumber them
    with pytest.raises(ValidationError, match=r"seq must be 0\.\.n-1"):
        b.build()


def test_with_cost_adds_a_numeric_cost_only() -> None:
    tokens = Usage(input_tokens=10, output_tokens=2)
    assert with_cost(tokens, 0.25) == Usage(input_tokens=10, output_tokens=2, cost_usd=0.25)
    assert with_cost(None, 3) == Usage(cost_usd=3.0)
    for not_a_cost in (None, True, "0.5", [1]):
        assert with_cost(tokens, not_a_cost) is tokens
    assert with_cost(None, None) is None


def test_usage_from_does_not_read_bare_input_output_keys() -> None:
    """Some callers pass whole records (a LangSmith run, an OpenHands call), where ``input``,
    ``output`` or ``total`` are no token counts: only Langfuse's usage reader maps those names."""
    assert usage_from({"id": "r1", "input": 50, "output": 3, "total": 7}) is None


def test_read_json_file_returns_the_document_or_an_error_naming_the_file(tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    good.write_text('{"a": [1, 2]}')
    assert read_json_file(good, "settings file") == {"a": [1, 2]}
    bad = tmp_path / "bad.json"
    bad.write_text('{"a": 1,\n "b": }')
    err = read_json_file(bad, "settings file")
    assert isinstance(err, TraceLoadError) and err.path == str(bad) and not err.internal
    assert err.reason.startswith("settings file: ") and err.line == 2 and err.offset is not None
    missing = read_json_file(tmp_path / "gone.json", "settings file")
    assert isinstance(missing, TraceLoadError) and missing.path == str(tmp_path / "gone.json")
    assert missing.reason == "settings file: cannot read: No such file or directory"
