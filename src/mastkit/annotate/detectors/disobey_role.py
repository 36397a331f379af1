"""FM-1.2 Disobey Role Specification: an agent does what its role says it must not do.

Only what a role spec states in a checkable form is used:

* the agent's own tool list (``AgentInfo.tools``): a call to a tool outside it;
* a prohibition in its role description or system prompt that names a class of action:
  "never edits files" / "read-only" / "does not modify code" (then any state-changing call by
  that agent; for "does not write code", also a message with a code block of 8+ lines),
  "does not run code / commands" (any shell command), "does not write answers" /
  "never gives the final answer" (a final answer written by that agent).

Absent when some agent has such a checkable spec and every agent keeps to it. Unknown when no
agent has one: whether free-text responsibilities were kept needs the judge.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from mastkit.annotate.detectors._base import absent, detector, evidence_at, live_events, present, unknown
from mastkit.annotate.detectors._signals import call_commands, is_state_change
from mastkit.annotate.model import Evidence, ModeVerdict
from mastkit.traces.model import AgentInfo, Event, Trace

CODE, NAME = "FM-1.2", "disobey_role"

_NOT = (
    r"(?:never|does not|doesn't|do not|don't|must not|mustn't|may not|should not|shouldn't|is not allowed to)"
)
_NO_EDIT = re.compile(
    rf"(?i)\b{_NOT}\s+(?:\w+\s+)?(?:edit|modify|change|write to|touch|patch|commit|write or rewrite|rewrite)\w*"
    rf"\s*(?:any\s+)?"
    rf"(?:files?|code|the code|source|the repository|the repo)?\b|\bread-only (?:role|agent|access)\b"
)
_NO_RUN = re.compile(
    rf"(?i)\b{_NOT}\s+(?:\w+\s+)?(?:run|execute)\w*\s+(?:any\s+)?(?:code|commands?|tests?|scripts?)\b"
)
_NO_ANSWER = re.compile(
    rf"(?i)\b{_NOT}\s+(?:\w+\s+)?(?:write|give|produce|send|provide)\w*\s+(?:the\s+)?(?:final\s+)?answers?\b"
)
_NO_CODE = re.compile(
    rf"(?i)\b{_NOT}\s+(?:\w+\s+)?(?:write|rewrite|write or rewrite)\s+(?:any\s+|the\s+)?code\b"
)
_CODE_BLOCK = re.compile(r"```[^\n]*\n((?:(?!```).*\n){8,}?)```")
_FINAL = re.compile(r"(?im)^\W*(?:final answer|final)\s*:")


def _tool_names(tools: list[Any] | None) -> set[str] | None:
    """Names of the tools an agent is given (strings, ``{"name"}`` or ``{"function": {"name"}}``)."""
    if not tools:
        return None
    names: set[str] = set()
    for t in tools:
        if isinstance(t, str):
            names.add(t)
        elif isinstance(t, dict):
            name = t.get("name") or (t.get("function") or {}).get("name")
            if isinstance(name, str):
                names.add(name)
    return names or None


_CONDITIONAL = re.compile(r"(?i)\b(?:if|when|unless|until|because|except)\b")


def _allowed(name: str, allowed: set[str]) -> bool:
    """A call name matches a listed tool, allowing for hosted-tool variants (``web_search`` is
    listed as ``web_search_preview``) and namespaced names (``server.tool``)."""
    low = name.lower()
    for tool in allowed:
        t = tool.lower()
        if low == t or t.startswith(low + "_") or low.startswith(t + "_") or low.endswith("." + t):
            return True
    return False


def _spec(agent: AgentInfo) -> str:
    """The role description, and the unconditional sentences of the system prompt."""
    sentences = re.split(r"(?<=[.!?])\s+|\n+", agent.system_prompt or "")
    rules = [s for s in sentences if s and not _CONDITIONAL.search(s)]
    return " ".join([agent.role_description or "", *rules])


def _breaches(agent: AgentInfo, events: list[Event]) -> tuple[bool, list[Evidence]]:
    """(whether the agent has a checkable spec, the breaches found)."""
    mine = [e for e in events if e.actor == agent.name and e.is_agent_step()]
    spec = _spec(agent)
    allowed = _tool_names(agent.tools)
    checkable = False
    found: list[Evidence] = []
    if allowed is not None:
        checkable = True
        for e in mine:
            if e.tool_call is not None and not _allowed(e.tool_call.name, allowed):
                found.append(
                    evidence_at(
                        [e], note=f"{agent.name} calls {e.tool_call.name}, which is not among its tools"
                    )
                )
    rules: list[tuple[re.Match[str] | None, Callable[[Event], bool], str]] = [
        (
            _NO_EDIT.search(spec),
            lambda e: e.tool_call is not None and is_state_change(e.tool_call),
            "changes state",
        ),
        (
            _NO_CODE.search(spec),
            lambda e: e.kind == "message" and bool(_CODE_BLOCK.search(e.content or "")),
            "writes code itself",
        ),
        (
            _NO_RUN.search(spec),
            lambda e: e.tool_call is not None and bool(call_commands(e.tool_call)),
            "runs a command",
        ),
        (
            _NO_ANSWER.search(spec),
            lambda e: e.kind == "message" and bool(_FINAL.search(e.content or "")),
            "writes the final answer",
        ),
    ]
    for m, breach, what in rules:
        if m is None:
            continue
        checkable = True
        hit = next((e for e in mine if breach(e)), None)
        if hit is not None:
            said = m.group(0).strip()  # the match can end in the whitespace before a next word
            found.append(evidence_at([hit], note=f"{agent.name} {what}, although its role says '{said}'"))
    return checkable, found


def disobey_role(trace: Trace) -> ModeVerdict:
    """An agent breaks a checkable part of its role spec (its tool list, a stated prohibition)."""
    events = live_events(trace)
    findings: list[Evidence] = []
    checkable = 0
    for agent in trace.agents:
        has_spec, found = _breaches(agent, events)
        checkable += has_spec
        findings += found
    if findings:
        return present(CODE, NAME, findings, "; ".join(f.note or "" for f in findings))
    if checkable:
        return absent(CODE, NAME, f"{checkable} agent(s) with a checkable role spec keep to it")
    return unknown(CODE, NAME, "no agent has a checkable role spec (tool list or stated prohibition)")


# Registered by a call, not a decorator: mutmut does not mutate decorated functions.
detector(CODE, NAME)(disobey_role)
