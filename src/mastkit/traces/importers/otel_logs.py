"""OpenTelemetry log records of agent runs: the telemetry events that Codex, Claude Code and Gemini
CLI export, and OTel GenAI events exported without their spans.

Shapes read (one trace per session, see below):

* OTLP/JSON ``ExportLogsServiceRequest`` ``{resourceLogs: [{resource, scopeLogs: [{scope,
  logRecords: [...]}]}]}`` (also ``resource_logs``/``scope_logs``/``log_records``): one object, a JSON
  list of them, or one per line (the collector ``file`` exporter);
* the lines an ITBench SRE agent run writes to ``traces/traces.jsonl`` (``--collect-traces``): ``{timestamp,
  path: "/v1/logs", content_type, data: {resource_logs: ...}}``, where the decoded protobuf has
  snake_case keys and attributes as a plain dict; lines of other paths are skipped;
* the Gemini CLI ``--telemetry-outfile``: the JS SDK's objects, pretty-printed and concatenated (not
  JSONL) - log records ``{hrTime: [s, ns], resource: {_rawAttributes: [[k, v]]}, instrumentationScope,
  attributes, _body}`` next to metric exports (``scopeMetrics``, skipped) and spans (skipped).

The event name is the record's ``eventName`` (but not the ``event <file>:<line>`` that Codex's Rust
bridge puts there), else the ``event.name`` or ``event_name`` attribute; Claude Code writes the full
name (``claude_code.api_request``) as the body and the short one as ``event.name``.

Records are grouped by session: ``conversation.id`` (Codex), ``session.id`` (Claude Code, Gemini CLI;
an attribute or a resource attribute), ``gen_ai.conversation.id``, else the trace id, else the file.
In a session they are ordered by ``event.sequence`` (Claude Code), then ``event.timestamp`` (the
moment the CLI made the event; Codex leaves the record time 0), then the record time, then file order.

Mapping (``<cli>.`` is ``codex.``, ``claude_code.`` or ``gemini_cli.``; every record becomes one event
and keeps its raw record, except a tool result, which gives a ``tool_call`` and a ``tool_result``):

* ``user_prompt`` -> user ``message`` (the prompt, unless it was not logged: ``[REDACTED]``,
  ``<REDACTED>`` or absent give no content and ``extra.prompt_logged=False``);
  ``claude_code.assistant_response`` -> assistant ``message``;
* ``claude_code.api_request`` -> ``llm_call`` with usage and cost; ``codex.api_request`` (an HTTP
  attempt) -> ``llm_call``, given the usage of the ``codex.sse_event`` ``response.completed`` record
  that follows it; ``gemini_cli.api_request`` -> ``llm_call``, given the usage of the
  ``gemini_cli.api_response`` that follows (the response's text becomes an assistant ``message``);
* ``api_error`` (and a failed API response or SSE stream) -> ``error``;
* ``codex.tool_result`` / ``claude_code.tool_result`` / ``gemini_cli.tool_call`` -> ``tool_call`` +
  ``tool_result`` (``is_error`` from ``success``; Codex logs the output, the others do not);
* GenAI events (``gen_ai.user.message``, ``gen_ai.choice``, ...) -> messages, reasoning, tool calls
  and tool results, read by the code that reads them on spans (``_otlp.event_messages``); the
  history logged again on every call is flagged ``is_copied_context``;
  ``gen_ai.client.inference.operation.details`` -> an ``llm_call`` with its usage, then its
  messages, unless a CLI's own records describe the same calls;
* everything else (``codex.conversation_starts``, ``*.tool_decision``, ``gemini_cli.config``,
  ``loop_detected``, ...) -> a ``system`` event whose subtype is the event name.

Other ``codex.sse_event`` records (one per streamed chunk) are folded into the model call they
belong to: their raw records are kept in the call's ``extra["sse_events"]``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from mastkit.errors import FormatError, NotThisFormat, TraceLoadError
from mastkit.traces._build import TraceBuilder, parse_arguments, parse_ts, source_ref
from mastkit.traces.importers._llm_spans import Msg, SeenContext, as_text, maybe_json, sval
from mastkit.traces.importers._otlp import (
    LOGS_KEYS,
    SPANS_KEYS,
    LogRecord,
    attributes,
    count,
    event_messages,
    event_name,
    flag,
    genai_usage,
    holds_spans,
    log_records,
    number,
)
from mastkit.traces.model import Event, ToolCall, ToolResult, Trace, Usage
from mastkit.traces.registry import Importer, register
from mastkit.traces.source import Source

_CLIS = {"codex": "Codex", "claude_code": "Claude Code", "gemini_cli": "Gemini CLI"}
_NOT_LOGGED = frozenset({"[REDACTED]", "<REDACTED>", ""})
_SESSION_KEYS = ("conversation.id", "session.id", "gen_ai.conversation.id")
_TOOL_RESULT = frozenset({"codex.tool_result", "claude_code.tool_result", "gemini_cli.tool_call"})
_OPERATION_DETAILS = "gen_ai.client.inference.operation.details"
_GENAI_EVENTS = frozenset(
    {
        "gen_ai.system.message", "gen_ai.user.message", "gen_ai.assistant.message", "gen_ai.tool.message",
        "gen_ai.choice", "gen_ai.content.prompt", "gen_ai.content.completion", _OPERATION_DETAILS,
    }
)  # fmt: skip
# attributes every record of a CLI carries (the session's, not the event's): left out of event extras
_COMMON = frozenset(
    {
        "conversation.id", "session.id", "app.version", "app.entrypoint", "auth_mode", "originator",
        "terminal.type", "organization.id", "installation.id", "interactive", "slug", "prompt.id", "prompt_id",
    }
)  # fmt: skip


# -- reading the containers ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Spans:
    """An OTLP traces request met while reading the file for log records."""

    line: int | None
    pointer: str

    @property
    def where(self) -> str:
        return f"line {self.line}" if self.line is not None else f"record {self.pointer or '/'}"


def _wrapped(rec: dict[str, Any]) -> dict[str, Any] | None:
    """The logs request inside an ITBench ``traces.jsonl`` line (``{path, data}``), else None."""
    data = rec.get("data")
    if isinstance(data, dict) and "path" in rec and any(k in data for k in LOGS_KEYS):
        return data
    return None


def _is_sdk_record(obj: Any) -> bool:
    """A JS SDK log record as Gemini CLI's file exporter writes it."""
    return isinstance(obj, dict) and "hrTime" in obj and "attributes" in obj and "scopeMetrics" not in obj


def _hr_time(v: Any) -> datetime | None:
    if isinstance(v, list) and len(v) == 2 and all(isinstance(x, int) and not isinstance(x, bool) for x in v):
        return parse_ts(v[0] * 1_000_000_000 + v[1])
    return None


def _sdk_record(obj: dict[str, Any], pointer: str) -> LogRecord:
    res = obj.get("resource")
    raw_attrs = res.get("_rawAttributes") if isinstance(res, dict) else None
    resource: dict[str, Any] = {}
    if isinstance(raw_attrs, list):
        resource = {
            kv[0]: kv[1]
            for kv in raw_attrs
            if isinstance(kv, list) and len(kv) == 2 and isinstance(kv[0], str)
        }
    elif isinstance(res, dict) and isinstance(res.get("attributes"), dict):
        resource = attributes(res["attributes"])
    scope = obj.get("instrumentationScope")
    ctx = obj.get("spanContext")
    ctx = ctx if isinstance(ctx, dict) else {}
    attrs = attributes(obj.get("attributes"))
    body = obj.get("_body", obj.get("body"))
    return LogRecord(
        name=event_name(obj.get("_eventName"), attrs),
        time=_hr_time(obj.get("hrTime")) or _hr_time(obj.get("hrTimeObserved")),
        body=body,
        attrs=attrs,
        trace_id=sval(ctx.get("traceId")),
        span_id=sval(ctx.get("spanId")),
        resource=resource,
        scope=dict(scope) if isinstance(scope, dict) else {},
        raw=obj,
        line=None,
        pointer=pointer,
    )


def _concatenated(text: str) -> Iterator[tuple[int, Any | FormatError]]:
    """``(character offset, value)`` of each JSON value of a file of concatenated values; the error
    that ends the reading carries the byte offset of the value that does not parse."""
    decoder = json.JSONDecoder()
    pos, end = 0, len(text)
    while True:
        while pos < end and text[pos] in " \t\r\n":
            pos += 1
        if pos >= end:
            return
        try:
            value, nxt = decoder.raw_decode(text, pos)
        except (ValueError, RecursionError) as exc:
            at = len(text[:pos].encode("utf-8", "surrogatepass"))
            yield pos, FormatError(f"invalid JSON at byte {at}: {exc}", offset=at)
            return
        yield pos, value
        pos = nxt


# -- the importer -------------------------------------------------------------------------------


@register
class OtelLogsImporter(Importer):
    name = "otel_logs"
    description = (
        "OpenTelemetry log records of agent runs: Codex, Claude Code and Gemini CLI telemetry events "
        "(OTLP/JSON, the ITBench traces.jsonl, the Gemini CLI telemetry outfile); OTel GenAI events"
    )

    def sniff(self, src: Source) -> float:
        rec = src.first_object
        if rec is not None:
            if any(k in rec for k in LOGS_KEYS) or _wrapped(rec) is not None:
                return 0.5 if holds_spans(src.head_text) else 0.9  # spans too: the otlp importer's
            return 0.0
        if (
            src.json_shape == "object" and src.first_record is None
        ):  # concatenated objects do not parse as one
            head = src.head_text
            if ('"hrTime"' in head and '"instrumentationScope"' in head) or (
                '"scopeMetrics"' in head and '"_rawAttributes"' in head
            ):
                return 0.85
        return 0.0

    def load(self, src: Source) -> Iterator[Trace | TraceLoadError]:
        records: list[LogRecord] = []
        errors: list[TraceLoadError] = []  # held until the file is read: it may not be ours (spans)
        for item in self._records(src):
            if isinstance(item, TraceLoadError):
                errors.append(item)
            elif isinstance(item, _Spans):
                # Spans past the head the sniffers saw: the file is the otlp importer's (it reads
                # log records too, joined to their spans). Failing before yielding anything lets
                # the loader try it next; going on would drop the spans.
                raise NotThisFormat(
                    f"the file holds trace spans too ({item.where}), beyond the head read to choose "
                    "its format: it is read by the otlp importer, which joins log records to spans",
                    line=item.line,
                )
            else:
                records.append(item)
        yield from errors
        if not records:
            if errors:
                return
            raise FormatError("no log records found")
        sessions: dict[str, list[LogRecord]] = {}  # session key ("" for none) -> its records
        for r in records:
            sessions.setdefault(self._session_key(r) or "", []).append(r)
        for key, recs in sessions.items():
            try:
                yield self._trace(src, key, recs)
            except (ValueError, TypeError, KeyError) as exc:
                yield TraceLoadError(src.path, f"session {key or '(none)'}: {exc}")

    def _records(self, src: Source) -> Iterator[LogRecord | TraceLoadError | _Spans]:
        shape = src.json_shape
        if shape == "jsonl":
            for line, offset, value in src.iter_jsonl():
                if isinstance(value, FormatError):
                    yield TraceLoadError(src.path, value.reason, line=line, offset=offset)
                    continue
                yield from self._from_value(src, value, line, "", offset)
        elif shape == "array":
            for i, _off, value in src.iter_array():
                yield from self._from_value(src, value, None, f"/{i}", None)
        elif shape == "object":
            try:
                doc = src.json
            except FormatError:
                doc = None
            if doc is not None:
                yield from self._from_value(src, doc, None, "", None)
                return
            for pos, value in _concatenated(src.text):
                if isinstance(value, FormatError):
                    yield TraceLoadError(src.path, value.reason, offset=value.offset)
                    return
                if _is_sdk_record(value):
                    yield _sdk_record(value, f"#char={pos}")
        else:
            raise FormatError("not a JSON, JSONL or concatenated-JSON file")

    def _from_value(
        self, src: Source, value: Any, line: int | None, pointer: str, offset: int | None
    ) -> Iterator[LogRecord | TraceLoadError | _Spans]:
        if isinstance(value, list):
            for i, item in enumerate(value):
                yield from self._from_value(src, item, line, f"{pointer}/{i}", offset)
            return
        if not isinstance(value, dict):
            yield TraceLoadError(
                src.path, f"record {pointer or '/'} is not an object", line=line, offset=offset
            )
            return
        inner = _wrapped(value)
        if inner is not None:
            value, pointer = inner, f"{pointer}/data"
        key = next((k for k in LOGS_KEYS if k in value), None)
        if key is None:
            if _is_sdk_record(value):
                yield _sdk_record(value, pointer)
            elif inner is None and any(k in value for k in SPANS_KEYS):
                yield _Spans(line, pointer)
            return  # metrics written beside the logs, an ITBench line of another path
        bad: list[str] = []
        try:
            yield from log_records(value[key], key, line, pointer, bad)
        except FormatError as exc:
            yield TraceLoadError(src.path, exc.reason, line=line, offset=offset)
        for reason in bad:
            yield TraceLoadError(src.path, reason, line=line, offset=offset)

    @staticmethod
    def _session_key(r: LogRecord) -> str | None:
        for k in _SESSION_KEYS:
            v = r.attrs.get(k) or r.resource.get(k)
            if isinstance(v, str) and v:
                return v
        return r.trace_id

    # -- mapping --------------------------------------------------------------------------------

    def _trace(self, src: Source, key: str, recs: list[LogRecord]) -> Trace:
        for r in recs:
            r.name = _full_name(r)
        recs.sort(key=_sort_key)  # stable: file order within equal keys
        names = {r.name.split(".", 1)[0] for r in recs}
        cli = next((c for c in _CLIS if c in names), None)
        m = _Mapping(TraceBuilder(self.name, src.path, trace_id=key or src.path.name), cli)
        for r in recs:
            m.record(r)
        b = m.b
        times = [e.started_at for e in b.events if e.started_at is not None]
        resource = next((r.resource for r in recs if r.resource), {})
        version = sval(recs[0].attrs.get("app.version"))
        if version is None and cli != "gemini_cli":  # Gemini CLI's service.version is Node's
            version = sval(resource.get("service.version"))
        return b.build(
            framework=_CLIS[cli] if cli else sval(resource.get("service.name")),
            framework_version=version,
            model=next(iter(m.models)) if len(m.models) == 1 else None,
            task=m.task,
            started_at=min(times) if times else None,
            ended_at=max(times) if times else None,
            raw={
                "resource": resource,
                "scopes": _unique([r.scope for r in recs if r.scope]),
                "records": len(recs),
            },
            extra={"session_id": key or None, "models": sorted(m.models)},
        )


class _Mapping:
    """The events of one session's records, in order (see the module notes)."""

    def __init__(self, b: TraceBuilder, cli: str | None) -> None:
        self.b = b
        self.cli = cli
        self.actor = cli or "assistant"
        self.open_call: Event | None = None  # the model call that the next usage record completes
        self.models: set[str] = set()
        self.task: str | None = None
        self.seen = SeenContext()  # GenAI instrumentations log the whole history on every call

    def record(self, r: LogRecord) -> None:
        b, a, actor = self.b, r.attrs, self.actor
        base: dict[str, Any] = {
            "started_at": _when(r),
            "source": source_ref(line=r.line, pointer=r.pointer or None),
            "raw": r.raw,
        }
        model = (
            sval(a.get("model"))
            or sval(a.get("gen_ai.response.model"))
            or sval(a.get("gen_ai.request.model"))
        )
        prefix, _, short = r.name.partition(".")
        if prefix not in _CLIS:
            short = r.name
        if model and short in ("api_request", "api_response", _OPERATION_DETAILS):  # the model calls
            self.models.add(model)
        if short == "user_prompt":
            text = sval(a.get("prompt"))
            logged = text is not None and text not in _NOT_LOGGED
            if logged and self.task is None:
                self.task = text
            b.add(
                "message", actor="user", role="user", content=text if logged else None,
                extra={"prompt_logged": logged, **_keep(a, "prompt_length", "prompt_id", "prompt.id")}, **base,
            )  # fmt: skip
        elif r.name == "claude_code.assistant_response":
            text = sval(a.get("response"))
            logged = text is not None and text not in _NOT_LOGGED
            b.add(
                "message", actor=actor, role="assistant", content=text if logged else None, model=model,
                extra={"response_logged": logged}, **base,
            )  # fmt: skip
        elif r.name == "codex.sse_event":
            self._sse(r, base)
        elif r.name == "gemini_cli.api_response":
            self._gemini_response(r, model, base)
        elif short == "api_request":
            call = b.add(
                "llm_call", actor=actor, model=model, usage=_cli_usage(a) if self.cli == "claude_code" else None,
                subtype=r.name,
                extra=_keep(a, "duration_ms", "attempt", "http.response.status_code", "request_id", "prompt_id"),
                **base,
            )  # fmt: skip
            self.open_call = call if self.cli in ("codex", "gemini_cli") else None
            if sval(a.get("error.message")):
                b.add(
                    "error", actor=actor, subtype=r.name, content=a["error.message"], **{**base, "raw": None}
                )
        elif short == "api_error":
            message = sval(a.get("error")) or sval(a.get("error.message")) or as_text(r.body) or r.name
            b.add(
                "error", actor=actor, subtype=r.name, content=message, model=model,
                extra=_keep(a, "status_code", "attempt", "duration_ms", "error.type", "error_type"), **base,
            )  # fmt: skip
            self.open_call = None
        elif r.name in _TOOL_RESULT:
            self._tool(r, base)
        elif r.name in _GENAI_EVENTS and (self.cli is None or r.name != _OPERATION_DETAILS):
            self._genai(r, model, base)
        else:
            b.add(
                "system", actor=actor if self.cli else None, subtype=r.name or "log",
                content=as_text(r.body) if r.body != r.name else None,
                extra={k: v for k, v in a.items() if k not in _COMMON and not k.startswith(("user.", "event."))},
                **base,
            )  # fmt: skip

    def _sse(self, r: LogRecord, base: dict[str, Any]) -> None:
        """A Codex streamed chunk: the usage of the open call, an error, or folded into the call."""
        a, call = r.attrs, self.open_call
        if sval(a.get("error.message")):
            self.b.add("error", actor=self.actor, subtype=r.name, content=a["error.message"], **base)
            self.open_call = None
        elif call is not None:
            call.extra.setdefault("sse_events", []).append(r.raw)
            if (
                a.get("event.kind") == "response.completed"
                and "input_token_count" in a
                and call.usage is None
            ):
                call.usage = _cli_usage(a)
        else:
            self.b.add("system", actor=self.actor, subtype=r.name, content=sval(a.get("event.kind")), **base)

    def _gemini_response(self, r: LogRecord, model: str | None, base: dict[str, Any]) -> None:
        """Usage for the open call (else a call of its own), and the response's text as a message
        that keeps the record (else the call keeps it)."""
        a, call = r.attrs, self.open_call
        self.open_call = None
        text = _gemini_text(a.get("response_text"))
        if call is None:
            self.b.add("llm_call", actor=self.actor, model=model, usage=_cli_usage(a), subtype=r.name, **base)
            base = {**base, "raw": None}
        else:
            call.usage = _cli_usage(a)
            call.ended_at = base["started_at"]
            if not text:
                call.extra["response"] = r.raw
        if text:
            self.b.add("message", actor=self.actor, role="assistant", content=text, model=model, **base)

    def _tool(self, r: LogRecord, base: dict[str, Any]) -> None:
        a = r.attrs
        name = sval(a.get("tool_name")) or sval(a.get("function_name")) or "tool"
        call_id = sval(a.get("call_id")) or sval(a.get("tool_use_id"))
        raw_args = a.get("arguments", a.get("function_args", a.get("tool_input", a.get("tool_parameters"))))
        args, args_raw = parse_arguments(raw_args)
        self.b.add(
            "tool_call", actor=self.actor, role="assistant",
            tool_call=ToolCall(name=name, call_id=call_id, arguments=args, arguments_raw=args_raw,
                               namespace=sval(a.get("mcp_server")) or sval(a.get("mcp_server_name"))),
            extra=_keep(a, "decision", "decision_type", "decision_source", "tool_type"), **base,
        )  # fmt: skip
        success = flag(a.get("success"))
        error = sval(a.get("error")) or sval(a.get("error.message"))
        output = sval(a.get("output"))
        self.b.add(
            "tool_result", actor="environment", role="tool",
            content=output if output is not None else error,
            tool_result=ToolResult(
                call_id=call_id, name=name, output=output if output is not None else error,
                is_error=None if success is None else not success, duration_ms=number(a.get("duration_ms")),
            ),
            extra=_keep(a, "error_type", "error.type"),
            **{**base, "raw": None},
        )  # fmt: skip

    def _genai(self, r: LogRecord, model: str | None, base: dict[str, Any]) -> None:
        """A GenAI event without its span: its messages, read as the ``otlp`` importer reads span
        events; history the trace already holds comes back flagged ``is_copied_context``; an
        operation-details event is also the model call, with its usage."""
        event = [r.as_span_event()]
        if r.name == _OPERATION_DETAILS:
            self.b.add(
                "llm_call", actor=self.actor, model=model, usage=genai_usage(r.attrs), subtype=r.name, **base
            )
            base = {**base, "raw": None}
        inputs = event_messages(event, output=False)
        outputs = event_messages(event, output=True)
        emitted = False
        for msg, copied in [*self.seen.split(inputs), *((o, False) for o in outputs)]:
            self._message(msg, copied, model, base if not emitted else {**base, "raw": None})
            emitted = True
        if not emitted and r.name != _OPERATION_DETAILS:
            self.b.add("system", subtype=r.name, **base)

    def _message(self, m: Msg, copied: bool, model: str | None, base: dict[str, Any]) -> None:
        """The events of one message: a tool result, a text, and one ``tool_call`` per call."""
        b = self.b
        if not copied:
            self.seen.add(m)
        who = self.actor if m.role == "assistant" else ("environment" if m.role == "tool" else m.role)
        fields = {**base, "is_copied_context": copied}
        if m.role == "tool":
            b.add(
                "tool_result", actor=who, role="tool", content=m.text,
                tool_result=ToolResult(call_id=m.tool_call_id, name=m.name, output=m.text), **fields,
            )  # fmt: skip
            return
        if m.text is not None or (m.reasoning is None and not m.calls):
            b.add("message", actor=who, role=m.role, content=m.text, model=model if m.role == "assistant" else None,
                  **fields)  # fmt: skip
            fields["raw"] = None
        if m.reasoning is not None:
            b.add("reasoning", actor=who, role=m.role, content=m.reasoning, **fields)
            fields["raw"] = None
        for c in m.calls:
            args, args_raw = parse_arguments(c.arguments)
            b.add(
                "tool_call", actor=who, role=m.role,
                tool_call=ToolCall(name=c.name, call_id=c.call_id, arguments=args, arguments_raw=args_raw), **fields,
            )  # fmt: skip
            fields["raw"] = None


def _full_name(r: LogRecord) -> str:
    """The record's event name, with Claude Code's prefix: it writes the full name as the body
    (``claude_code.api_request``) and only the short one as ``event.name`` (``api_request``)."""
    body = r.body
    if isinstance(body, str) and body.startswith("claude_code.") and " " not in body:
        return body
    if r.name and "." not in r.name and r.resource.get("service.name") == "claude-code":
        return f"claude_code.{r.name}"
    return r.name


def _when(r: LogRecord) -> datetime | None:
    return parse_ts(r.attrs.get("event.timestamp")) or r.time


def _sort_key(r: LogRecord) -> tuple[float, float]:
    seq = number(r.attrs.get("event.sequence"))
    when = _when(r)
    return (seq if seq is not None else math.inf, when.timestamp() if when is not None else 0.0)


def _cli_usage(a: dict[str, Any]) -> Usage | None:
    """Token counts (and Claude Code's cost) of a CLI's API record; numbers may come as text."""
    usage = Usage(
        input_tokens=count(a.get("input_tokens", a.get("input_token_count"))),
        output_tokens=count(a.get("output_tokens", a.get("output_token_count"))),
        cached_input_tokens=count(
            a.get("cache_read_tokens", a.get("cached_token_count", a.get("cached_content_token_count")))
        ),
        cache_write_tokens=count(a.get("cache_creation_tokens")),
        reasoning_tokens=count(a.get("reasoning_token_count", a.get("thoughts_token_count"))),
        total_tokens=count(a.get("total_token_count")),
        cost_usd=number(a.get("cost_usd")),
    )
    return None if usage.is_empty() else usage


def _gemini_text(value: Any) -> str | None:
    """The text of a Gemini CLI ``response_text``: the text parts of a ``GenerateContentResponse``
    in JSON (with ``candidates``), or plain text."""
    doc = maybe_json(value)
    if isinstance(doc, dict):
        cands = doc.get("candidates")
        parts: list[Any] = []
        if isinstance(cands, list) and cands and isinstance(cands[0], dict):
            content = cands[0].get("content")
            parts = content.get("parts", []) if isinstance(content, dict) else []
        texts = [
            p["text"]
            for p in parts
            if isinstance(p, dict) and isinstance(p.get("text"), str) and not p.get("thought")
        ]
        return "".join(texts) or None
    return sval(value)


def _keep(a: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: a[k] for k in keys if a.get(k) is not None}


def _unique(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for it in items:
        if it not in out:
            out.append(it)
    return out
