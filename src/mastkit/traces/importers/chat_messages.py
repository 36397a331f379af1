"""OpenAI-style chat messages: the catch-all for home-made harness logs and tau-bench results.

Accepted shapes:

* a JSON list of messages ``[{"role": ..., "content": ...}, ...]``;
* an object with a message list under ``messages`` (or ``conversation``/``chat``/``history``),
  other keys kept as metadata (``id``, ``model``, ``task``, ``reward``, ``success``, ...);
* tau-bench ``EnvRunResult`` objects (``task_id``, ``reward``, ``info``, ``traj``), one or a list;
* a JSON list of such objects, or JSONL with one such object/list per line: one trace each;
* ShareGPT records (``conversations: [{"from": "human", "value": ...}]``).

Messages may carry OpenAI ``tool_calls``/``function_call``, ``tool``/``function`` results,
Anthropic content blocks (``tool_use``, ``tool_result``, ``thinking``), ``reasoning_content``,
and a ``name`` (the agent identity in multi-agent logs).
"""

from __future__ import annotations

from collections.abc import Iterator
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
from mastkit.traces.importers.who_and_when import split_role
from mastkit.traces.model import Outcome, SourceRef, Termination, ToolCall, ToolResult, Trace
from mastkit.traces.registry import Importer, register
from mastkit.traces.source import Source

_SUCCESS_KEYS = ("success", "is_success", "resolved", "is_correct", "passed")
_OUTCOME_HOLDERS = ("eval_result", "evaluation", "result", "results", "meta", "metadata")
"""Dicts in a record where harnesses put the run's verdict (read after the record's own keys)."""
_LIST_KEYS = ("messages", "traj", "conversation", "chat", "history", "conversations", "chat_history")
_ROLES = {
    "system",
    "user",
    "assistant",
    "tool",
    "function",
    "developer",
    "human",
    "gpt",
    "model",
    "ai",
    "bot",
    "function_call",
    "observation",
}
_ROLE_MAP = {
    "developer": "system", "human": "user", "gpt": "assistant", "model": "assistant", "ai": "assistant",
    "bot": "assistant", "function": "tool", "observation": "tool", "function_call": "assistant",
}  # fmt: skip


# How Magentic-One's orchestrator opens a thought that is a plan (its other thoughts: the progress
# ledger, "Next speaker X", "Stalled.... Replanning...")
_PLAN_OPENINGS = ("initial plan", "new plan", "updated plan", "plan:")


def agent_message_events(text: str | None, native: str) -> list[tuple[str, dict[str, Any]]]:
    """``(kind, fields)`` of a message whose role or source names an agent (Magentic-One): the agent
    is the actor. ``X (thought)`` is X's reasoning, or its plan when the text is one (``Initial
    plan:``, ``New plan:``, ...); ``X (-> Y)`` is X's message to Y; another suffix is kept as the
    message's subtype. ``human`` / ``user`` is the user."""
    agent, sub, target = split_role(native.strip())
    human = agent.lower() in ("human", "user")
    fields: dict[str, Any] = {
        "actor": "user" if human else agent,
        "role": "user" if human else "assistant",
        "content": text,
    }
    if sub is not None and sub.lower() == "thought":
        kind = "plan" if (text or "").lstrip().lower().startswith(_PLAN_OPENINGS) else "reasoning"
        return [(kind, fields)]
    if target:
        fields["recipients"] = [target]
    elif sub:
        fields["subtype"] = sub
    return [("message", fields)]


def _str(value: Any) -> str | None:
    return None if value is None else str(value)


# OpenAI Responses API input/output items that have no ``role``
_ITEM_TYPES = {
    "function_call", "function_call_output", "reasoning", "custom_tool_call", "custom_tool_call_output",
    "local_shell_call", "local_shell_call_output", "computer_call", "computer_call_output",
    "web_search_call", "file_search_call", "mcp_call",
}  # fmt: skip


def _item_type(m: dict[str, Any]) -> str | None:
    """The type of a role-less Responses API item (``type`` may be anything: checked as a string)."""
    itype = m.get("type")
    return itype if isinstance(itype, str) and itype in _ITEM_TYPES and "role" not in m else None


# AutoGen AgentChat (0.4+) messages and events, as ``TaskResult.messages`` dumps them:
# ``{id, source, models_usage, metadata, created_at, content, type}``
_AGENTCHAT_TYPES = frozenset((
    "TextMessage", "MultiModalMessage", "StopMessage", "HandoffMessage", "ToolCallSummaryMessage",
    "StructuredMessage", "ToolCallRequestEvent", "ToolCallExecutionEvent", "ThoughtEvent",
    "UserInputRequestedEvent", "MemoryQueryEvent", "ModelClientStreamingChunkEvent", "SelectSpeakerEvent",
    "SelectorEvent", "CodeGenerationEvent", "CodeExecutionEvent",
))  # fmt: skip


def _is_agentchat(m: Any) -> bool:
    """An AutoGen AgentChat message or event (``source`` names the agent, ``type`` the class)."""
    return (
        isinstance(m, dict)
        and isinstance(m.get("source"), str)
        and m.get("type") in _AGENTCHAT_TYPES
        and "content" in m
        and "role" not in m
    )


def _agentchat_termination(stop_reason: str) -> Termination:
    """AgentChat's ``TaskResult.stop_reason`` (the termination condition's message) -> Termination."""
    low = stop_reason.lower()
    if "timeout" in low:
        return Termination(reason="timeout", by="limit", native=stop_reason)
    if "external" in low:
        return Termination(reason="user", by="user", native=stop_reason)
    if any(w in low for w in ("maximum", "maximal", "limit", "exceeded")):
        return Termination(reason="max_steps", by="limit", native=stop_reason)
    if any(w in low for w in ("mentioned", "stop message", "handoff", "was executed")):
        return Termination(reason="final_answer", by="agent", native=stop_reason)
    return Termination(reason="unknown", by="unknown", native=stop_reason)


def _is_agent_message(m: Any) -> bool:
    """A ``{role, content}`` message whose role is an agent's name rather than a chat role
    (Magentic-One: ``WebSurfer``, ``Orchestrator (thought)``, ``Orchestrator (-> WebSurfer)``)."""
    if not isinstance(m, dict) or "content" not in m or "from" in m:
        return False
    role = m.get("role")
    return isinstance(role, str) and 0 < len(role.strip()) <= 200 and "\n" not in role


def _named_roles(msgs: list[Any]) -> bool:
    """The first messages of ``msgs`` are messages whose roles are chat roles or agent names, and at
    least one of them is a chat role or carries a Magentic-One suffix (``(thought)``, ``(-> X)``)."""
    head = msgs[:20]
    return (
        bool(head)
        and all(_is_message(m) or _is_agent_message(m) for m in head)
        and any(_is_message(m) or split_role(str(m.get("role")))[1:] != (None, None) for m in head)
    )


def _is_message(m: Any) -> bool:
    if not isinstance(m, dict):
        return False
    if _item_type(m) is not None or _is_agentchat(m):
        return True
    role = m.get("role", m.get("from"))
    return (
        isinstance(role, str)
        and role.lower() in _ROLES
        and ("content" in m or "value" in m or "tool_calls" in m)
    )


# tau2-bench ``TerminationReason`` values -> (normalised reason, who ended the simulation)
_TAU2_TERMINATION: dict[str, tuple[str, Any]] = {
    "agent_stop": ("completed", "agent"), "user_stop": ("user", "user"), "max_steps": ("max_steps", "limit"),
    "too_many_errors": ("error", "error"), "agent_error": ("error", "error"),
    "user_error": ("error", "error"), "timeout": ("timeout", "limit"),
}  # fmt: skip


_TAU2_SCENARIO_PARTS = (
    ("reason_for_call", "Reason for call"),
    ("known_info", "Known info"),
    ("unknown_info", "Unknown info"),
    ("task_instructions", "Task instructions"),
)


def _tau2_scenario(task: Any) -> str | None:
    """A tau2-bench task's ``user_scenario`` as text: the simulated user's persona and instructions
    (its hidden goal, as tau-bench's ``info.task.instruction`` is), or None when there is none."""
    scenario = _dict_at(task, "user_scenario")
    instructions = scenario.get("instructions")
    parts = [scenario["persona"]] if isinstance(scenario.get("persona"), str) and scenario["persona"] else []
    if isinstance(instructions, str) and instructions.strip():
        parts.append(instructions)
    elif isinstance(instructions, dict):
        parts += [
            f"{title}: {instructions[key]}"
            for key, title in _TAU2_SCENARIO_PARTS
            if isinstance(instructions.get(key), str) and instructions[key].strip()
        ]
    return "\n\n".join(parts) or None


def _dict_at(value: Any, *keys: str) -> dict[str, Any]:
    """``value[k1][k2]...`` when each step is a dict, else ``{}``."""
    for k in keys:
        value = value.get(k) if isinstance(value, dict) else None
    return value if isinstance(value, dict) else {}


def _simulations(rec: Any) -> list[Any] | None:
    """tau2-bench results ``{info, tasks, simulations: [{id, task_id, messages, reward_info, ...}]}``."""
    if not isinstance(rec, dict) or not isinstance(rec.get("simulations"), list):
        return None
    sims = rec["simulations"]
    return sims if sims and isinstance(sims[0], dict) and _message_list(sims[0]) is not None else None


def _empty_results(rec: Any) -> bool:
    """tau2-bench results that hold no simulation (a run stopped before it saved one): the
    ``info`` header with its environment / agent / user blocks, and ``simulations: []``."""
    if not isinstance(rec, dict) or rec.get("simulations") != []:
        return False
    info = rec.get("info")
    return isinstance(info, dict) and any(k in info for k in ("environment_info", "agent_info", "user_info"))


def _why_not_messages(msgs: list[Any]) -> str:
    """Which of the first messages of a list is not one, and what it lacks."""
    for i, m in enumerate(msgs[:20]):
        if _is_message(m) or _is_agent_message(m):
            continue
        if not isinstance(m, dict):
            return f"item {i} is a JSON {type(m).__name__}, not a message object"
        role = m.get("role", m.get("from"))
        if not isinstance(role, str) or not role.strip():
            return f"item {i} has no 'role' (keys: {', '.join(list(m)[:6])})"
        return f"item {i} (role {role[:40]!r}) has no 'content'"
    return "no message has a known role (system, user, assistant, tool, ...) or an agent-name role suffix"


def _message_list(rec: Any) -> tuple[list[Any], str] | None:
    """The message list inside a record, and the key it was under ('' for a bare list)."""
    if isinstance(rec, list):
        return (rec, "") if rec and (all(_is_message(m) for m in rec[:20]) or _named_roles(rec)) else None
    if isinstance(rec, dict):
        for key in _LIST_KEYS:
            val = rec.get(key)
            if isinstance(val, list) and val and _is_message(val[0]):
                return val, key
        return _team_thread(rec)
    return None


def _team_thread(rec: dict[str, Any]) -> tuple[list[Any], str] | None:
    """An AutoGen AgentChat ``TeamState`` (``team.save_state()``): the group chat manager's
    ``message_thread``, and its path below the record (``agent_states/<manager>/message_thread``)."""
    states = rec.get("agent_states") if rec.get("type") == "TeamState" else None
    for name, state in states.items() if isinstance(states, dict) else ():
        thread = state.get("message_thread") if isinstance(state, dict) else None
        if isinstance(thread, list) and thread and _is_agentchat(thread[0]):
            return thread, f"agent_states/{name}/message_thread"
    return None


def _conversation(rec: Any) -> tuple[list[Any], str] | None:
    """:func:`_message_list`, or an empty list under a message key: a run that ended before its
    first message. Such a record, met among others, is a trace with no events, so that its
    outcome still counts (the sniffer never claims a file on one)."""
    found = _message_list(rec)
    if found is None and isinstance(rec, dict):
        key = next((k for k in _LIST_KEYS if rec.get(k) == []), None)
        if key is not None:
            return [], key
    return found


@register
class ChatMessagesImporter(Importer):
    name = "chat_messages"
    description = (
        "OpenAI-style chat messages (list, {messages: [...]}, JSONL of them), Responses API items, "
        "tau-bench and tau2-bench results, ShareGPT"
    )

    def sniff(self, src: Source) -> float:
        rec = src.first_record
        if src.json_shape == "array" and _is_message(rec):
            return 0.5  # a bare list of messages: the first record is a message
        if src.json_shape == "array" and _is_agent_message(rec):
            if _message_list(src.json) is not None:
                return 0.45  # a bare list of messages whose roles are agent names (Magentic-One)
            if split_role(str(rec["role"]))[1:] != (None, None):
                return 0.2  # starts like one but a message is broken: claimed weakly, to say which
        if _message_list(rec) is not None:
            return 0.5
        if _simulations(rec) is not None or _empty_results(rec):
            return 0.6  # tau2-bench results
        if isinstance(rec, list) and rec and _message_list(rec[0]) is not None:
            return 0.5  # a list of runs
        if src.json_shape == "jsonl" and _conversation(rec) is not None:
            return 0.3  # a file of runs whose first ended before its first message (a weak claim)
        return 0.0

    def load(self, src: Source) -> Iterator[Trace | TraceLoadError]:
        if src.json_shape == "jsonl":
            for line, offset, value in src.iter_jsonl():
                if isinstance(value, FormatError):
                    yield TraceLoadError(src.path, value.reason, line=line, offset=offset)
                    continue
                yield from self._records(src, value, index=line, line=line)
            return
        doc = src.json
        if _empty_results(doc):
            reason = "tau2-bench results with no simulations: the run saved none (only its info and tasks)"
            yield TraceLoadError(src.path, reason)
            return
        sims = _simulations(doc)
        if sims is not None:
            # the results' own metadata (info: agent / user models, domain, ...) and each
            # simulation's task go with its trace (``Trace.raw``: ``tau2_results``, ``tau2_task``)
            header = {k: v for k, v in doc.items() if k not in ("simulations", "tasks")}
            tasks = doc["tasks"] if isinstance(doc.get("tasks"), list) else []
            by_id = {str(t.get("id")): t for t in tasks if isinstance(t, dict)}
            for i, sim in enumerate(sims):
                tau2: dict[str, Any] = {"tau2_results": header}
                if isinstance(sim, dict) and (task := by_id.get(str(sim.get("task_id")))) is not None:
                    tau2["tau2_task"] = task
                yield from self._records(src, sim, index=i, pointer=f"/simulations/{i}", tau2=tau2)
            return
        if (found := _message_list(doc)) is not None:
            yield self._trace(src, doc, found, index=None)
        elif isinstance(doc, list) and doc and _is_agent_message(doc[0]) and _conversation(doc[0]) is None:
            raise FormatError(f"not a list of chat messages: {_why_not_messages(doc)}")
        elif isinstance(doc, list):
            for i, rec in enumerate(doc):
                yield from self._records(src, rec, index=i)
        else:
            raise FormatError("no chat message list found")

    def _records(
        self,
        src: Source,
        rec: Any,
        *,
        index: int,
        line: int | None = None,
        pointer: str = "",
        tau2: dict[str, Any] | None = None,
    ) -> Iterator[Trace | TraceLoadError]:
        found = _conversation(rec)
        if found is None:
            where = f" ({pointer})" if pointer else ""
            yield TraceLoadError(src.path, f"record has no chat message list{where}", line=line)
            return
        try:
            yield self._trace(src, rec, found, index=index, line=line, pointer=pointer, tau2=tau2)
        except (ValueError, TypeError, KeyError) as exc:
            yield TraceLoadError(src.path, f"bad record: {validation_reason(exc)}", line=line)

    def _trace(
        self,
        src: Source,
        rec: Any,
        found: tuple[list[Any], str],
        *,
        index: int | None,
        line: int | None = None,
        pointer: str = "",
        tau2: dict[str, Any] | None = None,
    ) -> Trace:
        """The trace of ``rec``, whose messages and their key (``found``) the caller has found."""
        messages, key = found
        meta: dict[str, Any] = {k: v for k, v in rec.items() if k != key} if isinstance(rec, dict) else {}
        native_id = next((meta[k] for k in ("trace_id", "id", "session_id", "run_id") if meta.get(k)), None)
        tid = str(native_id) if native_id is not None else None
        if tid is None and "task_id" in meta and "traj" in (rec or {}):
            tid = f"tau-{meta.get('task_id')}-trial{meta.get('trial', 0)}"
        b = TraceBuilder(self.name, src.path, trace_id=tid, index=index)
        base_pointer = f"{pointer}/{key}" if key else pointer
        # Magentic-One names agents in the role ("Orchestrator (thought)"); there "Assistant" is an agent
        named = any(
            _is_agent_message(m) and split_role(str(m["role"]))[1:] != (None, None) for m in messages[:50]
        )
        for i, m in enumerate(messages):
            self._message(b, m, source_ref(line=line, pointer=f"{base_pointer}/{i}"), named=named)
        fields = self._trace_fields(meta, key, tau2)
        if any(_is_agentchat(m) for m in messages[:20]):  # an AutoGen AgentChat TaskResult / message list
            fields.setdefault("framework", "autogen-agentchat")
            first = next((m for m in messages if _is_agentchat(m) and m["source"] == "user"), None)
            if "task" not in fields and first is not None and isinstance(first.get("content"), str):
                fields["task"] = first["content"]
        return b.build(**fields)

    def _message(self, b: TraceBuilder, m: Any, ref: SourceRef, *, named: bool = False) -> None:
        """The events of one message; ``named``: roles that are not lower-case chat roles name agents."""
        if not isinstance(m, dict):
            b.add("message", content=dumps_text(m), source=ref, raw=m, extra={"unrecognised": True})
            return
        native_role = str(m["role"] if "role" in m else m.get("from", "")).lower()
        if not native_role and (itype := _item_type(m)) is not None:
            events = self._item(m, itype)  # a Responses API item without a role
        elif not native_role and _is_agentchat(m):
            events = self._agentchat(m)
        elif _is_agent_message(m) and (native_role not in _ROLES or (named and m["role"] != native_role)):
            events = agent_message_events(content_text(m.get("content")), str(m["role"]))
        else:
            role = _ROLE_MAP.get(native_role, native_role)
            if role not in ("system", "user", "assistant", "tool"):
                role = "user"
            name = m.get("name")
            actor = (
                name
                if isinstance(name, str) and name and role != "tool"
                else ("environment" if role == "tool" else role)
            )
            events = self._events(m, role, actor, native_role)
        if not events:
            return
        # Fields every event of the message shares (only those present: fewer to check per event).
        common: dict[str, Any] = {"source": ref}
        if isinstance(model := m.get("model"), str):
            common["model"] = model
        if (ts := m.get("timestamp") or m.get("created_at")) and (started := parse_ts(ts)) is not None:
            common["started_at"] = started
        usage_src = m.get("usage") or m.get("models_usage")  # AgentChat: models_usage
        usage = usage_from(usage_src) if usage_src else None
        last = len(events) - 1
        for i, (kind, fields) in enumerate(events):
            # The whole native message is kept once, on its first event; later events point to it.
            # Its usage goes on its last event (counted once per call).
            fields.update(common)
            if i == 0:
                fields["raw"] = m
            if usage is not None and i == last:
                fields["usage"] = usage
            b.add_fields(kind, fields)

    def _events(
        self, m: dict[str, Any], role: str, actor: str, native_role: str = ""
    ) -> list[tuple[str, dict[str, Any]]]:
        """``(kind, fields)`` of the events one native message becomes, in order."""
        out: list[tuple[str, dict[str, Any]]] = []
        body = m.get("content", m.get("value"))
        reasoning = m.get("reasoning_content") or m.get("reasoning")
        if isinstance(reasoning, str) and reasoning:
            out.append(("reasoning", {"actor": actor, "role": role, "content": reasoning}))

        if native_role == "function_call":  # ShareGPT tool-use datasets: value = {"name", "arguments"}
            call, _raw = parse_arguments(body)
            spec: dict[str, Any] = call if isinstance(call, dict) else {}
            args, raw_args = parse_arguments(spec.get("arguments", spec.get("parameters")))
            tool_call = ToolCall(name=str(spec.get("name") or "unknown"), arguments=args,
                                 arguments_raw=raw_args if spec else _str(body))  # fmt: skip
            out.append(("tool_call", {"actor": "assistant", "role": "assistant", "tool_call": tool_call}))
            return out
        if role == "tool":
            name = m.get("name")
            is_error = m.get("is_error", m.get("error"))  # tau2-bench: ``error``
            result = ToolResult(
                # tau2-bench ToolMessage carries the call id as ``id`` (only read on ``role: tool``:
                # elsewhere ``id`` is the message's own id)
                call_id=_str(
                    m["tool_call_id"]
                    if "tool_call_id" in m
                    else m.get("id")
                    if native_role == "tool"
                    else None
                ),
                name=name if isinstance(name, str) else None,
                output=content_text(body),
                is_error=is_error if isinstance(is_error, bool) else None,
            )
            out.append(("tool_result", {"actor": actor, "role": "tool", "tool_result": result}))
            return out

        if isinstance(body, list) and any(
            isinstance(p, dict) and p.get("type") in ("tool_use", "tool_result", "thinking") for p in body
        ):
            for part in body:
                if isinstance(part, dict):
                    self._block(part, role, actor, out)
        else:
            text = content_text(body)
            if text or not (m.get("tool_calls") or m.get("function_call")):
                fields: dict[str, Any] = {"actor": actor, "role": role, "content": text}
                if role == "system":
                    fields["subtype"] = "system_prompt"
                out.append(("message", fields))

        calls: list[Any] = m["tool_calls"] if isinstance(m.get("tool_calls"), list) else []
        if isinstance(m.get("function_call"), dict):
            calls = [*calls, {"function": m["function_call"]}]
        for call in calls:
            if not isinstance(call, dict):
                continue
            fn: dict[str, Any] = call["function"] if isinstance(call.get("function"), dict) else call
            args, raw_args = parse_arguments(fn.get("arguments"))
            tool_call = ToolCall(
                name=str(fn.get("name") or "unknown"),
                call_id=str(call["id"]) if call.get("id") is not None else None,
                arguments=args,
                arguments_raw=raw_args,
            )
            # tau2-bench's user simulator calls tools too (telecom: role user, requestor user)
            call_role = "user" if role == "user" else "assistant"
            out.append(("tool_call", {"actor": actor, "role": call_role, "tool_call": tool_call}))
        return out

    @staticmethod
    def _agentchat(m: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        """One AutoGen AgentChat message or event: ``source`` is the actor (``user`` the user)."""
        source = str(m["source"])
        user = source == "user"
        who: dict[str, Any] = {"actor": source, "role": "user" if user else "assistant"}
        mtype = str(m["type"])
        body = m.get("content")
        if mtype == "ToolCallRequestEvent":
            out: list[tuple[str, dict[str, Any]]] = []
            for c in body if isinstance(body, list) else []:
                if isinstance(c, dict):
                    args, raw_args = parse_arguments(c.get("arguments"))
                    call = ToolCall(name=str(c.get("name") or "unknown"), call_id=_str(c.get("id")),
                                    arguments=args, arguments_raw=raw_args)  # fmt: skip
                    out.append(("tool_call", {**who, "tool_call": call}))
            return out
        if mtype == "ToolCallExecutionEvent":
            out = []
            for r in body if isinstance(body, list) else []:
                if isinstance(r, dict):
                    err = r.get("is_error")
                    result = ToolResult(call_id=_str(r.get("call_id")), name=_str(r.get("name")),
                                        output=content_text(r.get("content")),
                                        is_error=err if isinstance(err, bool) else None)  # fmt: skip
                    out.append(
                        ("tool_result", {"actor": "environment", "role": "tool", "tool_result": result})
                    )
            return out
        text = body if isinstance(body, str) else content_text(body) if isinstance(body, list) else None
        if text is None and body is not None:
            text = dumps_text(body)  # StructuredMessage content, SelectSpeakerEvent names, ...
        if mtype == "ThoughtEvent":
            return [("reasoning", {**who, "content": text})]
        if mtype == "HandoffMessage":
            target = m.get("target")
            return [
                (
                    "handoff",
                    {**who, "content": text, "recipients": [target] if isinstance(target, str) else None},
                )
            ]
        if mtype.endswith("Message"):
            subtype = {"StopMessage": "stop", "ToolCallSummaryMessage": "tool_call_summary"}.get(mtype)
            return [("message", {**who, "content": text, "subtype": subtype})]
        return [("system", {**who, "content": text, "subtype": mtype})]  # other events, kept

    @staticmethod
    def _item(m: dict[str, Any], itype: str) -> list[tuple[str, dict[str, Any]]]:
        """An OpenAI Responses API item without a role (function call / output, reasoning, ...)."""
        call_id = _str(m.get("call_id", m.get("id")))
        if itype == "reasoning":
            summary = m.get("summary")
            text = content_text(summary) if isinstance(summary, list) else content_text(m.get("content"))
            return [("reasoning", {"actor": "assistant", "role": "assistant", "content": text or None})]
        if itype.endswith("_output"):
            out = m.get("output")
            text = out if isinstance(out, str) else content_text(out) if isinstance(out, list) else None
            if text is None and out is not None:
                text = dumps_text(out)
            result = ToolResult(call_id=call_id, output=text)
            return [("tool_result", {"actor": "environment", "role": "tool", "tool_result": result})]
        raw = m.get("arguments", m.get("input", m.get("action")))
        args, raw_args = parse_arguments(raw)
        name = m.get("name") or itype.removesuffix("_call")
        call = ToolCall(name=str(name), call_id=call_id, arguments=args, arguments_raw=raw_args)
        return [("tool_call", {"actor": "assistant", "role": "assistant", "tool_call": call})]

    @staticmethod
    def _block(part: dict[str, Any], role: str, actor: str, out: list[tuple[str, dict[str, Any]]]) -> None:
        """One Anthropic-style content block (thinking, tool_use, tool_result, text, ...)."""
        ptype = part.get("type")
        if ptype == "thinking":
            out.append(("reasoning", {"actor": actor, "role": role, "content": part.get("thinking")}))
        elif ptype == "tool_use":
            args, raw_args = parse_arguments(part.get("input"))
            call = ToolCall(
                name=str(part.get("name") or "unknown"),
                call_id=_str(part.get("id")),
                arguments=args,
                arguments_raw=raw_args,
            )
            out.append(("tool_call", {"actor": actor, "role": role, "tool_call": call}))
        elif ptype == "tool_result":
            is_error = part.get("is_error")
            result = ToolResult(
                call_id=_str(part.get("tool_use_id")),
                output=content_text(part.get("content")),
                is_error=is_error if isinstance(is_error, bool) else None,
            )
            out.append(("tool_result", {"actor": "environment", "role": "tool", "tool_result": result}))
        else:
            text = content_text([part])
            if text:
                out.append(("message", {"actor": actor, "role": role, "content": text}))

    def _trace_fields(
        self, meta: dict[str, Any], key: str, tau2: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """Trace fields from a record's metadata; ``tau2`` is the tau2-bench results context of a
        simulation (None for anything else)."""
        fields: dict[str, Any] = {"raw": {**meta, **tau2} if tau2 is not None else meta or None}
        info: dict[str, Any] = meta["info"] if isinstance(meta.get("info"), dict) else {}
        task: dict[str, Any] = info["task"] if isinstance(info.get("task"), dict) else {}
        if key == "traj" and "reward" in meta:
            fields["benchmark"] = "tau-bench"
            fields["framework"] = "tau-bench"
        for k in ("task", "instruction", "question", "prompt", "goal"):
            if isinstance(meta.get(k), str):
                fields["task"] = meta[k]
                break
        else:
            if isinstance(task.get("instruction"), str):
                fields["task"] = task["instruction"]
        if meta.get("task_id") is not None:
            fields["task_id"] = str(meta["task_id"])
        for k in ("model", "llm_name", "model_name"):
            if isinstance(meta.get(k), str):
                fields["model"] = meta[k]
                break
        for k in ("framework", "benchmark"):
            if isinstance(meta.get(k), str):
                fields[k] = meta[k]
        if "benchmark" not in fields and isinstance(meta.get("benchmark_name"), str):
            fields["benchmark"] = meta["benchmark_name"]
        # A harness's verdict: at the top of the record, else in a results/metadata dict below it.
        holders = [meta, *(meta[k] for k in _OUTCOME_HOLDERS if isinstance(meta.get(k), dict))]
        success = next(
            (h[k] for h in holders for k in _SUCCESS_KEYS if isinstance(h.get(k), bool)),
            None,
        )
        reward_info: dict[str, Any] = meta["reward_info"] if isinstance(meta.get("reward_info"), dict) else {}
        score = next(
            (h[k] for h in holders for k in ("reward", "score") if h.get(k) is not None),
            reward_info.get("reward"),
        )
        score_f = float(score) if isinstance(score, (int, float)) and not isinstance(score, bool) else None
        if success is None and score_f is not None and (key == "traj" or reward_info):
            success = score_f >= 1.0  # tau-bench / tau2-bench: reward 1 = task solved
        # a tau2-bench simulation (a ``termination_reason`` alone is too common a key to tell)
        if tau2 is not None or reward_info:
            fields.setdefault("benchmark", "tau2-bench")
            fields.setdefault("framework", "tau2-bench")
            results = tau2.get("tau2_results") if tau2 is not None else None
            agent_info = _dict_at(results, "info", "agent_info")
            if "model" not in fields and isinstance(agent_info.get("llm"), str):
                fields["model"] = agent_info["llm"]
            scenario = _tau2_scenario(tau2.get("tau2_task") if tau2 is not None else None)
            if scenario is not None:
                fields.setdefault("task", scenario)
            native = meta.get("termination_reason")
            if isinstance(native, str):
                reason, by = _TAU2_TERMINATION.get(native, ("unknown", "unknown"))
                fields["termination"] = Termination(reason=reason, by=by, native=native)
        if isinstance(meta.get("stop_reason"), str) and "termination" not in fields:
            fields["termination"] = _agentchat_termination(meta["stop_reason"])  # AgentChat TaskResult
        final = meta.get("final_output", meta.get("final_answer", meta.get("answer")))
        if success is not None or score_f is not None or final is not None:
            fields["outcome"] = Outcome(
                success=success, score=score_f, final_output=final if isinstance(final, str) else None
            )
        return fields
