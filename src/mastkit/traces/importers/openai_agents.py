"""OpenAI Agents SDK traces (``openai-agents`` tracing export format).

The SDK's tracing processors export a trace as ``{object: "trace", id, workflow_name, group_id,
metadata}`` and each span as ``{object: "trace.span", id, trace_id, parent_id, started_at,
ended_at, span_data: {type, ...}, error: {message, data} | null}``; the backend exporter posts
batches as ``{"data": [trace and span items]}``. Shapes read:

* ``{traces: [{object: "trace", ..., spans: [...]}]}`` (file dumps written by custom processors;
  other top-level keys such as ``timestamp``/``count`` go to ``Trace.raw``);
* one trace object with ``spans``; a bare list of spans or of trace/span items;
* the export payload ``{"data": [...]}``, one per file or one per JSONL line, or JSONL of items.

Spans are grouped by ``trace_id`` and walked depth-first (children by ``started_at``). Span data:

* ``agent`` {name, handoffs, tools, output_type} -> ``handoff`` (subtype ``agent_start``,
  ``actor`` = the agent; nested spans inherit it) and an agent entry with its tools;
* ``handoff`` {from_agent, to_agent} -> ``handoff`` (subtype ``transfer``, recipients = to_agent);
* ``generation`` {input, output, model, model_config, usage} -> new input messages, ``llm_call``
  (model, usage), output messages / reasoning / tool calls;
* ``response`` {response_id, usage} -> ``llm_call``. The standard export carries no content; when a
  processor also stored the input (``span_data.input``, or the non-standard ``span_data_input``)
  and the response (``span_data.response``/``response``/``span_data_response``, a dict or the
  Python ``repr`` of the ``Response`` object, parsed without evaluation), the instructions and new
  input become messages and the output items become ``message`` / ``reasoning`` / ``tool_call``
  events; hosted tools (``web_search_call``, ``file_search_call``, ...) are ``tool_call`` events
  with subtype ``hosted_tool``;
* ``function`` {name, input, output, mcp_data} -> ``tool_call`` (skipped when the model output
  already announced it; matched by name) and ``tool_result`` (``is_error`` from the span error);
* ``guardrail`` {name, triggered}, ``custom`` {name, data} (also the newer ``task``/``turn``
  spans, exported as custom), ``mcp_tools`` {server, result}, speech/transcription -> ``system``
  events with that subtype;
* a span ``error`` -> an ``error`` event after the span's other events.

Replayed input (each model call re-sends the conversation) is not repeated as new messages;
assistant turns the trace never produced are flagged ``is_copied_context``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from mastkit.errors import FormatError, TraceLoadError
from mastkit.traces._build import TraceBuilder, parse_arguments, parse_ts, usage_from, validation_reason
from mastkit.traces.importers._llm_spans import (
    Msg,
    as_text,
    idval,
    maybe_json,
    message_list,
    messages_from,
    sval,
)
from mastkit.traces.importers._span_walk import SpanContext, span_tree, walk
from mastkit.traces.model import ToolCall, ToolResult, Trace, Usage
from mastkit.traces.registry import Importer, register
from mastkit.traces.source import Source

_FRAMEWORK = "openai-agents"


# -- Python repr of SDK objects (parsed, never evaluated) -----------------------------------------

_TOKEN = re.compile(
    r"""\s*(?:
        (?P<str>[rbuRBU]{0,2}(?:'[^'\\\n]*(?:\\.[^'\\\n]*)*'|"[^"\\\n]*(?:\\.[^"\\\n]*)*"))
      | (?P<num>-?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?)
      | (?P<name>[A-Za-z_][A-Za-z0-9_.]*)
      | (?P<punct>[()\[\]{},:=])
      | (?P<angle><[^<>]*>)
    )""",
    re.VERBOSE | re.DOTALL,
)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"', "0": "\0", "a": "\a", "b": "\b"}


_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.)", re.DOTALL)


def _unescape_one(m: re.Match[str]) -> str:
    esc = m.group(1)
    if len(esc) > 1:
        try:
            return chr(int(esc[1:], 16))
        except ValueError:  # beyond U+10FFFF: kept as written
            return "\\" + esc
    return _ESCAPES.get(esc, "\\" + esc)


def _unescape(body: str) -> str:
    """The text of a Python string literal's body (``\\n``, ``\\x41``, ``\\u00e9``, ``\\'`` ...);
    unknown escapes are kept as written, like Python does."""
    return _ESCAPE.sub(_unescape_one, body) if "\\" in body else body


class _ReprParser:
    """Reads ``Name(key=value, ...)``, lists, tuples, dicts, strings, numbers, None/True/False."""

    def __init__(self, text: str) -> None:
        self.tokens: list[tuple[str, str]] = []
        pos = 0
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if m is None or m.end() == pos:
                if text[pos:].strip() == "":
                    break
                raise ValueError(f"unexpected text at {pos}")
            kind = m.lastgroup or ""
            self.tokens.append((kind, m.group(kind)))
            pos = m.end()
        self.i = 0

    def peek(self) -> tuple[str, str]:
        return self.tokens[self.i] if self.i < len(self.tokens) else ("end", "")

    def take(self, value: str | None = None) -> tuple[str, str]:
        tok = self.peek()
        if value is not None and tok[1] != value:
            raise ValueError(f"expected {value!r}, got {tok[1]!r}")
        self.i += 1
        return tok

    def value(self) -> Any:
        kind, text = self.take()
        if kind == "str":
            prefix_len = len(text) - len(text.lstrip("rbuRBU"))
            body = text[prefix_len + 1 : -1]
            return body if "r" in text[:prefix_len].lower() else _unescape(body)
        if kind == "num":
            return float(text) if any(c in text for c in ".eE") else int(text)
        if kind == "angle":
            return text
        if kind == "name":
            if text in ("None", "True", "False"):
                return {"None": None, "True": True, "False": False}[text]
            if self.peek()[1] == "(":
                return self.call(text)
            return text
        if text == "[":
            return self.seq("]")
        if text == "(":
            return self.seq(")")
        if text == "{":
            return self.mapping()
        raise ValueError(f"unexpected {text!r}")

    def seq(self, close: str) -> list[Any]:
        items: list[Any] = []
        while self.peek()[1] != close:
            items.append(self.value())
            if self.peek()[1] == ",":
                self.take(",")
        self.take(close)
        return items

    def mapping(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        while self.peek()[1] != "}":
            key = self.value()
            self.take(":")
            out[str(key)] = self.value()
            if self.peek()[1] == ",":
                self.take(",")
        self.take("}")
        return out

    def call(self, name: str) -> dict[str, Any]:
        self.take("(")
        out: dict[str, Any] = {"__type__": name}
        n = 0
        while self.peek()[1] != ")":
            kind, text = self.peek()
            if kind == "name" and self.i + 1 < len(self.tokens) and self.tokens[self.i + 1][1] == "=":
                self.i += 2
                out[text] = self.value()
            else:
                out[f"_{n}"] = self.value()
                n += 1
            if self.peek()[1] == ",":
                self.take(",")
        self.take(")")
        return out


def parse_repr(text: str) -> Any:
    """Parse the ``repr`` of an SDK/pydantic object into dicts (``__type__`` = class name).

    Raises ValueError when the text is not such a repr.
    """
    p = _ReprParser(text)
    value = p.value()
    if p.peek()[0] != "end":
        raise ValueError("trailing text")
    return value


# -- spans ----------------------------------------------------------------------------------


@dataclass
class _Span:
    span_id: str
    trace_id: str
    parent_id: str | None
    data: dict[str, Any]
    type: str
    start: datetime | None
    end: datetime | None
    error: Any
    raw: dict[str, Any]
    line: int | None
    pointer: str
    order: int


def _obj(rec: Any) -> str | None:
    return rec.get("object") if isinstance(rec, dict) and isinstance(rec.get("object"), str) else None


def _is_span(rec: Any) -> bool:
    return isinstance(rec, dict) and (
        _obj(rec) == "trace.span" or (isinstance(rec.get("span_data"), dict) and "trace_id" in rec)
    )


def _is_item(rec: Any) -> bool:
    return _obj(rec) == "trace" or _is_span(rec)


class _Ctx(SpanContext[_Span]):
    """Per-trace state while walking the span tree."""

    def __init__(self, b: TraceBuilder) -> None:
        super().__init__(b)
        self.run_usage: Usage | None = None
        """The usage of the whole run (the root ``task`` span's)."""

    def span_extra(self, span: _Span, extra: dict[str, Any]) -> None:
        extra.setdefault("span_type", span.type)


@register
class OpenAIAgentsImporter(Importer):
    name = "openai_agents"
    description = (
        "OpenAI Agents SDK tracing exports: traces with trace.span items (agent/response/function/...)"
    )

    def sniff(self, src: Source) -> float:
        rec = src.first_object
        if rec is None:
            return 0.0
        traces = rec.get("traces")
        if isinstance(traces, list) and traces and _obj(traces[0]) == "trace":
            return 0.95
        data = rec.get("data")
        if isinstance(data, list) and data and _is_item(data[0]):
            return 0.95
        if _obj(rec) == "trace" and ("spans" in rec or "workflow_name" in rec):
            return 0.95
        if _is_span(rec):
            return 0.95 if _obj(rec) == "trace.span" else 0.8
        return 0.0

    def load(self, src: Source) -> Iterator[Trace | TraceLoadError]:
        traces: dict[str, dict[str, Any]] = {}
        spans: list[_Span] = []
        envelope: dict[str, Any] = {}
        errors = 0

        def collect(rec: Any, line: int | None, pointer: str) -> None:
            for item, ptr in self._items(rec, pointer, envelope):
                if _obj(item) == "trace":
                    tid = idval(item.get("id"))
                    if tid is None:
                        raise FormatError(f"trace at {ptr or '/'} has no id")
                    meta = {k: v for k, v in item.items() if k != "spans"}
                    traces.setdefault(tid, {}).update(meta)
                    item_spans = item.get("spans") or []
                    if not isinstance(item_spans, list):
                        raise FormatError(f"spans of trace {tid} is not a list")
                    for i, sp in enumerate(item_spans):
                        spans.append(self._span(sp, line, f"{ptr}/spans/{i}", len(spans), tid))
                else:
                    spans.append(self._span(item, line, ptr, len(spans), None))

        if src.json_shape == "jsonl":
            for line, offset, value in src.iter_jsonl():
                if isinstance(value, FormatError):
                    errors += 1
                    yield TraceLoadError(src.path, value.reason, line=line, offset=offset)
                    continue
                try:
                    collect(value, line, "")
                except FormatError as exc:
                    if not spans and not traces and not errors:
                        raise FormatError(exc.reason, line=line) from None
                    errors += 1
                    yield TraceLoadError(src.path, exc.reason, line=line, offset=offset)
        elif src.json_shape in ("object", "array"):
            collect(src.json, None, "")
        else:
            raise FormatError("not a JSON or JSONL file")
        if not spans and not traces:
            if not errors:
                raise FormatError("no OpenAI Agents traces or spans found")
            return
        order: list[str] = list(traces)
        groups: dict[str, list[_Span]] = {}
        for s in spans:
            if s.trace_id not in groups and s.trace_id not in traces:
                order.append(s.trace_id)
            groups.setdefault(s.trace_id, []).append(s)
        for tid in order:
            try:
                yield self._trace(src, tid, traces.get(tid, {}), groups.get(tid, []), envelope)
            except (ValueError, TypeError, KeyError) as exc:
                yield TraceLoadError(src.path, f"trace {tid}: {validation_reason(exc)}")

    def _items(
        self, rec: Any, pointer: str, envelope: dict[str, Any]
    ) -> Iterator[tuple[dict[str, Any], str]]:
        """Trace and span items in a record, with their JSON pointers."""
        if isinstance(rec, list):
            for i, item in enumerate(rec):
                yield from self._items(item, f"{pointer}/{i}", envelope)
            return
        if not isinstance(rec, dict):
            raise FormatError(f"record at {pointer or '/'} is a {type(rec).__name__}, not a trace or span")
        if _is_item(rec):
            yield rec, pointer
            return
        for key in ("traces", "data", "spans"):
            if isinstance(rec.get(key), list):
                envelope.update({k: v for k, v in rec.items() if k != key})
                for i, item in enumerate(rec[key]):
                    if not _is_item(item):
                        raise FormatError(f"{key}[{i}] is not an OpenAI Agents trace or span")
                    yield item, f"{pointer}/{key}/{i}"
                return
        keys = ", ".join(list(rec)[:6])
        raise FormatError(f"record is not an OpenAI Agents trace or span (keys: {keys})")

    def _span(self, sp: Any, line: int | None, pointer: str, order: int, trace_id: str | None) -> _Span:
        if not isinstance(sp, dict):
            raise FormatError(f"span at {pointer} is not an object")
        span_id = idval(sp.get("id", sp.get("span_id")))
        tid = idval(sp.get("trace_id")) or trace_id
        if span_id is None or tid is None:
            raise FormatError(f"span at {pointer} has no id or trace_id")
        data = _dict(sp.get("span_data"))
        stype = data.get("type") or sp.get("span_data_type") or sp.get("type")
        return _Span(
            span_id=span_id,
            trace_id=tid,
            parent_id=idval(sp.get("parent_id")),
            data=data,
            type=str(stype) if stype else "unknown",
            start=parse_ts(sp.get("started_at")),
            end=parse_ts(sp.get("ended_at")),
            error=sp.get("error"),
            raw=sp,
            line=line,
            pointer=pointer,
            order=order,
        )

    # -- building ------------------------------------------------------------------------------

    def _trace(
        self, src: Source, tid: str, meta: dict[str, Any], spans: list[_Span], envelope: dict[str, Any]
    ) -> Trace:
        tree = span_tree(spans)
        unique = tree.spans
        b = TraceBuilder(self.name, src.path, trace_id=tid)
        ctx = _Ctx(b)
        walk(ctx, tree, self._begin, self._end)

        starts = [s.start for s in unique if s.start is not None]
        ends = [s.end for s in unique if s.end is not None]
        raw: dict[str, Any] = dict(meta)
        if envelope:
            raw["envelope"] = envelope
        extra: dict[str, Any] = {
            "span_count": len(unique),
            "span_types": dict(Counter(s.type for s in unique)),
            "models": dict(ctx.models),
        }
        for key in ("workflow_name", "group_id", "metadata"):
            if meta.get(key) is not None:
                extra[key] = meta[key]
        return b.build(
            framework=_FRAMEWORK,
            model=next(iter(ctx.models)) if len(ctx.models) == 1 else None,
            task=ctx.task,
            started_at=parse_ts(meta.get("started_at")) or (min(starts) if starts else None),
            ended_at=parse_ts(meta.get("ended_at")) or (max(ends) if ends else None),
            usage=ctx.run_usage,
            raw=raw or None,
            extra=extra,
        )

    def _begin(self, ctx: _Ctx, span: _Span, inherited: str | None) -> str | None:
        d = span.data
        t = span.type
        if t == "agent":
            name = sval(d.get("name")) or sval(span.raw.get("name")) or inherited
            parent = inherited if inherited != name else None
            if parent is None and name is not None:
                parent = ctx.handed_from.get(name)
            if name is not None:
                tools = d.get("tools")
                ctx.b.agent(
                    name,
                    tools=tools if isinstance(tools, list) else None,
                    parent=parent,
                    extra={k: d[k] for k in ("handoffs", "output_type") if d.get(k) is not None},
                )
            ctx.emit(
                span,
                "handoff",
                actor=name,
                subtype="agent_start",
                recipients=[name] if name else None,
                extra={"from_agent": parent},
            )
            return name
        if t == "handoff":
            to_agent = sval(d.get("to_agent"))
            from_agent = sval(d.get("from_agent")) or inherited
            extra = {"to_agent": to_agent, "from_agent": d.get("from_agent")}
            ctx.handoff(span, from_agent, to_agent, otherwise=None, extra=extra)
        elif t in ("generation", "response"):
            self._model_call(ctx, span, inherited)
        elif t == "function":
            self._function_start(ctx, span, inherited)
        elif t == "custom":
            data = _dict(d.get("data"))
            kind = sval(data.get("sdk_span_type")) or "custom"
            actor = sval(data.get("agent_name")) or inherited
            if kind == "task" and span.parent_id is None:
                ctx.run_usage = usage_from(data.get("usage"))
            ctx.emit(
                span, "system", actor=actor, subtype=kind, content=sval(d.get("name")), extra={"data": data}
            )
        else:
            content = sval(d.get("name")) or sval(d.get("server"))
            extra = {k: v for k, v in d.items() if k not in ("type", "name")}
            ctx.emit(span, "system", actor=inherited, subtype=t, content=content, extra=extra)
        return inherited

    def _end(self, ctx: _Ctx, span: _Span, actor: str | None) -> None:
        if span.type == "function":
            self._function_end(ctx, span, actor)
        err = span.error
        if err:
            message = sval(err.get("message")) if isinstance(err, dict) else as_text(err)
            data = err.get("data") if isinstance(err, dict) else None
            ctx.emit(
                span,
                "error",
                at_end=True,
                actor=actor,
                content=message or f"{span.type} span failed",
                extra={"data": data} if data is not None else {},
            )

    # model calls

    def _response_obj(self, span: _Span) -> dict[str, Any] | None:
        for holder, key in (
            (span.data, "response"),
            (span.data, "_response"),  # JS SDK (@openai/agents) span data, when not stripped by toJSON
            (span.raw, "span_data_response"),
            (span.raw, "response"),
        ):
            value = holder.get(key)
            if isinstance(value, dict):
                return value
            if isinstance(value, str) and value:
                try:
                    parsed = parse_repr(value)
                except (ValueError, IndexError, RecursionError):
                    parsed = maybe_json(value)
                if isinstance(parsed, dict):
                    return parsed
        return None

    def _model_call(self, ctx: _Ctx, span: _Span, actor: str | None) -> None:
        d = span.data
        resp = self._response_obj(span) if span.type == "response" else None
        raw_input = next(
            (
                v
                for v in (
                    d.get("input"),
                    d.get("_input"),
                    span.raw.get("span_data_input"),
                    span.raw.get("input"),
                )
                if v is not None
            ),
            None,
        )
        inputs: list[Msg] = []
        instructions = sval(resp.get("instructions")) if resp else None
        if instructions:
            inputs.append(Msg(role="system", text=instructions))
        if raw_input is not None:
            inputs.extend(message_list(raw_input))
        # Output in order: normalised messages, or hosted-tool items (dicts).
        outputs: list[Msg | dict[str, Any]] = []
        if span.type == "generation":
            outputs.extend(message_list(d.get("output"), "assistant"))
        elif resp is not None:
            items = resp.get("output")
            for item in items if isinstance(items, list) else []:
                if not isinstance(item, dict):
                    continue
                itype = item.get("type")
                if isinstance(itype, str) and itype.endswith("_call") and itype != "function_call":
                    outputs.append(_plain(item))
                else:
                    outputs.extend(messages_from(_plain(item), "assistant"))
        model = sval(d.get("model")) or (sval(resp.get("model")) if resp else None)
        if model:
            ctx.models[model] += 1
        usage = usage_from(d.get("usage")) or (usage_from(_plain(resp.get("usage"))) if resp else None)
        extra = ctx.input_events(span, inputs, actor)
        response_id = sval(d.get("response_id")) or (sval(resp.get("id")) if resp else None)
        if response_id:
            extra["response_id"] = response_id
        if d.get("model_config") is not None:
            extra["model_config"] = d["model_config"]
        if resp is not None and resp.get("status") is not None:
            extra["response_status"] = resp.get("status")
        call_id = span.span_id
        ctx.emit(span, "llm_call", actor=actor, model=model, usage=usage, llm_call_id=call_id, extra=extra)
        common: dict[str, Any] = {"actor": actor, "role": "assistant", "model": model, "llm_call_id": call_id}
        for m in outputs:
            if isinstance(m, dict):
                self._hosted_call(ctx, span, m, common)
            else:
                ctx.output_events(span, m, common)

    def _hosted_call(self, ctx: _Ctx, span: _Span, item: dict[str, Any], common: dict[str, Any]) -> None:
        itype = str(item.get("type"))
        name = itype[: -len("_call")]
        args_value = next(
            (item[k] for k in ("action", "queries", "arguments", "code", "input") if k in item), None
        )
        args, raw_args = parse_arguments(args_value)
        cid = idval(item.get("id", item.get("call_id")))
        server = sval(item.get("server_label"))
        tc = ToolCall(
            name=sval(item.get("name")) or name,
            call_id=cid,
            arguments=args,
            arguments_raw=raw_args,
            namespace=server,
        )
        status = sval(item.get("status"))
        ctx.emit(
            span,
            "tool_call",
            at_end=True,
            subtype="hosted_tool",
            tool_call=tc,
            extra={"item_type": itype},
            **common,
        )
        output = item.get("output", item.get("results", item.get("outputs")))
        if output is not None:
            tr = ToolResult(
                call_id=cid,
                name=tc.name,
                output=as_text(output),
                status=status,
                is_error=bool(item.get("error")) or None,
            )
            ctx.emit(span, "tool_result", at_end=True, actor="environment", role="tool", tool_result=tr)

    # function spans

    def _function_start(self, ctx: _Ctx, span: _Span, actor: str | None) -> None:
        d = span.data
        name = sval(d.get("name")) or "unknown"
        found, cid = ctx.pending.take(None, name)
        if not found:
            cid = span.span_id
            mcp = _dict(maybe_json(d.get("mcp_data")))  # a dict (Python SDK) or JSON text (JS SDK)
            args, raw_args = parse_arguments(d.get("input"))
            tc = ToolCall(
                name=name,
                call_id=cid,
                arguments=args,
                arguments_raw=raw_args,
                namespace=sval(mcp.get("server")),
            )
            ctx.emit(
                span,
                "tool_call",
                actor=actor,
                role="assistant",
                tool_call=tc,
                extra={"call_id_from_span": True},
            )
        ctx.tool_call_ids[span.span_id] = cid

    def _function_end(self, ctx: _Ctx, span: _Span, actor: str | None) -> None:
        d = span.data
        cid = ctx.tool_call_ids.pop(span.span_id, None)
        output = as_text(d.get("output"))
        duration = (span.end - span.start).total_seconds() * 1000 if span.start and span.end else None
        tr = ToolResult(
            call_id=cid,
            name=sval(d.get("name")),
            output=output,
            is_error=bool(span.error),
            duration_ms=duration,
        )
        ctx.seen.add_result(cid, output)
        ctx.emit(span, "tool_result", at_end=True, actor="environment", role="tool", tool_result=tr)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _plain(value: Any) -> Any:
    """A parsed repr with its ``__type__`` markers dropped (dicts stay dicts)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if k != "__type__"}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value
