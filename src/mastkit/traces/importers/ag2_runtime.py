"""AutoGen 0.2 / AG2 ``runtime_logging``: the file logger (``autogen_logs/runtime.log``) and the SQLite
logger (``logs.db``). One trace per logging session.

Written by ``autogen.runtime_logging.start(logger_type="file" | "sqlite")`` (``autogen/logger/
file_logger.py`` and ``sqlite_logger.py`` in ag2ai/ag2 and microsoft/autogen 0.2).

**File logger** - one record per line (Python ``logging``, appended across runs):

* ``Started new session with Session ID: <uuid>`` (text): starts a session (a trace);
* events ``{source_id, source_name, event_name, agent_module, agent_class, json_state, timestamp,
  thread_id}`` - ``received_message`` (``json_state = {message, sender, valid}``; ``source_name`` is
  the receiver) and ``reply_func_executed`` (``{reply_func_module, reply_func_name, final, reply}``);
* chat completions ``{invocation_id, client_id, wrapper_id, request, response, is_cached, cost,
  start_time, end_time, thread_id, source_name}`` (``response`` is ``str(ChatCompletion)``: model
  and token counts are read from it with a regular expression, nothing is evaluated);
* function use ``{source_id, source_name, agent_module, agent_class, input_args, returns, ...}``;
* agent / wrapper / client creation ``{id, agent_name, agent_type, args, session_id, ...}``,
  ``{wrapper_id, session_id, json_state, ...}``, ``{client_id, wrapper_id, session_id, class, ...}``.

**SQLite logger** - tables ``chat_completions``, ``agents``, ``oai_wrappers``, ``oai_clients``,
``version``, ``events``, ``function_calls`` (opened read-only). Rows are put in time order
(completions at their ``end_time``, as the file logger writes them). ``events`` and
``function_calls`` carry no session id: with several sessions in one database they are assigned to
the session whose first record precedes them.

Mapping:

* ``received_message`` -> ``message`` (actor = sender, ``recipients`` = [receiver], role = the
  message's own role when it has one); its ``tool_calls`` / ``function_call`` -> ``tool_call``; its
  ``tool_responses`` (or a ``function`` role message) -> ``tool_result``. A group-chat manager's
  relay of the message it just received to a third agent is flagged ``is_copied_context``
  (subtype ``relay``).
* chat completion -> ``llm_call`` (usage + ``cost_usd``; ``llm_call_id`` = ``invocation_id``,
  also set on the next message the same agent sends); the cumulative ``request.messages`` stay in
  ``raw`` only.
* function use -> ``system`` ``function_execution`` (its call id and name are matched to the
  pending tool call of that agent; the name comes from the SQLite ``function_name``).
* ``reply_func_executed`` -> ``system`` ``reply_func``; a final ``check_termination_and_human_reply``
  with no reply (the agent stops replying) -> ``termination`` (the last one is
  ``Trace.termination``).
* the banner -> ``system`` ``session_start``; agent/wrapper/client records -> ``Trace.agents`` and
  ``Trace.raw``; any other text line -> ``system`` ``log_line`` (``error`` for logger failures).
"""

from __future__ import annotations

import re
import sqlite3
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from mastkit._util.jsonstream import bad_line_reason, loads, open_lines
from mastkit._util.sqlite import DB_ERRORS, SQLITE_MAGIC, open_ro
from mastkit.errors import FormatError, TraceLoadError
from mastkit.traces._build import (
    TraceBuilder,
    content_text,
    dumps_text,
    parse_arguments,
    parse_ts,
    source_ref,
    usage_from,
    with_cost,
)
from mastkit.traces.model import AgentInfo, SourceRef, Termination, ToolCall, ToolResult, Trace, Usage
from mastkit.traces.registry import Importer, register
from mastkit.traces.source import Source

_BANNER = re.compile(r"^Started new session with Session ID:\s*(\S+)")
_ROLES = {"system": "system", "user": "user", "assistant": "assistant", "tool": "tool", "function": "tool"}
_TERMINATION_FUNC = "check_termination_and_human_reply"
# str(ChatCompletion) pieces (openai-python reprs): read, never evaluated.
# usage fields in a ChatCompletion repr. No leading \b: a pattern that starts with a literal is
# scanned for fast, so the word boundary is checked on each hit instead (_at_word_start).
_RE_USAGE = re.compile(r"(completion_tokens|prompt_tokens|total_tokens|cached_tokens|reasoning_tokens)=(\d+)")
_USAGE_FIELD = {
    "completion_tokens": "output_tokens", "prompt_tokens": "input_tokens", "total_tokens": "total_tokens",
    "cached_tokens": "cached_input_tokens", "reasoning_tokens": "reasoning_tokens",
}  # fmt: skip
_RE_MODEL = re.compile(r"model='([^']+)'")
_TABLES = ("chat_completions", "agents", "oai_wrappers", "oai_clients", "version", "events", "function_calls")


def _d(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _l(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _s(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _json_field(value: Any) -> Any:
    """A field that holds JSON text (``json_state``, SQLite columns): parsed, or the value unchanged."""
    if isinstance(value, (str, bytes)) and value[:1] in ("{", "[", '"', b"{", b"["):
        try:
            return loads(value)
        except orjson.JSONDecodeError:
            return value
    return value


def record_kind(rec: Any) -> str | None:
    """Which runtime-logging record a JSON object is, or None."""
    if not isinstance(rec, dict):
        return None
    if "event_name" in rec and "json_state" in rec and "source_name" in rec:
        return "event"
    if "invocation_id" in rec and "request" in rec and "response" in rec:
        return "completion"
    if "input_args" in rec and "returns" in rec and "source_name" in rec:
        return "function"
    if "agent_name" in rec and "agent_type" in rec and "session_id" in rec:
        return "agent"
    if "client_id" in rec and "wrapper_id" in rec and "session_id" in rec and "class" in rec:
        return "client"
    if "wrapper_id" in rec and "session_id" in rec and "json_state" in rec:
        return "wrapper"
    return None


def _completion_details(response: Any) -> tuple[Usage | None, str | None, str | None]:
    """(usage, model, text) of a logged completion response: a dict, JSON text or a ChatCompletion repr."""
    if isinstance(response, str):
        parsed = _json_field(response)
        if isinstance(parsed, dict):
            response = parsed
    if isinstance(response, dict):
        if set(response) == {"response"}:  # SQLite logger: {"response": <str or null>}
            return _completion_details(response["response"]) if response["response"] else (None, None, None)
        choices = _l(response.get("choices"))
        msg = _d(_d(choices[0]).get("message")) if choices else {}
        return usage_from(response.get("usage")), _s(response.get("model")), content_text(msg.get("content"))
    if not isinstance(response, str):
        return None, None, None
    counts: dict[str, int] = {}
    for m in _RE_USAGE.finditer(response):
        if _at_word_start(response, m.start()):
            counts.setdefault(_USAGE_FIELD[m.group(1)], int(m.group(2)))  # the first of each
    usage = Usage(**counts) if counts else None
    model = next(
        (m.group(1) for m in _RE_MODEL.finditer(response) if _at_word_start(response, m.start())), None
    )
    return usage, model, None


def _at_word_start(text: str, i: int) -> bool:
    """What ``\\b`` before a word means: ``text[i]`` is not preceded by a word character."""
    return i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")


@dataclass
class _Record:
    kind: str  # banner, event, completion, function, agent, wrapper, client, text
    data: Any
    ref: SourceRef
    session: str | None = None


@dataclass
class _Session:
    sid: str | None
    records: list[_Record] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)


class _Builder:
    """Turns the records of one session into a trace."""

    def __init__(self, b: TraceBuilder) -> None:
        self.b = b
        self.pending_llm: dict[str, str] = {}
        self.pending_calls: dict[str, list[tuple[str | None, str, Any]]] = {}
        self.call_names: dict[str, str] = {}
        self.last_msg: tuple[str, str, str] | None = None  # (key, sender, receiver)
        self.last_text: str | None = None
        self.termination: Termination | None = None
        self.task: str | None = None
        self.models: Counter[str] = Counter()
        self.agents: dict[str, dict[str, Any]] = {}
        self.raw: dict[str, list[Any]] = {}
        self.cost = 0.0
        self.wrapper_agents: dict[str, str] = {}  # wrapper_id -> agent name (no source_name column)
        # no received_message events (older SQLite loggers): messages come from the completions
        self.from_completions = False
        self.request_seen: dict[str, int] = {}  # agent -> request messages already emitted
        # copies by count, not by text alone (an agent may say the same thing twice): a text in an
        # agent's request is a copy while that agent has seen it fewer times than it was said
        self.said: Counter[str] = Counter()  # text -> times emitted as an original
        self.seen_by: dict[str, Counter[str]] = {}  # agent -> text -> times in its requests / replies

    def note_agent(self, name: Any, **info: Any) -> None:
        if not isinstance(name, str) or not name:
            return
        slot = self.agents.setdefault(name, {})
        for k, v in info.items():
            if v is not None and v != "":
                slot.setdefault(k, v)

    def add(self, rec: _Record) -> None:
        handler = getattr(self, f"_{rec.kind}")
        handler(rec)

    # -- record kinds ----------------------------------------------------------------

    def _banner(self, rec: _Record) -> None:
        self.b.add("system", subtype="session_start", content=str(rec.data), source=rec.ref, raw=rec.data)

    def _text(self, rec: _Record) -> None:
        text = str(rec.data)
        kind = "error" if text.startswith("[file_logger]") or "Failed to" in text else "system"
        self.b.add(kind, subtype="log_line", content=text, source=rec.ref, raw=text)

    def _agent(self, rec: _Record) -> None:
        self.raw.setdefault("agents", []).append(rec.data)
        d = rec.data
        args = _d(_json_field(d.get("args", d.get("init_args"))))
        llm = _d(args.get("llm_config"))
        model = _s(llm.get("model")) or next(
            (_s(c.get("model")) for c in _l(llm.get("config_list")) if isinstance(c, dict)), None
        )
        name = d.get("agent_name", d.get("name"))
        if isinstance(name, str) and name and d.get("wrapper_id") not in (None, ""):
            self.wrapper_agents.setdefault(str(d["wrapper_id"]), name)
        self.note_agent(
            name,
            agent_type=d.get("agent_type", d.get("class")),
            system_prompt=_s(args.get("system_message")),
            description=_s(args.get("description")),
            model=model,
            agent_id=d.get("id", d.get("agent_id")),
        )

    def _wrapper(self, rec: _Record) -> None:
        self.raw.setdefault("wrappers", []).append(rec.data)

    def _client(self, rec: _Record) -> None:
        self.raw.setdefault("clients", []).append(rec.data)

    def _completion(self, rec: _Record) -> None:
        d = rec.data
        request = _d(_json_field(d.get("request")))
        usage, model, text = _completion_details(d.get("response"))
        cost = d.get("cost")
        if isinstance(cost, (int, float)) and not isinstance(cost, bool):
            self.cost += float(cost)
        usage = with_cost(usage, cost)
        model = model or _s(request.get("model"))
        if model:
            self.models[model] += 1
        source = _s(d.get("source_name"))
        if source is None and d.get("wrapper_id") is not None:
            source = self.wrapper_agents.get(str(d["wrapper_id"]))
        inv = str(d["invocation_id"]) if d.get("invocation_id") is not None else None
        if self.from_completions:
            self._request_messages(request, source, rec)
        if source and inv:
            self.pending_llm[source] = inv
        extra = {
            k: d.get(k)
            for k in ("client_id", "wrapper_id", "is_cached", "thread_id", "session_id")
            if d.get(k) is not None
        }
        if text and not self.from_completions:
            extra["response_text"] = text
        self.b.add(
            "llm_call",
            actor=source,
            role="assistant",
            model=model,
            usage=usage,
            llm_call_id=inv,
            id=inv,
            started_at=parse_ts(d.get("start_time")),
            ended_at=parse_ts(d.get("end_time")),
            source=rec.ref,
            raw=d,
            extra=extra,
        )
        if self.from_completions and text:
            self.said[text] += 1
            self.seen_by.setdefault(source or "", Counter())[text] += 1
            key = source or ""  # the reply comes back in the agent's next request
            self.request_seen[key] = self.request_seen.get(key, 0) + 1
            self.b.add("message", actor=source, role="assistant", content=text, llm_call_id=inv,
                       subtype="completion_response", source=rec.ref)  # fmt: skip

    def _request_messages(self, request: dict[str, Any], source: str | None, rec: _Record) -> None:
        """The new part of a completion's (cumulative) ``request.messages``, as messages: used only
        when the log has no ``received_message`` events."""
        msgs = [m for m in _l(request.get("messages")) if isinstance(m, dict)]
        key = source or ""
        start = self.request_seen.get(key, 0)
        if start > len(msgs):
            start = 0  # a new conversation (e.g. the history was cleared)
        self.request_seen[key] = len(msgs)
        for i, m in enumerate(msgs[start:], start=start):
            native = _s(m.get("role"))
            text = content_text(m.get("content"))
            copied = False
            if text:
                seen = self.seen_by.setdefault(key, Counter())
                copied = seen[text] < self.said[text]
                seen[text] += 1
                if not copied:
                    self.said[text] += 1
                if self.task is None and native == "user":
                    self.task = text
            actor = _s(m.get("name")) or (
                "system" if native == "system" else "user" if native == "user" else source
            )
            self.b.add(
                "message",
                actor=actor,
                role=_ROLES.get(native or ""),
                content=text,
                subtype="request_message",
                is_copied_context=copied,
                source=source_ref(
                    path=rec.ref.path,
                    line=rec.ref.line,
                    pointer=f"{rec.ref.pointer or ''}/request/messages/{i}",
                ),
                raw=m,
            )

    def _function(self, rec: _Record) -> None:
        d = rec.data
        agent = _s(d.get("source_name"))
        args = _json_field(d.get("input_args", d.get("args")))
        returns = _json_field(d.get("returns"))
        name = _s(d.get("function_name"))
        call_id = None
        pending = self.pending_calls.get(agent or "", [])
        if not pending:  # group chats: the call was addressed to the manager, another agent runs it
            pending = next(
                (p for p in self.pending_calls.values() if any(c[2] == args for c in p)),
                next((p for p in self.pending_calls.values() if p), []),
            )
        if pending:
            match = next((p for p in pending if p[2] == args and (name is None or p[1] == name)), None)
            match = match or next((p for p in pending if name is None or p[1] == name), pending[0])
            pending.remove(match)
            call_id, name = match[0], name or match[1]
        self.note_agent(agent, agent_class=d.get("agent_class"), agent_module=d.get("agent_module"))
        extra: dict[str, Any] = {"input_args": args}
        if call_id:
            extra["call_id"] = call_id
        if name:
            extra["function_name"] = name
        self.b.add(
            "system",
            subtype="function_execution",
            actor=agent,
            content=dumps_text(returns) if returns is not None else None,
            started_at=parse_ts(d.get("timestamp")),
            source=rec.ref,
            raw=d,
            extra=extra,
        )

    def _event(self, rec: _Record) -> None:
        d = rec.data
        agent = _s(d.get("source_name"))
        self.note_agent(
            agent,
            agent_class=d.get("agent_class", d.get("agent_class_name")),
            agent_module=d.get("agent_module"),
        )
        state = _d(_json_field(d.get("json_state")))
        name = d.get("event_name")
        ts = parse_ts(d.get("timestamp"))
        if name == "received_message" and "message" in state:
            self._message(rec, agent, state, ts)
        elif name == "reply_func_executed":
            func = _s(state.get("reply_func_name"))
            final = state.get("final") is True
            if final and func == _TERMINATION_FUNC and state.get("reply") is None:
                said = self.last_text or ""
                by = "agent" if "TERMINATE" in said else "unknown"
                reason = "terminate_message" if by == "agent" else "conversation_end"
                self.termination = Termination(reason=reason, by=by, native=func, at_seq=len(self.b.events))
                self.b.add(
                    "termination",
                    subtype="conversation_end",
                    actor=agent,
                    content=func,
                    started_at=ts,
                    source=rec.ref,
                    raw=d,
                    extra={"final": final},
                )
                return
            self.b.add(
                "system",
                subtype="reply_func",
                actor=agent,
                content=func,
                started_at=ts,
                source=rec.ref,
                raw=d,
                extra={"final": final, "has_reply": state.get("reply") is not None},
            )
        else:
            self.b.add(
                "system",
                subtype=str(name),
                actor=agent,
                content=dumps_text(state),
                started_at=ts,
                source=rec.ref,
                raw=d,
            )

    def _message(self, rec: _Record, receiver: str | None, state: dict[str, Any], ts: Any) -> None:
        b = self.b
        msg = state.get("message")
        sender = _s(state.get("sender"))
        m = msg if isinstance(msg, dict) else {"content": msg}
        key = dumps_text(
            [m.get("content"), m.get("tool_calls"), m.get("tool_responses"), m.get("function_call")]
        )
        relay = (
            self.last_msg is not None
            and self.last_msg[0] == key
            and receiver not in (self.last_msg[1], self.last_msg[2])
        )
        self.last_msg = (key, sender or "", receiver or "")
        llm_call_id = None if relay else self.pending_llm.pop(sender or "", None)
        native_role = _s(m.get("role"))
        role = _ROLES.get(native_role or "")
        text = content_text(m.get("content"))
        if text:
            self.last_text = text
        if self.task is None and isinstance(msg, str):
            self.task = msg
        raw_value: Any = rec.data
        base: dict[str, Any] = {
            "recipients": [receiver] if receiver else None,
            "started_at": ts,
            "source": rec.ref,
            "is_copied_context": relay,
            "llm_call_id": llm_call_id,
        }
        extra: dict[str, Any] = {}
        if state.get("valid") is False:
            extra["valid"] = False
        if isinstance(m.get("name"), str) and m["name"] != sender and native_role not in ("function", "tool"):
            extra["speaker"] = m["name"]

        def add(kind: str, **fields: Any) -> None:
            nonlocal raw_value, extra
            b.add(kind, raw=raw_value, extra=extra, **base, **fields)
            raw_value = None
            extra = {}

        if relay:
            # a manager's copy of the message it just received: one event, calls/results kept in extra
            for k in ("tool_calls", "tool_responses", "function_call"):
                if m.get(k):
                    extra[k] = m[k]
            add("message", actor=sender, role=role, content=text, subtype="relay")
            return
        responses = [r for r in _l(m.get("tool_responses")) if isinstance(r, dict)]
        if responses or native_role in ("tool", "function"):
            if not responses:
                responses = [
                    {
                        "tool_call_id": m.get("tool_call_id"),
                        "content": m.get("content"),
                        "name": m.get("name"),
                    }
                ]
            for r in responses:
                cid = str(r["tool_call_id"]) if r.get("tool_call_id") is not None else None
                add(
                    "tool_result",
                    actor=sender,
                    role="tool",
                    tool_result=ToolResult(
                        call_id=cid,
                        name=_s(r.get("name")) or self.call_names.get(cid or ""),
                        output=content_text(r.get("content")),
                    ),
                )
            return
        calls = [c for c in _l(m.get("tool_calls")) if isinstance(c, dict)]
        if isinstance(m.get("function_call"), dict):
            calls.append({"function": m["function_call"]})
        if text or not calls:
            add("message", actor=sender, role=role, content=text)
        for c in calls:
            fn = _d(c.get("function"))
            fname = str(fn.get("name") or "unknown")
            args, args_raw = parse_arguments(fn.get("arguments"))
            cid = str(c["id"]) if c.get("id") is not None else None
            if cid:
                self.call_names[cid] = fname
            if receiver:
                self.pending_calls.setdefault(receiver, []).append((cid, fname, args))
            add(
                "tool_call",
                actor=sender,
                role="assistant",
                tool_call=ToolCall(name=fname, call_id=cid, arguments=args, arguments_raw=args_raw),
            )

    # -- result --------------------------------------------------------------------------

    def agent_infos(self) -> list[AgentInfo]:
        actors = {e.actor: None for e in self.b.events if e.actor}
        for actor in actors:  # senders that never logged an event of their own (e.g. a user proxy)
            self.agents.setdefault(actor, {})
        infos = []
        for name, info in self.agents.items():
            if name not in actors and "agent_type" not in info:
                continue
            infos.append(
                AgentInfo(
                    name=name,
                    role_description=info.get("description"),
                    system_prompt=info.get("system_prompt"),
                    model=info.get("model"),
                    extra={
                        k: info[k]
                        for k in ("agent_type", "agent_class", "agent_module", "agent_id")
                        if k in info
                    },
                )
            )
        return infos


def _iter_lines(src: Source) -> Iterator[tuple[int, int, str]]:
    """(line_no, byte offset, text) of each non-blank line, streamed."""
    offset = 0
    with open_lines(src.path) as fh:
        for line_no, line in enumerate(fh, start=1):
            start = offset
            offset += len(line)
            text = line.decode("utf-8", "replace").strip().lstrip("\ufeff")
            if text:
                yield line_no, start, text


@register
class AG2RuntimeImporter(Importer):
    name = "ag2_runtime"
    description = "AutoGen 0.2 / AG2 runtime logging: file logger (runtime.log) and SQLite logger (logs.db)"

    def sniff(self, src: Source) -> float:
        if src.is_dir:
            return 0.0
        if src.head.startswith(SQLITE_MAGIC):
            tables = src.sqlite_schema or {}
            return (
                0.95 if "chat_completions" in tables and ("events" in tables or "agents" in tables) else 0.0
            )
        shape = src.json_shape
        if shape == "none":  # a runtime.log starts with its session banner
            first = src.head_text[:4096].lstrip().split("\n", 1)[0]
            return 0.95 if _BANNER.match(first) else 0.0
        if shape == "jsonl":
            kind = record_kind(src.first_record)
            if kind in ("event", "completion", "agent", "function"):
                return 0.9
            if kind in ("client", "wrapper"):
                return 0.8
        return 0.0

    def load(self, src: Source) -> Iterator[Trace | TraceLoadError]:
        if src.head.startswith(SQLITE_MAGIC):
            sessions = self._sqlite_sessions(src)
        else:
            sessions = None
        if sessions is not None:
            for i, s in enumerate(sessions):
                yield self._trace(src, s, i)
            return
        yield from self._load_file(src)

    # -- file logger -----------------------------------------------------------------

    def _load_file(self, src: Source) -> Iterator[Trace | TraceLoadError]:
        session = _Session(None)
        index = 0
        seen_any = False
        for line_no, offset, text in _iter_lines(src):
            ref = source_ref(line=line_no, offset=offset)
            banner = _BANNER.match(text)
            if banner:
                if session.records:
                    yield self._trace(src, session, index)
                    index += 1
                session = _Session(banner.group(1))
                session.records.append(_Record("banner", text, ref))
                seen_any = True
                continue
            if text.startswith("{"):
                try:
                    rec = loads(text)
                except orjson.JSONDecodeError as exc:
                    yield TraceLoadError(src.path, bad_line_reason(exc, line_no), line=line_no, offset=offset)
                    continue
                kind = record_kind(rec)
                if kind is None:
                    yield TraceLoadError(
                        src.path,
                        f"line {line_no}: not an AG2 runtime-logging record",
                        line=line_no,
                        offset=offset,
                    )
                    continue
                seen_any = True
                if session.sid is None and isinstance(rec.get("session_id"), str):
                    session.sid = rec["session_id"]
                session.records.append(_Record(kind, rec, ref))
            else:
                session.records.append(_Record("text", text, ref))
        if not seen_any:
            raise FormatError("no AG2 runtime-logging session banner or record found")
        if session.records:
            yield self._trace(src, session, index)

    # -- sqlite logger ---------------------------------------------------------------

    def _sqlite_sessions(self, src: Source) -> list[_Session]:
        con, tables = open_ro(src.path)
        try:
            con.row_factory = sqlite3.Row
            if "chat_completions" not in tables:
                raise FormatError("SQLite database without the AG2 runtime-logging table chat_completions")
            rows: dict[str, list[dict[str, Any]]] = {}
            for table in _TABLES:
                if table in tables:  # a fixed name, never one read from the file
                    rows[table] = [
                        dict(r)
                        for r in con.execute(f'SELECT rowid AS "__rowid__", * FROM "{table}" ORDER BY rowid')
                    ]
        except DB_ERRORS as exc:
            raise FormatError(f"unreadable SQLite database: {exc}") from None
        finally:
            con.close()
        return self._group_sqlite(rows)

    def _group_sqlite(self, rows: dict[str, list[dict[str, Any]]]) -> list[_Session]:
        kinds = {
            "chat_completions": "completion",
            "agents": "agent",
            "oai_wrappers": "wrapper",
            "oai_clients": "client",
            "events": "event",
            "function_calls": "function",
        }
        recs: list[tuple[str, int, _Record]] = []
        order = 0
        for table, kind in kinds.items():
            for row in rows.get(table, []):
                rowid = row.pop("__rowid__", None)
                # a completion is ordered by when it ended, else when it started (end_time can be NULL)
                ts = (
                    (row.get("end_time") or row.get("start_time"))
                    if kind == "completion"
                    else row.get("timestamp")
                )
                if kind == "event" and "agent_class_name" in row:
                    row.setdefault("agent_class", row["agent_class_name"])
                ref = source_ref(pointer=f"/{table}/{rowid}")
                session = _s(row.get("session_id"))
                recs.append((str(ts or ""), order, _Record(kind, row, ref, session)))
                order += 1
        recs.sort(key=lambda r: (r[0], r[1]))
        starts: dict[str, str] = {}
        for ts, _o, rec in recs:
            if rec.session and rec.session not in starts:
                starts[rec.session] = ts
        ordered = sorted(starts, key=lambda s: starts[s])
        sessions = {sid: _Session(sid) for sid in ordered} or {"": _Session(None)}
        first = next(iter(sessions.values()))
        for ts, _o, rec in recs:
            target = sessions.get(rec.session or "")
            if target is None:  # events and function calls carry no session id: by time
                target = first
                for sid in ordered:
                    if starts[sid] <= ts:
                        target = sessions[sid]
            target.records.append(rec)
        version = [r.get("version_number") for r in rows.get("version", [])]
        for s in sessions.values():
            s.extra["logger"] = "sqlite"
            if version:
                s.extra["db_version"] = version[0]
        return list(sessions.values())

    # -- trace -------------------------------------------------------------------------

    def _trace(self, src: Source, session: _Session, index: int) -> Trace:
        b = TraceBuilder(self.name, src.path, trace_id=session.sid, index=index)
        builder = _Builder(b)
        builder.from_completions = not any(
            r.kind == "event" and _d(r.data).get("event_name") == "received_message" for r in session.records
        )
        for rec in session.records:
            builder.add(rec)
        ts = [e.started_at for e in b.events if e.started_at is not None]
        extra = dict(session.extra)
        if builder.cost:
            extra["total_cost_usd"] = builder.cost
        return b.build(
            framework="ag2",
            model=builder.models.most_common(1)[0][0] if builder.models else None,
            task=builder.task,
            agents=builder.agent_infos(),
            started_at=ts[0] if ts else None,
            ended_at=ts[-1] if ts else None,
            termination=builder.termination,
            raw=builder.raw or None,
            extra=extra,
        )
