"""OpenAI Codex CLI: session rollouts, ``codex exec --json`` streams and ITBench SRE workspaces.

Three inputs are read:

* **Rollout files** ``~/.codex/sessions/YYYY/MM/DD/rollout-<ts>-<uuid>.jsonl``: lines
  ``{timestamp, type, payload}`` with ``type`` one of ``session_meta`` (id, cwd, originator,
  cli_version, instructions / base_instructions, git, source), ``turn_context`` (model, effort,
  policies), ``response_item`` (the model-visible history: ``message``, ``reasoning``,
  ``function_call``/``function_call_output``, ``custom_tool_call``/``custom_tool_call_output``,
  ``local_shell_call``, ``web_search_call``, ``compaction``, ...), ``event_msg`` (UI/telemetry:
  ``user_message``/``agent_message``/``agent_reasoning`` mirrors, ``token_count``,
  ``task_started``/``task_complete``, ``turn_aborted``, ``error``, ``context_compacted``,
  ``exec_command_end``, ...) and ``compacted`` (``message``, ``replacement_history``). The legacy
  2025 layout (a bare ``{id, timestamp, instructions}`` header, then bare response items and
  ``{record_type: state}`` lines) is read too.
* **``codex exec --json`` stdout** (``thread.started``, ``turn.started``, ``turn.completed{usage}``,
  ``turn.failed``, ``item.started|updated|completed{item}``, ``error``): a lossier projection,
  used when no rollout is available.
* **ITBench SRE agent workspaces** (a folder, importer ``codex_workspace``): ``sessions/**/rollout-*.jsonl``
  (one trial may span several rollouts because the harness resumes the agent: they are ordered by
  the timestamp in the file name, ``segment`` = index, and history a resumed rollout replays is
  flagged ``is_copied_context``), ``AGENTS.md`` (system prompt), ``agent_output.json`` (the
  diagnosis: ``Outcome.final_output`` and a final ``artifact`` event), ``judge_output.json``
  (``Outcome.metrics`` = ``flat_scores``; ``score`` = root-cause entity recall; ``success`` when
  that recall reaches :data:`SUCCESS_RECALL` - ITBench's pass@1 criterion), ``traces/stdout.log``
  (the exec stream, used only when there is no rollout) and ``traces/traces.jsonl`` (Codex's OTLP
  log records, read by the ``otel_logs`` importer when there is neither).

Mapping: ``response_item`` is the event stream; ``event_msg`` mirrors of messages and reasoning are
dropped (counted in ``Trace.extra``) unless no response item carries the same text. A
``token_count`` closes one model call: its ``last_token_usage`` (or the delta of
``total_token_usage``) is put on the first event of the outputs that call produced, which share an
``llm_call_id``; ``info`` may be null (no usage, e.g. behind a LiteLLM proxy). Shell outputs that
are JSON ``{"output", "metadata": {"exit_code", "duration_seconds"}}`` give ``exit_code`` and
``duration_ms``. ``compacted`` -> ``system`` event ``context_compaction``. The last
``task_complete`` / ``turn_aborted`` / fatal error gives the termination.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from mastkit._util.jsonstream import iter_jsonl, open_lines
from mastkit.errors import FormatError, TraceLoadError
from mastkit.traces._build import (
    TraceBuilder,
    content_text,
    dumps_text,
    parse_arguments,
    parse_ts,
    source_ref,
    usage_from,
)
from mastkit.traces.model import Event, Outcome, SourceRef, Termination, ToolCall, ToolResult, Trace, Usage
from mastkit.traces.registry import Importer, get_importer, register
from mastkit.traces.source import Source

MAIN_ACTOR = "codex"
SUCCESS_RECALL = 1.0
"""ITBench counts a trial as passed (pass@1) when ``root_cause_entity`` scores exactly 1: every
ground-truth root cause was found. ``Outcome.score`` keeps the raw recall for other thresholds."""

_ROLLOUT_TYPES = {
    "session_meta", "response_item", "event_msg", "turn_context", "compacted",
    # 2026 rollouts (multi-agent v2, world state, security scoring)
    "inter_agent_communication", "inter_agent_communication_metadata", "world_state",
    "security_risk_score",
}  # fmt: skip
_TURN_STARTS = {"task_started", "turn_started"}
_INHERIT_SLACK_S = 2.0
"""A forked rollout's copy of the parent history is written at fork time; a line stamped later
than this after the child's own ``session_meta`` is the child's own work."""
_RESPONSE_TYPES = {
    "message", "reasoning", "function_call", "function_call_output", "custom_tool_call",
    "custom_tool_call_output", "local_shell_call", "web_search_call", "tool_search_call",
    "tool_search_output", "image_generation_call", "compaction", "compaction_summary",
}  # fmt: skip
_OUTPUT_TYPES = {
    "reasoning", "function_call", "custom_tool_call", "local_shell_call", "web_search_call",
    "tool_search_call", "image_generation_call",
}  # fmt: skip
_MIRRORS = {
    "user_message", "agent_message", "agent_reasoning", "agent_reasoning_raw_content",
    "agent_reasoning_section_break", "exec_command_end", "patch_apply_end", "mcp_tool_call_end",
    "web_search_end", "exec_command_begin", "mcp_tool_call_begin", "patch_apply_begin",
}  # fmt: skip
_EXEC_TYPES = {"thread.started", "session.created", "turn.started", "turn.completed", "turn.failed", "item.started",
               "item.updated", "item.completed", "error", "item.plan.delta", "request_user_input"}  # fmt: skip
_CONTEXT_PREFIXES = (
    ("<environment_context>", "environment_context"),
    ("<user_instructions>", "user_instructions"),
    ("# AGENTS.md instructions", "user_instructions"),
    ("<permissions instructions>", "developer_instructions"),
    ("<turn_aborted>", "turn_aborted_notice"),
)
_EXIT_LINE = re.compile(r"^(?:Exit code:|Process exited with code)\s*(-?\d+)", re.M)
_WALL_LINE = re.compile(r"^Wall time:\s*([0-9.]+)\s*s", re.M)
_ROLLOUT_NAME = re.compile(r"rollout-(\d{4}-\d{2}-\d{2}T\d{2}[-:]\d{2}[-:]\d{2})")


def _str(v: Any) -> str | None:
    return v if isinstance(v, str) and v else None


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _fingerprint(value: Any) -> bytes:
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        return repr(value).encode()


def _context_subtype(text: str | None) -> str | None:
    if not text:
        return None
    head = text.lstrip()
    for prefix, subtype in _CONTEXT_PREFIXES:
        if head.startswith(prefix):
            return subtype
    return None


def _tool_output(output: Any) -> tuple[str | None, int | None, float | None, bool | None, Any]:
    """(text, exit_code, duration_ms, success, metadata) from a function_call_output ``output``."""
    exit_code: int | None = None
    duration: float | None = None
    success: bool | None = None
    meta: Any = None
    if isinstance(output, dict):  # {"content": ..., "success": bool} in some versions
        success = output.get("success") if isinstance(output.get("success"), bool) else None
        output = output.get("content", output.get("output", output))
    if isinstance(output, str):
        text: str | None = output
        stripped = output.lstrip()
        parsed: Any = None
        if stripped.startswith("{") and ('"output"' in stripped or '"content"' in stripped):
            try:
                parsed = orjson.loads(output)
            except orjson.JSONDecodeError:
                parsed = None
        if isinstance(parsed, dict) and isinstance(parsed.get("content"), list) and "output" not in parsed:
            # an MCP CallToolResult: {"content": [{"type": "text", "text": ...}], "isError": bool}
            text = content_text(parsed["content"])
            err = parsed.get("isError", parsed.get("is_error"))
            success = (not err) if isinstance(err, bool) else success
        elif stripped.startswith("{") and '"output"' in stripped:
            if isinstance(parsed, dict) and "output" in parsed:
                text = content_text(parsed.get("output"))
                meta = parsed.get("metadata")
                if isinstance(meta, dict):
                    code = meta.get("exit_code")
                    exit_code = int(code) if isinstance(code, int) and not isinstance(code, bool) else None
                    secs = _num(meta.get("duration_seconds"))
                    duration = secs * 1000 if secs is not None else None
        else:  # "Exit code: 1\nWall time: ..." / "Process exited with code 0" text headers
            m = _EXIT_LINE.search(output[:2000])
            exit_code = int(m.group(1)) if m else None
            w = _WALL_LINE.search(output[:2000])
            duration = float(w.group(1)) * 1000 if w else None
        return text, exit_code, duration, success, meta
    if isinstance(output, list):
        return content_text(output), None, None, success, None
    return (None if output is None else dumps_text(output)), None, None, success, None


def _usage_delta(cur: dict[str, Any], prev: dict[str, Any] | None) -> Usage | None:
    if prev is None:
        return usage_from(cur)
    diff = {
        k: v - prev.get(k, 0)
        for k, v in cur.items()
        if isinstance(v, (int, float))
        and not isinstance(v, bool)
        and isinstance(prev.get(k, 0), (int, float))
    }
    return usage_from(diff)


def _minus(total: Usage, base: Usage) -> Usage:
    """``total - base`` field by field, or ``total`` when the counter did not continue from ``base``."""
    diff: dict[str, Any] = {}
    for f in Usage.model_fields:
        a, b = getattr(total, f), getattr(base, f)
        if a is not None and b is not None:
            if a < b:
                return total
            diff[f] = a - b
        else:
            diff[f] = a
    return Usage(**diff)


def _epoch(ts: datetime | None) -> float | None:
    """Seconds since the epoch (naive stamps read as UTC), or None when out of range."""
    if ts is None:
        return None
    try:
        return (ts if ts.tzinfo is not None else ts.replace(tzinfo=UTC)).timestamp()
    except (ValueError, OverflowError, OSError):
        return None


def _uuid7_ms(value: Any) -> int | None:
    """The millisecond timestamp of a UUIDv7 string (Codex thread and turn ids), else None."""
    if not isinstance(value, str) or len(value) != 36 or value[14] != "7":
        return None
    try:
        return int(value[:8] + value[9:13], 16)
    except ValueError:
        return None


def _thread_spawn(meta: dict[str, Any]) -> dict[str, Any]:
    """``source.subagent.thread_spawn`` of a session_meta (``subagent`` / ``sub_agent``), or {}."""
    source = meta.get("source")
    sub = source.get("subagent", source.get("sub_agent")) if isinstance(source, dict) else None
    spawn = sub.get("thread_spawn") if isinstance(sub, dict) else None
    return spawn if isinstance(spawn, dict) else {}


@dataclass
class _Group:
    """The outputs of one model call."""

    call_id: str
    first: int | None = None  # index in builder.events
    usage_set: bool = False


@dataclass
class _RolloutState:
    b: TraceBuilder
    errors: list[TraceLoadError] = field(default_factory=list)
    metas: list[dict[str, Any]] = field(default_factory=list)
    foreign_metas: list[dict[str, Any]] = field(default_factory=list)  # copied parent headers
    models: Counter[str] = field(default_factory=Counter)
    tool_names: dict[str, str] = field(default_factory=dict)
    exec_ends: dict[str, dict[str, Any]] = field(default_factory=dict)
    mirrors: Counter[str] = field(default_factory=Counter)
    other: list[dict[str, Any]] = field(default_factory=list)
    seen_items: set[bytes] = field(default_factory=set)  # response items of earlier segments
    groups: int = 0
    current: _Group | None = None
    last_group: _Group | None = None
    total_usage: Usage | None = None
    last_end: tuple[str, int] | None = None  # (kind of ending, seq)
    final_message: str | None = None
    first_task: str | None = None
    ending_native: dict[str, Any] | None = None


class _RolloutParser:
    """Reads one rollout file into the shared builder (one segment)."""

    def __init__(
        self,
        st: _RolloutState,
        path: Path,
        segment: int,
        *,
        show_path: bool,
        records: list[dict[str, Any]] | None = None,
    ) -> None:
        self.st = st
        self.path = path
        self.segment = segment
        self.show_path = show_path
        self.records = records  # the items of a codex-cli (TypeScript) ``{session, items}`` file
        self.model: str | None = None
        self.prev_total: dict[str, Any] | None = None
        self.seg_total: Usage | None = None
        self.replaying = segment > 0
        self.item_texts: set[str] = set()
        self.has_compacted = False
        self.actor = MAIN_ACTOR
        self.seg_items: set[bytes] = set()
        # forked / spawned sessions: the child's rollout starts with a copy of the parent's
        self.own_id: str | None = None
        self.own_ts: float | None = None
        self.inheriting = False
        self.parent_actor = MAIN_ACTOR  # who speaks in the copied parent history
        self.inherited_tokens: set[bytes] = set()
        self.inherited_total: Usage | None = None

    def _ref(self, line: int) -> SourceRef:
        if self.records is not None:
            return source_ref(pointer=f"/items/{line - 1}", path=str(self.path) if self.show_path else None)
        return source_ref(line=line, path=str(self.path) if self.show_path else None)

    def _records(self) -> Iterator[tuple[int, dict[str, Any]]]:
        if self.records is not None:
            for i, item in enumerate(self.records, start=1):
                if isinstance(item, dict):
                    yield i, item
                else:
                    self.st.errors.append(TraceLoadError(self.path, f"items[{i - 1}] is not an object"))
            return
        with open_lines(self.path) as fh:
            for line, offset, rec in iter_jsonl(fh):
                if isinstance(rec, FormatError):
                    self.st.errors.append(TraceLoadError(self.path, rec.reason, line=line, offset=offset))
                    continue
                if not isinstance(rec, dict):
                    self.st.errors.append(TraceLoadError(self.path, "line is not a JSON object", line=line))
                    continue
                yield line, rec

    @staticmethod
    def _normalise(rec: dict[str, Any], line: int) -> tuple[str, Any]:
        """(rollout type, payload); handles the legacy layout without ``payload``."""
        rtype = rec.get("type")
        if isinstance(rtype, str) and rtype in _ROLLOUT_TYPES and "payload" in rec:
            return rtype, rec["payload"]
        if isinstance(rtype, str) and rtype in _RESPONSE_TYPES:
            return "response_item", rec
        if rec.get("record_type") == "state":
            return "state", rec
        if line == 1 and "id" in rec and "timestamp" in rec and "type" not in rec:
            return "session_meta", rec
        return "unknown", rec

    def prescan(self) -> None:
        """First pass: texts of response items, to tell event_msg mirrors from unique messages."""
        for line, rec in self._records():
            rtype, payload = self._normalise(rec, line)
            if rtype == "compacted":
                self.has_compacted = True
            if rtype != "response_item" or not isinstance(payload, dict):
                continue
            ptype = payload.get("type")
            if ptype == "message":
                text = content_text(payload.get("content"))
                if text:
                    self.item_texts.add(text.strip())
            elif ptype == "reasoning":
                summary = payload.get("summary")
                for part in summary if isinstance(summary, list) else []:
                    if isinstance(part, dict) and isinstance(part.get("text"), str):
                        self.item_texts.add(part["text"].strip())

    def parse(self) -> None:
        n_errors = len(self.st.errors)
        self.prescan()
        del self.st.errors[n_errors:]  # the second pass reports them
        for line, rec in self._records():
            rtype, payload = self._normalise(rec, line)
            ts = parse_ts(rec.get("timestamp"))
            if not isinstance(payload, dict):
                self.st.errors.append(
                    TraceLoadError(self.path, f"{rtype} payload is not an object", line=line)
                )
                continue
            if self.inheriting and self._inheritance_ends(rtype, payload, ts):
                self.inheriting = False
            try:
                self._dispatch(rtype, payload, rec, line, ts)
            except (TypeError, ValueError, KeyError, AttributeError) as exc:
                reason = f"bad {rtype} record ({type(exc).__name__}: {exc})"
                self.st.errors.append(TraceLoadError(self.path, reason, line=line))
        if self.seg_total is not None and self.inherited_total is not None:
            self.seg_total = _minus(self.seg_total, self.inherited_total)
        if self.seg_total is not None:
            self.st.total_usage = (
                self.seg_total + self.st.total_usage if self.st.total_usage else self.seg_total
            )
        self.st.seen_items |= self.seg_items

    # -- records ---------------------------------------------------------------------

    def _inheritance_ends(self, rtype: str, p: dict[str, Any], ts: datetime | None) -> bool:
        """Whether this line is the first one of the child's own activity after the copied parent
        history of a forked / spawned rollout."""
        if rtype == "session_meta":
            return _str(p.get("id")) == self.own_id  # the child's own header again
        if rtype in ("inter_agent_communication", "inter_agent_communication_metadata"):
            return True  # the spawn message that starts the child's first turn
        if rtype in ("turn_context", "event_msg") and (
            rtype == "turn_context" or p.get("type") in _TURN_STARTS
        ):
            # UUIDv7 ids are time-ordered: a turn minted after the child thread is the child's
            turn_ms, own_ms = _uuid7_ms(p.get("turn_id")), _uuid7_ms(self.own_id)
            if turn_ms is not None and own_ms is not None and turn_ms >= own_ms:
                return True
        stamp = _epoch(ts)
        return stamp is None or (self.own_ts is not None and stamp > self.own_ts + _INHERIT_SLACK_S)

    def _dispatch(self, rtype: str, payload: dict[str, Any], rec: dict[str, Any], line: int, ts: Any) -> None:
        if rtype == "session_meta":
            self.session_meta(payload, line, ts)
        elif rtype == "inter_agent_communication":
            self.inter_agent(payload, rec, line, ts)
        elif rtype in ("inter_agent_communication_metadata", "world_state", "security_risk_score"):
            self._add(
                "system", rec, line, ts, actor="system", subtype=rtype, is_copied_context=self.inheriting
            )
        elif rtype == "turn_context":
            model = _str(payload.get("model"))
            if model and not self.inheriting:  # a copied parent turn ran the parent's model
                self.model = model
                self.st.models[model] += 1
        elif rtype == "response_item":
            self.response_item(payload, rec, line, ts)
        elif rtype == "event_msg":
            self.event_msg(payload, rec, line, ts)
        elif rtype == "compacted":
            self.replaying = False
            history = payload.get("replacement_history")
            self._add(
                "system",
                rec,
                line,
                ts,
                actor="system",
                role="system",
                subtype="context_compaction",
                content=_str(payload.get("message")),
                extra={"replacement_history_items": len(history)} if isinstance(history, list) else {},
            )
        else:
            entry: dict[str, Any] = {"line": line, "record": rec, "segment": self.segment}
            self.st.other.append(entry)

    def _add(self, kind: str, rec: Any, line: int, ts: Any, **fields: Any) -> Event:
        fields.setdefault("model", self.model if fields.get("role") == "assistant" else None)
        if self.inheriting:
            fields["is_copied_context"] = True
            if fields.get("actor") == self.actor:
                fields["actor"] = self.parent_actor
        ev = self.st.b.add(
            kind, source=self._ref(line), started_at=ts, segment=self.segment, raw=rec, **fields
        )
        return ev

    def session_meta(self, payload: dict[str, Any], line: int, ts: datetime | None) -> None:
        sid = _str(payload.get("id"))
        if self.own_id is not None and sid is not None and sid != self.own_id:
            # another thread's header inside this rollout: the copied history of the parent
            # session this one was forked / spawned from follows
            self.st.foreign_metas.append({**payload, "_segment": self.segment, "_line": line})
            self.inheriting = True
            self.parent_actor = _str(payload.get("agent_nickname")) or MAIN_ACTOR
            return
        first = self.own_id is None
        self.own_id = self.own_id or sid
        if first:
            self.own_ts = _epoch(ts)
        self.st.metas.append({**payload, "_segment": self.segment, "_line": line})
        spawn = _thread_spawn(payload)
        nick = (
            _str(payload.get("agent_nickname"))
            or _str(payload.get("agent_role"))
            or _str(spawn.get("agent_nickname"))
            or _str(spawn.get("agent_path"))
        )
        if nick:
            self.actor = nick
        base = payload.get("base_instructions")
        instructions = _str(payload.get("instructions")) or (
            _str(base.get("text")) if isinstance(base, dict) else None
        )
        if instructions:
            self.st.b.agent(self.actor, system_prompt=instructions)

    def inter_agent(self, p: dict[str, Any], rec: dict[str, Any], line: int, ts: Any) -> None:
        """A message between agents (multi-agent v2): ``author`` / ``recipient`` are agent paths."""
        self._close_group()
        author = _str(p.get("author")) or _str(p.get("author_path")) or "agent"
        recipients = [
            r
            for r in [p.get("recipient"), p.get("recipient_path"), *(p.get("other_recipients") or [])]
            if isinstance(r, str) and r
        ]
        ev = self._add(
            "message",
            rec,
            line,
            ts,
            actor=author,
            role="assistant",
            content=_str(p.get("content")),
            subtype="inter_agent_communication",
            recipients=recipients or None,
        )
        if isinstance(p.get("trigger_turn"), bool):
            ev.extra["trigger_turn"] = p["trigger_turn"]
        if self.st.first_task is None and not self.inheriting and ev.content:
            self.st.first_task = ev.content

    def _output_group(self) -> _Group:
        st = self.st
        if st.current is None:
            st.groups += 1
            st.current = _Group(call_id=f"call-{st.groups}")
        return st.current

    def _close_group(self) -> None:
        if self.st.current is not None and self.st.current.first is not None:
            self.st.last_group = self.st.current
        self.st.current = None

    def response_item(self, p: dict[str, Any], rec: dict[str, Any], line: int, ts: Any) -> None:
        st = self.st
        fp = _fingerprint(p)
        copied = False
        if self.replaying:
            if fp in st.seen_items:
                copied = True
            else:
                self.replaying = False
        copied = copied or self.inheriting
        self.seg_items.add(fp)
        ptype = p.get("type") if isinstance(p.get("type"), str) else None
        common: dict[str, Any] = {"is_copied_context": copied, "id": _str(p.get("id"))}
        if ptype in _OUTPUT_TYPES or (ptype == "message" and p.get("role") == "assistant"):
            group = None if copied else self._output_group()
            common.update(actor=self.actor, role="assistant", llm_call_id=group.call_id if group else None)
        else:
            group = None
            if not copied:
                self._close_group()
        ev: Event | None = None
        if ptype == "message":
            role = str(p.get("role") or "user")
            text = content_text(p.get("content"))
            if role == "assistant":
                ev = self._add("message", rec, line, ts, content=text, **common)
                phase = _str(p.get("phase"))
                if phase:
                    ev.extra["phase"] = phase
            else:
                canon = "system" if role in ("developer", "system") else "user"
                subtype = _context_subtype(text) or (
                    "developer_instructions" if role == "developer" else None
                )
                actor = "system" if canon == "system" or subtype else "user"
                ev = self._add(
                    "message", rec, line, ts, actor=actor, role=canon, content=text, subtype=subtype, **common
                )
                if canon == "user" and subtype is None and st.first_task is None and text and not copied:
                    st.first_task = text
        elif ptype == "reasoning":
            summ = p.get("summary")
            parts: list[Any] = summ if isinstance(summ, list) else []
            summary = "\n".join(
                x["text"] for x in parts if isinstance(x, dict) and isinstance(x.get("text"), str)
            )
            body = content_text(p.get("content")) if p.get("content") else None
            ev = self._add(
                "reasoning",
                rec,
                line,
                ts,
                content=summary or body or None,
                subtype=None if (summary or body) else "encrypted",
                **common,
            )
        elif ptype in ("function_call", "custom_tool_call", "tool_search_call"):
            name = str(p.get("name") or ptype)
            call = _str(p.get("call_id")) or _str(p.get("id"))
            if ptype == "custom_tool_call":
                raw_in = p.get("input")
                args: Any = raw_in
                raw_args: str | None = raw_in if isinstance(raw_in, str) else dumps_text(raw_in)
            else:
                args, raw_args = parse_arguments(p.get("arguments"))
            namespace = _str(p.get("namespace"))
            if namespace is None and name.startswith("mcp__") and name.count("__") >= 2:
                namespace = name.split("__")[1]
            if call:
                st.tool_names[call] = name
            ev = self._add(
                "tool_call",
                rec,
                line,
                ts,
                tool_call=ToolCall(
                    name=name, call_id=call, arguments=args, arguments_raw=raw_args, namespace=namespace
                ),
                subtype=None if ptype == "function_call" else ptype,
                **common,
            )
        elif ptype == "local_shell_call":
            act = p.get("action")
            action: dict[str, Any] = act if isinstance(act, dict) else {}
            cmd = action.get("command")
            call = _str(p.get("call_id")) or _str(p.get("id"))
            if call:
                st.tool_names[call] = "shell"
            ev = self._add(
                "tool_call",
                rec,
                line,
                ts,
                tool_call=ToolCall(
                    name="shell",
                    call_id=call,
                    arguments=action or None,
                    arguments_raw=" ".join(str(c) for c in cmd) if isinstance(cmd, list) else _str(cmd),
                ),
                subtype="local_shell_call",
                **common,
            )
        elif ptype == "web_search_call":
            search = p.get("action")
            ev = self._add(
                "tool_call",
                rec,
                line,
                ts,
                tool_call=ToolCall(
                    name="web_search",
                    call_id=_str(p.get("id")),
                    arguments=search,
                    arguments_raw=dumps_text(search) if search is not None else None,
                ),
                subtype="web_search_call",
                **common,
            )
        elif ptype in ("function_call_output", "custom_tool_call_output", "tool_search_output"):
            call = _str(p.get("call_id"))
            out = p.get("output", p.get("tools"))
            text, code, duration, success, _meta = _tool_output(out)
            end = st.exec_ends.get(call or "")
            if end is not None and code is None and isinstance(end.get("exit_code"), int):
                code = end["exit_code"]
            is_error = (code != 0) if code is not None else (not success if success is not None else None)
            status = _str(p.get("status"))
            ev = self._add(
                "tool_result",
                rec,
                line,
                ts,
                actor="environment",
                role="tool",
                tool_result=ToolResult(
                    call_id=call,
                    name=st.tool_names.get(call or "") or _str(p.get("name")),
                    output=text,
                    is_error=is_error,
                    exit_code=code,
                    duration_ms=duration,
                    status=status,
                ),
                subtype=None if ptype == "function_call_output" else ptype,
                is_copied_context=copied,
            )
        elif ptype in ("compaction", "compaction_summary"):
            ev = self._add(
                "system",
                rec,
                line,
                ts,
                actor="system",
                role="system",
                subtype="context_compaction",
                content=None,
                is_copied_context=copied,
            )
        else:
            ev = self._add(
                "system",
                rec,
                line,
                ts,
                actor="system",
                subtype=f"response_item:{ptype}",
                is_copied_context=copied,
            )
        if group is not None and group.first is None and ev is not None:
            group.first = ev.seq

    def event_msg(self, p: dict[str, Any], rec: dict[str, Any], line: int, ts: Any) -> None:
        st = self.st
        etype = str(p.get("type") or "")
        fp = _fingerprint(p)
        replayed = self.replaying and fp in st.seen_items
        self.seg_items.add(fp)
        if etype in _MIRRORS:
            if etype in ("exec_command_end", "mcp_tool_call_end") and _str(p.get("call_id")):
                st.exec_ends[p["call_id"]] = p
            text = _str(p.get("message")) or _str(p.get("text"))
            mirrored = etype not in ("user_message", "agent_message", "agent_reasoning") or (
                text is not None and text.strip() in self.item_texts
            )
            if mirrored or text is None:
                st.mirrors[etype] += 1
                return
            if etype == "user_message":
                self._close_group()
                self._add(
                    "message", rec, line, ts, actor="user", role="user", content=text, subtype="event_msg"
                )
                if st.first_task is None and _context_subtype(text) is None and not self.inheriting:
                    st.first_task = text
            else:
                group = self._output_group()
                ev = self._add(
                    "message" if etype == "agent_message" else "reasoning",
                    rec,
                    line,
                    ts,
                    actor=self.actor,
                    role="assistant",
                    content=text,
                    subtype="event_msg",
                    llm_call_id=group.call_id,
                )
                if group.first is None:
                    group.first = ev.seq
            return
        if replayed and etype in ("token_count", "task_started", "turn_started", "task_complete"):
            st.mirrors["replayed_" + etype] += 1
            return
        if etype == "token_count" and (self.inheriting or fp in self.inherited_tokens):
            # the parent's usage (or the child re-announcing it): not this session's work
            self.inherited_tokens.add(fp)
            info = p.get("info")
            total = info.get("total_token_usage") if isinstance(info, dict) else None
            if isinstance(total, dict):
                self.prev_total = total
                self.inherited_total = usage_from(total)
            st.mirrors["inherited_token_count"] += 1
            self._close_group()
            st.last_group = None
            return
        if etype == "token_count":
            self.token_count(p, rec)
        elif etype in ("task_started", "turn_started"):
            self._close_group()
            self._add("system", rec, line, ts, actor="system", subtype="turn_started")
        elif etype in ("task_complete", "turn_complete"):
            self._close_group()
            last = _str(p.get("last_agent_message"))
            ev = self._add("system", rec, line, ts, actor="system", subtype="turn_complete", content=last)
            if not self.inheriting:
                st.last_end = ("complete", ev.seq)
                st.final_message = last
                st.ending_native = p
        elif etype == "turn_aborted":
            self._close_group()
            ev = self._add(
                "system", rec, line, ts, actor="system", subtype="turn_aborted", content=_str(p.get("reason"))
            )
            if not self.inheriting:
                st.last_end = ("aborted", ev.seq)
                st.ending_native = p
        elif etype in ("error", "stream_error"):
            ev = self._add(
                "error", rec, line, ts, actor="system", subtype=etype, content=_str(p.get("message"))
            )
            if etype == "error" and not self.inheriting:
                st.last_end = ("error", ev.seq)
                st.ending_native = p
        elif etype == "context_compacted":
            if not self.has_compacted:
                self._add("system", rec, line, ts, actor="system", subtype="context_compaction")
            else:
                st.mirrors[etype] += 1
        elif (
            etype == "item_completed"
            and isinstance(p.get("item"), dict)
            and p["item"].get("type")
            in (
                "plan",
                "Plan",
            )
        ):
            self._add("plan", rec, line, ts, actor=self.actor, content=content_text(p["item"]))
        else:
            self._add("system", rec, line, ts, actor="system", subtype=etype or "event_msg")

    def token_count(self, p: dict[str, Any], rec: dict[str, Any]) -> None:
        st = self.st
        info = p.get("info")
        usage: Usage | None = None
        if isinstance(info, dict):
            last = info.get("last_token_usage")
            total = info.get("total_token_usage")
            if isinstance(last, dict):
                usage = usage_from(last)
            elif isinstance(total, dict):
                usage = _usage_delta(total, self.prev_total)
            if isinstance(total, dict):
                self.prev_total = total
                self.seg_total = usage_from(total)
        elif "input_tokens" in p or "output_tokens" in p:  # older flat layout
            usage = usage_from(p)
        target = st.current if st.current is not None and st.current.first is not None else st.last_group
        if target is not None and not target.usage_set and target.first is not None:
            ev = st.b.events[target.first]
            ev.usage = usage
            ev.extra["token_count"] = rec
            target.usage_set = True
        else:
            st.mirrors["token_count_unattached"] += 1
        self._close_group()
        st.last_group = None


def _rollout_trace(
    importer_name: str,
    paths: list[Path],
    *,
    source_path: Path,
    trace_id: str | None,
) -> tuple[TraceBuilder, _RolloutState]:
    b = TraceBuilder(importer_name, source_path, trace_id=trace_id)
    st = _RolloutState(b=b)
    for i, path in enumerate(paths):
        _RolloutParser(st, path, i, show_path=len(paths) > 1 or path != source_path).parse()
    return b, st


def _ending(st: _RolloutState) -> Termination | None:
    if st.last_end is None:
        return None
    kind, seq = st.last_end
    native = st.ending_native or {}
    if kind == "complete":
        return Termination(reason="completed", by="agent", native="task_complete", at_seq=seq)
    if kind == "aborted":
        why = _str(native.get("reason")) or "unknown"
        by = "user" if why == "interrupted" else "harness"
        return Termination(reason="aborted", by=by, native=f"turn_aborted:{why}", at_seq=seq)
    return Termination(reason="error", by="error", native="error", at_seq=seq)


def _trace_fields(st: _RolloutState) -> dict[str, Any]:
    meta = st.metas[0] if st.metas else {}
    fields: dict[str, Any] = {
        "framework": "codex",
        "framework_version": _str(meta.get("cli_version")),
        "model": st.models.most_common(1)[0][0] if st.models else None,
        "task": st.first_task,
        "usage": st.total_usage,
        "termination": _ending(st),
    }
    if st.final_message is not None:
        fields["outcome"] = Outcome(final_output=st.final_message)
    stamps = [e.started_at for e in st.b.events if e.started_at is not None]
    start = parse_ts(meta.get("timestamp"))
    fields["started_at"] = start or (stamps[0] if stamps else None)
    fields["ended_at"] = stamps[-1] if stamps else None
    raw: dict[str, Any] = {}
    if st.metas:
        raw["session_meta"] = st.metas if len(st.metas) > 1 else st.metas[0]
    if st.other:
        raw["records"] = st.other
    fields["raw"] = raw or None
    extra: dict[str, Any] = {}
    for key in ("cwd", "originator", "model_provider", "source", "git", "forked_from_id", "agent_nickname",
                "agent_role", "agent_path", "parent_thread_id", "thread_source"):  # fmt: skip
        if meta.get(key) is not None:
            extra[key] = meta[key]
    spawn = _thread_spawn(meta)
    if _str(spawn.get("parent_thread_id")):
        extra.setdefault("parent_thread_id", spawn["parent_thread_id"])
    for key in ("depth", "agent_path", "agent_nickname", "agent_role"):
        if spawn.get(key) is not None:
            extra.setdefault("subagent_depth" if key == "depth" else key, spawn[key])
    if st.foreign_metas:
        raw["inherited_session_meta"] = st.foreign_metas
        fields["raw"] = raw
        extra["inherited_events"] = sum(e.is_copied_context for e in st.b.events)
    if st.mirrors:
        extra["mirrored_event_msgs"] = dict(st.mirrors)
    fields["extra"] = extra
    return fields


def _is_rollout_record(rec: Any, name: str) -> float:
    if not isinstance(rec, dict):
        return 0.0
    rtype = rec.get("type") if isinstance(rec.get("type"), str) else None
    if rtype in _ROLLOUT_TYPES and isinstance(rec.get("payload"), dict) and "timestamp" in rec:
        return 0.95
    if name.startswith("rollout-") and ("instructions" in rec or rtype in _RESPONSE_TYPES) and "id" in rec:
        return 0.85
    return 0.0


@register
class CodexImporter(Importer):
    name = "codex"
    description = (
        "Codex CLI rollout JSONL (~/.codex/sessions, also the early TypeScript CLI's JSON) and "
        "`codex exec --json` event streams of every version"
    )

    def sniff(self, src: Source) -> float:
        if src.json_shape not in ("jsonl", "object"):
            return 0.0
        rec = src.first_record
        score = _is_rollout_record(rec, src.name)
        if score:
            return score
        if isinstance(rec, dict) and rec.get("type") == "thread.started" and "thread_id" in rec:
            return 0.95
        if isinstance(rec, dict) and rec.get("type") == "session.created" and "session_id" in rec:
            return 0.85  # codex exec --experimental-json (0.4x); OpenAI Realtime has no session_id
        if isinstance(rec, dict) and rec.get("type") in ("turn.started", "item.completed", "item.started"):
            return 0.7
        if _is_ts_rollout(rec):
            return 0.9 if src.name.startswith("rollout-") else 0.5
        return _legacy_exec_score(rec, src.head)

    def load(self, src: Source) -> Iterator[Trace | TraceLoadError]:
        if src.is_dir:
            raise FormatError("is a folder; give a rollout .jsonl file")
        rec = src.first_record
        if isinstance(rec, dict) and isinstance(rec.get("type"), str) and rec["type"] in _EXEC_TYPES:
            yield from load_exec_stream(self.name, src.path, trace_id=None)
            return
        if src.json_shape == "object" and _is_ts_rollout(rec):
            yield from _load_ts_rollout(self.name, src.path, rec)
            return
        if src.json_shape == "jsonl" and _legacy_exec_score(rec, src.head):
            yield from load_legacy_exec(self.name, src.path)
            return
        if not _is_rollout_record(rec, src.name) and not (
            isinstance(rec, dict) and "id" in rec and "timestamp" in rec
        ):
            raise FormatError("not a Codex rollout: first line is not {timestamp, type, payload}")
        b, st = _rollout_trace(self.name, [src.path], source_path=src.path, trace_id=None)
        if not b.events and not st.metas:
            yield from st.errors
            raise FormatError("no Codex rollout records found")
        meta = st.metas[0] if st.metas else {}
        if _str(meta.get("id")):
            b.trace_id = meta["id"]
        yield from st.errors
        yield b.build(**_trace_fields(st))


# -- codex-cli (TypeScript, 2025) rollout JSON ----------------------------------------


def _is_ts_rollout(rec: Any) -> bool:
    """``{"session": {timestamp, id, instructions}, "items": [ResponseItem]}``: what the TypeScript
    codex-cli (0.1.x, spring 2025) wrote to ``~/.codex/sessions/rollout-<date>-<uuid>.json``."""
    if not isinstance(rec, dict) or not isinstance(rec.get("items"), list):
        return False
    session = rec.get("session")
    return (
        isinstance(session, dict)
        and "id" in session
        and ("timestamp" in session or "instructions" in session)
    )


def _load_ts_rollout(importer_name: str, path: Path, doc: dict[str, Any]) -> Iterator[Trace | TraceLoadError]:
    session: dict[str, Any] = doc["session"]
    b = TraceBuilder(importer_name, path, trace_id=_str(session.get("id")))
    st = _RolloutState(b=b)
    parser = _RolloutParser(st, path, 0, show_path=False, records=doc["items"])
    parser.session_meta(session, 0, parse_ts(session.get("timestamp")))
    for i, item in parser._records():
        try:
            parser.response_item(item, item, i, None)
        except (TypeError, ValueError, KeyError, AttributeError) as exc:
            reason = f"bad items[{i - 1}] ({type(exc).__name__}: {exc})"
            st.errors.append(TraceLoadError(path, reason))
    fields = _trace_fields(st)
    fields["extra"]["source"] = "codex-cli rollout json"
    if not b.events:
        yield from st.errors
        raise FormatError("codex-cli rollout has no items")
    yield from st.errors
    yield b.build(**fields)


# -- codex exec --json of Codex 0.1x-0.3x: {"id", "msg": EventMsg} lines ---------------

_CONFIG_KEYS = ("sandbox", "approval", "reasoning effort", "reasoning summaries", "workdir", "provider")
_LEGACY_EVENTS = _MIRRORS | {
    "session_configured", "task_started", "task_complete", "turn_started", "turn_complete",
    "turn_aborted", "token_count", "error", "stream_error", "background_event",
    "agent_message_delta", "agent_reasoning_delta", "mcp_list_tools_response", "web_search_begin",
}  # fmt: skip
"""Codex protocol event types a legacy stream can open with (when its config / prompt lines are
missing, e.g. ``codex proto`` output): any other ``{"id", "msg": {"type"}}`` line is not Codex's."""


def _legacy_exec_score(rec: Any, head: bytes = b"") -> float:
    """The old ``codex exec --json`` stdout: a config summary object, ``{"prompt": ...}``, then every
    protocol event as ``{"id": <submission id>, "msg": {"type": ..., ...}}``."""
    if not isinstance(rec, dict) or "type" in rec:
        return 0.0
    msg = rec.get("msg")
    if isinstance(msg, dict) and msg.get("type") in _LEGACY_EVENTS and "id" in rec:
        return 0.75
    if "model" in rec and sum(k in rec for k in _CONFIG_KEYS) >= 2:
        return 0.8
    if set(rec) == {"prompt"} and isinstance(rec["prompt"], str) and b'"msg"' in head:
        return 0.5  # the config line cut off; a bare list of prompts is not a Codex stream
    return 0.0


def load_legacy_exec(importer_name: str, path: Path) -> Iterator[Trace | TraceLoadError]:
    """Read the ``{"id", "msg"}`` event stream of ``codex exec --json`` (Codex 0.1x-0.3x)."""
    b = TraceBuilder(importer_name, path, trace_id=None)
    errors: list[TraceLoadError] = []
    config: dict[str, Any] = {}
    calls: dict[str, Event] = {}  # call_id -> tool_call event
    skipped: Counter[str] = Counter()
    task: str | None = None
    model: str | None = None
    final: str | None = None
    ending: Termination | None = None
    total: Usage | None = None
    group_first: int | None = None  # first event since the last token_count
    group_n = 1
    session_id: str | None = None
    with open_lines(path) as fh:
        for line, offset, rec in iter_jsonl(fh):
            if isinstance(rec, FormatError):
                errors.append(TraceLoadError(path, rec.reason, line=line, offset=offset))
                continue
            if not isinstance(rec, dict):
                errors.append(TraceLoadError(path, "line is not a JSON object", line=line))
                continue
            ref = source_ref(line=line)
            msg = rec.get("msg")
            if not isinstance(msg, dict):
                if isinstance(rec.get("prompt"), str):
                    task = task or rec["prompt"]
                    b.add("message", actor="user", role="user", content=rec["prompt"], source=ref, raw=rec)
                elif "model" in rec or any(k in rec for k in _CONFIG_KEYS):
                    config.update(rec)
                    model = _str(rec.get("model")) or model
                else:
                    errors.append(TraceLoadError(path, "line has no 'msg' event object", line=line))
                continue
            mtype = str(msg.get("type") or "")
            if mtype.endswith("_delta"):
                skipped[mtype] += 1  # streaming fragments of a later complete event
                continue
            call_id = _str(msg.get("call_id"))
            assistant: dict[str, Any] = {
                "actor": MAIN_ACTOR, "role": "assistant", "model": model, "llm_call_id": f"call-{group_n}",
            }  # fmt: skip
            common: dict[str, Any] = {"source": ref, "raw": rec}
            ev: Event | None = None
            if mtype == "session_configured":
                session_id = session_id or _str(msg.get("session_id"))
                model = _str(msg.get("model")) or model
                b.add("system", actor="system", subtype=mtype, **common)
            elif mtype == "agent_message":
                final = _str(msg.get("message"))
                ev = b.add("message", content=final, **assistant, **common)
            elif mtype in ("agent_reasoning", "agent_reasoning_raw_content"):
                ev = b.add("reasoning", content=_str(msg.get("text")), **assistant, **common)
            elif mtype == "user_message":
                text = _str(msg.get("message"))
                task = task or text
                b.add("message", actor="user", role="user", content=text, **common)
            elif mtype in (
                "exec_command_begin",
                "patch_apply_begin",
                "mcp_tool_call_begin",
                "web_search_begin",
            ):
                name, args, raw_args, namespace = _legacy_call(mtype, msg)
                ev = b.add(
                    "tool_call",
                    tool_call=ToolCall(
                        name=name,
                        call_id=call_id,
                        arguments=args,
                        arguments_raw=raw_args,
                        namespace=namespace,
                    ),
                    subtype=mtype,
                    **assistant,
                    **common,
                )
                if call_id:
                    calls[call_id] = ev
            elif mtype in ("exec_command_end", "patch_apply_end", "mcp_tool_call_end", "web_search_end"):
                begin = calls.get(call_id or "")
                b.add(
                    "tool_result",
                    actor="environment",
                    role="tool",
                    tool_result=_legacy_result(mtype, msg, call_id, begin),
                    subtype=mtype,
                    **common,
                )
            elif mtype == "token_count":
                info = msg.get("info")
                usage = usage_from(info.get("last_token_usage") if isinstance(info, dict) else msg)
                if usage is not None:
                    total = usage if total is None else total + usage
                    if group_first is not None and b.events[group_first].usage is None:
                        b.events[group_first].usage = usage
                    else:
                        skipped["token_count_unattached"] += 1
                group_first = None
                group_n += 1
            elif mtype in ("task_started", "turn_started"):
                b.add("system", actor="system", subtype="turn_started", **common)
            elif mtype in ("task_complete", "turn_complete"):
                last = _str(msg.get("last_agent_message"))
                final = last or final
                ev_end = b.add("system", actor="system", subtype="turn_complete", content=last, **common)
                ending = Termination(reason="completed", by="agent", native=mtype, at_seq=ev_end.seq)
            elif mtype == "turn_aborted":
                why = _str(msg.get("reason")) or "unknown"
                ev_end = b.add("system", actor="system", subtype=mtype, content=why, **common)
                by = "user" if why == "interrupted" else "harness"
                ending = Termination(reason="aborted", by=by, native=f"turn_aborted:{why}", at_seq=ev_end.seq)
            elif mtype in ("error", "stream_error"):
                ev_err = b.add(
                    "error", actor="system", subtype=mtype, content=_str(msg.get("message")), **common
                )
                if mtype == "error":
                    ending = Termination(reason="error", by="error", native="error", at_seq=ev_err.seq)
            else:
                b.add("system", actor="system", subtype=mtype or "event", **common)
            if ev is not None and group_first is None:
                group_first = ev.seq
    if not b.events:
        yield from errors
        raise FormatError("no codex exec events found")
    if session_id:
        b.trace_id = session_id
    extra: dict[str, Any] = {"source": "codex exec --json (legacy)"}
    if skipped:
        extra["skipped_events"] = dict(skipped)
    yield from errors
    yield b.build(
        framework="codex",
        model=model,
        task=task,
        termination=ending,
        outcome=Outcome(final_output=final) if final is not None else None,
        usage=total,
        raw={"config": config} if config else None,
        extra=extra,
    )


def _legacy_call(mtype: str, msg: dict[str, Any]) -> tuple[str, Any, str | None, str | None]:
    """(name, arguments, arguments_raw, namespace) of a legacy ``*_begin`` event."""
    if mtype == "exec_command_begin":
        cmd = msg.get("command")
        raw = " ".join(str(c) for c in cmd) if isinstance(cmd, list) else _str(cmd)
        return "shell", {"command": cmd, "cwd": msg.get("cwd")}, raw, None
    if mtype == "patch_apply_begin":
        changes = msg.get("changes")
        return "apply_patch", {"changes": changes}, dumps_text(changes), None
    if mtype == "web_search_begin":
        query = msg.get("query")
        return "web_search", {"query": query}, _str(query), None
    inv = msg.get("invocation")
    inv = inv if isinstance(inv, dict) else {}
    args, raw_args = parse_arguments(inv.get("arguments"))
    return str(inv.get("tool") or "mcp_tool"), args, raw_args, _str(inv.get("server"))


def _legacy_result(mtype: str, msg: dict[str, Any], call_id: str | None, begin: Event | None) -> ToolResult:
    name = begin.tool_call.name if begin is not None and begin.tool_call is not None else None
    if mtype == "exec_command_end":
        code = msg.get("exit_code")
        code = code if isinstance(code, int) and not isinstance(code, bool) else None
        text = (
            _str(msg.get("aggregated_output"))
            or _str(msg.get("formatted_output"))
            or "\n".join(x for x in (_str(msg.get("stdout")), _str(msg.get("stderr"))) if x)
        )
        return ToolResult(
            call_id=call_id, name=name or "shell", output=text, exit_code=code,
            is_error=(code != 0) if code is not None else None, duration_ms=_duration_ms(msg.get("duration")),
        )  # fmt: skip
    if mtype == "patch_apply_end":
        ok = msg.get("success")
        text = "\n".join(x for x in (_str(msg.get("stdout")), _str(msg.get("stderr"))) if x)
        return ToolResult(
            call_id=call_id, name=name or "apply_patch", output=text,
            is_error=(not ok) if isinstance(ok, bool) else None,
        )  # fmt: skip
    if mtype == "web_search_end":
        return ToolResult(call_id=call_id, name=name or "web_search", output=_str(msg.get("query")))
    result = msg.get("result")
    out: str | None = None
    is_error: bool | None = None
    if isinstance(result, dict) and ("Ok" in result or "Err" in result):  # Rust Result<_, String>
        if "Err" in result:
            out, is_error = dumps_text(result["Err"]), True
            result = None
        else:
            result = result["Ok"]
    if isinstance(result, dict):
        out = content_text(result.get("content"))
        err = result.get("isError", result.get("is_error"))
        is_error = err if isinstance(err, bool) else is_error
    return ToolResult(
        call_id=call_id,
        name=name,
        output=out,
        is_error=is_error,
        duration_ms=_duration_ms(msg.get("duration")),
    )


def _duration_ms(d: Any) -> float | None:
    """A Rust ``Duration`` (``{"secs", "nanos"}``) or a number of seconds, in milliseconds."""
    if isinstance(d, dict) and isinstance(d.get("secs"), (int, float)):
        nanos = d.get("nanos")
        return float(d["secs"]) * 1000 + (float(nanos) / 1e6 if isinstance(nanos, (int, float)) else 0.0)
    secs = _num(d)
    return secs * 1000 if secs is not None else None


# -- codex exec --json -------------------------------------------------------------


def load_exec_stream(
    importer_name: str, path: Path, *, trace_id: str | None
) -> Iterator[Trace | TraceLoadError]:
    """Read a ``codex exec --json`` stdout stream into one trace."""
    b = TraceBuilder(importer_name, path, trace_id=trace_id)
    items: dict[str, tuple[int, dict[str, Any], int, int]] = {}  # id -> (order, item, line, turn)
    turn_events: list[tuple[int, str, dict[str, Any], int]] = []  # (order, kind, rec, line)
    order = 0
    turn = 0
    errors: list[TraceLoadError] = []
    thread: str | None = None
    usages: dict[int, Usage | None] = {}
    with open_lines(path) as fh:
        for line, offset, rec in iter_jsonl(fh):
            if isinstance(rec, FormatError):
                errors.append(TraceLoadError(path, rec.reason, line=line, offset=offset))
                continue
            if not isinstance(rec, dict) or not isinstance(rec.get("type"), str):
                errors.append(TraceLoadError(path, "line is not a codex exec event", line=line))
                continue
            etype = rec["type"]
            order += 1
            if etype in ("thread.started", "session.created"):  # session.created: exec 0.4x
                thread = _str(rec.get("thread_id")) or _str(rec.get("session_id")) or thread
            elif etype == "turn.started":
                turn += 1
                turn_events.append((order, "turn.started", rec, line))
            elif etype in ("item.started", "item.updated", "item.completed"):
                item = rec.get("item")
                if not isinstance(item, dict):
                    errors.append(TraceLoadError(path, f"{etype} without an item object", line=line))
                    continue
                iid = str(item.get("id") or f"line{line}")
                first = items[iid][0] if iid in items else order
                items[iid] = (first, {**item, "_event": etype}, line, turn)
            elif etype == "turn.completed":
                usages[turn] = usage_from(rec.get("usage"))
                turn_events.append((order, etype, rec, line))
            elif etype in ("turn.failed", "error"):
                turn_events.append((order, etype, rec, line))
    if not items and not turn_events and thread is None:
        yield from errors
        raise FormatError("no codex exec events found")
    stream: list[tuple[int, str, dict[str, Any], int, int]] = [
        (o, "item", it, ln, tn) for o, it, ln, tn in items.values()
    ]
    stream += [(o, k, r, ln, 0) for o, k, r, ln in turn_events]
    stream.sort(key=lambda x: x[0])
    usage_done: set[int] = set()
    ending: tuple[str, int, str | None] | None = None
    final: str | None = None
    for _o, kind, rec, line, tn in stream:
        ref = source_ref(line=line)
        if kind == "item":
            head = _exec_item(b, rec, ref, f"turn-{tn}")
            if head is not None and tn not in usage_done and usages.get(tn) is not None:
                head.usage = usages[tn]
                head.extra["usage_scope"] = "turn"
                usage_done.add(tn)
            if _item_type(rec) in ("agent_message", "assistant_message") and isinstance(rec.get("text"), str):
                final = rec["text"]
        elif kind == "turn.started":
            b.add("system", actor="system", subtype="turn_started", source=ref, raw=rec)
        elif kind == "turn.completed":
            ev = b.add("system", actor="system", subtype="turn_complete", source=ref, raw=rec)
            ending = ("complete", ev.seq, None)
        else:
            err = rec.get("error") if isinstance(rec.get("error"), dict) else rec
            msg = _str(err.get("message")) if isinstance(err, dict) else None
            ev = b.add("error", actor="system", subtype=kind, content=msg, source=ref, raw=rec)
            ending = ("error", ev.seq, kind)
    term = None
    if ending is not None:
        if ending[0] == "complete":
            term = Termination(reason="completed", by="agent", native="turn.completed", at_seq=ending[1])
        else:
            term = Termination(reason="error", by="error", native=ending[2], at_seq=ending[1])
    if thread:
        b.trace_id = thread
    total = None
    for u in usages.values():
        if u is not None:
            total = u if total is None else total + u
    yield from errors
    yield b.build(
        framework="codex",
        termination=term,
        outcome=Outcome(final_output=final) if final is not None else None,
        usage=total,
        extra={"source": "codex exec --json"},
    )


def _item_type(item: dict[str, Any]) -> str | None:
    """An exec item's type: ``type``, or ``item_type`` in the exec JSON of Codex 0.4x."""
    itype = item.get("type", item.get("item_type"))
    return itype if isinstance(itype, str) else None


def _exec_item(b: TraceBuilder, item: dict[str, Any], ref: SourceRef, call_id: str) -> Event | None:
    itype = _item_type(item)
    common: dict[str, Any] = {"source": ref, "id": _str(item.get("id")), "raw": item}
    assistant = {"actor": MAIN_ACTOR, "role": "assistant", "llm_call_id": call_id}
    status = _str(item.get("status"))

    def tool_call(call: ToolCall) -> Event:
        return b.add("tool_call", tool_call=call, **assistant, **common)

    def tool_result(result: ToolResult) -> None:
        b.add("tool_result", actor="environment", role="tool", source=ref, tool_result=result)

    if itype in ("agent_message", "assistant_message"):
        return b.add("message", content=_str(item.get("text")), **assistant, **common)
    if itype == "reasoning":
        return b.add("reasoning", content=_str(item.get("text")), **assistant, **common)
    if itype in ("todo_list", "plan"):
        todo = item.get("items")
        text: str | None
        if isinstance(todo, list):
            text = "\n".join(
                f"- [{'x' if isinstance(t, dict) and t.get('completed') else ' '}] "
                f"{t.get('text') if isinstance(t, dict) else t}"
                for t in todo
            )
        else:
            text = _str(item.get("text"))
        return b.add("plan", content=text, **assistant, **common)
    if itype == "error":
        return b.add("error", actor="system", content=_str(item.get("message")), **common)
    tid = _str(item.get("id"))
    if itype == "command_execution":
        cmd = item.get("command")
        call = tool_call(
            ToolCall(
                name="shell",
                call_id=tid,
                arguments={"command": cmd},
                arguments_raw=cmd if isinstance(cmd, str) else dumps_text(cmd),
            )
        )
        code = item.get("exit_code")
        code = code if isinstance(code, int) and not isinstance(code, bool) else None
        if status != "in_progress" or code is not None:
            tool_result(
                ToolResult(
                    call_id=tid,
                    name="shell",
                    output=_str(item.get("aggregated_output")) or "",
                    exit_code=code,
                    is_error=(code != 0) if code is not None else (status in ("failed", "declined") or None),
                    status=status,
                )
            )
        return call
    if itype == "file_change":
        changes = item.get("changes")
        call = tool_call(
            ToolCall(
                name="apply_patch",
                call_id=tid,
                arguments={"changes": changes},
                arguments_raw=dumps_text(changes),
            )
        )
        tool_result(ToolResult(call_id=tid, name="apply_patch", status=status, is_error=status == "failed"))
        return call
    if itype == "mcp_tool_call":
        args = item.get("arguments")
        parsed, raw_args = parse_arguments(args)
        call = tool_call(
            ToolCall(
                name=str(item.get("tool") or "mcp_tool"),
                call_id=tid,
                arguments=parsed,
                arguments_raw=raw_args,
                namespace=_str(item.get("server")),
            )
        )
        if status != "in_progress":
            result = item.get("result")
            err = item.get("error")
            out = None
            if isinstance(result, dict):
                out = content_text(result.get("content")) or (
                    dumps_text(result.get("structured_content")) if result.get("structured_content") else None
                )
            if isinstance(err, dict):
                out = _str(err.get("message")) or out
            tool_result(
                ToolResult(
                    call_id=tid,
                    name=str(item.get("tool") or "mcp_tool"),
                    output=out,
                    is_error=bool(err) or status == "failed",
                    status=status,
                )
            )
        return call
    if itype == "web_search":
        query = item.get("query")
        return tool_call(
            ToolCall(
                name="web_search",
                call_id=tid,
                arguments={"query": query, "action": item.get("action")},
                arguments_raw=query if isinstance(query, str) else None,
            )
        )
    if itype == "collab_tool_call":
        return tool_call(
            ToolCall(
                name=f"collab:{item.get('tool')}",
                call_id=tid,
                arguments=item.get("prompt"),
                arguments_raw=None,
            )
        )
    return b.add("system", actor="system", subtype=f"item:{itype}", **common)


# -- ITBench workspace folder -------------------------------------------------------


def _rollout_files(folder: Path) -> list[Path]:
    sessions = folder / "sessions"
    if not sessions.is_dir():
        return []

    def key(p: Path) -> tuple[str, str]:
        m = _ROLLOUT_NAME.search(p.name)
        return (m.group(1).replace(":", "-") if m else "", p.name)

    return sorted((p for p in sessions.rglob("rollout-*.jsonl") if p.is_file()), key=key)


def _read_json(path: Path) -> Any:
    try:
        return orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


_WS_MARKERS = ("agent_output.json", "judge_output.json", "agent_remediation.json")
_WS_TRACES = ("traces/stdout.log", "traces/traces.jsonl")  # the exec stream; Codex's OTLP logs


def _telemetry(path: Path) -> tuple[list[Event], dict[str, Any], list[TraceLoadError]]:
    """The workspace's events and trace fields from Codex's OTLP log records (``--collect-traces``),
    read by the ``otel_logs`` importer, and its per-record errors: one trace per conversation there
    (the harness may resume the agent), joined in time order, ``segment`` = conversation index. The
    source of last resort: these records carry less than a rollout or the exec stream, and no
    termination, outcome or trace-level usage."""
    parts: list[Trace] = []
    errors: list[TraceLoadError] = []
    try:
        for item in get_importer("otel_logs").load(Source(path)):
            if isinstance(item, Trace):
                parts.append(item)
            else:
                errors.append(item)
    except FormatError as exc:  # the file's own error, not the folder's
        raise TraceLoadError(path, exc.reason, line=exc.line, offset=exc.offset) from exc
    if not parts:
        raise TraceLoadError(path, "no log records found")
    parts.sort(key=lambda t: (t.started_at is None, t.started_at or datetime.min.replace(tzinfo=UTC)))
    events: list[Event] = []
    for segment, part in enumerate(parts):
        for ev in part.events:
            ev.seq, ev.segment = len(events), segment
            events.append(ev)
    models = [t.model for t in parts if t.model]
    starts = [t.started_at for t in parts if t.started_at is not None]
    ends = [t.ended_at for t in parts if t.ended_at is not None]
    fields = {
        "framework": parts[0].framework,
        "model": models[0] if models else None,
        "task": parts[0].task,
        "started_at": min(starts, default=None),
        "ended_at": max(ends, default=None),
        "extra": {"telemetry": [{"trace_id": t.trace_id, **t.extra} for t in parts]},
    }
    return events, fields, errors


@register
class CodexWorkspaceImporter(Importer):
    name = "codex_workspace"
    description = (
        "ITBench SRE agent workspace: Codex rollouts + AGENTS.md + agent_output.json + judge_output.json"
    )
    handles_dirs = True

    def sniff(self, src: Source) -> float:
        if not src.is_dir:
            return 0.0
        p = src.path
        markers = any((p / m).is_file() for m in _WS_MARKERS) or (p / "traces" / "stdout.log").is_file()
        if (p / "auth.json").exists() or (p / "history.jsonl").exists():
            return 0.0  # a ~/.codex home: independent sessions, loaded one by one
        has_sessions = (p / "sessions").is_dir() and bool(_rollout_files(p))
        if has_sessions and (markers or (p / "AGENTS.md").is_file()):
            return 0.9
        if markers and (p / "AGENTS.md").is_file():
            return 0.8
        return 0.0

    def load(self, src: Source) -> Iterator[Trace | TraceLoadError]:
        folder = src.path
        if not src.is_dir:
            raise FormatError("not a folder")
        rollouts = _rollout_files(folder)
        trace_id = f"{folder.parent.name}/{folder.name}"
        stdout_log, telemetry = (folder / t for t in _WS_TRACES)
        if rollouts:
            b, st = _rollout_trace(self.name, rollouts, source_path=folder, trace_id=trace_id)
            yield from st.errors
            fields = _trace_fields(st)
            source_paths = [str(p) for p in rollouts]
        elif stdout_log.is_file() or telemetry.is_file():
            if stdout_log.is_file():
                produced = list(load_exec_stream(self.name, stdout_log, trace_id=trace_id))
                yield from (x for x in produced if isinstance(x, TraceLoadError))
                exec_traces = [x for x in produced if isinstance(x, Trace)]
                if not exec_traces:
                    raise FormatError("workspace has no rollout and traces/stdout.log has no events")
                t = exec_traces[0]
                events = t.events
                keep = (
                    "framework",
                    "model",
                    "task",
                    "started_at",
                    "ended_at",
                    "termination",
                    "outcome",
                    "usage",
                    "extra",
                )
                fields = {k: getattr(t, k) for k in keep}
                source_paths = [str(stdout_log)]
            else:
                events, fields, errors = _telemetry(telemetry)
                yield from errors
                source_paths = [str(telemetry)]
            b = TraceBuilder(self.name, folder, trace_id=trace_id)
            b.events = list(events)
            st = None
        else:
            raise FormatError(
                "workspace has no sessions/**/rollout-*.jsonl, no traces/stdout.log and no traces/traces.jsonl"
            )
        raw: dict[str, Any] = dict(fields.get("raw") or {})
        agents_md = _read_text(folder / "AGENTS.md")
        if agents_md:
            b.agent(MAIN_ACTOR, system_prompt=agents_md)
            first = st.first_task if st is not None else fields.get("task")
            fields["task"] = agents_md + ("\n\n" + first if first else "")
            source_paths.append(str(folder / "AGENTS.md"))
        outcome = fields.get("outcome") or Outcome()
        agent_output_path = folder / "agent_output.json"
        if agent_output_path.is_file():
            text = _read_text(agent_output_path)
            parsed = _read_json(agent_output_path)
            outcome = outcome.model_copy(update={"final_output": text})
            b.add(
                "artifact",
                actor=MAIN_ACTOR,
                subtype="agent_output",
                content=text,
                source=source_ref(path=str(agent_output_path)),
                raw=parsed if parsed is not None else text,
                segment=max((e.segment for e in b.events), default=0),
            )
            source_paths.append(str(agent_output_path))
        judge = _read_json(folder / "judge_output.json")
        task_id = None
        if isinstance(judge, dict):
            flat = judge.get("flat_scores")
            metrics = dict(flat) if isinstance(flat, dict) else {}
            recall = _num(metrics.get("root_cause_entity_recall"))
            outcome = outcome.model_copy(
                update={
                    "metrics": {**outcome.metrics, **metrics},
                    "score": recall,
                    "success": recall >= SUCCESS_RECALL if recall is not None else None,
                }
            )
            meta = judge.get("metadata")
            if isinstance(meta, dict) and meta.get("scenario_name") is not None:
                task_id = str(meta["scenario_name"])
            raw["judge_output"] = judge
            source_paths.append(str(folder / "judge_output.json"))
        remediation = _read_json(folder / "agent_remediation.json")
        if remediation is not None:
            raw["agent_remediation"] = remediation
        fields.update(
            framework="codex",
            benchmark="ITBench",
            task_id=task_id,
            outcome=None if outcome == Outcome() else outcome,
            raw=raw or None,
            source_paths=source_paths,
        )
        yield b.build(**fields)
