"""OTLP/JSON decoding shared by the importers that read OpenTelemetry exports (``otlp`` for spans,
``otel_logs`` for log records).

* :func:`any_value`, :func:`attributes`, :func:`hex_id`: attribute values, flattened attribute maps
  and span/trace ids in every spelling the exporters write (camelCase OTLP/JSON, snake_case protobuf
  JSON, plain JSON, base64 or hex ids).
* :func:`event_messages`, :func:`genai_usage`: the messages of OTel GenAI events and the usage in
  GenAI (and OpenInference, Vercel AI SDK, Langfuse) attributes, read alike from spans and from log
  records.
* :func:`log_records`: the records of an ``ExportLogsServiceRequest`` body
  (``resourceLogs[].scopeLogs[].logRecords[]``, also snake case and the pre-1.0
  ``instrumentationLibraryLogs``), each with its resource and scope, as :class:`LogRecord`.
"""

from __future__ import annotations

import base64
import binascii
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from mastkit.errors import FormatError
from mastkit.traces._build import parse_ts, usage_from
from mastkit.traces.importers._llm_spans import Msg, as_text, maybe_json, message_list, messages_from, sval
from mastkit.traces.model import Usage

LOGS_KEYS = ("resourceLogs", "resource_logs")
"""The key of an ``ExportLogsServiceRequest`` (camelCase OTLP/JSON, snake_case protobuf JSON)."""
SPANS_KEYS = ("resourceSpans", "resource_spans")
"""The key of an ``ExportTraceServiceRequest``, the same two ways."""
_SPANS_KEYS_QUOTED = tuple(f'"{k}"' for k in SPANS_KEYS)


def holds_spans(text: str) -> bool:
    """Whether JSON text (a file's head) holds a traces request's key, wherever it is."""
    return any(k in text for k in _SPANS_KEYS_QUOTED)


# Attribute values that are whole JSON documents: never flattened.
KEEP_WHOLE = frozenset(
    {
        "gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions",
        "gen_ai.tool.definitions", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result", "input.value",
        "output.value", "llm.invocation_parameters", "metadata", "tool.parameters", "gen_ai.prompt",
        "gen_ai.completion", "traceloop.entity.input", "traceloop.entity.output", "events",
        "all_messages_events", "pydantic_ai.all_messages", "final_result", "tool_arguments", "tool_response",
        "gcp.vertex.agent.llm_request", "gcp.vertex.agent.llm_response", "gcp.vertex.agent.tool_call_args",
        "gcp.vertex.agent.tool_response", "ai.prompt", "ai.prompt.messages", "ai.response.toolCalls",
        "ai.result.toolCalls", "ai.response.object", "ai.result.object", "ai.toolCall.args", "ai.toolCall.input",
        "ai.toolCall.result", "ai.toolCall.output", "ai.response.providerMetadata", "langfuse.observation.input",
        "langfuse.observation.output", "langfuse.observation.usage_details", "langfuse.observation.cost_details",
        "langfuse.observation.model.parameters", "langfuse.trace.input", "langfuse.trace.output",
    }
)  # fmt: skip


def any_value(v: Any) -> Any:
    """Decode an OTLP ``AnyValue`` (camelCase or snake_case keys)."""
    if not isinstance(v, dict):
        return v
    if not v:
        return None
    for key, val in v.items():
        if key in ("stringValue", "string_value"):
            return val
        if key in ("intValue", "int_value"):
            try:
                return int(val)
            except (TypeError, ValueError):
                return val
        if key in ("doubleValue", "double_value"):
            try:
                return float(val)
            except (TypeError, ValueError):
                return val
        if key in ("boolValue", "bool_value"):
            return val
        if key in ("bytesValue", "bytes_value"):
            return val
        if key in ("arrayValue", "array_value"):
            values = val.get("values") if isinstance(val, dict) else None
            return [any_value(x) for x in values] if isinstance(values, list) else []
        if key in ("kvlistValue", "kvlist_value"):
            values = val.get("values") if isinstance(val, dict) else None
            return kv_dict(values)
    return v


def kv_dict(values: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if isinstance(values, list):
        for kv in values:
            if isinstance(kv, dict) and isinstance(kv.get("key"), str):
                out[kv["key"]] = any_value(kv.get("value"))
    return out


def flatten(prefix: str, value: Any, out: dict[str, Any]) -> None:
    if prefix not in KEEP_WHOLE:
        if isinstance(value, dict) and value:
            for k, v in value.items():
                flatten(f"{prefix}.{k}" if prefix else str(k), v, out)
            return
        if isinstance(value, list) and value and all(isinstance(x, dict) for x in value) and prefix:
            for i, v in enumerate(value):
                flatten(f"{prefix}.{i}", v, out)
            return
    out[prefix] = value


def attributes(value: Any) -> dict[str, Any]:
    """Flat dotted-key attributes from an OTLP key/value list or a (nested) dict."""
    if isinstance(value, list):
        value = kv_dict(value)
    out: dict[str, Any] = {}
    if isinstance(value, dict):
        for k, v in value.items():
            flatten(str(k), v, out)
    return out


def hex_id(v: Any) -> str | None:
    """Hex span/trace id from hex, ``0x`` hex or base64 text; None for absent/all-zero ids."""
    if isinstance(v, int) and not isinstance(v, bool):
        return format(v, "x") if v else None
    if not isinstance(v, str):
        return None
    s = v.strip()
    if s[:2] in ("0x", "0X"):
        s = s[2:]
    if not s:
        return None
    if len(s) in (16, 32) and all(c in "0123456789abcdefABCDEF" for c in s):
        return None if set(s) == {"0"} else s.lower()
    try:
        raw = base64.b64decode(s, validate=True)
    except (binascii.Error, ValueError):
        return s
    if len(raw) in (8, 16):
        return None if not any(raw) else raw.hex()
    return s


def first(d: dict[str, Any], *keys: str) -> Any:
    """The value of the first of ``keys`` that ``d`` holds, not None or empty text."""
    for k in keys:
        v = d.get(k)
        if v is not None and v != "":
            return v
    return None


_INT64 = 2**63


def number(v: Any) -> float | None:
    """A finite number, also from text (exporters send numbers as text: OTLP ``intValue``, Codex's
    counts and durations). None for anything else, infinities and NaN included."""
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        return None
    try:
        f = float(v)
    except (ValueError, OverflowError):
        return None
    return f if math.isfinite(f) else None


def count(v: Any) -> int | None:
    """A whole number within 64 bits (what every JSON writer can hold), also from text; a finite
    float is truncated. None for anything else."""
    if isinstance(v, bool):
        return None
    n: int | None = v if isinstance(v, int) else None
    if isinstance(v, str):
        try:
            n = int(v)  # exact, where a float is not (a count above 2**53)
        except ValueError:  # "1e3", "--5", "²", more than 4,300 digits
            n = None
    if n is None:
        f = number(v)
        if f is None:
            return None
        n = int(f)
    return n if -_INT64 <= n < _INT64 else None


def flag(v: Any) -> bool | None:
    """A boolean, also from ``"true"``/``"false"`` text."""
    if isinstance(v, bool):
        return v
    if isinstance(v, str) and v.lower() in ("true", "false"):
        return v.lower() == "true"
    return None


def event_name(field: Any, attrs: dict[str, Any]) -> str:
    """The name of a log event: the record's ``eventName`` field (OTLP 1.5+), except the
    ``event <file>:<line>`` call site that Rust's tracing bridge puts there (Codex); else the
    ``event.name`` attribute (the older event API), else ``event_name`` (some Gemini CLI events)."""
    if isinstance(field, str) and field and not field.startswith("event "):
        return field
    for key in ("event.name", "event_name"):
        v = attrs.get(key)
        if isinstance(v, str) and v:
            return v
    return ""


@dataclass(slots=True)
class LogRecord:
    """One OTLP log record, decoded. ``name`` is the event name (:func:`event_name`), ``""`` when
    the record has none."""

    name: str
    time: datetime | None
    """``timeUnixNano``, else ``observedTimeUnixNano``."""
    body: Any
    """The decoded ``AnyValue``: text, or a dict for a structured body (GenAI events)."""
    attrs: dict[str, Any]
    trace_id: str | None
    span_id: str | None
    resource: dict[str, Any]
    scope: dict[str, Any]
    raw: dict[str, Any]
    line: int | None
    pointer: str

    def as_span_event(self) -> tuple[str, datetime | None, dict[str, Any]]:
        """The record as a span event ``(name, time, attributes)``, the way GenAI instrumentations
        mean it: the body's fields (``content``, ``role``, ``message``, ...) over the attributes; a
        text body is the event's ``content``."""
        body = (
            self.body if isinstance(self.body, dict) else {} if self.body is None else {"content": self.body}
        )
        return self.name, self.time, {**self.attrs, **body}


_SCOPE_KEYS = {
    "spans": ("scopeSpans", "scope_spans", "instrumentationLibrarySpans", "instrumentation_library_spans"),
    "logs": ("scopeLogs", "scope_logs", "instrumentationLibraryLogs", "instrumentation_library_logs"),
}
_ITEM_KEYS = {"spans": ("spans",), "logs": ("logRecords", "log_records")}


def request_items(
    resources: Any, key: str, signal: str
) -> Iterator[tuple[str, dict[str, Any], dict[str, Any], Any]]:
    """``(pointer, resource attributes, scope, item)`` for each span (``signal="spans"``) or log
    record (``"logs"``) of an export request: ``resources`` is the list under ``key``
    (``resourceSpans``, ``resource_logs``, ...). The pointer is relative to the request. A wrong
    structure above the items (a list that is not one, a block that is not an object) raises
    FormatError; the items are given as they are."""
    if not isinstance(resources, list):
        raise FormatError(f"{key} is not a list")
    for i, block in enumerate(resources):
        if not isinstance(block, dict):
            raise FormatError(f"{key}[{i}] is not an object")
        res = block.get("resource")
        resource = attributes(res.get("attributes")) if isinstance(res, dict) else {}
        skey = next((k for k in _SCOPE_KEYS[signal] if k in block), None)
        scopes = block.get(skey) if skey else []
        if not isinstance(scopes, list):
            raise FormatError(f"{key}[{i}].{skey} is not a list")
        for j, sb in enumerate(scopes):
            if not isinstance(sb, dict):
                raise FormatError(f"{key}[{i}].{skey}[{j}] is not an object")
            scope_v = first(sb, "scope", "instrumentationLibrary", "instrumentation_library")
            scope = dict(scope_v) if isinstance(scope_v, dict) else {}
            if "attributes" in scope:
                scope["attributes"] = attributes(scope["attributes"])
            ikey = next((k for k in _ITEM_KEYS[signal] if k in sb), _ITEM_KEYS[signal][0])
            items = sb.get(ikey) or []
            if not isinstance(items, list):
                raise FormatError(f"{key}[{i}].{skey}[{j}].{ikey} is not a list")
            for k, item in enumerate(items):
                yield f"/{key}/{i}/{skey}/{j}/{ikey}/{k}", resource, scope, item


def log_records(rls: Any, key: str, line: int | None, pointer: str, bad: list[str]) -> list[LogRecord]:
    """The log records of ``rls`` (the list under ``resourceLogs`` / ``resource_logs``). A record
    that is not an object is left out and its reason added to ``bad``; a wrong structure above
    the records raises FormatError."""
    out: list[LogRecord] = []
    for ptr, resource, scope, rec in request_items(rls, key, "logs"):
        if not isinstance(rec, dict):
            bad.append(f"log record at {pointer}{ptr} is not an object")
            continue
        out.append(log_record(rec, resource, scope, line, pointer + ptr))
    return out


def log_record(
    rec: dict[str, Any],
    resource: dict[str, Any],
    scope: dict[str, Any],
    line: int | None,
    pointer: str,
) -> LogRecord:
    """One decoded record (see :class:`LogRecord`)."""
    attrs = attributes(rec.get("attributes"))
    return LogRecord(
        name=event_name(first(rec, "eventName", "event_name"), attrs),
        time=parse_ts(first(rec, "timeUnixNano", "time_unix_nano"))
        or parse_ts(first(rec, "observedTimeUnixNano", "observed_time_unix_nano")),
        body=any_value(rec.get("body")),
        attrs=attrs,
        trace_id=hex_id(first(rec, "traceId", "trace_id")),
        span_id=hex_id(first(rec, "spanId", "span_id")),
        resource=resource,
        scope=scope,
        raw=rec,
        line=line,
        pointer=pointer,
    )


# -- OTel GenAI attributes and events (span attributes, span events, log records) ----------------


def indexed(attrs: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    """Groups of ``<prefix><i>.<rest>`` keys, in index order: ``[{rest: value}, ...]``."""
    groups: dict[int, dict[str, Any]] = {}
    for k, v in attrs.items():
        if k.startswith(prefix):
            idx, _, rest = k[len(prefix) :].partition(".")
            if idx.isdigit():
                groups.setdefault(int(idx), {})[rest] = v
    return [groups[i] for i in sorted(groups)]


def choice_messages(attrs: dict[str, Any]) -> list[Msg]:
    """The output message of a ``gen_ai.choice`` event (or a pydantic-ai ``events`` entry): ``message``
    as a dict, a JSON dict, a JSON list of content blocks (Strands) or plain text."""
    value = first(attrs, "message", "gen_ai.event.content", "content")
    body = maybe_json(value)
    if isinstance(body, dict) and isinstance(body.get("message"), dict):
        body = body["message"]
    if body is None:
        body = event_body(attrs)
    elif isinstance(body, list):  # Strands content blocks, else a JSON answer kept as its text
        body = {"role": "assistant", "content": body} if is_blocks(body) else as_text(value)
    if isinstance(body, dict) and body.get("finish_reason") is None and sval(attrs.get("finish_reason")):
        body = {**body, "finish_reason": attrs["finish_reason"]}
    return messages_from(body, "assistant")


# Members of a Bedrock Converse ``ContentBlock`` (Strands message content).
_BEDROCK_BLOCK_KEYS = frozenset(
    {
        "text", "toolUse", "toolResult", "reasoningContent", "image", "document", "video", "cachePoint",
        "guardContent", "citationsContent",
    }
)  # fmt: skip


def is_blocks(value: Any) -> bool:
    """A list of Bedrock Converse content blocks (``[{"text": ...}, {"toolUse": {...}}]``)."""
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(x, dict) and x and x.keys() <= _BEDROCK_BLOCK_KEYS for x in value)
    )


def event_body(attrs: dict[str, Any]) -> dict[str, Any]:
    """A message dict from a GenAI span event's attributes (``content``, ``role``, ``tool_calls``, ``id``).
    A ``content`` holding a JSON list of content blocks (Strands: ``[{"text": ...}, {"toolUse": ...}]``)
    is parsed."""
    d: dict[str, Any] = {}
    for key in ("role", "content", "name"):
        if attrs.get(key) is not None:
            d[key] = attrs[key]
    content = maybe_json(d.get("content"))
    if is_blocks(content):  # not any JSON list of objects: a tool output's records stay text
        d["content"] = content
    if attrs.get("id") is not None:
        d["tool_call_id"] = attrs["id"]
    calls = maybe_json(attrs.get("tool_calls"))
    if isinstance(calls, list):
        d["tool_calls"] = calls
    else:
        grouped = indexed(attrs, "tool_calls.")
        if grouped:
            d["tool_calls"] = [
                {
                    "id": c.get("id"),
                    "function": {"name": c.get("function.name"), "arguments": c.get("function.arguments")},
                }
                for c in grouped
            ]
    return d


_LANGFUSE_USAGE = {  # Langfuse's usage_details keys, in the spelling usage_from reads
    "input": "input_tokens", "output": "output_tokens", "total": "total_tokens",
    "input_cache_read": "cached_input_tokens",
}  # fmt: skip


def genai_usage(a: dict[str, Any]) -> Usage | None:
    def pick(*keys: str) -> int | None:
        for k in keys:
            v = count(a.get(k))
            if v is not None:
                return v
        return None

    lf_cost = maybe_json(a.get("langfuse.observation.cost_details"))
    lf_total = number(lf_cost.get("total")) if isinstance(lf_cost, dict) else None
    cost = next(
        (
            c
            for c in (number(a.get("llm.cost.total")), number(a.get("gen_ai.usage.cost")), lf_total)
            if c is not None
        ),
        None,
    )
    usage = Usage(
        input_tokens=pick(
            "gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.token_count.prompt",
            "llm.usage.prompt_tokens", "ai.usage.inputTokens", "ai.usage.promptTokens",
        ),
        output_tokens=pick(
            "gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens", "llm.token_count.completion",
            "llm.usage.completion_tokens", "ai.usage.outputTokens", "ai.usage.completionTokens",
        ),
        cached_input_tokens=pick(
            "gen_ai.usage.cache_read.input_tokens", "gen_ai.usage.cache_read_input_tokens",
            "llm.token_count.prompt_details.cache_read", "ai.usage.cachedInputTokens",
            "ai.usage.inputTokenDetails.cacheReadTokens",
        ),
        cache_write_tokens=pick(
            "gen_ai.usage.cache_creation.input_tokens", "gen_ai.usage.cache_creation_input_tokens",
            "llm.token_count.prompt_details.cache_write", "ai.usage.inputTokenDetails.cacheWriteTokens",
        ),
        reasoning_tokens=pick(
            "gen_ai.usage.reasoning.output_tokens", "gen_ai.usage.reasoning_tokens",
            "llm.token_count.completion_details.reasoning", "ai.usage.reasoningTokens",
            "ai.usage.outputTokenDetails.reasoningTokens",
        ),
        total_tokens=pick(
            "llm.token_count.total", "llm.usage.total_tokens", "gen_ai.usage.total_tokens", "ai.usage.totalTokens"
        ),
        cost_usd=cost,
    )  # fmt: skip
    # Langfuse keeps token counts in one JSON attribute: they fill what the attributes above left unset
    details = maybe_json(a.get("langfuse.observation.usage_details"))
    langfuse = usage_from(
        {_LANGFUSE_USAGE.get(k, k): v for k, v in details.items()} if isinstance(details, dict) else None
    )
    if langfuse is not None:
        usage = Usage(
            **{
                f: v if (v := getattr(usage, f)) is not None else getattr(langfuse, f)
                for f in Usage.model_fields
            }
        )
    return None if usage.is_empty() else usage


def event_messages(events: Iterable[tuple[str, Any, dict[str, Any]]], *, output: bool) -> list[Msg]:
    """The input (or, with ``output``, output) messages of GenAI events given as ``(name, time,
    attributes)``: span events, or log records with their body's fields over their attributes
    (``gen_ai.{system,user,assistant,tool}.message``, ``gen_ai.choice``,
    ``gen_ai.content.prompt|completion``, ``gen_ai.client.inference.operation.details``)."""
    msgs: list[Msg] = []
    for name, _ts, attrs in events:
        if name == "gen_ai.client.inference.operation.details":
            key = "gen_ai.output.messages" if output else "gen_ai.input.messages"
            if attrs.get(key) is not None:
                msgs.extend(message_list(attrs[key], "assistant" if output else "user"))
            continue
        if output:
            if name == "gen_ai.choice":
                msgs.extend(choice_messages(attrs))
            elif name == "gen_ai.content.completion" and attrs.get("gen_ai.completion") is not None:
                msgs.extend(message_list(attrs["gen_ai.completion"], "assistant"))
        else:
            if name.startswith("gen_ai.") and name.endswith(".message"):
                role = name[len("gen_ai.") : -len(".message")]
                body = maybe_json(attrs.get("gen_ai.event.content"))
                d = body if isinstance(body, dict) else event_body(attrs)
                d.setdefault("role", role)
                msgs.extend(messages_from(d, role))
            elif name == "gen_ai.content.prompt" and attrs.get("gen_ai.prompt") is not None:
                msgs.extend(message_list(attrs["gen_ai.prompt"]))
    return msgs
