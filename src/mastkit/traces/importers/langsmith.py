"""LangSmith run payloads (LangChain / LangGraph / ``@traceable`` / ``wrap_openai`` tracing); one trace per
root ``trace_id``.

Accepted shapes (what the SDK sends to ``/runs/batch`` and ``/runs``, and what ``list_runs`` exports):

* a batch ingest payload ``{"post": [run, ...], "patch": [run, ...]}`` (or a JSON list / JSONL of them);
* a single run object, or a JSON list of runs (exported ``Run`` objects with nested ``child_runs`` too);
* run-ops JSONL: one run create (``id, name, run_type, start_time, inputs, ...``) or update
  (``id, end_time, outputs, error, events, ...``) per line.

Runs (``id, trace_id, parent_run_id, dotted_order, name, run_type, start_time, end_time, inputs,
outputs, error, extra{metadata, runtime, invocation_params}, events, tags, serialized``) are merged by
``id`` (later records update earlier ones; ``extra.metadata`` is merged key by key), grouped by
``trace_id`` (else the root reached through ``parent_run_id``, else the first id of ``dotted_order``)
and walked depth first in ``dotted_order`` (children between their parent's start and end).

Mapping by ``run_type``:

* ``llm`` -> first the input messages not seen before in the trace (system prompt, user turn; re-sent
  history is not repeated), then ``llm_call`` (model from ``ls_model_name`` / invocation params /
  output; usage from ``usage_metadata`` / ``llm_output.token_usage`` / ``usage`` / the run's token
  fields; the raw run), then the output message: ``reasoning`` / ``message`` / ``tool_call`` (one per
  call). Outputs in OpenAI (``choices``), LangChain (``generations``, serialized ``lc`` messages,
  ``{type, data}`` dicts) and Anthropic (``content`` blocks) form are read. Streamed ``new_token``
  events stay in ``raw`` (counted in ``extra``).
* ``tool`` / ``retriever`` -> ``tool_call`` at the run's start (skipped when a model output already
  issued that call id), ``tool_result`` at its end (``is_error`` from ``error`` or a ``ToolMessage``
  status ``error``).
* ``chain`` (and other types) -> a LangGraph node entered after another node -> ``handoff``; other
  runs -> ``system`` (subtype ``<run_type>_start``). A run's ``error`` -> ``error`` event at its end.

``actor`` is the run's ``langgraph_node`` metadata, else the root run's name. ``task`` is the root
run's input; ``Outcome.final_output`` its output; a root ``error`` gives the termination.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from mastkit.errors import FormatError, TraceLoadError
from mastkit.traces._build import (
    TraceBuilder,
    content_text,
    dumps_text,
    parse_arguments,
    parse_ts,
    source_ref,
    usage_from,
    validation_reason,
)
from mastkit.traces.model import Outcome, SourceRef, Termination, ToolCall, ToolResult, Trace, Usage
from mastkit.traces.registry import Importer, register
from mastkit.traces.source import Source

RUN_TYPES = frozenset(("llm", "chain", "tool", "retriever", "embedding", "prompt", "parser", "agent"))
_LC_ROLES = {
    "HumanMessage": "user", "HumanMessageChunk": "user", "AIMessage": "assistant", "AIMessageChunk": "assistant",
    "SystemMessage": "system", "SystemMessageChunk": "system", "ToolMessage": "tool", "ToolMessageChunk": "tool",
    "FunctionMessage": "tool", "FunctionMessageChunk": "tool",
}  # fmt: skip
_TYPE_ROLES = {
    "human": "user", "user": "user", "ai": "assistant", "assistant": "assistant", "system": "system",
    "developer": "system", "tool": "tool", "function": "tool", "AIMessageChunk": "assistant",
}  # fmt: skip


# Content blocks that are tool calls: Anthropic ``tool_use``, LangChain v1 ``tool_call``, OpenAI
# Responses ``function_call`` (langchain-openai ``output_version="responses/v1"``).
_CALL_BLOCKS = ("tool_use", "tool_call", "function_call")


def _d(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _l(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _s(value: Any) -> str | None:
    return value if isinstance(value, str) else None


# The JS SDK's own option names (``RunTree`` config, ``traceable`` options) where they differ from the
# wire names; runs written from those objects by hand carry them.
_CAMEL = {
    "runType": "run_type", "startTime": "start_time", "endTime": "end_time", "parentRunId": "parent_run_id",
    "traceId": "trace_id", "dottedOrder": "dotted_order", "childRuns": "child_runs",
    "sessionName": "session_name", "projectName": "session_name", "referenceExampleId": "reference_example_id",
}  # fmt: skip


def _snake(rec: Any) -> Any:
    """A run with the JS SDK's camelCase field names renamed to the wire (snake_case) names; a field
    present under both names keeps the snake_case value."""
    if not isinstance(rec, dict) or not any(k in _CAMEL for k in rec):
        return rec
    out = {k: v for k, v in rec.items() if k not in _CAMEL}
    for k, v in rec.items():
        if k in _CAMEL:
            out.setdefault(_CAMEL[k], v)
    return out


def _dotted_id(dotted: Any) -> str | None:
    """The run id at the end of a ``dotted_order`` (``<time>Z<id>``, parents first, joined by dots)."""
    if not isinstance(dotted, str) or "Z" not in dotted:
        return None
    last = dotted.rsplit(".", 1)[-1].split("Z", 1)[1]
    return last if len(last) == 36 and last.count("-") == 4 else None


def _run_id(rec: dict[str, Any]) -> str | None:
    """The run's ``id``, else the one its ``dotted_order`` ends with: the JS SDK's ``RunTree.patchRun``
    sends updates without an ``id`` in the body (it is in the URL), and batches keep them that way."""
    rid = rec.get("id")
    if isinstance(rid, str):
        return rid
    return _dotted_id(rec.get("dotted_order"))


def _is_run(rec: Any) -> bool:
    rec = _snake(rec)
    if not isinstance(rec, dict) or _run_id(rec) is None:
        return False
    if rec.get("run_type") in RUN_TYPES and ("inputs" in rec or "name" in rec):
        return True
    return "dotted_order" in rec and ("trace_id" in rec or "outputs" in rec or "end_time" in rec)


def _why_not_run(rec: Any) -> str:
    """What a record lacks to be read as a run, in words."""
    if not isinstance(rec, dict):
        return f"not a LangSmith run: a JSON {type(rec).__name__}, not an object"
    if _run_id(rec) is None:
        if "dotted_order" in rec:
            return "not a LangSmith run: no 'id', and its 'dotted_order' does not end with a run id"
        return "not a LangSmith run: no 'id' (nor a 'dotted_order' ending with one)"
    return (
        "not a LangSmith run: no 'run_type' with 'inputs'/'name', nor an update ('end_time', 'outputs', ...)"
    )


def _is_batch(rec: Any) -> bool:
    if not isinstance(rec, dict) or not ({"post", "patch"} & set(rec)):
        return False
    runs = [*_l(rec.get("post")), *_l(rec.get("patch"))]
    return bool(runs) and all(_is_run(r) for r in runs[:5])


# -- message normalisation ------------------------------------------------------------------------


def normalize_message(m: Any) -> dict[str, Any] | None:
    """A chat message in any LangChain / OpenAI / tuple form -> ``{role, content, tool_calls, ...}``."""
    if isinstance(m, (list, tuple)) and len(m) == 2 and isinstance(m[0], str):
        return {"role": _TYPE_ROLES.get(m[0].lower(), m[0].lower()), "content": m[1]}
    if isinstance(m, str):
        return {"role": "user", "content": m}
    if not isinstance(m, dict):
        return None
    if m.get("lc") == 1 and m.get("type") == "constructor":
        ids = _l(m.get("id"))
        kwargs = dict(_d(m.get("kwargs")))
        cls = str(ids[-1]) if ids else ""
        lc_role = _LC_ROLES.get(cls) or _TYPE_ROLES.get(str(kwargs.get("role", "")), "user")
        return _finish_message({**kwargs, "role": lc_role})
    if isinstance(m.get("data"), dict) and isinstance(m.get("type"), str) and "role" not in m:
        return _finish_message({**m["data"], "role": _TYPE_ROLES.get(m["type"], "user")})
    role: Any = m.get("role")
    if not isinstance(role, str):
        mtype = m.get("type")
        role = _TYPE_ROLES.get(mtype, "") if isinstance(mtype, str) else ""
        if not role:
            return None
    return _finish_message({**m, "role": _TYPE_ROLES.get(role, role)})


def _finish_message(m: dict[str, Any]) -> dict[str, Any]:
    calls: list[dict[str, Any]] = []
    for c in _l(m.get("tool_calls")) or _l(_d(m.get("additional_kwargs")).get("tool_calls")):
        if not isinstance(c, dict):
            continue
        if isinstance(c.get("function"), dict):  # OpenAI style
            fn = c["function"]
            calls.append({"id": c.get("id"), "name": fn.get("name"), "args": fn.get("arguments")})
        else:  # LangChain style {name, args, id}
            calls.append(
                {"id": c.get("id"), "name": c.get("name"), "args": c.get("args", c.get("arguments"))}
            )
    fc = m.get("function_call") or _d(m.get("additional_kwargs")).get("function_call")
    if isinstance(fc, dict):
        calls.append({"id": None, "name": fc.get("name"), "args": fc.get("arguments")})
    content = m.get("content")
    if isinstance(content, list):  # Anthropic / LangChain v1 / Responses blocks inside a LangChain message
        known = {c.get("id") for c in calls if c.get("id") is not None}
        idless = Counter(c.get("name") for c in calls if c.get("id") is None)  # matched by name instead
        for block in content:
            if not isinstance(block, dict) or block.get("type") not in _CALL_BLOCKS:
                continue
            bid = block.get("call_id") if block.get("type") == "function_call" else block.get("id")
            if bid is not None and bid in known:
                continue
            if bid is None and idless[block.get("name")] > 0:
                idless[block.get("name")] -= 1
                continue
            args = block.get("input", block.get("args", block.get("arguments")))
            calls.append({"id": bid, "name": block.get("name"), "args": args})
            if bid is not None:
                known.add(bid)
    m["_calls"] = calls
    return m


def _reasoning_text(p: dict[str, Any]) -> str:
    """Text of a reasoning block: Anthropic ``thinking``, LangChain v1 ``reasoning``, or the OpenAI
    Responses ``summary`` list (``[{type: summary_text, text}]``, langchain-openai ``responses/v1``)."""
    text = p.get("thinking") or p.get("reasoning")
    if isinstance(text, str) and text:
        return text
    summary = p.get("summary")
    if isinstance(summary, list):
        return "\n".join(str(s.get("text")) for s in summary if isinstance(s, dict) and s.get("text"))
    return ""


def _text_and_reasoning(content: Any) -> tuple[str | None, list[str]]:
    if isinstance(content, list):
        reasoning = [
            _reasoning_text(p)
            for p in content
            if isinstance(p, dict) and p.get("type") in ("thinking", "reasoning")
        ]
        parts = [
            p
            for p in content
            if not (isinstance(p, dict) and p.get("type") in ("thinking", "reasoning", *_CALL_BLOCKS))
        ]
        return (content_text(parts) if parts else None), [r for r in reasoning if r]
    return content_text(content), []


def _fingerprint(m: dict[str, Any]) -> tuple[Any, ...]:
    role = m.get("role")
    if role == "tool" and m.get("tool_call_id"):
        return ("tool", str(m["tool_call_id"]))
    ids = tuple(str(c["id"]) for c in m.get("_calls", []) if c.get("id"))
    if role == "assistant" and ids:
        return ("assistant", ids)
    return (str(role), _text_and_reasoning(m.get("content"))[0] or "")


def _input_messages(inputs: dict[str, Any]) -> list[Any]:
    msgs = inputs.get("messages")
    if isinstance(msgs, list) and msgs and isinstance(msgs[0], list) and not isinstance(msgs[0][0], str):
        msgs = msgs[0]  # chat model runs: a batch of message lists
    if isinstance(msgs, list):
        if isinstance(inputs.get("system"), str):  # Anthropic-style system prompt beside the messages
            return [{"role": "system", "content": inputs["system"]}, *msgs]
        return msgs
    prompts = inputs.get("prompts")
    if isinstance(prompts, list):
        return [{"role": "user", "content": p} for p in prompts if isinstance(p, str)]
    if isinstance(inputs.get("system"), str):  # anthropic wrapper
        return [{"role": "system", "content": inputs["system"]}]
    return []


def _output_message(outputs: dict[str, Any]) -> dict[str, Any] | None:
    choices = _l(outputs.get("choices"))
    if choices and isinstance(choices[0], dict):
        msg = choices[0].get("message") or {"role": "assistant", "content": choices[0].get("text")}
        return normalize_message({"role": "assistant", **_d(msg)})
    gens = _l(outputs.get("generations"))
    if gens:
        first = gens[0][0] if isinstance(gens[0], list) and gens[0] else gens[0]
        first = _d(first)
        msg = first.get("message")
        if msg is not None:
            return normalize_message(msg)
        if isinstance(first.get("text"), str):
            return {"role": "assistant", "content": first["text"], "_calls": []}
    if isinstance(outputs.get("content"), (list, str)) and outputs.get("role") == "assistant":
        return normalize_message(outputs)  # Anthropic message
    out = outputs.get("output")
    if out is not None:
        msg = normalize_message(out) if not isinstance(out, str) else {"role": "assistant", "content": out}
        if msg is not None:
            msg.setdefault("_calls", [])
            if msg.get("role") == "user":
                msg["role"] = "assistant"
        return msg
    if "content" in outputs and ("type" in outputs or "lc" in outputs):
        return normalize_message(outputs)
    return None


def _usage(run: dict[str, Any], outputs: dict[str, Any], msg: dict[str, Any] | None) -> Usage | None:
    meta = _d(_d(run.get("extra")).get("metadata"))
    candidates = [
        outputs.get("usage_metadata"),
        (msg or {}).get("usage_metadata"),
        meta.get("usage_metadata"),
        _d(outputs.get("llm_output")).get("token_usage"),
        _d(outputs.get("llm_output")).get("usage"),
        outputs.get("usage"),
    ]
    for cand in candidates:
        if isinstance(cand, dict):
            usage = usage_from(cand)
            if usage is not None:
                inp = _d(cand.get("input_token_details"))
                out = _d(cand.get("output_token_details"))
                update = {
                    "cached_input_tokens": usage.cached_input_tokens
                    if usage.cached_input_tokens is not None
                    else inp.get("cache_read"),
                    "cache_write_tokens": usage.cache_write_tokens
                    if usage.cache_write_tokens is not None
                    else inp.get("cache_creation"),
                    "reasoning_tokens": usage.reasoning_tokens
                    if usage.reasoning_tokens is not None
                    else out.get("reasoning"),
                }
                usage = Usage.model_validate({**usage.model_dump(), **update})
                if usage.cost_usd is None and isinstance(run.get("total_cost"), (int, float)):
                    usage = usage.model_copy(update={"cost_usd": float(run["total_cost"])})
                return usage
    run_usage = usage_from(run)  # exported runs: prompt_tokens / completion_tokens / total_cost
    return run_usage


def _model(run: dict[str, Any], outputs: dict[str, Any]) -> str | None:
    extra = _d(run.get("extra"))
    meta = _d(extra.get("metadata"))
    params = _d(extra.get("invocation_params"))
    inputs = _d(run.get("inputs"))
    llm_output = _d(outputs.get("llm_output"))
    for cand in (
        outputs.get("model"),
        llm_output.get("model_name"),
        meta.get("ls_model_name"),
        params.get("model"),
        params.get("model_name"),
        inputs.get("model"),
    ):
        if isinstance(cand, str) and cand:
            return cand
    return None


def _io_text(value: Any) -> str | None:
    """A readable text of run inputs/outputs (the question, the answer)."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        if "choices" in value or "generations" in value:
            msg = _output_message(value)
            if msg is not None:
                return _text_and_reasoning(msg.get("content"))[0]
        for key in ("input", "question", "query", "output", "answer", "text", "result"):
            if isinstance(value.get(key), str):
                return str(value[key])
        msgs = value.get("messages")
        if (
            isinstance(msgs, list)
            and msgs
            and isinstance(msgs[0], list)
            and msgs[0]
            and not isinstance(msgs[0][0], str)
        ):
            msgs = msgs[0]  # chat model runs: a batch of message lists
        if isinstance(msgs, list) and msgs:
            last = normalize_message(msgs[-1])
            if last is not None:
                return _text_and_reasoning(last.get("content"))[0]
        out = value.get("output")
        if out is not None:
            msg = normalize_message(out)
            if msg is not None:
                return _text_and_reasoning(msg.get("content"))[0]
    return dumps_text(value)


def _feedback_metrics(stats: Any) -> dict[str, Any]:
    """Exported runs' ``feedback_stats`` (``{key: {n, avg, stdev, values, ...}}``) -> ``{key: avg}``
    (the whole entry when it has no numeric ``avg``, e.g. categorical ``values`` only)."""
    out: dict[str, Any] = {}
    for key, val in _d(stats).items():
        avg = _d(val).get("avg")
        out[str(key)] = avg if isinstance(avg, (int, float)) and not isinstance(avg, bool) else val
    return out


# -- run collection -------------------------------------------------------------------------------


@dataclass
class _Run:
    run: dict[str, Any]
    natives: list[Any]
    refs: list[SourceRef]
    order: int
    children: list[_Run] = field(default_factory=list)

    @property
    def id(self) -> str:
        return str(self.run["id"])

    @property
    def raw(self) -> Any:
        return self.natives[0] if len(self.natives) == 1 else self.natives


class _Collector:
    def __init__(self) -> None:
        self.runs: dict[str, _Run] = {}
        self.envelope: dict[str, Any] = {}

    def add(self, rec: dict[str, Any], ref: SourceRef, native: Any = None) -> None:
        """Merge one run record (``native``: the record as written, when ``rec`` is a renamed copy)."""
        native = rec if native is None else native
        rid = str(rec["id"])
        for child_i, child in enumerate(_l(rec.get("child_runs"))):
            if _is_run(child):
                ptr = f"{ref.pointer or ''}/child_runs/{child_i}"
                kid = _snake(child)
                self.add(
                    {**kid, "id": _run_id(kid), "parent_run_id": kid.get("parent_run_id") or rid},
                    source_ref(line=ref.line, pointer=ptr),
                )
        known = self.runs.get(rid)
        if known is None:
            merged = {k: v for k, v in rec.items() if k != "child_runs"}
            self.runs[rid] = _Run(merged, [native], [ref], len(self.runs))
            return
        known.natives.append(native)
        known.refs.append(ref)
        for k, v in rec.items():
            if k == "child_runs":
                continue
            old = known.run.get(k)
            if k == "extra" and isinstance(old, dict) and isinstance(v, dict):
                meta = {**_d(old.get("metadata")), **_d(v.get("metadata"))}
                known.run[k] = {**old, **v, "metadata": meta}
            elif v is not None or k not in known.run:
                known.run[k] = v

    def traces(self) -> list[tuple[str, list[_Run]]]:
        """Runs grouped by trace (in order of first appearance), each a list of root runs (tree built)."""
        runs = self.runs
        for r in runs.values():
            r.children.clear()

        def root_of(r: _Run) -> str:
            tid = r.run.get("trace_id")
            if isinstance(tid, str) and tid:
                return tid
            seen = set()
            cur = r
            while isinstance(cur.run.get("parent_run_id"), str) and cur.run["parent_run_id"] in runs:
                if cur.id in seen:
                    break
                seen.add(cur.id)
                cur = runs[cur.run["parent_run_id"]]
            dotted = cur.run.get("dotted_order")
            if isinstance(dotted, str) and "Z" in dotted:
                return dotted.split(".", 1)[0].split("Z", 1)[1] or cur.id
            return cur.id

        groups: dict[str, list[_Run]] = {}
        for r in runs.values():
            groups.setdefault(root_of(r), []).append(r)
        result = []
        for tid, members in groups.items():
            ids = {m.id for m in members}
            roots = []
            for m in members:
                parent = m.run.get("parent_run_id")
                if isinstance(parent, str) and parent in ids and not self._in_cycle(m, ids):
                    runs[parent].children.append(m)
                else:
                    roots.append(m)
            for m in members:
                m.children.sort(key=_sort_key)
            roots.sort(key=_sort_key)
            result.append((tid, roots))
        return result

    def _in_cycle(self, r: _Run, ids: set[str]) -> bool:
        """True when following parent_run_id from ``r`` comes back to ``r`` (a broken tree)."""
        seen: set[str] = set()
        cur = r.run.get("parent_run_id")
        while isinstance(cur, str) and cur in ids and cur not in seen:
            if cur == r.id:
                return True
            seen.add(cur)
            cur = self.runs[cur].run.get("parent_run_id")
        return False


def _sort_key(r: _Run) -> tuple[str, float, int]:
    # start times are ISO text (Python SDK) or epoch milliseconds (JS SDK): compared as instants
    start = parse_ts(r.run.get("start_time"))
    return (str(r.run.get("dotted_order") or ""), start.timestamp() if start is not None else 0.0, r.order)


# -- trace building --------------------------------------------------------------------------------


class _Walker:
    def __init__(self, b: TraceBuilder, root_name: str | None) -> None:
        self.b = b
        self.root_name = root_name
        self.seen: Counter[tuple[Any, ...]] = Counter()
        self.call_ids: set[str] = set()
        self.open_calls: list[tuple[str | None, str]] = []  # (call id, name) issued by models, unanswered
        self.last_node: str | None = None
        self.models: list[str] = []
        self.stream_events = 0

    def actor(self, run: dict[str, Any]) -> str | None:
        node = _d(_d(run.get("extra")).get("metadata")).get("langgraph_node")
        return node if isinstance(node, str) else self.root_name

    def walk(self, r: _Run) -> None:
        run = r.run
        rtype = run.get("run_type")
        actor = self.actor(run)
        ref = r.refs[0]
        start = parse_ts(run.get("start_time"))
        end = parse_ts(run.get("end_time"))
        meta = _d(_d(run.get("extra")).get("metadata"))
        node = meta.get("langgraph_node")
        phase = node if isinstance(node, str) else None
        common: dict[str, Any] = {"id": r.id, "parent_id": _s(run.get("parent_run_id")), "phase": phase}
        raw_used = False
        if rtype == "llm":
            self._llm(r, actor, ref, start, end, common)
            raw_used = True
        elif rtype in ("tool", "retriever"):
            raw_used = self._tool_start(r, actor, ref, start, common)
        elif isinstance(node, str) and node == run.get("name") and node != self.last_node:
            self.b.add(
                "handoff",
                actor=self.last_node or self.root_name,
                recipients=[node],
                subtype="node_start",
                content=node,
                started_at=start,
                source=ref,
                raw=r.raw,
                **common,
            )
            self.last_node = node
            raw_used = True
        else:
            self.b.add(
                "system",
                subtype=f"{rtype or 'run'}_start",
                actor=actor,
                content=_s(run.get("name")),
                started_at=start,
                source=ref,
                raw=r.raw,
                extra={"tags": run["tags"]} if run.get("tags") else {},
                **common,
            )
            raw_used = True
        for child in r.children:
            self.walk(child)
        if rtype in ("tool", "retriever"):
            self._tool_end(r, ref, end, common, raw=None if raw_used else r.raw)
        elif run.get("error"):
            self.b.add(
                "error",
                actor=actor,
                content=dumps_text(run["error"]),
                started_at=end,
                source=ref,
                subtype=f"{rtype}_error",
                phase=phase,
                parent_id=r.id,
            )

    def _new_message(
        self, m: dict[str, Any], actor: str | None, ref: SourceRef, start: Any, **fields: Any
    ) -> None:
        b = self.b
        role = m.get("role")
        role = role if role in ("system", "user", "assistant", "tool") else "user"
        text, reasoning = _text_and_reasoning(m.get("content"))
        who = actor if role == "assistant" else ("environment" if role == "tool" else role)
        if role == "tool":
            b.add(
                "tool_result",
                actor="environment",
                role="tool",
                tool_result=ToolResult(
                    call_id=_s(m.get("tool_call_id")),
                    name=_s(m.get("name")),
                    output=text,
                    is_error=m.get("status") == "error" if m.get("status") else None,
                    status=_s(m.get("status")),
                ),
                source=ref,
                started_at=start,
                **fields,
            )
            return
        for rtext in reasoning:
            b.add("reasoning", actor=who, role=role, content=rtext, source=ref, started_at=start, **fields)
        calls = m.get("_calls", [])
        if text or not calls:
            b.add(
                "message",
                actor=who,
                role=role,
                content=text,
                subtype="system_prompt" if role == "system" else None,
                source=ref,
                started_at=start,
                **fields,
            )
        for c in calls:
            args, args_raw = parse_arguments(c.get("args"))
            cid = str(c["id"]) if c.get("id") is not None else None
            if cid:
                self.call_ids.add(cid)
            self.open_calls.append((cid, str(c.get("name") or "unknown")))
            b.add(
                "tool_call",
                actor=who,
                role="assistant",
                tool_call=ToolCall(
                    name=str(c.get("name") or "unknown"), call_id=cid, arguments=args, arguments_raw=args_raw
                ),
                source=ref,
                started_at=start,
                **fields,
            )

    def _llm(
        self, r: _Run, actor: str | None, ref: SourceRef, start: Any, end: Any, common: dict[str, Any]
    ) -> None:
        run = r.run
        inputs = _d(run.get("inputs"))
        counts: Counter[tuple[Any, ...]] = Counter()
        for j, raw_msg in enumerate(_input_messages(inputs)):
            m = normalize_message(raw_msg)
            if m is None:
                continue
            fp = _fingerprint(m)
            counts[fp] += 1
            if counts[fp] > self.seen[fp]:
                self.seen[fp] += 1
                self._new_message(
                    m, actor, source_ref(line=ref.line, pointer=f"{ref.pointer or ''}/inputs/messages/{j}"), start,
                    phase=common["phase"],
                )  # fmt: skip
        outputs = _d(run.get("outputs"))
        msg = _output_message(outputs)
        model = _model(run, outputs)
        if model:
            self.models.append(model)
        events = _l(run.get("events"))
        tokens = sum(1 for e in events if isinstance(e, dict) and e.get("name") == "new_token")
        self.stream_events += tokens
        extra: dict[str, Any] = {"name": run.get("name")}
        if tokens:
            extra["stream_tokens"] = tokens
        if run.get("first_token_time"):
            extra["first_token_time"] = run["first_token_time"]
        params = _d(_d(run.get("extra")).get("invocation_params"))
        if params:
            extra["invocation_params"] = params
        llm_call_id = r.id
        self.b.add(
            "llm_call",
            actor=actor,
            role="assistant",
            model=model,
            usage=_usage(run, outputs, msg),
            llm_call_id=llm_call_id,
            started_at=start,
            ended_at=end,
            source=ref,
            raw=r.raw,
            extra=extra,
            **common,
        )
        if msg is not None:
            fp = _fingerprint(msg)
            self.seen[fp] += 1
            out_ref = next(
                (
                    rf
                    for rec, rf in zip(reversed(r.natives), reversed(r.refs), strict=True)
                    if _d(rec).get("outputs")
                ),
                ref,
            )
            self._new_message(
                {**msg, "role": "assistant"},
                actor,
                source_ref(line=out_ref.line, pointer=f"{out_ref.pointer or ''}/outputs"),
                end or start,
                llm_call_id=llm_call_id,
                model=model,
                phase=common["phase"],
            )

    def _tool_call_id(self, run: dict[str, Any]) -> str | None:
        outputs = _d(run.get("outputs"))
        out = normalize_message(outputs.get("output")) if isinstance(outputs.get("output"), dict) else None
        for cand in (
            _d(run.get("inputs")).get("tool_call_id"),
            _d(_d(run.get("extra")).get("metadata")).get("tool_call_id"),
            (out or {}).get("tool_call_id"),
        ):
            if isinstance(cand, str) and cand:
                return cand
        return None

    def _tool_start(
        self, r: _Run, actor: str | None, ref: SourceRef, start: Any, common: dict[str, Any]
    ) -> bool:
        run = r.run
        name = str(run.get("name") or "tool")
        cid = self._tool_call_id(run)
        if cid is None:  # pair with the model's unanswered call of that name
            match = next((c for c in self.open_calls if c[1] == name and c[0]), None)
            cid = match[0] if match else None
        run["_call_id"] = cid
        if cid is not None and cid in self.call_ids:
            return False
        inputs = run.get("inputs")
        value: Any = inputs
        if isinstance(inputs, dict) and set(inputs) == {"input"}:
            value = inputs["input"]
        args, args_raw = parse_arguments(value)
        if cid:
            self.call_ids.add(cid)
        self.b.add(
            "tool_call",
            actor=actor,
            role="assistant",
            subtype="retriever" if run.get("run_type") == "retriever" else None,
            tool_call=ToolCall(name=name, call_id=cid or r.id, arguments=args, arguments_raw=args_raw),
            started_at=start,
            source=ref,
            raw=r.raw,
            **common,
        )
        if cid is None:
            run["_call_id"] = r.id
        return True

    def _tool_end(self, r: _Run, ref: SourceRef, end: Any, common: dict[str, Any], raw: Any) -> None:
        run = r.run
        cid = run.pop("_call_id", None)
        self.open_calls = [c for c in self.open_calls if c[0] != cid]
        outputs = run.get("outputs")
        out = _d(outputs).get("output", outputs) if isinstance(outputs, dict) else outputs
        msg = normalize_message(out) if isinstance(out, dict) else None
        status = _s((msg or {}).get("status"))
        if msg is not None:
            text = _text_and_reasoning(msg.get("content"))[0]
        elif isinstance(outputs, dict) and isinstance(outputs.get("documents"), list):
            text = dumps_text(outputs["documents"])
        else:
            text = out if isinstance(out, str) else (dumps_text(out) if out is not None else None)
        err = run.get("error")
        if err and not text:
            text = dumps_text(err)
        self.seen[("tool", cid)] += 1
        self.b.add(
            "tool_result",
            actor="environment",
            role="tool",
            tool_result=ToolResult(
                call_id=cid,
                name=_s(run.get("name")),
                output=text,
                is_error=bool(err) or status == "error",
                status=status or _s(run.get("status")),
            ),
            started_at=end,
            source=ref,
            raw=raw,
            **common,
        )


@register
class LangSmithImporter(Importer):
    name = "langsmith"
    description = "LangSmith runs: batch ingest payloads {post, patch}, run objects/lists, run-ops JSONL"

    def sniff(self, src: Source) -> float:
        shape = src.json_shape
        if shape not in ("object", "array", "jsonl"):
            return 0.0
        rec = src.first_record
        if _is_batch(rec):
            return 0.95
        if _is_run(rec):
            return 0.9
        return 0.0

    def load(self, src: Source) -> Iterator[Trace | TraceLoadError]:
        col = _Collector()
        errors: list[TraceLoadError] = []
        if src.json_shape == "jsonl":
            for line, offset, value in src.iter_jsonl():
                if isinstance(value, FormatError):
                    errors.append(TraceLoadError(src.path, value.reason, line=line, offset=offset))
                    continue
                self._take(src, col, value, source_ref(line=line), errors, line=line)
        else:
            doc = src.json
            if isinstance(doc, list):
                for i, rec in enumerate(doc):
                    self._take(src, col, rec, source_ref(pointer=f"/{i}"), errors)
            elif _is_batch(doc) or _is_run(doc):
                self._take(src, col, doc, source_ref(pointer=""), errors)
            else:
                raise FormatError("not a LangSmith run, run list or {post, patch} batch")
        yield from errors
        if not col.runs:
            if not errors:
                raise FormatError("no LangSmith runs found")
            return
        for i, (tid, roots) in enumerate(col.traces()):
            try:
                yield self._trace(src, tid, roots, i, col.envelope)
            except (ValueError, TypeError, KeyError) as exc:
                yield TraceLoadError(src.path, f"trace {tid}: {validation_reason(exc)}")

    def _take(
        self,
        src: Source,
        col: _Collector,
        rec: Any,
        ref: SourceRef,
        errors: list[TraceLoadError],
        line: int | None = None,
    ) -> None:
        if _is_batch(rec):
            base = ref.pointer or ""
            for key in ("post", "patch"):
                for j, run in enumerate(_l(rec.get(key))):
                    self._take(
                        src, col, run, source_ref(line=line, pointer=f"{base}/{key}/{j}"), errors, line
                    )
            for k, v in rec.items():
                if k not in ("post", "patch"):
                    col.envelope[k] = v
            return
        native, rec = rec, _snake(rec)
        rid = _run_id(rec) if isinstance(rec, dict) else None
        if (
            isinstance(rec, dict)
            and rid is not None
            and (_is_run(rec) or {"end_time", "outputs", "error", "events"} & set(rec))
        ):
            col.add(rec if isinstance(rec.get("id"), str) else {"id": rid, **rec}, ref, native=native)
            return
        where = f"line {line}" if line is not None else f"record {ref.pointer}"
        errors.append(TraceLoadError(src.path, f"{where}: {_why_not_run(rec)}", line=line))

    def _trace(self, src: Source, tid: str, roots: list[_Run], index: int, envelope: dict[str, Any]) -> Trace:
        root = roots[0].run
        b = TraceBuilder(self.name, src.path, trace_id=tid, index=index)
        walker = _Walker(b, _s(root.get("name")))
        for r in roots:
            walker.walk(r)
        runtime = _d(_d(root.get("extra")).get("runtime"))
        meta = _d(_d(root.get("extra")).get("metadata"))
        langgraph = any(k.startswith("langgraph_") for k in meta) or any(
            "langgraph_node"
            in _d(_d(e.raw.get("extra") if isinstance(e.raw, dict) else None).get("metadata"))
            for e in b.events
        )
        if langgraph:
            framework, version = "langgraph", _s(meta.get("langgraph_version"))
        else:
            framework = _s(runtime.get("library")) or "langsmith"
            version = _s(runtime.get("sdk_version")) if framework == "langsmith" else None
        error = root.get("error")
        termination = (
            Termination(reason="error", by="error", native=dumps_text(error), at_seq=len(b.events) - 1)
            if error
            else None
        )
        final = _io_text(root.get("outputs")) if root.get("outputs") else None
        outcome = Outcome(final_output=final) if final else None
        feedback = _feedback_metrics(root.get("feedback_stats"))
        if feedback:
            outcome = (outcome or Outcome()).model_copy(update={"metrics": feedback})
        kinds = Counter(str(r.run.get("run_type")) for r in self._all(roots))
        extra: dict[str, Any] = {"run_types": dict(kinds)}
        if walker.stream_events:
            extra["stream_tokens"] = walker.stream_events
        if isinstance(runtime.get("sdk"), str):  # "langsmith-js" for runs the JS SDK wrote
            extra["sdk"] = runtime["sdk"]
        for k in ("session_name", "session_id", "reference_example_id"):
            if root.get(k) is not None:
                extra[k] = root[k]
        return b.build(
            framework=framework,
            framework_version=version,
            model=walker.models[0] if walker.models else None,
            task=_io_text(root.get("inputs")),
            started_at=parse_ts(root.get("start_time")),
            ended_at=parse_ts(root.get("end_time")),
            termination=termination,
            outcome=outcome,
            raw=envelope or None,
            extra=extra,
        )

    def _all(self, roots: list[_Run]) -> Iterator[_Run]:
        for r in roots:
            yield r
            yield from self._all(r.children)
