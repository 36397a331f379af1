"""OTLP/JSON decoding shared by the importers that read OpenTelemetry exports (``otlp`` for spans,
``otel_logs`` for log records).

* :func:`any_value`, :func:`attributes`, :func:`hex_id`: attribute values, flattened attribute maps
  and span/trace ids in every spelling the exporters write (camelCase OTLP/JSON, snake_case protobuf
  JSON, plain JSON, base64 or hex ids).
* :func:`log_records`: the records of an ``ExportLogsServiceRequest`` body
  (``resourceLogs[].scopeLogs[].logRecords[]``, also snake case and the pre-1.0
  ``instrumentationLibraryLogs``), each with its resource and scope, as :class:`LogRecord`.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from mastkit.errors import FormatError
from mastkit.traces._build import parse_ts

LOGS_KEYS = ("resourceLogs", "resource_logs")
"""The key of an ``ExportLogsServiceRequest`` (camelCase OTLP/JSON, snake_case protobuf JSON)."""

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


def _pick(d: dict[str, Any], *keys: str) -> Any:
    for k in keys:
        if k in d:
            return d[k]
    return None


@dataclass(slots=True)
class LogRecord:
    """One OTLP log record, decoded. ``name`` is the event name: the record's ``eventName`` field
    (OTLP 1.5+), else its ``event.name`` attribute (the older event API), else ``""``."""

    name: str
    time: datetime | None
    """``timeUnixNano``, else ``observedTimeUnixNano``."""
    severity: str | None
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
    order: int


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
            scope_v = _pick(sb, "scope", "instrumentationLibrary", "instrumentation_library")
            scope = dict(scope_v) if isinstance(scope_v, dict) else {}
            if "attributes" in scope:
                scope["attributes"] = attributes(scope["attributes"])
            ikey = next((k for k in _ITEM_KEYS[signal] if k in sb), _ITEM_KEYS[signal][0])
            items = sb.get(ikey) or []
            if not isinstance(items, list):
                raise FormatError(f"{key}[{i}].{skey}[{j}].{ikey} is not a list")
            for k, item in enumerate(items):
                yield f"/{key}/{i}/{skey}/{j}/{ikey}/{k}", resource, scope, item


def log_records(
    rls: Any, key: str, line: int | None, pointer: str, order: int, bad: list[str]
) -> list[LogRecord]:
    """The log records of ``rls`` (the list under ``resourceLogs`` / ``resource_logs``). A record
    that is not an object is left out and its reason added to ``bad``; a wrong structure above
    the records raises FormatError."""
    out: list[LogRecord] = []
    for ptr, resource, scope, rec in request_items(rls, key, "logs"):
        if not isinstance(rec, dict):
            bad.append(f"log record at {pointer}{ptr} is not an object")
            continue
        out.append(log_record(rec, resource, scope, line, pointer + ptr, order + len(out)))
    return out


def log_record(
    rec: dict[str, Any],
    resource: dict[str, Any],
    scope: dict[str, Any],
    line: int | None,
    pointer: str,
    order: int,
) -> LogRecord:
    """One decoded record (see :class:`LogRecord`)."""
    attrs = attributes(rec.get("attributes"))
    name = _pick(rec, "eventName", "event_name")
    if not isinstance(name, str) or not name:
        name = attrs.get("event.name")
    severity = _pick(rec, "severityText", "severity_text")
    return LogRecord(
        name=name if isinstance(name, str) else "",
        time=parse_ts(_pick(rec, "timeUnixNano", "time_unix_nano"))
        or parse_ts(_pick(rec, "observedTimeUnixNano", "observed_time_unix_nano")),
        severity=severity if isinstance(severity, str) and severity else None,
        body=any_value(rec.get("body")),
        attrs=attrs,
        trace_id=hex_id(_pick(rec, "traceId", "trace_id")),
        span_id=hex_id(_pick(rec, "spanId", "span_id")),
        resource=resource,
        scope=scope,
        raw=rec,
        line=line,
        pointer=pointer,
        order=order,
    )
