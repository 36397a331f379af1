"""Helpers shared by importers: a trace builder that numbers events, and value converters."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from mastkit.traces.model import AgentInfo, Event, Trace, Usage


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
        event = Event(seq=len(self.events), kind=kind, **fields)
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
            agents = [a for a in self._agents.values() if a.name not in _NON_AGENT_ACTORS]
        return Trace(
            trace_id=fields.pop("trace_id", self.trace_id),
            source_format=self.source_format,
            events=self.events,
            agents=agents,
            **fields,
        )


# Actors that are people or the environment rather than agents: kept on events, not listed as agents.
_NON_AGENT_ACTORS = {"user", "human", "system", "environment", "tool", "Human", "User", "System"}


def fallback_trace_id(path: str | Path, index: int | None = None) -> str:
    """A stable id for a trace without a native id: file stem + short hash of the path (+ record index)."""
    p = Path(path)
    digest = hashlib.sha1(str(p.resolve()).encode()).hexdigest()[:8]
    tid = f"{p.name.split('.')[0]}-{digest}"
    return tid if index is None else f"{tid}#{index}"


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
        "cached_input_tokens", "cache_read_input_tokens", "cache_read_tokens", "cachedContentTokenCount"
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


def _int(v: Any) -> int | None:
    return None if v is None else int(v)


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
