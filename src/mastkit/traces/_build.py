"""Helpers shared by importers: a trace builder that numbers events, and value converters."""

from __future__ import annotations

import dataclasses
import hashlib
import os
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

import orjson

from mastkit.errors import FormatError, TraceLoadError
from mastkit.traces.model import (
    _OPT_INT,
    _OPT_STR,
    EVENT_KINDS,
    AgentInfo,
    Event,
    SourceRef,
    ToolCall,
    ToolResult,
    Trace,
    Usage,
    is_agent_name,
)
from mastkit.traces.source import Source

_KINDS = frozenset(EVENT_KINDS)
_ROLES = frozenset(("system", "user", "assistant", "tool", "environment"))
_FIELDS = [f.name for f in dataclasses.fields(Event)]
assert _FIELDS[:2] == ["seq", "kind"]
_NULL = type(None)
# Exact types an importer may pass for each field on the fast path (anything else goes through
# validation: a str subclass, a bool passed as an int, None for a non-optional field, ...).
# ``None`` in this map means any value (``raw``).
_FAST_TYPES: dict[str, frozenset[type] | None] = {
    name: None if types is None else frozenset(types)
    for name, types in {
        "actor": (str, _NULL), "content": (str, _NULL), "id": (str, _NULL), "parent_id": (str, _NULL),
        "llm_call_id": (str, _NULL), "thread_id": (str, _NULL), "subtype": (str, _NULL),
        "phase": (str, _NULL), "model": (str, _NULL), "role": (str, _NULL), "segment": (int,),
        "is_copied_context": (bool,), "recipients": (list, _NULL), "tool_call": (ToolCall, _NULL),
        "tool_result": (ToolResult, _NULL), "usage": (Usage, _NULL), "source": (SourceRef, _NULL),
        "started_at": (datetime, _NULL), "ended_at": (datetime, _NULL), "extra": (dict,), "raw": None,
    }.items()
}  # fmt: skip
_FAST_NAMES = frozenset(_FAST_TYPES)
assert set(_FIELDS) - {"seq", "kind"} == _FAST_NAMES


STRICT = os.environ.get("MASTKIT_STRICT_EVENTS") == "1"
"""When set (the test suite sets it), every event built on the fast path is also validated by
pydantic and must be equal: importers cannot rely on coercion the fast path does not do."""


def make_event(seq: int, kind: str, fields: dict[str, Any]) -> Event:
    """An :class:`Event` from an importer's values, checked: when every value already has its
    declared type (the common case) the dataclass is built directly; otherwise, or for anything
    unusual, pydantic validates it (coercing what it can, raising its own error for the rest).
    Loading is dominated by event construction, so this matters.
    """
    if kind in _KINDS and type(seq) is int:
        fast = _FAST_TYPES
        try:
            for name, value in fields.items():
                types = fast[name]  # KeyError: not a field
                if types is not None and type(value) not in types:
                    break
            else:
                role = fields.get("role")
                recipients = fields.get("recipients")
                if (role is None or role in _ROLES) and (
                    recipients is None or all(type(x) is str for x in recipients)
                ):
                    event = Event(seq, kind, **fields)  # type: ignore[arg-type]  # ValueError: payload vs kind
                    if STRICT:
                        _check_strict(event, Event.validate({"seq": seq, "kind": kind, **fields}))
                    return event
        except (KeyError, ValueError):
            pass
    return Event.validate({"seq": seq, "kind": kind, **fields})  # coerced, or pydantic's own error


def _check_strict(fast: object, checked: object) -> None:
    """Under STRICT: a fast-built object must equal the validated one."""
    if checked != fast:
        raise AssertionError(
            f"fast {type(fast).__name__} differs from the validated one: {checked!r} != {fast!r}"
        )


# Pointer-only refs recur across traces (``/history/3``): SourceRef is frozen, so they are shared.
_POINTER_REFS: dict[str, SourceRef] = {}


def source_ref(
    *,
    path: str | None = None,
    line: int | None = None,
    end_line: int | None = None,
    offset: int | None = None,
    pointer: str | None = None,
) -> SourceRef:
    """A :class:`SourceRef`; pointer-only refs are shared (SourceRef is frozen), which saves one
    object per event for formats whose events are addressed by JSON pointer."""
    if path is None and line is None and offset is None and end_line is None and type(pointer) is str:
        if (hit := _POINTER_REFS.get(pointer)) is not None:
            return hit
        if len(_POINTER_REFS) >= 8192:
            _POINTER_REFS.clear()
        ref = _POINTER_REFS[pointer] = _fast_ref(None, None, None, None, pointer)
        return ref
    if (
        type(line) in _OPT_INT and type(pointer) in _OPT_STR and type(path) in _OPT_STR
        and type(offset) in _OPT_INT and type(end_line) in _OPT_INT
    ):  # fmt: skip
        return _fast_ref(path, line, end_line, offset, pointer)
    return SourceRef(path=path, line=line, end_line=end_line, offset=offset, pointer=pointer)


def _fast_ref(
    path: str | None, line: int | None, end_line: int | None, offset: int | None, pointer: str | None
) -> SourceRef:
    """A SourceRef from values of the declared types: the frozen dataclass's slots are set
    directly (its own constructor goes through ``object.__setattr__`` per field, at three times
    the cost)."""
    ref = _new_ref(SourceRef)
    _set_ref_path(ref, path)
    _set_ref_line(ref, line)
    _set_ref_end_line(ref, end_line)
    _set_ref_offset(ref, offset)
    _set_ref_pointer(ref, pointer)
    if STRICT:
        _check_strict(ref, SourceRef(path=path, line=line, end_line=end_line, offset=offset, pointer=pointer))
    return ref


_new_ref = object.__new__
_set_ref_path = SourceRef.__dict__["path"].__set__
_set_ref_line = SourceRef.__dict__["line"].__set__
_set_ref_end_line = SourceRef.__dict__["end_line"].__set__
_set_ref_offset = SourceRef.__dict__["offset"].__set__
_set_ref_pointer = SourceRef.__dict__["pointer"].__set__
assert {f.name for f in dataclasses.fields(SourceRef)} == {"path", "line", "end_line", "offset", "pointer"}


class TraceBuilder:
    """Collects events in order (assigning ``seq``) and builds the :class:`Trace`.

    >>> b = TraceBuilder("chat_messages", "run.json", trace_id="run")
    >>> _ = b.add("message", actor="user", role="user", content="hi")
    >>> b.build().events[0].seq
    0
    """

    def __init__(
        self, source_format: str, path: str | Path, *, trace_id: str | None = None, index: int | None = None
    ):
        self.source_format = source_format
        self.path = str(path)
        self.trace_id = trace_id or fallback_trace_id(path, index)
        self.events: list[Event] = []
        self._agents: dict[str, AgentInfo] = {}

    def add(self, kind: str, **fields: Any) -> Event:
        """Append an event of ``kind``; ``seq`` is assigned. Returns the event."""
        return self.add_fields(kind, fields)

    def add_fields(self, kind: str, fields: dict[str, Any]) -> Event:
        """:meth:`add` with the fields in a dict the builder may keep (saves re-packing them)."""
        event = make_event(len(self.events), kind, fields)
        self.events.append(event)
        actor = fields.get("actor")
        if actor and actor not in self._agents:
            self._agents[actor] = AgentInfo(name=actor)
        return event

    def agent(self, name: str, **fields: Any) -> AgentInfo:
        """Declare (or update) an agent with details such as its system prompt."""
        info = self._agents.get(name)
        if info is None:
            info = AgentInfo(name=name, **fields)
        else:
            info = info.model_copy(update={k: v for k, v in fields.items() if v is not None})
        self._agents[name] = info
        return info

    @property
    def last(self) -> Event | None:
        return self.events[-1] if self.events else None

    def build(self, **fields: Any) -> Trace:
        """The finished trace. ``fields`` are Trace fields (task, outcome, ...)."""
        fields.setdefault("source_paths", [self.path])
        agents = fields.pop("agents", None)
        if agents is None:
            agents = [a for a in self._agents.values() if is_agent_name(a.name)]
        events = self.events
        trace = Trace(
            trace_id=fields.pop("trace_id", self.trace_id),
            source_format=self.source_format,
            events=[],
            agents=agents,
            **fields,
        )
        # Every other field is validated; the events were built (and checked) one by one, so only
        # what the list adds is checked here: real events, numbered 0..n-1.
        for i, event in enumerate(events):
            if type(event) is not Event or event.seq != i:
                return Trace.model_validate({**trace.__dict__, "events": events})  # pydantic's error
        trace.__dict__["events"] = list(events)  # the builder may go on (pydantic copied it too)
        trace.__pydantic_fields_set__.add("events")
        if STRICT:
            checked = Trace.model_validate({**trace.__dict__, "events": events})
            _check_strict(trace, checked)
        return trace


def fallback_trace_id(path: str | Path, index: int | None = None) -> str:
    """A stable id for a trace without a native id: file stem + short hash of the file's content
    (+ record index). Content, not location: the same file gives the same id wherever it lives."""
    p = Path(path)
    try:
        st = p.stat()
        key = (st.st_mtime_ns, st.st_size)
    except OSError:
        key = (0, 0)
    tid = f"{p.name.split('.')[0]}-{_content_digest(str(p), *key)}"
    return tid if index is None else f"{tid}#{index}"


@lru_cache(maxsize=4096)
def _content_digest(path: str, _mtime_ns: int, _size: int) -> str:
    h = hashlib.sha1()
    try:
        with open(path, "rb") as fh:
            h.update(fh.read(1 << 16))
            fh.seek(0, 2)
            h.update(str(fh.tell()).encode())
    except OSError:  # a folder (or unreadable): its name is all we have
        h.update(Path(path).name.encode())
    return h.hexdigest()[:8]


def parse_ts(value: Any) -> datetime | None:
    """Parse a timestamp: ISO 8601 text, or epoch seconds / milliseconds / nanoseconds. None if unparseable."""
    if value is None or value == "" or isinstance(value, bool):
        return None
    try:
        if isinstance(value, (int, float)) or (
            isinstance(value, str) and value.replace(".", "", 1).isdigit()
        ):
            num = float(value)
            if num <= 0:
                return None
            if num > 1e17:  # nanoseconds
                num /= 1e9
            elif num > 1e14:  # microseconds
                num /= 1e6
            elif num > 1e11:  # milliseconds
                num /= 1e3
            return datetime.fromtimestamp(num, tz=UTC)
        if isinstance(value, str):
            text = value.strip()
            if text.endswith("Z"):
                text = text[:-1] + "+00:00"
            return datetime.fromisoformat(text)
    except (ValueError, OverflowError, OSError):
        return None
    return None


def content_text(content: Any) -> str | None:
    """Text of a chat message ``content``: a string, or a list of parts (OpenAI/Anthropic/Gemini style)."""
    if content is None:
        return None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts: list[str] = []
        for part in content:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, dict):
                for key in ("text", "content", "input_text", "output_text", "thinking"):
                    val = part.get(key)
                    if isinstance(val, str):
                        texts.append(val)
                        break
                else:
                    kind = part.get("type")
                    if kind:
                        texts.append(f"[{kind}]")
        return "\n".join(texts)
    if isinstance(content, dict):
        for key in ("text", "content", "parts"):
            if key in content:
                return content_text(content[key])
    return dumps_text(content)


def dumps_text(value: Any) -> str:
    """A compact JSON rendering of any value (for tool outputs that are not text)."""
    if isinstance(value, str):
        return value
    try:
        return orjson.dumps(value, default=str).decode()
    except TypeError:
        return str(value)


def parse_arguments(value: Any) -> tuple[Any, str | None]:
    """``(parsed, raw)`` for tool arguments that may be a JSON string or already a dict."""
    if value is None:
        return None, None
    if isinstance(value, str):
        try:
            return orjson.loads(value), value
        except orjson.JSONDecodeError:
            return None, value
    return value, dumps_text(value)


def usage_from(d: Any) -> Usage | None:
    """Usage from the common provider spellings (OpenAI, Anthropic, Gemini, OTel). None when absent."""
    if not isinstance(d, dict):
        return None

    def num(*keys: str) -> Any:
        for k in keys:
            v = d.get(k)
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                return v
        return None

    inp = num("input_tokens", "prompt_tokens", "promptTokenCount", "gen_ai.usage.input_tokens", "tokens_sent")
    out = num(
        "output_tokens",
        "completion_tokens",
        "candidatesTokenCount",
        "gen_ai.usage.output_tokens",
        "tokens_received",
    )
    cached = num(
        "cached_input_tokens",
        "cache_read_input_tokens",
        "cache_read_tokens",
        "cachedContentTokenCount",
        "cached_tokens",
    )
    details = d.get("prompt_tokens_details") or d.get("input_tokens_details")
    if cached is None and isinstance(details, dict):
        c = details.get("cached_tokens")
        cached = c if isinstance(c, int) else None
    reasoning = num("reasoning_tokens", "reasoning_output_tokens", "thoughtsTokenCount")
    out_details = d.get("completion_tokens_details") or d.get("output_tokens_details")
    if reasoning is None and isinstance(out_details, dict):
        r = out_details.get("reasoning_tokens")
        reasoning = r if isinstance(r, int) else None
    usage = Usage(
        input_tokens=_int(inp),
        output_tokens=_int(out),
        cached_input_tokens=_int(cached),
        cache_write_tokens=_int(num("cache_creation_input_tokens", "cache_write_tokens")),
        reasoning_tokens=_int(reasoning),
        total_tokens=_int(num("total_tokens", "totalTokenCount")),
        cost_usd=num("cost", "cost_usd", "total_cost"),
    )
    return None if usage.is_empty() else usage


def with_cost(usage: Usage | None, cost: Any) -> Usage | None:
    """``usage`` with a cost the source reports beside it (``cost``, ``accumulated_cost``, ...), when
    that cost is a number; ``usage`` unchanged otherwise (None stays None unless there is a cost)."""
    if not isinstance(cost, (int, float)) or isinstance(cost, bool):
        return usage
    return (usage or Usage()).model_copy(update={"cost_usd": float(cost)})


def _int(v: Any) -> int | None:
    return None if v is None else int(v)


def read_json_file(path: str | Path, what: str) -> Any:
    """The JSON document of one file an importer reads beside its main input (a record of a folder
    store, a metadata file), or a :class:`TraceLoadError` naming the file when it cannot be read or
    parsed: ``"<what>: <why>"``, with the line and offset of a parse error. Returned, not raised, so
    the importer can report the file and go on with the rest."""
    try:
        return Source(path).json
    except FormatError as exc:
        return TraceLoadError(path, f"{what}: {exc.reason}", line=exc.line, offset=exc.offset)
    except OSError as exc:
        return TraceLoadError(path, f"{what}: cannot read: {exc.strerror or exc}")


def validation_reason(exc: Exception) -> str:
    """One line describing a pydantic ValidationError (or any error)."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        try:
            first = errors()[0]
            loc = ".".join(str(p) for p in first.get("loc", ()))
            return f"{loc}: {first.get('msg')}" if loc else str(first.get("msg"))
        except Exception:  # pragma: no cover - defensive
            pass
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
