"""Magentic-One event logs (``autogen-magentic-one``, 2024): the ``log.jsonl`` its ``LogHandler`` writes.

One file is one run. Each line is one logged event (``microsoft/autogen``
``python/packages/autogen-magentic-one/src/autogen_magentic_one/utils.py``, ``LogHandler.emit``):

* ``{timestamp, source, message, type: "OrchestrationEvent" | "AgentEvent"}``: a message; ``source``
  is the agent, with Magentic-One's suffixes (``Orchestrator (thought)``, ``Orchestrator (->
  WebSurfer)``, ``Orchestrator (termination condition)``), read as in :mod:`.chat_messages`;
* ``{timestamp, type: "WebSurferEvent", source, url, action, arguments, message}``: a browser action;
* ``{timestamp, type: "LLMCallEvent", prompt_tokens, completion_tokens}``: one model call.

The same events kept in memory (``LogHandler.logs_list``) and dumped as a JSON list are read too.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mastkit.errors import FormatError, TraceLoadError
from mastkit.traces._build import (
    TraceBuilder,
    content_text,
    dumps_text,
    parse_arguments,
    parse_ts,
    source_ref,
)
from mastkit.traces.importers.chat_messages import agent_message_events
from mastkit.traces.model import Outcome, SourceRef, Termination, ToolCall, Trace, Usage
from mastkit.traces.registry import Importer, register
from mastkit.traces.source import Source

_MESSAGE_TYPES = frozenset(("OrchestrationEvent", "AgentEvent"))
_TYPES = frozenset((*_MESSAGE_TYPES, "WebSurferEvent", "LLMCallEvent"))


def _is_event(rec: Any) -> bool:
    return isinstance(rec, dict) and rec.get("type") in _TYPES and "timestamp" in rec


def _text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return content_text(value) if isinstance(value, list) else dumps_text(value)


class _Run:
    """The state of one run while its events are mapped."""

    def __init__(self, b: TraceBuilder) -> None:
        self.b = b
        self.task: str | None = None
        self.final: str | None = None
        self.stop: Termination | None = None

    def add(self, rec: Any, ref: SourceRef) -> None:
        if not isinstance(rec, dict):
            self.b.add("message", content=dumps_text(rec), source=ref, raw=rec, extra={"unrecognised": True})
            return
        kind = rec.get("type")
        common: dict[str, Any] = {"source": ref, "raw": rec, "started_at": parse_ts(rec.get("timestamp"))}
        if kind in _MESSAGE_TYPES and isinstance(rec.get("source"), str):
            text = _text(rec.get("message"))
            for ev_kind, fields in agent_message_events(text, rec["source"]):
                ev = self.b.add_fields(ev_kind, {**fields, **common})
                if ev.actor == "user" and self.task is None:
                    self.task = text
                sub = (ev.subtype or "").lower()
                if sub == "final answer":
                    self.final = text
                elif sub == "termination condition":
                    self.stop = Termination(reason="unknown", by="harness", native=text, at_seq=ev.seq)
            return
        if kind == "WebSurferEvent":
            args, raw_args = parse_arguments(rec.get("arguments"))
            call = ToolCall(
                name=str(rec.get("action") or "web_action"), arguments=args, arguments_raw=raw_args
            )
            extra = {"url": rec["url"]} if isinstance(rec.get("url"), str) else {}
            actor = rec["source"] if isinstance(rec.get("source"), str) else "WebSurfer"
            self.b.add("tool_call", actor=actor, role="assistant", tool_call=call,
                       content=_text(rec.get("message")), extra=extra, **common)  # fmt: skip
            return
        if kind == "LLMCallEvent":
            inp, out = rec.get("prompt_tokens"), rec.get("completion_tokens")
            usage = Usage(
                input_tokens=inp if isinstance(inp, int) and not isinstance(inp, bool) else None,
                output_tokens=out if isinstance(out, int) and not isinstance(out, bool) else None,
            )
            self.b.add("llm_call", usage=None if usage.is_empty() else usage, **common)
            return
        subtype = kind if isinstance(kind, str) else None
        self.b.add("system", subtype=subtype, content=_text(rec.get("message")), **common)


@register
class MagenticOneImporter(Importer):
    name = "magentic_one"
    description = (
        "Magentic-One event logs (autogen-magentic-one log.jsonl: OrchestrationEvent, LLMCallEvent, ...)"
    )

    def sniff(self, src: Source) -> float:
        if src.json_shape in ("jsonl", "array") and _is_event(src.first_record):
            return 0.9
        return 0.0

    def load(self, src: Source) -> Iterator[Trace | TraceLoadError]:
        b = TraceBuilder(self.name, src.path)
        run = _Run(b)
        errors: list[TraceLoadError] = []
        if src.json_shape == "jsonl":
            for line, offset, value in src.iter_jsonl():
                if isinstance(value, FormatError):
                    errors.append(TraceLoadError(src.path, value.reason, line=line, offset=offset))
                    continue
                if not _is_event(value):
                    errors.append(TraceLoadError(src.path, _why_not(value), line=line, offset=offset))
                    continue
                run.add(value, source_ref(line=line))
        elif src.json_shape == "array":
            for i, _off, value in src.iter_array():
                if not _is_event(value):
                    errors.append(TraceLoadError(src.path, f"item {i}: {_why_not(value)}"))
                    continue
                run.add(value, source_ref(pointer=f"/{i}"))
        else:
            raise FormatError("not a Magentic-One log: expected JSON lines of logged events")
        yield from errors
        if not b.events:
            if not errors:
                raise FormatError("no Magentic-One events found")
            return
        yield b.build(
            framework="magentic-one",
            task=run.task,
            outcome=Outcome(final_output=run.final) if run.final is not None else None,
            termination=run.stop,
            started_at=b.events[0].started_at,
            ended_at=b.events[-1].started_at,
        )


def _why_not(rec: Any) -> str:
    """What a line lacks to be a Magentic-One event, in words."""
    if not isinstance(rec, dict):
        return f"not a Magentic-One event: a JSON {type(rec).__name__}"
    if rec.get("type") not in _TYPES:
        return (
            f"not a Magentic-One event: 'type' is {rec.get('type')!r}, not one of {', '.join(sorted(_TYPES))}"
        )
    return "not a Magentic-One event: no 'timestamp'"
