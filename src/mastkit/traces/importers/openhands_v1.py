"""OpenHands V1 (``openhands-sdk`` / OpenHands CLI) conversations: a folder of event files.

The SDK persists a conversation as ``<conversations>/<id>/events/event-NNNNN-<event id>.json``
(one event per file, NNNNN = position) next to ``base_state.json``. Both the ``events`` folder
itself and the conversation folder holding it are read as ONE trace (``handles_dirs``); files are
ordered by their NNNNN index. A file that is not valid JSON is reported as a
:class:`~mastkit.errors.TraceLoadError` and the trace is built from the others.

Events are discriminated by ``kind`` (all have ``id``, ``timestamp``, ``source``):

* ``SystemPromptEvent{system_prompt, tools}`` -> ``system`` (and the agent's system prompt/tools);
* ``MessageEvent{llm_message{role, content, reasoning_content?}, llm_response_id?}`` ->
  (``reasoning``) + ``message`` (first user message -> ``Trace.task``);
* ``ActionEvent{thought[], reasoning_content, action, tool_name, tool_call_id, tool_call,
  llm_response_id, security_risk, summary}`` -> ``reasoning`` + ``tool_call`` (arguments from
  ``tool_call.arguments``, else the ``action`` dict); several ActionEvents with one
  ``llm_response_id`` share ``llm_call_id``; a ``finish`` tool call ends the run;
* ``ObservationEvent{observation{content, is_error, exit_code}, action_id, tool_name, tool_call_id}``
  -> ``tool_result``; ``UserRejectObservation`` -> rejected ``tool_result``;
  ``AgentErrorEvent`` -> error ``tool_result`` (or ``error`` when not tied to a call);
* condenser events -> ``system`` subtype ``context_compaction``; ``PauseEvent``,
  ``ConversationStateUpdateEvent`` and unknown kinds -> ``system`` with the kind as subtype.

``base_state.json`` (when present) goes to ``Trace.raw``: its ``id`` is the trace id, its
``agent.llm.model`` the model, its ``execution_status`` the termination when no ``finish`` call.

The same events exported in ONE file -- JSONL (one event per line) or a JSON array of events --
are read as one trace too; a bad line is a :class:`~mastkit.errors.TraceLoadError` and the rest
still loads.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
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
from mastkit.traces.model import Outcome, SourceRef, TerminatedBy, Termination, ToolCall, ToolResult, Trace
from mastkit.traces.registry import Importer, register
from mastkit.traces.source import Source

_EVENT_FILE = re.compile(r"^event-(\d+)-[^/]*\.json$")
_COMPACTION = frozenset(("Condensation", "CondensationSummaryEvent", "CondensationRequest"))
_STATUS: dict[str, tuple[str, TerminatedBy]] = {
    "finished": ("final_answer", "agent"),
    "error": ("error", "error"),
    "stuck": ("stuck", "harness"),
    "paused": ("user", "user"),
    "waiting_for_confirmation": ("awaiting_confirmation", "harness"),
    "idle": ("awaiting_user_input", "agent"),
}


def _event_files(folder: Path) -> list[Path]:
    """``event-NNNNN-<id>.json`` files of ``folder`` in event order (the name is checked before the
    file is stat'ed: most entries of a folder being walked are not event files)."""
    try:
        found = [
            (int(m.group(1)), p) for p in folder.iterdir() if (m := _EVENT_FILE.match(p.name)) and p.is_file()
        ]
    except OSError:
        return []
    return [p for _n, p in sorted(found, key=lambda np: (np[0], np[1].name))]


def _events_folder(folder: Path) -> Path | None:
    if _event_files(folder):
        return folder
    sub = folder / "events"
    if sub.is_dir() and _event_files(sub):
        return sub
    return None


_KINDS = frozenset(
    (
        "SystemPromptEvent",
        "MessageEvent",
        "ActionEvent",
        "ObservationEvent",
        "UserRejectObservation",
        "AgentErrorEvent",
        "PauseEvent",
        "ConversationStateUpdateEvent",
        *_COMPACTION,
    )
)


def _is_v1_event(rec: Any) -> bool:
    return isinstance(rec, dict) and rec.get("kind") in _KINDS and "source" in rec and "id" in rec


def _str(v: Any) -> str | None:
    if v is None:
        return None
    return v if isinstance(v, str) else dumps_text(v)


@register
class OpenHandsV1Importer(Importer):
    name = "openhands_v1"
    description = "OpenHands V1 SDK conversation folders (events/event-NNNNN-<id>.json)"
    handles_dirs = True
    handles_files = True  # exported events: one JSONL file or JSON array

    def sniff(self, src: Source) -> float:
        if not src.is_dir:
            if src.json_shape in ("jsonl", "array") and _is_v1_event(src.first_record):
                return 0.9
            return 0.0
        try:
            folder = _events_folder(src.path)
            if folder is None:
                return 0.0
            first = Source(_event_files(folder)[0]).first_record
        except Exception:
            return 0.0
        if (
            isinstance(first, dict)
            and isinstance(first.get("kind"), str)
            and "source" in first
            and "id" in first
        ):
            return 0.95
        return 0.0

    def load(self, src: Source) -> Iterator[Trace | TraceLoadError]:
        if not src.is_dir:
            yield from self._load_file(src)
            return
        folder = _events_folder(src.path)
        if folder is None:
            raise FormatError("no event-NNNNN-<id>.json files found")
        base_state: Any = None
        for candidate in (src.path / "base_state.json", folder.parent / "base_state.json"):
            if candidate.is_file():
                try:
                    base_state = Source(candidate).json
                except FormatError as exc:
                    yield TraceLoadError(candidate, f"base_state.json: {exc.reason}", line=exc.line)
                break
        state = base_state if isinstance(base_state, dict) else {}
        tid = state.get("id")
        b = TraceBuilder(self.name, src.path, trace_id=str(tid) if isinstance(tid, (str, int)) else None)
        model = None
        llm = state.get("agent", {}).get("llm") if isinstance(state.get("agent"), dict) else None
        if isinstance(llm, dict) and isinstance(llm.get("model"), str):
            model = llm["model"]
        ctx = _Ctx(model)
        paths: list[str] = []
        for path in _event_files(folder):
            paths.append(str(path))
            ref = source_ref(path=str(path), pointer="")
            try:
                doc = Source(path).json
            except FormatError as exc:
                yield TraceLoadError(path, exc.reason, line=exc.line, offset=exc.offset)
                continue
            self._event(b, doc, ref, ctx)
        fields = self._fields(ctx, state)
        fields["source_paths"] = [str(src.path), *paths]
        if base_state is not None:
            fields["raw"] = {"base_state": base_state}
        yield b.build(**fields)

    def _load_file(self, src: Source) -> Iterator[Trace | TraceLoadError]:
        """One exported events file: JSONL (one event per line) or a JSON array of events."""
        shape = src.json_shape
        if shape == "jsonl":
            records: Iterator[tuple[int, int, Any]] = src.iter_jsonl()
        elif shape == "array":
            records = src.iter_array()
        else:
            raise FormatError("not an OpenHands V1 conversation folder or events file")
        b = TraceBuilder(self.name, src.path)
        ctx = _Ctx(None)
        is_jsonl = shape == "jsonl"
        for pos, offset, doc in records:
            if isinstance(doc, FormatError):
                yield TraceLoadError(src.path, doc.reason, line=pos, offset=offset)
                continue
            ref = source_ref(line=pos, offset=offset) if is_jsonl else source_ref(pointer=f"/{pos}")
            self._event(b, doc, ref, ctx)
        if not b.events:
            raise FormatError("no OpenHands V1 events in the file")
        yield b.build(**self._fields(ctx, {}))

    def _fields(self, ctx: _Ctx, state: dict[str, Any]) -> dict[str, Any]:
        fields: dict[str, Any] = {"framework": "OpenHands", "model": ctx.model, "task": ctx.task}
        if ctx.started is not None:
            fields["started_at"], fields["ended_at"] = ctx.started, ctx.ended
        if ctx.finish_seq is not None:
            fields["termination"] = Termination(
                reason="final_answer", by="agent", native="finish", at_seq=ctx.finish_seq
            )
        else:
            status = state.get("execution_status")
            if isinstance(status, str) and status:
                reason, by = _STATUS.get(status, ("unknown", "unknown"))
                fields["termination"] = Termination(reason=reason, by=by, native=status)
        if ctx.final_output is not None:
            fields["outcome"] = Outcome(final_output=ctx.final_output)
        return fields

    def _event(self, b: TraceBuilder, e: Any, ref: SourceRef, ctx: _Ctx) -> None:
        if not isinstance(e, dict):  # kept as it is, marked
            b.add("message", content=dumps_text(e), source=ref, raw=e, extra={"unrecognised": True})
            return
        kind = _str(e.get("kind")) or "unknown"
        source = e.get("source")
        actor = source if isinstance(source, str) else None
        ts = parse_ts(e.get("timestamp"))
        if ts is not None:
            ctx.started = ctx.started or ts
            ctx.ended = ts
        common: dict[str, Any] = {"id": _str(e.get("id")), "started_at": ts, "source": ref}
        llm_call_id = _str(e.get("llm_response_id"))
        raw: Any = e
        if kind == "SystemPromptEvent":
            text = content_text(e.get("system_prompt"))
            tools = e.get("tools")
            b.add(
                "system", actor=actor, role="system", content=text, subtype="system_prompt", raw=raw, **common
            )
            if actor:
                b.agent(
                    actor,
                    system_prompt=text,
                    tools=tools if isinstance(tools, list) else None,
                    model=ctx.model,
                )
            return
        if kind == "MessageEvent":
            msg = e.get("llm_message") if isinstance(e.get("llm_message"), dict) else {}
            assert isinstance(msg, dict)
            role = msg.get("role")
            role = role if role in ("system", "user", "assistant", "tool") else None
            reasoning = _str(msg.get("reasoning_content"))
            if reasoning and reasoning.strip():
                b.add("reasoning", actor=actor, role=role, content=reasoning, llm_call_id=llm_call_id, model=ctx.model,
                      raw=raw, **common)  # fmt: skip
                raw = None
                common = {**common, "id": None}
            text = content_text(msg.get("content"))
            b.add("message", actor=actor, role=role, content=text, llm_call_id=llm_call_id,
                  model=ctx.model if source == "agent" else None, raw=raw, **common)  # fmt: skip
            if source == "user" and ctx.task is None:
                ctx.task = text
            return
        if kind == "ActionEvent":
            thought = content_text(e.get("thought")) or ""
            reasoning = _str(e.get("reasoning_content")) or ""
            text = "\n".join(t for t in (reasoning, thought) if t.strip())
            if text:
                b.add("reasoning", actor=actor, role="assistant", content=text, llm_call_id=llm_call_id,
                      model=ctx.model, raw=raw, **common)  # fmt: skip
                raw = None
            tc = e.get("tool_call") if isinstance(e.get("tool_call"), dict) else {}
            assert isinstance(tc, dict)
            name = _str(e.get("tool_name")) or _str(tc.get("name")) or "unknown"
            args, args_raw = parse_arguments(tc.get("arguments"))
            if args is None and args_raw is None:
                args, args_raw = parse_arguments(e.get("action"))
            extra = {k: e[k] for k in ("security_risk", "summary") if e.get(k) is not None}
            ev = b.add(
                "tool_call", actor=actor, role="assistant", llm_call_id=llm_call_id, model=ctx.model, raw=raw,
                tool_call=ToolCall(name=name, call_id=_str(e.get("tool_call_id")) or _str(tc.get("id")),
                                   arguments=args, arguments_raw=args_raw),
                extra=extra, **{**common, "id": _str(e.get("id"))},
            )  # fmt: skip
            if name == "finish":
                ctx.finish_seq = ev.seq
                action = e.get("action")
                msg_text = action.get("message") if isinstance(action, dict) else None
                ctx.final_output = msg_text if isinstance(msg_text, str) else None
            return
        if kind in ("ObservationEvent", "UserRejectObservation", "AgentErrorEvent"):
            call_id = _str(e.get("tool_call_id"))
            parent = _str(e.get("action_id"))
            if kind == "AgentErrorEvent" and call_id is None:
                b.add("error", actor=actor, content=_str(e.get("error")), parent_id=parent, raw=raw, **common)
                return
            obs = e.get("observation") if isinstance(e.get("observation"), dict) else {}
            assert isinstance(obs, dict)
            code = obs.get("exit_code")
            code = code if isinstance(code, int) and not isinstance(code, bool) else None
            if kind == "ObservationEvent":
                output = content_text(obs.get("content"))
                err = obs.get("is_error")
                is_error: bool | None = (
                    err if isinstance(err, bool) else (None if code is None else code != 0)
                )
                status = "timeout" if obs.get("timeout") is True else None
            elif kind == "UserRejectObservation":
                output, is_error, status = _str(e.get("rejection_reason")), True, "rejected"
            else:
                output, is_error, status = _str(e.get("error")), True, "error"
            b.add(
                "tool_result", actor=actor or "environment", role="tool", parent_id=parent, raw=raw,
                tool_result=ToolResult(call_id=call_id, name=_str(e.get("tool_name")), output=output,
                                       is_error=is_error, exit_code=code, status=status),
                **common,
            )  # fmt: skip
            return
        subtype = "context_compaction" if kind in _COMPACTION else kind
        content = _str(e.get("summary")) or _str(e.get("value")) or _str(e.get("key"))
        b.add("system", actor=actor, content=content, subtype=subtype, raw=raw, **common)


class _Ctx:
    def __init__(self, model: str | None) -> None:
        self.model = model
        self.task: str | None = None
        self.started: Any = None
        self.ended: Any = None
        self.finish_seq: int | None = None
        self.final_output: str | None = None
