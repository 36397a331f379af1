"""OpenTelemetry trace exports (OTLP/JSON) carrying GenAI / OpenInference / OpenLLMetry spans.

Shapes read:

* one OTLP ``ExportTraceServiceRequest`` object ``{resourceSpans: [{resource: {attributes},
  scopeSpans: [{scope, spans: [...]}]}]}`` (also ``resource_spans``/``scope_spans`` snake case,
  the pre-1.0 ``instrumentationLibrarySpans``, and Tempo's ``batches``);
* JSONL with one such request per line (the collector ``file`` exporter), or a JSON list of them;
* flat span lists some tools write: spans with ``trace_id``/``span_id`` (or the Python SDK
  ``ConsoleSpanExporter`` layout ``{name, context: {trace_id, span_id}, parent_id, start_time,
  status: {status_code}, attributes: {...}, events, resource}``, or Phoenix-style
  ``context.span_id`` / ``span_kind`` / nested ``attributes``), as a list, JSONL or ``{spans: [...]}``,
  or as the console exporter prints them: indented span objects one after another
  (:attr:`Source.json_values`); the Go SDK's ``stdouttrace`` spans (``SpanContext``, ``Parent``,
  ``[{Key, Value: {Type, Value}}]`` attributes) and the JS SDK's span objects (``HrTime`` times,
  ``parentSpanContext``) likewise.

Attribute values are OTLP ``AnyValue`` objects (``stringValue``, ``intValue`` as text,
``doubleValue``, ``boolValue``, ``arrayValue``, ``kvlistValue``, ``bytesValue``) or plain JSON;
nested values are flattened to dotted keys. Ids are hex (OTLP/JSON), ``0x``-prefixed hex, or
base64 (protobuf JSON mapping); all become lower-case hex.

Spans are grouped by trace id (one :class:`Trace` each, spans of one trace may be spread over many
lines), then walked depth-first from the roots, children in start-time order. A span's class comes
from ``openinference.span.kind``, else the Vercel AI SDK ``ai.operationId``, else
``gen_ai.operation.name``, else ``traceloop.span.kind``, else the presence of GenAI attributes. Mapping:

* LLM / ``chat``: new input messages (system/user/tool; re-sent history is skipped, new assistant
  turns that the trace never produced are flagged ``is_copied_context``), an ``llm_call`` event
  (model, usage), then the output: ``reasoning``, ``message`` and one ``tool_call`` per call.
  Messages are read from current GenAI ``gen_ai.input.messages`` / ``gen_ai.output.messages`` /
  ``gen_ai.system_instructions`` (JSON with ``parts``), OpenInference ``llm.input_messages.N.*`` /
  ``llm.output_messages.N.*``, legacy ``gen_ai.prompt.N.*`` / ``gen_ai.completion.N.*`` (tool calls
  in ``gen_ai.completion.N.tool_calls.M.*``), OpenLIT ``gen_ai.prompt``/``gen_ai.completion``, span
  events (``gen_ai.{system,user,assistant,tool}.message``, ``gen_ai.choice``,
  ``gen_ai.content.prompt|completion``, ``gen_ai.client.inference.operation.details``), and, last,
  ``gen_ai.response.content`` or ``input.value``/``output.value``.
* Vercel AI SDK (``experimental_telemetry``, 3.x-5.x): ``ai.*.doGenerate`` / ``ai.*.doStream`` spans
  are the model calls (``ai.prompt.messages`` with ``tool-call``/``tool-result`` parts, ``ai.response.text``
  / ``toolCalls`` / ``object`` / ``reasoning`` / ``finishReason``, 3.x ``ai.result.*``, ``ai.usage.*``);
  the outer ``ai.generateText``/``streamText``/``generateObject``/``streamObject`` span is a wrapper
  (an agent named by ``ai.telemetry.functionId`` when set) unless exported without its model calls,
  then it is the call (``ai.prompt`` ``{system, prompt, messages}``); ``ai.toolCall`` is a tool span.
* Langfuse SDK (v3+): ``langfuse.observation.type`` gives the class; a generation's
  ``langfuse.observation.input``/``output``/``model.name``/``usage_details``/``cost_details``, level ERROR
  gives an ``error``; ``langfuse.trace.*``, ``user.id``, ``session.id`` go to ``Trace.extra["langfuse"]``.
* TOOL / ``execute_tool`` / RETRIEVER: ``tool_call`` (skipped when the model output already
  announced the call: matched by ``gen_ai.tool.call.id``/``tool_call.id``, else by tool name) and a
  ``tool_result`` at the span end (``is_error`` from the span status, duration).
* AGENT / ``invoke_agent``: ``handoff`` with ``actor`` = the agent name (``agent.name``,
  ``gen_ai.agent.name``, else the span name); nested spans inherit the actor. Any span's
  ``agent.name`` / ``gen_ai.agent.name`` / ``agent_name``, or the agent id in an autogen-core
  ``process`` span's ``messaging.destination``, names its actor too. ``create_agent``:
  ``system`` event (subtype ``create_agent``) and an agent entry.
* CHAIN, EVALUATOR, GUARDRAIL, EMBEDDING, ... and non-GenAI spans: ``system`` event with that
  subtype (kept so nothing is lost). An LLM span that wraps another LLM span counts as a chain.
* Span status ERROR: an ``error`` event after the span's other events (message from the status or
  the ``exception`` span event); an ERROR root span gives the termination.
* ``gen_ai.evaluation.result`` events on the root span give the outcome (score, pass/fail label,
  metrics); the root ``output.value`` is the final output.

Every span's native dict is the ``raw`` of its first event; ``source`` has the JSONL line and a
JSON pointer to the span. Resource attributes and scopes go to ``Trace.raw``; AI SDK function ids
and ``ai.telemetry.metadata.*`` to ``Trace.extra["ai_sdk"]``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from mastkit.errors import FormatError, TraceLoadError
from mastkit.traces._build import TraceBuilder, parse_arguments, parse_ts, validation_reason
from mastkit.traces.importers._llm_spans import (
    Call,
    Msg,
    as_text,
    idval,
    maybe_json,
    message_list,
    messages_from,
    sval,
)
from mastkit.traces.importers._otlp import (
    LOGS_KEYS,
    SPANS_KEYS,
    LogRecord,
    attributes,
    choice_messages,
    event_messages,
    first,
    flatten,
    genai_usage,
    hex_id,
    holds_spans,
    indexed,
    log_records,
    number,
    request_items,
)
from mastkit.traces.importers._span_walk import SpanContext, span_tree, walk
from mastkit.traces.model import Outcome, Termination, ToolCall, ToolResult, Trace
from mastkit.traces.registry import Importer, register
from mastkit.traces.source import Source

_OI_KINDS = {
    "LLM": "llm", "CHAIN": "chain", "TOOL": "tool", "AGENT": "agent", "RETRIEVER": "retriever",
    "EMBEDDING": "embedding", "RERANKER": "reranker", "GUARDRAIL": "guardrail", "EVALUATOR": "evaluator",
    "PROMPT": "prompt", "UNKNOWN": "span",
}  # fmt: skip
_GENAI_OPS = {
    "chat": "llm", "text_completion": "llm", "generate_content": "llm", "completion": "llm",
    "execute_tool": "tool", "invoke_agent": "agent", "create_agent": "create_agent", "embeddings": "embedding",
    "retrieval": "retriever", "invoke_workflow": "chain",
}  # fmt: skip
_TRACELOOP_KINDS = {"workflow": "chain", "task": "chain", "agent": "agent", "tool": "tool"}
# Vercel AI SDK ``ai.operationId`` values (also the span names). The outer calls are LLM spans too:
# with a ``doGenerate``/``doStream`` span below they are wrappers (see ``_trace``), alone (a partial
# export) they carry the call themselves. Other ``ai.*`` operations (images, speech, ...) are plain spans.
_VERCEL_OUTER = frozenset({"ai.generateText", "ai.streamText", "ai.generateObject", "ai.streamObject"})
_VERCEL_OPS = {
    **dict.fromkeys(_VERCEL_OUTER, "llm"),
    "ai.generateText.doGenerate": "llm", "ai.streamText.doStream": "llm", "ai.generateObject.doGenerate": "llm",
    "ai.streamObject.doStream": "llm", "ai.toolCall": "tool", "ai.embed": "embedding",
    "ai.embed.doEmbed": "embedding", "ai.embedMany": "embedding", "ai.embedMany.doEmbed": "embedding",
}  # fmt: skip
# Langfuse SDK (v3+) ``langfuse.observation.type``; ``span``/``event`` are plain spans.
_LANGFUSE_TYPES = {
    "generation": "llm", "agent": "agent", "tool": "tool", "chain": "chain", "retriever": "retriever",
    "evaluator": "evaluator", "embedding": "embedding", "guardrail": "guardrail",
}  # fmt: skip
_SPAN_KINDS = ("UNSPECIFIED", "INTERNAL", "SERVER", "CLIENT", "PRODUCER", "CONSUMER")

# Agent / run output and tool argument / result attributes, most standard first (OpenInference,
# OpenLLMetry, pydantic-ai/Logfire ``final_result``/``tool_arguments``/``tool_response``, Google ADK,
# Vercel AI SDK ``ai.response.*`` / ``ai.toolCall.*``, 3.x ``ai.result.*``, pre-release 5.0 ``input``).
_OUTPUT_KEYS = (
    "output.value", "traceloop.entity.output", "final_result", "ai.response.text", "ai.response.object",
    "ai.result.text", "ai.result.object", "langfuse.observation.output",
)  # fmt: skip
_TOOL_ARG_KEYS = (
    "gen_ai.tool.call.arguments", "input.value", "traceloop.entity.input", "tool_arguments",
    "gcp.vertex.agent.tool_call_args", "ai.toolCall.args", "ai.toolCall.input", "langfuse.observation.input",
)  # fmt: skip
_TOOL_RESULT_KEYS = (
    "gen_ai.tool.call.result", "output.value", "traceloop.entity.output", "tool_response",
    "gcp.vertex.agent.tool_response", "ai.toolCall.result", "ai.toolCall.output", "langfuse.observation.output",
)  # fmt: skip
_GOAL_KEYS = ("user_goal", "goal", "task", "question", "query", "instruction")
_REQUEST_KEYS = (*SPANS_KEYS, "batches")  # batches: OTLP/JSON before 0.9
_NOT_TRACES = ("resourceMetrics", "resource_metrics")


# -- decoding -----------------------------------------------------------------------------------


def _status(sp: dict[str, Any]) -> tuple[str, str | None]:
    st = sp.get("status")
    code: Any = None
    msg: Any = None
    if isinstance(st, dict):
        code = st.get("code", st.get("status_code"))
        msg = st.get("message", st.get("description"))
    elif isinstance(st, (str, int)):
        code = st
    if code is None:
        code = sp.get("status_code", sp.get("statusCode"))
        msg = msg or sp.get("status_message", sp.get("statusMessage"))
    word = "UNSET"
    if isinstance(code, int) and not isinstance(code, bool):
        word = {1: "OK", 2: "ERROR"}.get(code, "UNSET")
    elif isinstance(code, str):
        up = code.upper()
        if up in ("1", "2"):
            word = "OK" if up == "1" else "ERROR"
        elif "ERROR" in up:
            word = "ERROR"
        elif up.endswith("OK"):
            word = "OK"
    return word, msg if isinstance(msg, str) and msg else None


def _span_kind(v: Any) -> str | None:
    if isinstance(v, int) and not isinstance(v, bool):
        return _SPAN_KINDS[v] if 0 <= v < len(_SPAN_KINDS) else str(v)
    if isinstance(v, str) and v:
        word = v.replace("SpanKind.", "").replace("SPAN_KIND_", "").upper()
        return word
    return None


# -- spans --------------------------------------------------------------------------------------


@dataclass
class _Span:
    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    kind: str | None
    start: datetime | None
    end: datetime | None
    status: str
    status_message: str | None
    attrs: dict[str, Any]
    events: list[tuple[str, datetime | None, dict[str, Any]]]
    resource: dict[str, Any]
    scope: dict[str, Any]
    raw: Any
    line: int | None
    pointer: str
    order: int
    cls: str = "span"
    native_kind: str = ""
    has_ai: bool = False
    """Some attribute key starts with ``ai.`` (Vercel AI SDK): read by :func:`_vercel_telemetry`."""
    has_langfuse: bool = False
    """Some attribute key starts with ``langfuse.``: :func:`_langfuse_trace` reads the trace."""


def _join_logs(groups: dict[str, list[_Span]], logs: list[LogRecord]) -> dict[str, list[LogRecord]]:
    """Log records written with the spans (OTel GenAI instrumentations emit the messages as log
    events: ``gen_ai.user.message``, ``gen_ai.choice``, ...) join the span they name as span events,
    in file order (:meth:`LogRecord.as_span_event`), so they are read as span events are. Returns
    the records of each trace, which keeps them whole. A record naming no span of the file is kept
    by its trace, or left out when the file has no span of its trace (see the format notes)."""
    by_id: dict[tuple[str, str], _Span] = {}
    for tid, group in groups.items():
        for s in group:
            by_id.setdefault((tid, s.span_id), s)
    out: dict[str, list[LogRecord]] = {}
    for r in logs:
        if r.trace_id is None or r.trace_id not in groups:
            continue
        out.setdefault(r.trace_id, []).append(r)
        span = by_id.get((r.trace_id, r.span_id)) if r.span_id else None
        if span is not None:
            span.events.append(r.as_span_event())
    return out


def _is_jaeger(rec: dict[str, Any]) -> bool:
    data = rec.get("data")
    return (
        isinstance(data, list)
        and bool(data)
        and isinstance(data[0], dict)
        and isinstance(data[0].get("spans"), list)
        and ("traceID" in data[0] or "processes" in data[0])
    )


def _wrapped_request(rec: dict[str, Any]) -> str | None:
    """The key of an OTLP request wrapped by a query API: Jaeger v2 ``/api/v3/traces`` ``{result:
    {resourceSpans}}``, Tempo ``/api/v2/traces/<id>`` ``{trace: {resourceSpans}}``."""
    for key in ("result", "trace"):
        inner = rec.get(key)
        if isinstance(inner, dict) and (
            "resourceSpans" in inner or "resource_spans" in inner or _is_batches(inner.get("batches"))
        ):
            return key
    return None


def _is_batches(batches: Any) -> bool:
    """Tempo's ``batches`` (resource spans): a bare ``batches`` key is too common to go by alone."""
    return (
        isinstance(batches, list)
        and bool(batches)
        and isinstance(batches[0], dict)
        and any(k in batches[0] for k in ("scopeSpans", "scope_spans", "instrumentationLibrarySpans"))
    )


def _context(rec: dict[str, Any]) -> dict[str, Any]:
    """A flat span's context: Python ``context`` ({trace_id, span_id}), or the JS SDK's span context
    (``_spanContext`` / ``spanContext``: {traceId, spanId}) when a span object was JSON-stringified."""
    for key in ("context", "_spanContext", "spanContext"):
        val = rec.get(key)
        if isinstance(val, dict):
            return val
    return {}


def _hr_time(value: Any) -> Any:
    """The JS SDK's ``HrTime`` (``[seconds, nanoseconds]``) as epoch seconds; other values unchanged."""
    if (
        isinstance(value, list)
        and len(value) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    ):
        return value[0] + value[1] / 1e9
    return value


def _is_go_span(rec: Any) -> bool:
    """A span as the OpenTelemetry Go SDK's ``stdouttrace`` exporter prints it (``tracetest.SpanStub``:
    ``Name``, ``SpanContext: {TraceID, SpanID}``, ``Parent``, ``StartTime``, ``Attributes: [{Key,
    Value: {Type, Value}}]``, ...)."""
    return isinstance(rec, dict) and isinstance(rec.get("SpanContext"), dict) and "Name" in rec


def _go_pairs(kvs: Any) -> dict[str, Any]:
    """Go ``[{Key, Value: {Type, Value}}]`` attributes (resource, span, event) as a plain dict."""
    out: dict[str, Any] = {}
    for kv in kvs if isinstance(kvs, list) else []:
        if isinstance(kv, dict) and isinstance(kv.get("Key"), str):
            val = kv.get("Value")
            out[kv["Key"]] = val.get("Value") if isinstance(val, dict) else val
    return out


def _go_time(value: Any) -> Any:
    """Go's zero time (``0001-01-01T00:00:00Z``, a span never started or ended) is no time."""
    return None if isinstance(value, str) and value.startswith("0001-01-01") else value


def _go_span_as_flat(sp: dict[str, Any]) -> dict[str, Any]:
    """A Go ``stdouttrace`` span in the flat layout :meth:`OtlpImporter._span` reads. Older SDKs
    (< 1.0) wrote ``MessageEvents``, ``StatusCode`` / ``StatusMessage``."""
    ctx = sp["SpanContext"]
    parent = sp.get("Parent")
    status = sp.get("Status")
    if isinstance(status, dict):
        code, desc = status.get("Code"), status.get("Description")
    else:
        code, desc = sp.get("StatusCode"), sp.get("StatusMessage")
    raw_events = sp.get("Events") if sp.get("Events") is not None else sp.get("MessageEvents")
    events = [
        {
            "name": ev.get("Name"),
            "timestamp": _go_time(ev.get("Time")),
            "attributes": _go_pairs(ev.get("Attributes")),
        }
        for ev in (raw_events if isinstance(raw_events, list) else [])
        if isinstance(ev, dict)
    ]
    return {
        "name": sp.get("Name"),
        "traceId": ctx.get("TraceID"),
        "spanId": ctx.get("SpanID"),
        "parentSpanId": parent.get("SpanID") if isinstance(parent, dict) else None,
        "kind": sp.get("SpanKind"),
        "start_time": _go_time(sp.get("StartTime")),
        "end_time": _go_time(sp.get("EndTime")),
        "status": {"code": code, "message": desc},
        "attributes": _go_pairs(sp.get("Attributes")),
        "events": events,
    }


def _go_scope(sp: dict[str, Any]) -> dict[str, Any]:
    lib = sp.get("InstrumentationScope") or sp.get("InstrumentationLibrary")
    if not isinstance(lib, dict) or not lib.get("Name"):
        return {}
    return {"name": lib.get("Name"), "version": lib.get("Version") or None}


def _is_flat_span(rec: Any) -> bool:
    if not isinstance(rec, dict) or "span_data" in rec:
        return False
    ctx = _context(rec)
    has_trace = any(k in rec for k in ("traceId", "trace_id", "context.trace_id")) or bool(
        {"trace_id", "traceId"} & set(ctx)
    )
    has_span = any(k in rec for k in ("spanId", "span_id", "context.span_id")) or bool(
        {"span_id", "spanId"} & set(ctx)
    )
    return has_trace and has_span and "name" in rec


def _classify(attrs: dict[str, Any], name: str) -> tuple[str, str]:
    """(class, native kind word) of a span."""
    oi = attrs.get("openinference.span.kind")
    if isinstance(oi, str) and oi.upper() in _OI_KINDS:
        if oi.upper() == "TOOL" and _is_handoff(attrs, name):
            return "handoff", "TOOL"
        return _OI_KINDS[oi.upper()], oi.upper()
    vercel = _vercel_op(attrs, name)
    if vercel is not None:
        return _VERCEL_OPS.get(vercel, "span"), vercel
    op = attrs.get("gen_ai.operation.name")
    if isinstance(op, str) and op in _GENAI_OPS:
        return _GENAI_OPS[op], op
    tl = attrs.get("traceloop.span.kind")
    if isinstance(tl, str) and tl in _TRACELOOP_KINDS:
        return _TRACELOOP_KINDS[tl], tl
    lf = attrs.get("langfuse.observation.type")
    if isinstance(lf, str) and lf:
        return _LANGFUSE_TYPES.get(lf, "span"), lf
    if not op and (name == "agent run" or name.startswith("invoke_agent ")):
        # pydantic-ai agent run span (before gen_ai.operation.name was set). Its ``agent_name``
        # attribute alone is not enough: custom spans of other tools (LLM calls included) set it too.
        return "agent", "agent run"
    if isinstance(op, str) and op:
        return "span", op
    if any(k in attrs for k in ("gen_ai.request.model", "llm.model_name", "llm.request.type")) or any(
        k.startswith(("gen_ai.prompt.", "gen_ai.completion.", "llm.input_messages.")) for k in attrs
    ):
        return "llm", "llm"
    if "gen_ai.tool.name" in attrs:
        return "tool", "tool"
    return "span", ""


def _is_handoff(attrs: dict[str, Any], name: str) -> bool:
    """An OpenInference openai-agents handoff: TOOL span ``handoff to <agent>`` with the source
    agent in ``input.value`` and the target in ``output.value``, and no tool name or call id."""
    return name.startswith("handoff to ") and not any(
        k in attrs for k in ("tool.name", "gen_ai.tool.name", "gen_ai.tool.call.id", "tool_call.id")
    )


def _vercel_op(attrs: dict[str, Any], name: str) -> str | None:
    """The Vercel AI SDK operation of a span: ``ai.operationId``, else (an exporter that dropped it) a
    known ``ai.*`` span name on a span with ``ai.*`` attributes."""
    op = attrs.get("ai.operationId")
    if isinstance(op, str) and op.startswith("ai."):
        return op
    if name in _VERCEL_OPS and any(k.startswith("ai.") for k in attrs):
        return name
    return None


class _Ctx(SpanContext[_Span]):
    """Per-trace state while walking the span tree."""

    def __init__(self, b: TraceBuilder) -> None:
        super().__init__(b)
        self.wrappers: set[str] = set()
        """LLM spans with an LLM span below them: read as chains."""
        self.root_error_seq: int | None = None
        """The ``seq`` of the error event of a root span."""
        self.roots: set[str] = set()
        """The ids of the root spans."""

    def span_extra(self, span: _Span, extra: dict[str, Any]) -> None:
        extra.setdefault("span_name", span.name)
        if span.native_kind:
            extra.setdefault("span_kind", span.native_kind)
        extra.setdefault("status", span.status)


# autogen-core's runtime names the agent that handles a message in ``messaging.destination``:
# ``<agent type>.(<key>)-A`` (``-T`` for a topic); AgentChat team members' types end with
# ``_<team id>`` (``WebSurfer_7f1e...``)
_RUNTIME_AGENT = re.compile(r"^(?P<type>.+?)\.\((?P<key>[^()]*)\)-A$")
_TEAM_SUFFIX = re.compile(r"_[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$")


def _runtime_agent(destination: str | None) -> str | None:
    """The agent name in an autogen-core ``messaging.destination`` that is an agent id, else None."""
    m = _RUNTIME_AGENT.match(destination or "")
    if m is None:
        return None
    return _TEAM_SUFFIX.sub("", m.group("type")) or None


@register
class OtlpImporter(Importer):
    name = "otlp"
    description = (
        "OpenTelemetry OTLP/JSON trace exports (collector file exporter JSONL, flat span lists) "
        "with OTel GenAI (current and legacy), OpenInference, OpenLLMetry, pydantic-ai, Strands, Google "
        "ADK, Vercel AI SDK or Langfuse attributes; Jaeger query JSON"
    )

    # -- detection ------------------------------------------------------------------------------

    def sniff(self, src: Source) -> float:
        rec = src.first_object
        if rec is None and src.json_shape == "object":
            values = src.json_values  # pretty-printed spans one after another (ConsoleSpanExporter)
            rec = values[0][2] if values else None
            return 0.85 if isinstance(rec, dict) and (_is_flat_span(rec) or _is_go_span(rec)) else 0.0
        if rec is None:
            return 0.0
        if any(k in rec for k in SPANS_KEYS):
            return 0.95
        if any(k in rec for k in LOGS_KEYS):  # logs first, spans later in the same file: the spans' file
            if holds_spans(src.head_text):
                return 0.9
            # Spans may still come past the head: otel_logs reads the file first and fails, before
            # it yields anything, when it meets them; then the loader tries this importer next.
            return 0.3 if src.json_shape in ("jsonl", "array") else 0.0
        if _is_batches(rec.get("batches")):
            return 0.9
        if _is_jaeger(rec):
            return 0.9
        inner = _wrapped_request(rec)
        if inner is not None:
            return 0.9
        if _is_flat_span(rec) or _is_go_span(rec):
            return 0.85
        spans = rec.get("spans")
        if isinstance(spans, list) and spans and _is_flat_span(spans[0]):
            return 0.8
        return 0.0

    # -- reading --------------------------------------------------------------------------------

    def load(self, src: Source) -> Iterator[Trace | TraceLoadError]:
        spans: list[_Span | LogRecord] = []
        errors = 0
        shape = src.json_shape
        # a span of a record that cannot be read is reported (one error each) and the rest loads
        stream = src.json_values if shape == "object" else None  # ConsoleSpanExporter output
        if shape == "jsonl" or stream is not None:
            for line, offset, value in src.iter_jsonl() if stream is None else stream:
                if isinstance(value, FormatError):
                    errors += 1
                    yield TraceLoadError(src.path, value.reason, line=line, offset=offset)
                    continue
                try:
                    got, bad = self._read(value, line, "", len(spans))
                except FormatError as exc:
                    if not spans and not errors:
                        raise FormatError(exc.reason, line=line) from None
                    errors += 1
                    yield TraceLoadError(src.path, exc.reason, line=line, offset=offset)
                    continue
                spans.extend(got)
                errors += len(bad)
                yield from (TraceLoadError(src.path, reason, line=line, offset=offset) for reason in bad)
        elif shape == "array":
            for i, _off, item in src.iter_array():
                try:
                    got, bad = self._read(item, None, f"/{i}", len(spans))
                except FormatError as exc:
                    if not spans and not errors:
                        raise FormatError(f"item {i}: {exc.reason}") from None
                    errors += 1
                    yield TraceLoadError(src.path, f"item {i}: {exc.reason}")
                    continue
                spans.extend(got)
                errors += len(bad)
                yield from (TraceLoadError(src.path, f"item {i}: {reason}") for reason in bad)
        elif shape == "object" and isinstance(src.json, dict) and _is_jaeger(src.json):
            # a Jaeger file holds many traces: a bad one is reported, the others still load
            data = src.json["data"]
            for i, tr in enumerate(data):
                try:
                    spans.extend(self._jaeger_trace(i, tr, None, "", len(spans)))
                except FormatError as exc:
                    if len(data) == 1:
                        raise
                    errors += 1
                    yield TraceLoadError(src.path, exc.reason)
        elif shape == "object":
            got, bad = self._read(src.json, None, "", 0)
            spans.extend(got)
            errors += len(bad)
            yield from (TraceLoadError(src.path, reason) for reason in bad)
        else:
            raise FormatError("not a JSON or JSONL file")
        logs = [x for x in spans if isinstance(x, LogRecord)]
        groups: dict[str, list[_Span]] = {}
        for s in spans:
            if isinstance(s, _Span):
                groups.setdefault(s.trace_id, []).append(s)
        if not groups:
            if not errors:
                raise FormatError("no trace spans found" + (" (only log records)" if logs else ""))
            return
        joined = _join_logs(groups, logs)
        for tid, group in groups.items():
            try:
                yield self._trace(src, tid, group, joined.get(tid, []))
            except (ValueError, TypeError, KeyError) as exc:
                yield TraceLoadError(src.path, f"trace {tid}: {validation_reason(exc)}")

    def _read(
        self, rec: Any, line: int | None, pointer: str, order: int
    ) -> tuple[list[_Span | LogRecord], list[str]]:
        """``(spans, reasons)``: the spans of one record (:meth:`_record`) and why each span left out
        could not be read. A record none of whose spans can be read is itself broken: FormatError."""
        bad: list[str] = []
        got = self._record(rec, line, pointer, order, bad)
        if bad and not got:
            more = len(bad) - 1
            if more:
                raise FormatError(f"{bad[0]} (and {more} other unreadable record{'s' if more > 1 else ''})")
            raise FormatError(bad[0])
        return got, bad

    def _record(
        self, rec: Any, line: int | None, pointer: str, order: int, bad: list[str]
    ) -> list[_Span | LogRecord]:
        """The spans in one record: an export request, a flat span, or a list/wrapper of them; the log
        records of a logs request written to the same file (they join their spans, see :meth:`load`).
        A span that cannot be read (not an object, no ids) is left out and its reason added to
        ``bad``; a record whose structure is wrong raises FormatError."""
        if isinstance(rec, list):
            out: list[_Span | LogRecord] = []
            for i, item in enumerate(rec):
                out.extend(self._record(item, line, f"{pointer}/{i}", order + len(out), bad))
            return out
        if not isinstance(rec, dict):
            raise FormatError(f"record is a {type(rec).__name__}, not an OTLP request or span")
        for key in _REQUEST_KEYS:
            if key in rec:
                return list(self._request(rec[key], key, line, pointer, order, bad))
        for key in LOGS_KEYS:
            if key in rec:
                return list(log_records(rec[key], key, line, pointer, bad))
        if _is_jaeger(rec):
            return list(self._jaeger(rec["data"], line, pointer, order))
        inner = _wrapped_request(rec)
        if inner is not None:
            return self._record(rec[inner], line, f"{pointer}/{inner}", order, bad)
        if _is_go_span(rec):  # the Go SDK's stdouttrace exporter
            span = self._span(
                _go_span_as_flat(rec), _go_pairs(rec.get("Resource")), _go_scope(rec), line, pointer, order
            )
            span.raw = rec
            return [span]
        if _is_flat_span(rec):
            return [self._span(rec, {}, {}, line, pointer, order)]
        if isinstance(rec.get("spans"), list):
            out = []
            for i, item in enumerate(rec["spans"]):
                if not _is_flat_span(item):
                    bad.append(f"{pointer}/spans/{i} is not a span (needs name, trace id and span id)")
                    continue
                out.append(self._span(item, {}, {}, line, f"{pointer}/spans/{i}", order + len(out)))
            return out
        if any(k in rec for k in _NOT_TRACES):
            return []  # OTLP metrics written to the same file: not trace data
        keys = ", ".join(list(rec)[:6])
        raise FormatError(f"record is not an OTLP ExportTraceServiceRequest or span (keys: {keys})")

    def _request(
        self, rss: Any, key: str, line: int | None, pointer: str, order: int, bad: list[str]
    ) -> list[_Span]:
        out: list[_Span] = []
        for ptr, resource, scope, sp in request_items(rss, key, "spans"):
            try:
                out.append(self._span(sp, resource, scope, line, pointer + ptr, order + len(out)))
            except FormatError as exc:
                bad.append(exc.reason)
        return out

    def _jaeger(self, traces: list[Any], line: int | None, pointer: str, order: int) -> list[_Span]:
        """Jaeger query JSON (UI "Download JSON", ``/api/traces``): ``{data: [{traceID, spans: [{traceID,
        spanID, operationName, references, startTime (µs), duration (µs), tags, logs, processID}],
        processes: {id: {serviceName, tags}}}]}``. Each span is read as an OTLP span."""
        out: list[_Span] = []
        for i, tr in enumerate(traces):
            out.extend(self._jaeger_trace(i, tr, line, pointer, order + len(out)))
        return out

    def _jaeger_trace(self, i: int, tr: Any, line: int | None, pointer: str, order: int) -> list[_Span]:
        """The spans of ``data[i]`` of a Jaeger query JSON (see :meth:`_jaeger`)."""
        out: list[_Span] = []
        if not isinstance(tr, dict):
            raise FormatError(f"data[{i}] is not a Jaeger trace object")
        procs_v = tr.get("processes")
        procs: dict[str, Any] = procs_v if isinstance(procs_v, dict) else {}
        sps = tr.get("spans") or []
        if not isinstance(sps, list):
            raise FormatError(f"data[{i}].spans is not a list")
        for k, sp in enumerate(sps):
            ptr = f"{pointer}/data/{i}/spans/{k}"
            if not isinstance(sp, dict):
                raise FormatError(f"span at {ptr} is not an object")
            tags = attributes(sp.get("tags"))
            proc = procs.get(str(sp.get("processID")))
            proc = proc if isinstance(proc, dict) else {}
            resource = {"service.name": proc.get("serviceName"), **attributes(proc.get("tags"))}
            scope_name = first(tags, "otel.scope.name", "otel.library.name")
            scope = {"name": scope_name} if scope_name else {}
            refs_v = sp.get("references")
            refs: list[Any] = refs_v if isinstance(refs_v, list) else []
            parent = next(
                (r.get("spanID") for r in refs if isinstance(r, dict) and r.get("refType") == "CHILD_OF"),
                next((r.get("spanID") for r in refs if isinstance(r, dict)), sp.get("parentSpanID")),
            )
            start = number(sp.get("startTime"))
            duration = number(sp.get("duration")) or 0.0
            code = str(tags.pop("otel.status_code", "")).upper()
            if not code and tags.get("error") in (True, "true"):
                code = "ERROR"
            events = []
            logs_v = sp.get("logs")
            logs: list[Any] = logs_v if isinstance(logs_v, list) else []
            for log in logs:
                if isinstance(log, dict):
                    fields = attributes(log.get("fields"))
                    ts = number(log.get("timestamp"))
                    events.append(
                        {
                            "name": fields.pop("event", ""),
                            "timeUnixNano": int(ts * 1000) if ts else None,
                            "attributes": fields,
                        }
                    )
            otlp_like = {
                "traceId": sp.get("traceID") or tr.get("traceID"),
                "spanId": sp.get("spanID"),
                "parentSpanId": parent,
                "name": sp.get("operationName"),
                "kind": tags.pop("span.kind", None),
                "startTimeUnixNano": int(start * 1000) if start else None,
                "endTimeUnixNano": int((start + duration) * 1000) if start else None,
                "status": {"code": code, "message": tags.pop("otel.status_description", None)},
                "attributes": tags,
                "events": events,
            }
            span = self._span(otlp_like, resource, scope, line, ptr, order + len(out))
            span.raw = sp
            out.append(span)
        return out

    def _span(
        self,
        sp: Any,
        resource: dict[str, Any],
        scope: dict[str, Any],
        line: int | None,
        pointer: str,
        order: int,
    ) -> _Span:
        if not isinstance(sp, dict):
            raise FormatError(f"span at {pointer or '/'} is not an object")
        ctx = _context(sp)
        trace_id = hex_id(
            first(sp, "traceId", "trace_id", "context.trace_id") or first(ctx, "trace_id", "traceId")
        )
        span_id = hex_id(first(sp, "spanId", "span_id", "context.span_id") or first(ctx, "span_id", "spanId"))
        if trace_id is None or span_id is None:
            where = f"span at {pointer or '/'}"
            if not ctx:  # an OTLP span
                raise FormatError(f"{where} has no traceId/spanId")
            # a flat span (console exporter, JS span object): say which id its context lacks
            missing = " and ".join(n for n, v in (("trace id", trace_id), ("span id", span_id)) if v is None)
            raise FormatError(f"{where} has no {missing} in its context")
        parent = hex_id(first(sp, "parentSpanId", "parent_span_id", "parent_id", "parentId"))
        parent_ctx = sp.get("parentSpanContext")  # JS SDK 2.x
        if parent is None and isinstance(parent_ctx, dict):
            parent = hex_id(parent_ctx.get("spanId"))
        attrs = attributes(sp.get("attributes"))
        for k, v in sp.items():  # Phoenix dataframe exports: "attributes.llm.model_name" columns
            if k.startswith("attributes.") and v is not None:
                flatten(k[len("attributes.") :], v, attrs)
        oi_kind = sp.get("span_kind")
        if isinstance(oi_kind, str) and oi_kind.upper() in _OI_KINDS:
            attrs.setdefault("openinference.span.kind", oi_kind.upper())
        events: list[tuple[str, datetime | None, dict[str, Any]]] = []
        raw_events = sp.get("events")
        for ev in raw_events if isinstance(raw_events, list) else []:
            if isinstance(ev, dict):
                ts = parse_ts(_hr_time(first(ev, "timeUnixNano", "time_unix_nano", "timestamp", "time")))
                events.append((str(ev.get("name") or ""), ts, attributes(ev.get("attributes"))))
        if not resource and isinstance(sp.get("resource"), dict):
            resource = attributes(sp["resource"].get("attributes"))
        status, message = _status(sp)
        name = sp.get("name")
        span = _Span(
            trace_id=trace_id,
            span_id=span_id,
            parent_id=parent if parent != span_id else None,
            name=name if isinstance(name, str) else str(name or ""),
            kind=_span_kind(first(sp, "kind", "spanKind")),
            start=parse_ts(
                _hr_time(first(sp, "startTimeUnixNano", "start_time_unix_nano", "start_time", "startTime"))
            ),
            end=parse_ts(_hr_time(first(sp, "endTimeUnixNano", "end_time_unix_nano", "end_time", "endTime"))),
            status=status,
            status_message=message,
            attrs=attrs,
            events=events,
            resource=resource,
            scope=scope,
            raw=sp,
            line=line,
            pointer=pointer,
            order=order,
        )
        span.cls, span.native_kind = _classify(attrs, span.name)
        # which vendor attributes the span has, noted once here so the trace-level readers skip
        # plain traces (one C-level join and two searches instead of a Python loop over the keys)
        keys = "\n" + "\n".join(attrs)
        span.has_ai = "\nai." in keys
        span.has_langfuse = "\nlangfuse." in keys
        return span

    # -- building ------------------------------------------------------------------------------

    def _trace(self, src: Source, tid: str, spans: list[_Span], logs: list[LogRecord]) -> Trace:
        tree = span_tree(spans)  # a span exported twice: the first copy is kept
        by_id, unique, roots = tree.by_id, tree.spans, tree.roots
        b = TraceBuilder(self.name, src.path, trace_id=tid)
        ctx = _Ctx(b)
        ctx.roots = {r.span_id for r in roots}
        # An LLM span with an LLM span below it is a wrapper (framework + client instrumentation).
        for s in unique:
            if s.cls == "llm":
                seen_up: set[str] = set()
                p = s.parent_id
                while p is not None and p in by_id and p not in seen_up:
                    seen_up.add(p)
                    if by_id[p].cls == "llm":
                        ctx.wrappers.add(p)
                    p = by_id[p].parent_id

        walk(ctx, tree, self._begin, self._end)
        fields = self._trace_fields(ctx, unique, roots, tree.duplicates)
        if logs:
            fields["raw"]["log_records"] = [r.raw for r in logs]
        return b.build(**fields)

    # -- per span -------------------------------------------------------------------------------

    def _agent_name(self, span: _Span) -> str | None:
        a = span.attrs
        name = sval(a.get("agent.name")) or sval(a.get("gen_ai.agent.name")) or sval(a.get("agent_name"))
        if name is None and sval(a.get("messaging.operation")) == "process":
            name = _runtime_agent(sval(a.get("messaging.destination")))
        if name is None and span.native_kind in _VERCEL_OUTER:
            name = sval(a.get("ai.telemetry.functionId"))  # the caller's name for this generateText call
        if name is None and span.cls in ("agent", "create_agent"):
            name = sval(a.get("traceloop.entity.name")) or sval(a.get("graph.node.name"))
            if name is None:
                n = span.name
                for prefix in ("invoke_agent ", "create_agent "):
                    if n.startswith(prefix):
                        n = n[len(prefix) :]
                name = n or None
        return name

    def _begin(self, ctx: _Ctx, span: _Span, inherited: str | None) -> str | None:
        """Events at the start of a span; returns the actor its children inherit."""
        actor = self._agent_name(span) or inherited
        cls = "chain" if span.span_id in ctx.wrappers else span.cls
        a = span.attrs
        if cls == "chain" and span.native_kind in _VERCEL_OUTER and sval(a.get("ai.telemetry.functionId")):
            cls = "agent"  # a named generateText/streamText call around its model calls
        if cls == "agent":
            desc = sval(a.get("gen_ai.agent.description"))
            # a top-level agent span that a handoff span handed over to: the handing agent is its parent
            handed = ctx.handed_from.get(actor) if inherited is None and actor is not None else None
            if actor is not None:
                parent = inherited if inherited != actor else None
                ctx.b.agent(actor, role_description=desc, parent=parent or handed)
            extra: dict[str, Any] = {"from_agent": inherited or handed}
            output = as_text(maybe_json(first(a, *_OUTPUT_KEYS)))
            if output is not None:
                extra["output"] = output
            ctx.emit(
                span,
                "handoff",
                actor=actor,
                subtype="agent_start",
                recipients=[actor] if actor else None,
                content=as_text(first(a, "input.value", "traceloop.entity.input")) or _vercel_prompt_text(a),
                extra=extra,
            )
        elif cls == "create_agent":
            if actor is not None:
                ctx.b.agent(
                    actor,
                    role_description=sval(a.get("gen_ai.agent.description")),
                    model=sval(a.get("gen_ai.request.model")),
                    system_prompt=self._system_text(a),
                )
            ctx.emit(span, "system", actor=actor, subtype="create_agent", content=span.name)
        elif cls == "llm":
            self._llm(ctx, span, actor)
        elif cls == "handoff":
            # OpenInference openai-agents: a handoff is a TOOL span "handoff to <agent>" holding
            # only the two agent names, not a tool call (the model's transfer_to_* call is one)
            to_agent = sval(a.get("output.value")) or span.name[len("handoff to ") :].strip() or None
            from_agent = sval(a.get("input.value")) or actor
            extra = {"from_agent": from_agent, "to_agent": to_agent}
            ctx.handoff(span, from_agent, to_agent, otherwise=span.name, extra=extra)
        elif cls in ("tool", "retriever"):
            self._tool_start(ctx, span, actor)
        else:
            content = as_text(first(a, "output.value", "input.value")) if cls == "span" else span.name
            ctx.emit(span, "system", actor=actor, subtype=cls, content=content or span.name)
        return actor

    def _end(self, ctx: _Ctx, span: _Span, actor: str | None) -> None:
        cls = "chain" if span.span_id in ctx.wrappers else span.cls
        if cls in ("tool", "retriever"):
            self._tool_end(ctx, span, actor)
        lf_error = span.attrs.get("langfuse.observation.level") == "ERROR"
        if span.status == "ERROR" or lf_error:
            message = span.status_message or sval(span.attrs.get("langfuse.observation.status_message"))
            extra: dict[str, Any] = {}
            for name, _ts, attrs in span.events:
                if name == "exception":
                    message = message or sval(attrs.get("exception.message"))
                    extra = {
                        k.split(".", 1)[1]: v
                        for k, v in attrs.items()
                        if k in ("exception.type", "exception.stacktrace", "exception.escaped")
                    }
                    break
            seq = ctx.emit(
                span,
                "error",
                at_end=True,
                actor=actor,
                content=message or f"span {span.name} failed",
                extra=extra,
            )
            if span.span_id in ctx.roots:
                ctx.root_error_seq = seq

    # LLM spans

    def _system_text(self, a: dict[str, Any]) -> str | None:
        v = maybe_json(a.get("gen_ai.system_instructions"))
        if v is None:
            return None
        return as_text(v)

    def _input_messages(self, span: _Span) -> list[Msg]:
        a = span.attrs
        msgs: list[Msg] = []
        system = self._system_text(a)
        if system:
            msgs.append(Msg(role="system", text=system))
        if a.get("gen_ai.input.messages") is not None:
            return msgs + message_list(a["gen_ai.input.messages"])
        vercel = _vercel_input(a)
        if vercel is not None:
            return msgs + vercel
        for prefix in ("llm.input_messages.", "gen_ai.prompt."):
            groups = indexed(a, prefix)
            if groups:
                return msgs + [m for g in groups for m in messages_from(_indexed_msg(g))]
        if a.get("gen_ai.prompt") is not None:
            return msgs + message_list(a["gen_ai.prompt"])
        logfire = _logfire_events(a)
        if logfire is not None:
            return msgs + [m for d in logfire if not _is_choice(d) for m in messages_from(d)]
        adk = _adk_request(a)
        if adk is not None:
            return msgs + adk
        from_events = event_messages(span.events, output=False)
        if from_events:
            return msgs + from_events
        if a.get("langfuse.observation.input") is not None:
            return msgs + message_list(a["langfuse.observation.input"])
        value = a.get("input.value")
        if value is not None and not msgs:
            return message_list(value)
        return msgs

    def _output_messages(self, span: _Span) -> list[Msg]:
        a = span.attrs
        if a.get("gen_ai.output.messages") is not None:
            return message_list(a["gen_ai.output.messages"], "assistant")
        vercel = _vercel_output(a)
        if vercel is not None:
            return vercel
        for prefix in ("llm.output_messages.", "gen_ai.completion."):
            groups = indexed(a, prefix)
            if groups:
                return [m for g in groups for m in messages_from(_indexed_msg(g), "assistant")]
        if a.get("gen_ai.completion") is not None:
            return message_list(a["gen_ai.completion"], "assistant")
        logfire = _logfire_events(a)
        if logfire is not None:
            return [m for d in logfire if _is_choice(d) for m in choice_messages(d)]
        response = maybe_json(a.get("gcp.vertex.agent.llm_response"))
        if isinstance(response, dict) and isinstance(response.get("content"), dict):
            return messages_from(
                {"finish_reason": response.get("finish_reason"), **response["content"]}, "assistant"
            )
        from_events = event_messages(span.events, output=True)
        if from_events:
            return from_events
        if a.get("langfuse.observation.output") is not None:
            return _langfuse_output(a["langfuse.observation.output"])
        content = a.get("gen_ai.response.content")
        if isinstance(content, str):
            return [Msg(role="assistant", text=content)]
        value = a.get("output.value")
        return message_list(value, "assistant") if value is not None else []

    def _llm(self, ctx: _Ctx, span: _Span, actor: str | None) -> None:
        a = span.attrs
        inputs = self._input_messages(span)
        outputs = self._output_messages(span)
        model = sval(a.get("gen_ai.response.model")) or sval(a.get("gen_ai.request.model"))
        model = model or sval(a.get("llm.model_name")) or sval(a.get("ai.response.model"))
        model = model or sval(a.get("ai.model.id")) or sval(a.get("langfuse.observation.model.name"))
        if model:
            ctx.models[model] += 1
        extra = ctx.input_events(span, inputs, actor)
        provider = (
            sval(a.get("gen_ai.provider.name"))
            or sval(a.get("gen_ai.system"))
            or sval(a.get("llm.provider"))
            or sval(a.get("ai.model.provider"))
        )
        if provider:
            extra["provider"] = provider
        finish = first(a, "gen_ai.response.finish_reasons", "ai.response.finishReason", "ai.finishReason")
        if finish is not None:
            extra["finish_reasons"] = finish
        call_id = span.span_id
        ctx.emit(
            span, "llm_call", actor=actor, model=model, usage=genai_usage(a), llm_call_id=call_id, extra=extra
        )
        common: dict[str, Any] = {"actor": actor, "role": "assistant", "model": model, "llm_call_id": call_id}
        for m in outputs:
            ctx.output_events(span, m, common)

    # tool spans

    def _tool_fields(self, span: _Span) -> tuple[str, str | None, Any, Any]:
        a = span.attrs
        name = sval(a.get("gen_ai.tool.name")) or sval(a.get("tool.name")) or sval(a.get("ai.toolCall.name"))
        if name is None and span.cls == "tool":
            name = sval(a.get("traceloop.entity.name"))
        if name is None:
            name = span.name[len("execute_tool ") :] if span.name.startswith("execute_tool ") else span.name
        call_id = idval(
            first(a, "gen_ai.tool.call.id", "tool_call.id", "tool.call.id", "tool.id", "ai.toolCall.id")
        )
        args = first(a, *_TOOL_ARG_KEYS)
        result = first(a, *_TOOL_RESULT_KEYS)
        if args is None or result is None:
            ev_args, ev_result = _tool_event_io(span.events)
            args = ev_args if args is None else args
            result = ev_result if result is None else result
        if result is None and span.cls == "retriever":
            docs = indexed(a, "retrieval.documents.")
            if docs:
                result = "\n\n".join(str(d.get("document.content", "")) for d in docs)
        return name or "unknown", call_id, args, result

    def _tool_start(self, ctx: _Ctx, span: _Span, actor: str | None) -> None:
        name, call_id, args, _result = self._tool_fields(span)
        found, cid = ctx.pending.take(call_id, name)
        if found:
            ctx.tool_call_ids[span.span_id] = cid  # answered by _tool_end
            return
        extra: dict[str, Any] = {}
        if cid is None:
            cid = span.span_id
            extra["call_id_from_span"] = True
        ctx.tool_call_ids[span.span_id] = cid
        parsed, raw_args = parse_arguments(args)
        tool_type = sval(span.attrs.get("gen_ai.tool.type"))
        if tool_type:
            extra["tool_type"] = tool_type
        tc = ToolCall(name=name, call_id=cid, arguments=parsed, arguments_raw=raw_args)
        ctx.emit(span, "tool_call", actor=actor, role="assistant", tool_call=tc, extra=extra)

    def _tool_end(self, ctx: _Ctx, span: _Span, actor: str | None) -> None:
        name, _call_id, _args, result = self._tool_fields(span)
        cid = ctx.tool_call_ids.pop(span.span_id, None)
        text = as_text(result)
        duration = (span.end - span.start).total_seconds() * 1000 if span.start and span.end else None
        tr = ToolResult(
            call_id=cid,
            name=name,
            output=text,
            is_error={"ERROR": True, "OK": False}.get(span.status),
            status=span.status.lower(),
            duration_ms=duration,
        )
        ctx.seen.add_result(cid, text)
        ctx.emit(span, "tool_result", at_end=True, actor="environment", role="tool", tool_result=tr)

    # trace fields

    def _trace_fields(
        self, ctx: _Ctx, spans: list[_Span], roots: list[_Span], duplicates: int
    ) -> dict[str, Any]:
        resources: list[dict[str, Any]] = []
        scopes: list[dict[str, Any]] = []
        for s in spans:
            if s.resource and s.resource not in resources:
                resources.append(s.resource)
            if s.scope and s.scope not in scopes:
                scopes.append(s.scope)
        fields: dict[str, Any] = {
            "raw": {"resources": resources, "scopes": scopes, "duplicate_spans": duplicates},
            "task": ctx.task,
        }
        if ctx.task is None and roots:
            ra = roots[0].attrs
            fields["task"] = as_text(maybe_json(first(ra, "input.value", "traceloop.entity.input"))) or next(
                (v for k, v in ra.items() if isinstance(v, str) and k.rsplit(".", 1)[-1] in _GOAL_KEYS), None
            )
        framework = None
        for sc in scopes:
            name = sc.get("name")
            if name == "pydantic-ai":  # pydantic-ai's own instrumentation: the scope version is its version
                framework = "pydantic_ai"
                if isinstance(sc.get("version"), str) and sc["version"]:
                    fields["framework_version"] = sc["version"]
                break
            if isinstance(name, str):
                for prefix in ("openinference.instrumentation.", "opentelemetry.instrumentation."):
                    if name.startswith(prefix):
                        framework = name[len(prefix) :]
                        break
            if framework:
                break
        if framework is None:
            framework = next((r["service.name"] for r in resources if sval(r.get("service.name"))), None)
        fields["framework"] = framework
        if len(ctx.models) == 1:
            fields["model"] = next(iter(ctx.models))
        starts = [s.start for s in spans if s.start is not None]
        ends = [s.end for s in spans if s.end is not None]
        fields["started_at"] = min(starts) if starts else None
        fields["ended_at"] = max(ends) if ends else None
        fields["extra"] = {
            "span_count": len(spans),
            "span_kinds": dict(Counter(s.native_kind or "none" for s in spans)),
            "span_status": dict(Counter(s.status for s in spans)),
            "models": dict(ctx.models),
        }
        ai_sdk = _vercel_telemetry([s for s in spans if s.has_ai])
        if ai_sdk:
            fields["extra"]["ai_sdk"] = ai_sdk
        langfuse = _langfuse_trace(spans) if any(s.has_langfuse for s in spans) else {}
        if langfuse:
            fields["extra"]["langfuse"] = langfuse
            if fields["task"] is None and "input" in langfuse:
                fields["task"] = as_text(maybe_json(langfuse["input"]))
        if len(roots) == 1:
            root = roots[0]
            if root.status == "ERROR":
                fields["termination"] = Termination(
                    reason="error", by="error", native=root.status_message, at_seq=ctx.root_error_seq
                )
            # langfuse.trace.output may be set on any span: the value collected above (as for the task)
            lf_output = langfuse.get("output")
            final = as_text(
                maybe_json(lf_output if lf_output not in (None, "") else first(root.attrs, *_OUTPUT_KEYS))
            )
            if final is None and root.cls == "agent":
                final = _event_output_text(root)
            outcome = _evaluation_outcome(root)
            if final is not None or outcome is not None:
                outcome = outcome or Outcome()
                fields["outcome"] = outcome.model_copy(update={"final_output": final})
        return fields


def _vercel_telemetry(spans: list[_Span]) -> dict[str, Any]:
    """Vercel AI SDK ``experimental_telemetry`` settings found on the spans: ``function_ids``
    (``ai.telemetry.functionId``, in order) and ``metadata`` (``ai.telemetry.metadata.<key>``; the
    first value of a key wins). Only spans with ``ai.*`` attributes need be passed."""
    ids: list[str] = []
    meta: dict[str, Any] = {}
    prefix = "ai.telemetry.metadata."
    for s in spans:
        fid = sval(s.attrs.get("ai.telemetry.functionId"))
        if fid is not None and fid not in ids:
            ids.append(fid)
        for k, v in s.attrs.items():
            if k.startswith(prefix):
                meta.setdefault(k[len(prefix) :], v)
    out: dict[str, Any] = {}
    if ids:
        out["function_ids"] = ids
    if meta:
        out["metadata"] = meta
    return out


def _langfuse_output(value: Any) -> list[Msg]:
    """A Langfuse generation's ``langfuse.observation.output``: a message, a list of them, an OpenAI
    chat completion (``choices``) or text."""
    body = maybe_json(value)
    if (
        isinstance(body, dict)
        and not isinstance(body.get("choices"), list)
        and not any(k in body for k in ("role", "content", "parts", "messages", "output"))
    ):
        return [Msg(role="assistant", text=as_text(value))]  # a structured result: kept as its JSON text
    return message_list(body, "assistant")


_LANGFUSE_TRACE_KEYS = {
    "langfuse.trace.name": "name", "user.id": "user_id", "langfuse.user.id": "user_id",
    "session.id": "session_id", "langfuse.session.id": "session_id", "langfuse.trace.tags": "tags",
    "langfuse.trace.input": "input", "langfuse.trace.output": "output", "langfuse.environment": "environment",
    "langfuse.release": "release", "langfuse.version": "version",
}  # fmt: skip


def _langfuse_trace(spans: list[_Span]) -> dict[str, Any]:
    """Langfuse trace-level attributes (any span may set them; the first value wins): ``name``,
    ``user_id``, ``session_id``, ``tags``, ``input``, ``output``, ``environment``, ``release``, ``version``
    and ``metadata`` (``langfuse.trace.metadata.<key>``). Called only when some span has Langfuse
    attributes (``user.id``/``session.id`` alone are too common to mean Langfuse)."""
    out: dict[str, Any] = {}
    meta: dict[str, Any] = {}
    prefix = "langfuse.trace.metadata."
    for s in spans:
        for k, v in s.attrs.items():
            if v is None:
                continue
            if k in _LANGFUSE_TRACE_KEYS:
                out.setdefault(_LANGFUSE_TRACE_KEYS[k], v)
            elif k.startswith(prefix):
                meta.setdefault(k[len(prefix) :], v)
    if meta:
        out["metadata"] = meta
    return out


_PASS_LABELS = {"pass", "passed", "success", "succeeded", "correct", "true", "yes", "resolved", "ok"}
_FAIL_LABELS = {"fail", "failed", "failure", "incorrect", "false", "no", "unresolved", "error"}


def _evaluation_outcome(root: _Span) -> Outcome | None:
    """Outcome from ``gen_ai.evaluation.result`` events on the root span (the first one gives score
    and verdict; all go to ``metrics`` under their ``gen_ai.evaluation.name``)."""
    evals = [attrs for name, _ts, attrs in root.events if name == "gen_ai.evaluation.result"]
    if not evals:
        return None
    metrics: dict[str, Any] = {}
    for i, ev in enumerate(evals):
        name = sval(ev.get("gen_ai.evaluation.name")) or f"evaluation_{i}"
        metrics[name] = {
            k.rsplit(".", 1)[-1]
            if k.startswith("gen_ai.evaluation.score.")
            else k.replace("gen_ai.evaluation.", ""): v
            for k, v in ev.items()
            if k != "gen_ai.evaluation.name"
        }
    head = evals[0]
    label = sval(head.get("gen_ai.evaluation.score.label"))
    success = None
    if label is not None:
        word = label.strip().lower()
        success = True if word in _PASS_LABELS else False if word in _FAIL_LABELS else None
    return Outcome(success=success, score=number(head.get("gen_ai.evaluation.score.value")), metrics=metrics)


def _indexed_msg(g: dict[str, Any]) -> dict[str, Any]:
    """A chat-message dict from one indexed attribute group (OpenInference ``message.*`` keys or
    legacy ``gen_ai.prompt.N.*`` keys)."""
    p = "message." if any(k.startswith("message.") for k in g) else ""
    d: dict[str, Any] = {}
    for key in ("role", "name", "tool_call_id", "finish_reason"):
        if g.get(p + key) is not None:
            d[key] = g[p + key]
    content = g.get(p + "content")
    if isinstance(content, str):
        parsed = maybe_json(content)
        if isinstance(parsed, list) and parsed and all(isinstance(x, dict) and "type" in x for x in parsed):
            content = parsed
    if content is None:
        parts = indexed(g, p + "contents.")
        if parts:
            content = [
                {
                    "type": part.get("message_content.type", "text"),
                    "text": part.get("message_content.text"),
                }
                for part in parts
            ]
    if content is not None:
        d["content"] = content
    calls = []
    for c in indexed(g, p + "tool_calls."):
        q = "tool_call." if any(k.startswith("tool_call.") for k in c) else ""
        name = c.get(q + "function.name", c.get(q + "name"))
        if name is None:
            continue
        calls.append(
            {
                "id": c.get(q + "id"),
                "function": {
                    "name": name,
                    "arguments": c.get(q + "function.arguments", c.get(q + "arguments")),
                },
            }
        )
    if g.get(p + "function_call.name") is not None:
        calls.append(
            {
                "function": {
                    "name": g[p + "function_call.name"],
                    "arguments": g.get(p + "function_call.arguments"),
                }
            }
        )
    if calls:
        d["tool_calls"] = calls
    return d


def _event_output_text(span: _Span) -> str | None:
    """An agent span's answer recorded only as a span event (Strands ``invoke_agent``: ``gen_ai.choice``
    with ``message``, or ``gen_ai.client.inference.operation.details`` with ``gen_ai.output.messages``)."""
    texts: list[str] = []
    for name, _ts, attrs in span.events:
        if name == "gen_ai.choice":
            msgs = choice_messages(attrs)
        elif name == "gen_ai.client.inference.operation.details" and attrs.get("gen_ai.output.messages"):
            msgs = message_list(attrs["gen_ai.output.messages"], "assistant")
        else:
            continue
        texts.extend(m.text for m in msgs if m.text)
    return texts[-1] if texts else None


def _is_choice(d: dict[str, Any]) -> bool:
    return d.get("event.name") == "gen_ai.choice" or ("message" in d and "role" not in d)


def _logfire_events(a: dict[str, Any]) -> list[dict[str, Any]] | None:
    """pydantic-ai (``event_mode='attributes'``, before the ``gen_ai.input.messages`` conventions): the
    chat span's ``events`` attribute, a JSON list of GenAI event bodies (input messages with ``role``,
    then ``gen_ai.choice`` entries with ``message``)."""
    value = maybe_json(a.get("events"))
    if (
        isinstance(value, list)
        and value
        and all(isinstance(d, dict) for d in value)
        and any("role" in d or "message" in d for d in value)
    ):
        return value
    return None


def _adk_request(a: dict[str, Any]) -> list[Msg] | None:
    """Google ADK ``call_llm`` spans: ``gcp.vertex.agent.llm_request`` JSON ``{model, config:
    {system_instruction}, contents: [{role, parts}]}`` (Gemini parts)."""
    req = maybe_json(a.get("gcp.vertex.agent.llm_request"))
    if not isinstance(req, dict) or not isinstance(req.get("contents"), list):
        return None
    msgs: list[Msg] = []
    cfg = req.get("config")
    system = cfg.get("system_instruction") if isinstance(cfg, dict) else None
    if isinstance(system, dict):
        system = as_text(system.get("parts"))
    if isinstance(system, str) and system:
        msgs.append(Msg(role="system", text=system))
    for content in req["contents"]:
        msgs.extend(messages_from(content))
    return msgs


def _tool_event_io(events: list[tuple[str, datetime | None, dict[str, Any]]]) -> tuple[Any, Any]:
    """(arguments, result) of a tool span recorded only in span events: Strands ``execute_tool``
    spans (``gen_ai.tool.message`` with the input as ``content``, ``gen_ai.choice`` with the result as
    ``message``; with the latest conventions ``gen_ai.client.inference.operation.details`` holding a
    ``tool_call`` / ``tool_call_response`` part)."""
    args: Any = None
    result: Any = None
    for name, _ts, attrs in events:
        if name == "gen_ai.tool.message" and args is None:
            args = attrs.get("content")
        elif name == "gen_ai.choice" and result is None:
            result = maybe_json(attrs.get("message"))
        elif name == "gen_ai.client.inference.operation.details":
            for key, ptype, field in (
                ("gen_ai.input.messages", "tool_call", "arguments"),
                ("gen_ai.output.messages", "tool_call_response", "response"),
            ):
                msgs = maybe_json(attrs.get(key))
                for m in msgs if isinstance(msgs, list) else []:
                    parts = m.get("parts") if isinstance(m, dict) else None
                    for part in parts if isinstance(parts, list) else []:
                        if isinstance(part, dict) and part.get("type") == ptype:
                            if ptype == "tool_call" and args is None:
                                args = part.get(field)
                            elif ptype == "tool_call_response" and result is None:
                                result = part.get(field)
    return args, result


def _vercel_part(p: Any) -> Any:
    """A Vercel AI SDK prompt content part in the typed-part spelling :func:`messages_from` reads:
    ``tool-call`` ``{toolCallId, toolName, args}`` (``input`` from 5.0) and ``tool-result`` ``{toolCallId,
    result}`` (``output``, a ``{type: text|json|error-text|error-json|content, value}`` wrapper, from 5.0)."""
    if not isinstance(p, dict):
        return p
    ptype = p.get("type")
    if ptype == "tool-call":
        args = p["input"] if "input" in p else p.get("args")
        return {"type": "tool_call", "id": p.get("toolCallId"), "name": p.get("toolName"), "arguments": args}
    if ptype == "tool-result":
        out = p["output"] if "output" in p else p.get("result")
        if isinstance(out, dict) and out.get("type") in _VERCEL_OUTPUT_TYPES and "value" in out:
            out = out["value"]
        return {"type": "tool_call_response", "id": p.get("toolCallId"), "response": out}
    return p


_VERCEL_OUTPUT_TYPES = frozenset({"text", "json", "error-text", "error-json", "content"})


def _vercel_messages(value: Any) -> list[Msg]:
    """Messages of a Vercel AI SDK prompt (``{role, content: text | parts}`` list)."""
    out: list[Msg] = []
    for d in value if isinstance(value, list) else []:
        if isinstance(d, dict) and isinstance(d.get("content"), list):
            d = {**d, "content": [_vercel_part(p) for p in d["content"]]}
        out.extend(messages_from(d))
    return out


def _vercel_input(a: dict[str, Any]) -> list[Msg] | None:
    """Vercel AI SDK input: ``ai.prompt.messages`` (the provider prompt of a ``doGenerate``/``doStream``
    span), else ``ai.prompt`` (``{system, prompt, messages}`` as passed to ``generateText``; read only when
    the outer span is itself the model call). None when neither is present."""
    value = maybe_json(a.get("ai.prompt.messages"))
    if isinstance(value, list):
        return _vercel_messages(value)
    prompt = maybe_json(a.get("ai.prompt"))
    if not isinstance(prompt, dict) or not any(k in prompt for k in ("system", "prompt", "messages")):
        return None
    msgs: list[Msg] = []
    system = sval(prompt.get("system"))
    if system:
        msgs.append(Msg(role="system", text=system))
    if isinstance(prompt.get("prompt"), list):
        msgs.extend(_vercel_messages(prompt["prompt"]))
    elif sval(prompt.get("prompt")):
        msgs.append(Msg(role="user", text=prompt["prompt"]))
    msgs.extend(_vercel_messages(prompt.get("messages")))
    return msgs


def _vercel_prompt_text(a: dict[str, Any]) -> str | None:
    """The plain ``prompt`` of a Vercel AI SDK ``ai.prompt`` attribute."""
    prompt = maybe_json(a.get("ai.prompt"))
    return sval(prompt.get("prompt")) if isinstance(prompt, dict) else None


def _vercel_output(a: dict[str, Any]) -> list[Msg] | None:
    """Vercel AI SDK output: ``ai.response.text`` / ``ai.response.object`` (3.x ``ai.result.*``),
    ``ai.response.reasoning``, ``ai.response.toolCalls`` (JSON list of ``{toolCallId, toolName, args}``,
    ``input`` from 5.0) and ``ai.response.finishReason`` (3.x ``ai.finishReason``). None when absent."""
    text = first(a, "ai.response.text", "ai.result.text")
    obj = first(a, "ai.response.object", "ai.result.object")
    calls_v = maybe_json(first(a, "ai.response.toolCalls", "ai.result.toolCalls"))
    reasoning = first(a, "ai.response.reasoning")
    if text is None and obj is None and calls_v is None and reasoning is None:
        return None
    msg = Msg(
        role="assistant",
        text=as_text(text) if text is not None else as_text(obj),
        reasoning=as_text(reasoning),
        finish_reason=sval(first(a, "ai.response.finishReason", "ai.finishReason")),
    )
    for c in calls_v if isinstance(calls_v, list) else []:
        name = sval(c.get("toolName")) if isinstance(c, dict) else None
        if isinstance(c, dict) and name is not None:
            args = c["input"] if "input" in c else c.get("args")
            msg.calls.append(Call(name=name, call_id=idval(c.get("toolCallId")), arguments=args))
    return [] if msg.empty() else [msg]
