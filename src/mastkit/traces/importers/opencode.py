"""OpenCode plugin hook recordings: JSONL of ``[hook, input, output?]`` arrays.

A recording plugin (such as the LangSmith OpenCode tracer's test harness) writes one line per hook
call: ``["event", {"event": {type, properties}}]`` for every OpenCode bus event,
``["chat.message", input, {message, parts}]``, ``["tool.definition", {toolID}, {description,
parameters}]``, ``["experimental.chat.system.transform", {sessionID, model}, {system: [...]}]``,
``["tool.execute.before", {tool, sessionID, callID}, {args}]``, ``["tool.execute.after", ...,
{title, output, metadata}]``, ``chat.params``, ``permission.ask``, ...

Bus events used: ``session.created|updated`` (session info: id, parentID, version, directory,
title, time), ``message.updated`` (message info: role, agent/mode, modelID, providerID, tokens,
cost, error, finish), ``message.part.updated`` and ``message.part.delta`` (parts stream in many
times: the LAST state of each part id is kept, in first-seen order), ``message.removed``,
``message.part.removed``, ``session.idle``, ``session.error``, ``session.status`` (retry),
``session.compacted``, ``todo.updated``.

One trace per root session; a child session (``parentID``, e.g. spawned by the ``task`` tool) is
merged into its parent's trace with ``thread_id`` = the child session id and ``actor`` = the
sub-agent's name. Parts: ``text`` -> message, ``reasoning`` -> reasoning, ``tool`` -> tool_call,
plus a tool_result once its ``state.status`` is ``completed`` or ``error``; ``step-start`` opens a
model call (``llm_call_id`` = message id + step), ``step-finish`` gives its usage (``input`` +
``cache.read`` + ``cache.write`` -> input tokens, ``output`` + ``reasoning`` -> output tokens, and
cost); ``file`` -> message, ``subtask`` -> handoff, ``compaction`` -> ``context_compaction``,
``patch`` -> artifact, ``retry`` -> error. ``session.error`` and message errors -> error events;
the last ``session.idle`` / error gives the termination. Tool definitions and system prompts go
to the agent (``AgentInfo.tools`` / ``system_prompt``) and ``Trace.raw``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

from mastkit.errors import FormatError, TraceLoadError
from mastkit.traces._build import TraceBuilder, dumps_text, parse_ts, source_ref
from mastkit.traces.model import SourceRef, Termination, ToolCall, ToolResult, Trace, Usage
from mastkit.traces.registry import Importer, register
from mastkit.traces.source import Source

_HOOKS = {
    "event", "chat.message", "chat.params", "chat.headers", "tool.definition", "tool.execute.before",
    "tool.execute.after", "permission.ask", "experimental.chat.system.transform",
    "experimental.chat.messages.transform", "experimental.session.compacting", "command.execute.before",
    "shell.env", "auth", "config", "experimental.text.complete",
}  # fmt: skip
_DEFAULT_AGENT = "opencode"


def _str(v: Any) -> str | None:
    return v if isinstance(v, str) and v else None


def _num(v: Any) -> int | None:
    return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _dict(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _is_hook_record(rec: Any) -> bool:
    return isinstance(rec, list) and len(rec) >= 2 and isinstance(rec[0], str) and isinstance(rec[1], dict)


_RUN_TYPES = {"step_start", "step_finish", "text", "reasoning", "tool_use", "error", "file", "patch"}


def _is_run_event(rec: Any) -> bool:
    """A line of ``opencode run --format json``."""
    return (
        isinstance(rec, dict)
        and rec.get("type") in _RUN_TYPES
        and isinstance(rec.get("sessionID"), str)
        and (isinstance(rec.get("part"), dict) or "error" in rec)
    )


def _is_bus_shape(rec: Any) -> bool:
    """Any bus event ``{type, properties}`` (``lsp.*``, ``installation.*``, ``tui.*``, ... too)."""
    return (
        isinstance(rec, dict) and isinstance(rec.get("type"), str) and isinstance(rec.get("properties"), dict)
    )


def _is_bus_event(rec: Any) -> bool:
    """A bare bus event ``{type: "session.updated", properties: {...}}`` (SSE ``/event`` stream),
    of a family specific enough to sniff by."""
    if not _is_bus_shape(rec):
        return False
    return rec["type"].split(".", 1)[0] in ("session", "message", "server", "todo", "permission", "file")


def _is_message_with_parts(rec: Any) -> bool:
    return (
        isinstance(rec, dict)
        and isinstance(rec.get("info"), dict)
        and isinstance(rec.get("parts"), list)
        and rec["info"].get("role") in ("user", "assistant")
    )


def _is_export(rec: Any) -> bool:
    """``opencode export`` output: ``{info: Session, messages: [{info, parts}]}``."""
    if not (
        isinstance(rec, dict) and isinstance(rec.get("info"), dict) and isinstance(rec.get("messages"), list)
    ):
        return False
    msgs = rec["messages"]
    return all(_is_message_with_parts(m) for m in msgs[:5]) and (
        bool(msgs) or _str(rec["info"].get("id")) is not None
    )


def _step_usage(part: dict[str, Any]) -> Usage | None:
    tokens = part.get("tokens")
    if not isinstance(tokens, dict):
        return None
    cache = _dict(tokens.get("cache"))
    inp, out, rsn = _num(tokens.get("input")), _num(tokens.get("output")), _num(tokens.get("reasoning"))
    cread, cwrite = _num(cache.get("read")), _num(cache.get("write"))
    cost = part.get("cost")
    usage = Usage(
        input_tokens=None if inp is None else inp + (cread or 0) + (cwrite or 0),
        output_tokens=None if out is None else out + (rsn or 0),
        cached_input_tokens=cread,
        cache_write_tokens=cwrite,
        reasoning_tokens=rsn,
        total_tokens=_num(tokens.get("total")),
        cost_usd=float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) else None,
    )
    return None if usage.is_empty() else usage


def tool_finished(part: dict[str, Any]) -> bool:
    """A ``tool`` part whose ``state.status`` is ``completed`` or ``error`` (it has a result)."""
    state = part.get("state")
    return (
        part.get("type") == "tool"
        and isinstance(state, dict)
        and state.get("status") in ("completed", "error")
    )


@dataclass
class _Item:
    """Something to emit, at the position where it was first seen."""

    order: int
    line: int
    kind: str  # part | error | idle | compacted | retry | todo | hook_tool
    session: str
    data: Any


@dataclass
class _Session:
    sid: str
    info: dict[str, Any] = field(default_factory=dict)
    first_line: int = 0


@dataclass
class _Recording:
    sessions: dict[str, _Session] = field(default_factory=dict)
    messages: dict[str, dict[str, Any]] = field(default_factory=dict)
    parts: dict[str, dict[str, Any]] = field(default_factory=dict)
    part_lines: dict[str, int] = field(default_factory=dict)
    items: list[_Item] = field(default_factory=list)
    item_of_part: dict[str, _Item] = field(default_factory=dict)
    results: set[str] = field(default_factory=set)
    errors_seen: set[str] = field(default_factory=set)
    msg_error_seen: set[str] = field(default_factory=set)
    tool_defs: dict[str, Any] = field(default_factory=dict)
    system_prompts: list[dict[str, Any]] = field(default_factory=list)
    hook_tools: dict[str, dict[str, Any]] = field(default_factory=dict)
    chat_agents: dict[str, str] = field(default_factory=dict)  # session -> agent of chat.message
    other: list[dict[str, Any]] = field(default_factory=list)
    hooks: Counter[str] = field(default_factory=Counter)
    events: Counter[str] = field(default_factory=Counter)
    order: int = 0
    lines: int = 0  # the last pseudo line given by at()
    pointers: dict[int, str] = field(default_factory=dict)  # pseudo line -> JSON pointer (exports, databases)
    paths: dict[int, str] = field(default_factory=dict)  # pseudo line -> file read (storage, databases)
    raw_extra: dict[str, Any] = field(default_factory=dict)  # more Trace.raw entries (storage, databases)

    def ref(self, line: int) -> SourceRef:
        path = self.paths.get(line)
        pointer = self.pointers.get(line)
        if path is None and pointer is None:
            return source_ref(line=line)
        return source_ref(path=path, pointer=pointer)

    def next(self) -> int:
        self.order += 1
        return self.order

    def at(self, path: str | None = None, pointer: str | None = None) -> int:
        """A new pseudo line, for a reader whose records have no line of their own (an export, the
        storage folder, a database): 1, 2, ... in reading order, remembered with the file and the
        JSON pointer the record was read from, for its source reference."""
        self.lines += 1
        if path is not None:
            self.paths[self.lines] = path
        if pointer is not None:
            self.pointers[self.lines] = pointer
        return self.lines

    def session(self, sid: str, line: int) -> _Session:
        s = self.sessions.get(sid)
        if s is None:
            s = self.sessions[sid] = _Session(sid=sid, first_line=line)
        return s

    def put_part(self, part: dict[str, Any], line: int, *, defer_result: bool = False) -> None:
        """Keep the latest state of a part; a finished tool part also gets its result item here,
        unless ``defer_result`` (the reader places it with :meth:`put_result`)."""
        pid = _str(part.get("id"))
        sid = _str(part.get("sessionID"))
        if pid is None or sid is None:
            return
        self.session(sid, line)
        self.parts[pid] = part
        self.part_lines[pid] = line
        if pid not in self.item_of_part:
            item = _Item(self.next(), line, "part", sid, pid)
            self.items.append(item)
            self.item_of_part[pid] = item
        if not defer_result and tool_finished(part):
            # the result goes where the tool finished, after whatever ran meanwhile (sub-agents)
            self.put_result(pid, sid, line)

    def put_result(self, pid: str, sid: str, line: int) -> None:
        if pid not in self.results:
            self.results.add(pid)
            self.items.append(_Item(self.next(), line, "tool_result", sid, pid))


class OpenCodeMapping:
    """The OpenCode session/message/part mapping shared by every OpenCode input: a reader fills a
    :class:`_Recording` (session infos, message infos, parts, positioned items) and
    :meth:`_traces` builds one trace per root session. Used by :class:`OpenCodeImporter` (hook
    recordings, bus events, run streams, exports), by the storage-folder importer
    (:mod:`mastkit.traces.importers.opencode_storage`) and by the database importer
    (:mod:`mastkit.traces.importers.opencode_db`)."""

    name: ClassVar[str]

    # -- reading -----------------------------------------------------------------------

    def _record(self, st: _Recording, rec: list[Any], line: int) -> None:
        hook, inp = rec[0], rec[1]
        out = rec[2] if len(rec) > 2 else None
        st.hooks[hook] += 1
        if hook == "event":
            ev = inp.get("event")
            if isinstance(ev, dict) and isinstance(ev.get("type"), str):
                props = _dict(ev.get("properties"))
                self._event(st, ev["type"], props, ev, line)
            return
        if hook == "tool.definition":
            tid = _str(inp.get("toolID"))
            if tid is not None:
                st.tool_defs[tid] = out
            return
        if hook == "experimental.chat.system.transform":
            system = out.get("system") if isinstance(out, dict) else None
            model = _dict(inp.get("model"))
            entry = {
                "sessionID": inp.get("sessionID"),
                "model": model.get("id"),
                "providerID": model.get("providerID"),
                "system": system,
            }
            if entry not in st.system_prompts:
                st.system_prompts.append(entry)
            return
        if hook == "chat.message":
            sid = _str(inp.get("sessionID"))
            if sid is not None:
                st.session(sid, line)
                agent = _str(inp.get("agent"))
                if agent:
                    st.chat_agents.setdefault(sid, agent)
            if isinstance(out, dict):
                msg = out.get("message")
                if isinstance(msg, dict) and _str(msg.get("id")):
                    st.messages.setdefault(msg["id"], msg)
                for part in out.get("parts") or []:
                    if isinstance(part, dict) and _str(part.get("id")) not in st.parts:
                        st.put_part(part, line)
            return
        if hook in ("tool.execute.before", "tool.execute.after"):
            call = _str(inp.get("callID"))
            sid = _str(inp.get("sessionID"))
            if call is None or sid is None:
                return
            if call not in st.hook_tools:
                st.hook_tools[call] = {"tool": inp.get("tool"), "session": sid, "line": line}
                st.items.append(_Item(st.next(), line, "hook_tool", sid, call))
            entry = st.hook_tools[call]
            if hook == "tool.execute.before" and isinstance(out, dict):
                entry["args"] = out.get("args")
            elif isinstance(out, dict):
                entry["after"] = out
            return
        st.other.append({"line": line, "record": rec})

    def _event(self, st: _Recording, etype: str, props: dict[str, Any], ev: Any, line: int) -> None:
        st.events[etype] += 1
        sid = _str(props.get("sessionID"))
        if etype in ("session.created", "session.updated") and isinstance(props.get("info"), dict):
            info = props["info"]
            sid = _str(info.get("id")) or sid
            if sid:
                st.session(sid, line).info = info
        elif etype == "message.updated" and isinstance(props.get("info"), dict):
            info = props["info"]
            mid = _str(info.get("id"))
            msid = _str(info.get("sessionID")) or sid
            if mid and msid:
                st.session(msid, line)
                st.messages[mid] = info
                err = info.get("error")
                if isinstance(err, dict) and mid not in st.msg_error_seen:
                    st.msg_error_seen.add(mid)
                    st.items.append(
                        _Item(st.next(), line, "error", msid, {"error": err, "message": mid, "raw": ev})
                    )
        elif etype == "message.part.updated" and isinstance(props.get("part"), dict):
            st.put_part(props["part"], line)
        elif etype == "message.part.delta":
            pid = _str(props.get("partID"))
            fname = _str(props.get("field")) or "text"
            delta = props.get("delta")
            if pid and isinstance(delta, str):
                part = st.parts.get(pid)
                if part is None:
                    part = {"id": pid, "messageID": props.get("messageID"), "sessionID": sid, "type": "text"}
                    st.put_part(part, line)
                    part = st.parts.get(pid)
                if part is not None:
                    cur = part.get(fname)
                    st.parts[pid] = {**part, fname: (cur if isinstance(cur, str) else "") + delta}
        elif etype == "message.part.removed":
            pid = _str(props.get("partID"))
            if pid and pid in st.parts:
                st.parts[pid] = {**st.parts[pid], "_removed": True}
        elif etype == "message.removed":
            mid = _str(props.get("messageID"))
            if mid and mid in st.messages:
                st.messages[mid] = {**st.messages[mid], "_removed": True}
        elif sid and etype == "session.idle":
            st.session(sid, line)
            st.items.append(_Item(st.next(), line, "idle", sid, ev))
        elif etype == "session.error":
            target = sid or next(iter(st.sessions), None)
            if target:
                st.items.append(
                    _Item(st.next(), line, "error", target, {"error": props.get("error"), "raw": ev})
                )
        elif sid and etype == "session.compacted":
            st.items.append(_Item(st.next(), line, "compacted", sid, ev))
        elif sid and etype == "session.status" and isinstance(props.get("status"), dict):
            if props["status"].get("type") == "retry":
                st.items.append(_Item(st.next(), line, "retry", sid, ev))
            else:
                st.other.append({"line": line, "record": ev})
        elif sid and etype == "todo.updated":
            st.items.append(_Item(st.next(), line, "todo", sid, ev))
        else:
            st.other.append({"line": line, "record": ev})

    # -- building ----------------------------------------------------------------------

    def _root(self, st: _Recording, sid: str) -> str:
        seen: set[str] = set()
        while sid not in seen:
            seen.add(sid)
            parent = _str(st.sessions[sid].info.get("parentID")) if sid in st.sessions else None
            if parent is None or parent not in st.sessions:
                return sid
            sid = parent
        return sid

    def _traces(self, src: Source, st: _Recording) -> Iterator[Trace]:
        roots: dict[str, list[str]] = {}
        for sid in st.sessions:
            roots.setdefault(self._root(st, sid), []).append(sid)
        for index, (root, members) in enumerate(roots.items()):
            yield self._trace(src, st, root, set(members), index if len(roots) > 1 else None)

    def _agent_of(self, st: _Recording, sid: str, msg: dict[str, Any] | None) -> str:
        if msg is not None:
            name = _str(msg.get("agent")) or _str(msg.get("mode"))
            if name:
                return name
        return st.chat_agents.get(sid) or _DEFAULT_AGENT

    def _trace(self, src: Source, st: _Recording, root: str, members: set[str], index: int | None) -> Trace:
        b = TraceBuilder(self.name, src.path, trace_id=root)
        step_of_msg: dict[str, int] = {}
        call_first: dict[str, int] = {}  # llm_call_id -> seq of its first event
        covered_calls = {
            str(p.get("callID")) for p in st.parts.values() if p.get("type") == "tool" and p.get("callID")
        }
        models: Counter[str] = Counter()
        task: str | None = None
        termination: Termination | None = None
        main_agent: str | None = None
        for item in sorted((i for i in st.items if i.session in members), key=lambda i: i.order):
            thread = None if item.session == root else item.session
            ref = st.ref(item.line)
            if item.kind == "part":
                part = st.parts.get(item.data)
                if part is None or part.get("_removed"):
                    continue
                ref = st.ref(st.part_lines.get(item.data, item.line))
                msg = st.messages.get(str(part.get("messageID")))
                if msg is not None and msg.get("_removed"):
                    continue
                role = _str(msg.get("role")) if msg else None
                ptype = part.get("type")
                if role is None:
                    role = (
                        "user"
                        if ptype in ("text", "file", "agent", "subtask") and msg is None
                        else "assistant"
                    )
                agent = self._agent_of(st, item.session, msg)
                if thread is None and role == "assistant":
                    main_agent = main_agent or agent
                mid = str(part.get("messageID") or "")
                if ptype == "step-start":
                    step_of_msg[mid] = step_of_msg.get(mid, 0) + 1
                    continue
                step = step_of_msg.get(mid, 1)
                call_id = mid if step <= 1 else f"{mid}#{step}"
                model = _str(msg.get("modelID")) if msg else None
                if model and role == "assistant":
                    models[model] += 1
                if ptype == "step-finish":
                    first = call_first.get(call_id)
                    usage = _step_usage(part)
                    if first is not None and b.events[first].usage is None:
                        b.events[first].usage = usage
                        b.events[first].extra["step_finish"] = part
                    else:
                        ev = b.add("llm_call", actor=agent, role="assistant", llm_call_id=call_id, usage=usage,
                                   model=model, thread_id=thread, source=ref, raw=part)  # fmt: skip
                        call_first.setdefault(call_id, ev.seq)
                    continue
                seq_before = len(b.events)
                text = self._part(
                    b, part, role, agent, thread, ref, call_id if role == "assistant" else None, model
                )
                if role == "user" and thread is None and task is None and text:
                    task = text
                if role == "assistant" and len(b.events) > seq_before:
                    call_first.setdefault(call_id, seq_before)
            elif item.kind == "tool_result":
                part = st.parts.get(item.data)
                msg = st.messages.get(str(part.get("messageID"))) if part else None
                if part is None or part.get("_removed") or (msg is not None and msg.get("_removed")):
                    continue
                self._tool_result(b, part, thread, st.ref(item.line))
            elif item.kind == "hook_tool":
                if item.data in covered_calls:
                    continue
                agent = st.chat_agents.get(item.session) or _DEFAULT_AGENT
                self._hook_tool(b, st.hook_tools[item.data], item.data, thread, ref, agent)
            elif item.kind == "error":
                err = item.data.get("error")
                key = f"{item.session}:{dumps_text(err)}"
                if key in st.errors_seen:
                    continue  # the same error reported on the message and on the session
                st.errors_seen.add(key)
                name = _str(err.get("name")) if isinstance(err, dict) else None
                data = _dict(err.get("data")) if isinstance(err, dict) else {}
                message = _str(data.get("message")) or name or (dumps_text(err) if err is not None else None)
                ev = b.add("error", actor="system", subtype=name, content=message, thread_id=thread, source=ref,
                           raw=item.data.get("raw"))  # fmt: skip
                if thread is None:
                    aborted = name == "MessageAbortedError"
                    termination = Termination(
                        reason="aborted" if aborted else "error",
                        by="user" if aborted else "error",
                        native=name or "session.error",
                        at_seq=ev.seq,
                    )
            elif item.kind == "idle":
                ev = b.add("system", actor="system", subtype="session_idle", thread_id=thread, source=ref,
                           raw=item.data)  # fmt: skip
                if thread is None:
                    last_err = termination is not None and termination.at_seq == ev.seq - 1
                    if not last_err:
                        termination = Termination(
                            reason="completed", by="agent", native="session.idle", at_seq=ev.seq
                        )
            elif item.kind == "compacted":
                b.add("system", actor="system", subtype="context_compaction", thread_id=thread, source=ref,
                      raw=item.data)  # fmt: skip
            elif item.kind == "retry":
                status = _dict(_dict(item.data.get("properties")).get("status"))
                b.add("error", actor="system", subtype="retry", content=_str(status.get("message")),
                      thread_id=thread, source=ref, raw=item.data)  # fmt: skip
            elif item.kind == "todo":
                todos = _dict(item.data.get("properties")).get("todos")
                lines = [
                    f"- [{t.get('status', '')}] {t.get('content', '')}"
                    for t in todos or []
                    if isinstance(t, dict)
                ]
                b.add("plan", actor=self._agent_of(st, item.session, None), content="\n".join(lines),
                      thread_id=thread, source=ref, raw=item.data)  # fmt: skip
        main = main_agent or st.chat_agents.get(root) or _DEFAULT_AGENT
        model = models.most_common(1)[0][0] if models else None
        prompt = next(
            (
                "\n".join(p["system"])
                for p in st.system_prompts
                if p.get("model") == model and isinstance(p.get("system"), list)
            ),
            None,
        )
        tools = [
            {"name": k, **({"description": v.get("description")} if isinstance(v, dict) else {})}
            for k, v in st.tool_defs.items()
        ]
        b.agent(main, model=model, system_prompt=prompt, tools=tools or None)
        for sid in members - {root}:
            child = st.sessions[sid]
            child_msgs = [
                m for m in st.messages.values() if m.get("sessionID") == sid and m.get("role") == "assistant"
            ]
            name = self._agent_of(st, sid, child_msgs[0] if child_msgs else None)
            b.agent(name, parent=main, extra={"session_id": sid, "title": child.info.get("title")})
        info = st.sessions[root].info
        times = _dict(info.get("time"))
        raw: dict[str, Any] = {"session": info}
        if len(members) > 1:
            raw["child_sessions"] = {sid: st.sessions[sid].info for sid in members - {root}}
        # message infos (role, model, tokens, cost, finish, time, ...): parts are events, these are not
        raw["messages"] = [m for m in st.messages.values() if m.get("sessionID") in members]
        raw["tool_definitions"] = st.tool_defs
        raw["system_prompts"] = st.system_prompts
        raw["hook_counts"] = dict(st.hooks)
        raw["event_counts"] = dict(st.events)
        if st.other:
            raw["other_records"] = st.other
        raw.update(st.raw_extra)
        extra = {k: info[k] for k in ("title", "directory", "slug", "projectID") if info.get(k) is not None}
        return b.build(
            source_paths=list(dict.fromkeys([str(src.path), *st.paths.values()])),
            framework="OpenCode",
            framework_version=_str(info.get("version")),
            model=model,
            task=task,
            started_at=parse_ts(times.get("created")),
            ended_at=parse_ts(times.get("updated")),
            termination=termination,
            raw=raw,
            extra=extra,
        )

    @staticmethod
    def _part(
        b: TraceBuilder,
        part: dict[str, Any],
        role: str,
        agent: str,
        thread: str | None,
        ref: SourceRef,
        call_id: str | None,
        model: str | None,
    ) -> str | None:
        ptype = part.get("type")
        actor = "user" if role == "user" and thread is None else agent
        if role == "user" and thread is not None:
            actor = "user"  # the prompt the parent agent wrote arrives as the child's user message
        times = _dict(part.get("time"))
        common: dict[str, Any] = {
            "actor": actor,
            "role": "user" if role == "user" else "assistant",
            "thread_id": thread,
            "source": ref,
            "id": _str(part.get("id")),
            "parent_id": _str(part.get("messageID")),
            "llm_call_id": call_id,
            "model": model if role == "assistant" else None,
            "started_at": parse_ts(times.get("start")),
            "ended_at": parse_ts(times.get("end")),
        }
        if ptype == "text":
            text = part.get("text") if isinstance(part.get("text"), str) else None
            subtype = "synthetic" if part.get("synthetic") is True else None
            b.add("message", content=text, subtype=subtype, raw=part, **common)
            return text
        if ptype == "reasoning":
            b.add("reasoning", content=_str(part.get("text")), raw=part, **common)
            return None
        if ptype == "tool":
            state = _dict(part.get("state"))
            status = _str(state.get("status"))
            args = state.get("input")
            raw_args = _str(state.get("raw")) or (dumps_text(args) if args is not None else None)
            name = str(part.get("tool") or "unknown")
            call = _str(part.get("callID"))
            st_times = _dict(state.get("time"))
            tc_common = {**common, "started_at": parse_ts(st_times.get("start"))}
            b.add("tool_call", tool_call=ToolCall(name=name, call_id=call, arguments=args, arguments_raw=raw_args),
                  raw=part, extra={"status": status} if status not in ("completed", "error") else {},
                  **tc_common)  # fmt: skip
            return None
        if ptype == "file":
            desc = f"[file {part.get('mime') or '?'} {part.get('filename') or part.get('url') or ''}]".strip()
            b.add("message", content=desc, subtype="file", raw=part, **common)
            return None
        if ptype == "subtask":
            target = _str(part.get("agent"))
            b.add("handoff", content=_str(part.get("prompt")) or _str(part.get("description")),
                  recipients=[target] if target else None, subtype="subtask", raw=part, **common)  # fmt: skip
            return None
        if ptype == "agent":
            b.add("message", content=f"@{part.get('name')}", subtype="agent_mention", raw=part, **common)
            return None
        if ptype == "compaction":
            b.add("system", subtype="context_compaction", raw=part, **{**common, "actor": "system"})
            return None
        if ptype == "patch":
            files = part.get("files")
            b.add("artifact", subtype="patch", content="\n".join(map(str, files)) if isinstance(files, list) else None,
                  raw=part, **common)  # fmt: skip
            return None
        if ptype == "retry":
            err = part.get("error")
            b.add("error", subtype="retry", content=dumps_text(err) if err is not None else None, raw=part,
                  **{**common, "actor": "system"})  # fmt: skip
            return None
        if ptype == "snapshot":
            return None
        b.add("system", subtype=f"part:{ptype}", raw=part, **{**common, "actor": "system"})
        return None

    @staticmethod
    def _tool_result(b: TraceBuilder, part: dict[str, Any], thread: str | None, ref: SourceRef) -> None:
        state = _dict(part.get("state"))
        status = _str(state.get("status"))
        name = str(part.get("tool") or "unknown")
        call = _str(part.get("callID"))
        st_times = _dict(state.get("time"))
        start, end = st_times.get("start"), st_times.get("end")
        num = (int, float)
        duration = float(end - start) if isinstance(start, num) and isinstance(end, num) else None
        out = state.get("output") if status == "completed" else state.get("error")
        extra: dict[str, Any] = {}
        if _str(state.get("title")):
            extra["title"] = state["title"]
        if isinstance(state.get("metadata"), dict):
            extra["metadata"] = state["metadata"]
        b.add(
            "tool_result",
            actor="environment",
            role="tool",
            thread_id=thread,
            source=ref,
            started_at=parse_ts(end),
            tool_result=ToolResult(
                call_id=call,
                name=name,
                output=out if isinstance(out, str) else (dumps_text(out) if out is not None else None),
                is_error=status == "error",
                status=status,
                duration_ms=duration,
            ),
            extra=extra,
        )

    @staticmethod
    def _hook_tool(
        b: TraceBuilder, entry: dict[str, Any], call: str, thread: str | None, ref: SourceRef, agent: str
    ) -> None:
        """A tool seen only through tool.execute.before/after hooks (no tool part in the events)."""
        name = str(entry.get("tool") or "unknown")
        args = entry.get("args")
        b.add("tool_call", actor=agent, role="assistant", thread_id=thread, source=ref, raw=entry,
              tool_call=ToolCall(name=name, call_id=call, arguments=args,
                                 arguments_raw=dumps_text(args) if args is not None else None))  # fmt: skip
        after = entry.get("after")
        if isinstance(after, dict):
            out = after.get("output")
            b.add("tool_result", actor="environment", role="tool", thread_id=thread, source=ref,
                  tool_result=ToolResult(call_id=call, name=name,
                                         output=out if isinstance(out, str) else dumps_text(out)),
                  extra={"title": after.get("title")} if after.get("title") else {})  # fmt: skip


@register
class OpenCodeImporter(OpenCodeMapping, Importer):
    name = "opencode"
    description = (
        "OpenCode plugin hook recordings, `opencode run --format json` streams, saved bus events and "
        "`opencode export` files"
    )

    def sniff(self, src: Source) -> float:
        shape = src.json_shape
        if shape in ("jsonl", "object", "array"):
            rec = src.first_record
            if shape == "jsonl" and _is_run_event(rec):
                return 0.9
            if shape == "jsonl" and _is_bus_event(rec):
                return 0.85
            if shape == "object" and _is_export(rec):
                return 0.95
            if shape == "array" and _is_message_with_parts(rec):
                return 0.85
        if shape not in ("array", "none", "jsonl"):
            return 0.0
        head = src.head_text.lstrip()
        if not head.startswith("["):
            return 0.0
        first_line = head.split("\n", 1)[0]
        for hook in (
            '["event"',
            '["chat.message"',
            '["tool.definition"',
            '["tool.execute.',
            '["experimental.chat',
        ):
            if first_line.startswith(hook):
                return 0.9 if '"sessionID"' in head or '"toolID"' in head else 0.6
        return 0.0

    def load(self, src: Source) -> Iterator[Trace | TraceLoadError]:
        if src.is_dir:
            raise FormatError("is a folder, not an OpenCode hook recording")
        rec_state = _Recording()
        errors: list[TraceLoadError] = []
        shape = src.json_shape
        first = src.first_record
        if (shape == "object" and _is_export(first)) or (shape == "array" and _is_message_with_parts(first)):
            doc = src.json
            self._export(rec_state, doc, errors, src.path)
            if not rec_state.sessions:
                yield from errors
                raise FormatError("no OpenCode session found in the export")
            yield from errors
            yield from self._traces(src, rec_state)
            return
        if shape == "jsonl" and (_is_run_event(src.first_record) or _is_bus_event(src.first_record)):
            yield from self._load_stream(src, rec_state)
            return
        good = 0
        for line, offset, rec in src.iter_jsonl():
            if isinstance(rec, FormatError):
                errors.append(TraceLoadError(src.path, rec.reason, line=line, offset=offset))
                continue
            if not _is_hook_record(rec):
                if good == 0 and line <= 1:
                    raise FormatError(
                        "not an OpenCode hook recording: line 1 is not [hook, input, ...]", line=line
                    )
                errors.append(
                    TraceLoadError(src.path, "line is not a [hook, input, output?] array", line=line)
                )
                continue
            good += 1
            self._record(rec_state, rec, line)
        if not rec_state.sessions:
            yield from errors
            raise FormatError("no OpenCode session found in the recording")
        yield from errors
        yield from self._traces(src, rec_state)

    # -- other shapes: `opencode run --format json`, raw bus events, `opencode export` --------

    def _load_stream(self, src: Source, st: _Recording) -> Iterator[Trace | TraceLoadError]:
        errors: list[TraceLoadError] = []
        for line, offset, rec in src.iter_jsonl():
            if isinstance(rec, FormatError):
                errors.append(TraceLoadError(src.path, rec.reason, line=line, offset=offset))
                continue
            if _is_bus_shape(rec):  # every bus event type: the ones not mapped go to other_records
                st.hooks["event"] += 1
                self._event(st, rec["type"], _dict(rec.get("properties")), rec, line)
            elif _is_run_event(rec):
                st.hooks[f"run:{rec['type']}"] += 1
                self._run_event(st, rec, line)
            else:
                errors.append(TraceLoadError(src.path, "line is not an OpenCode event object", line=line))
        if not st.sessions:
            yield from errors
            raise FormatError("no OpenCode session found in the event stream")
        yield from errors
        yield from self._traces(src, st)

    def _run_event(self, st: _Recording, rec: dict[str, Any], line: int) -> None:
        """A line of ``opencode run --format json``: ``{type, timestamp, sessionID, part | error}``;
        only assistant parts are printed (no message records, no user prompt)."""
        sid = _str(rec.get("sessionID"))
        part = rec.get("part")
        if isinstance(part, dict) and sid is not None:
            part = part if _str(part.get("sessionID")) else {**part, "sessionID": sid}
            mid = _str(part.get("messageID"))
            if mid is not None and mid not in st.messages:
                st.messages[mid] = {"id": mid, "sessionID": sid, "role": "assistant"}
            st.session(sid, line)
            st.put_part(part, line)
        elif rec.get("type") == "error" and sid is not None:
            st.session(sid, line)
            st.items.append(_Item(st.next(), line, "error", sid, {"error": rec.get("error"), "raw": rec}))
        else:
            st.other.append({"line": line, "record": rec})

    def _export(self, st: _Recording, doc: Any, errors: list[TraceLoadError], path: Any) -> None:
        """``opencode export`` (``{info, messages: [{info, parts}]}``) or a bare ``[{info, parts}]``
        list (the server's ``GET /session/:id/message``)."""
        msgs: Any = doc.get("messages") if isinstance(doc, dict) else doc
        base = "/messages" if isinstance(doc, dict) else ""
        if isinstance(doc, dict) and isinstance(doc.get("info"), dict):
            self._event(st, "session.updated", {"info": doc["info"]}, None, st.at(pointer="/info"))
        for i, m in enumerate(msgs if isinstance(msgs, list) else []):
            if not _is_message_with_parts(m):
                errors.append(TraceLoadError(path, f"message {i} is not {{info, parts}}"))
                continue
            self._event(
                st, "message.updated", {"info": m["info"]}, m["info"], st.at(pointer=f"{base}/{i}/info")
            )
            for j, part in enumerate(m["parts"]):
                if isinstance(part, dict):
                    self._event(
                        st,
                        "message.part.updated",
                        {"part": part},
                        None,
                        st.at(pointer=f"{base}/{i}/parts/{j}"),
                    )
        st.events.clear()
