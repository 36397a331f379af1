"""FM-2.6 Reasoning-Action Mismatch: the agent says it will do one thing and does another.

Present when an agent's message/reasoning announces a specific next action — a tool of the
trace by name ("I'll use the search tool") or a backticked command ("I will run `pytest`") —
and the agent's very next tool call uses a different tool / a different command. Commands are
compared structurally (parsed with shlex): ``pytest -q`` and ``cd /repo && pytest -q 2>&1``
are the same command; only commands whose heads (``kubectl logs`` vs ``kubectl get``) share
nothing differ.
Also present when it announces a change to specific files ("I'll change httpkit/retry.py") and
its next state-changing call touches only other files, and when it announces a look ("let me
check ...") and its next call changes state, unless the message names that change too.
Absent when announced actions match what is executed (at least two announcements checked).
"""

from __future__ import annotations

import re

from mastkit.annotate.detectors._base import absent, detector, evidence_at, present, unknown
from mastkit.annotate.detectors._shell import KNOWN_PROGRAMS, acting, parse_command
from mastkit.annotate.detectors._signals import call_commands, command_text, is_state_change
from mastkit.annotate.model import Evidence, ModeVerdict
from mastkit.traces.model import Event, Trace

CODE, NAME = "FM-2.6", "reasoning_action_mismatch"

_INTENT = re.compile(
    r"(?i)\b(?:i will|i'll|i am going to|i'm going to|let me|next,? i will|now i will|"
    r"i should now|i need to)\s+(?:now\s+)?(?:run|execute|use|call|invoke|check with|try)\b"
)
_BACKTICK = re.compile(r"`([^`\n]{2,120})`")
_EDIT_INTENT = re.compile(
    r"(?i)\b(?:i will|i'll|i am going to|i'm going to|let me|now i will|next,? i will)\s+(?:now\s+)?"
    r"(?:change|edit|modify|update|fix|patch|rewrite|refactor|adjust)\b"
)
_PATH = re.compile(
    r"(?<![\w/.-])((?:[\w.-]+/)*[\w-]+(?:\.[\w-]+)*\.(?:py|pyi|js|jsx|ts|tsx|go|rs|java|kt|rb|php|c|h|cc|cpp|hpp|cs|swift|"
    r"yaml|yml|json|toml|cfg|ini|md|sh|sql|tf))\b"
)


# "I'll check the spec first", "Before changing anything I'll read ...": a read-only next step.
_LOOK_INTENT = re.compile(
    r"(?i)\b(?:i will|i'll|let me|i am going to|i'm going to)\s+(?:first\s+)?"
    r"(?:check|read|look at|inspect|review|examine|view|verify|list|describe)\b"
)


def _names_verb(text: str, verb: str) -> bool:
    """Whether ``text`` uses ``verb`` (3+ letters) or one of its forms: cancel, cancels,
    cancelled, cancelling, cancellation; update, updated, updating; set, but not settings."""
    if len(verb) < 3:
        return False
    stem = verb[:-1] if verb.endswith("e") else verb
    forms = rf"{re.escape(verb)}(?:s|d|ed|ment)?|{re.escape(stem)}(?:ing|ion|ation)|{re.escape(verb)}l(?:ed|ing|ation)"
    return re.search(rf"(?i)\b(?:{forms})\b", text) is not None


def _look_then_change(e: Event, events: list[Event], i: int) -> Evidence | None:
    """Announced a look (read, check, inspect); the agent's very next call changes state instead.

    Not when the announcing message also names that change: agents say "let me review the
    details", review them in the same message and ask for a yes to the cancellation, or "I'll
    check and enable it now"; the change was announced as well.
    """
    text = e.content or ""
    m = _LOOK_INTENT.search(text)
    if m is None:
        return None
    nxt = next(
        (
            x
            for x in events[i + 1 :]
            if x.actor == e.actor
            and (x.tool_call is not None or (x.kind in ("message", "reasoning") and x.content))
        ),
        None,
    )
    if nxt is None or nxt.tool_call is None or not is_state_change(nxt.tool_call):
        return None
    if _names_verb(text, re.split(r"[_\W]", nxt.tool_call.name)[0]):
        return None
    return evidence_at(
        [e, nxt], note=f"says it will {m.group(0).split()[-1]} first, changes state instead", text=m.group(0)
    )


def _paths(text: str) -> set[str]:
    return {m.group(1) for m in _PATH.finditer(text)}


def _same_file(a: str, b: str) -> bool:
    return a == b or a.endswith("/" + b) or b.endswith("/" + a)


def _file_mismatch(e: Event, events: list[Event], i: int) -> Evidence | None:
    """Announced edit of files X; the next change by the same agent touches only other files."""
    text = e.content or ""
    m = _EDIT_INTENT.search(text)
    if not m:
        return None
    announced = _paths(text[m.start() : m.start() + 300])
    if not announced:
        return None
    nxt = next(
        (
            x
            for x in events[i + 1 :]
            if x.tool_call is not None and x.actor == e.actor and is_state_change(x.tool_call)
        ),
        None,
    )
    if nxt is None or nxt.tool_call is None:
        return None
    call = nxt.tool_call
    touched = _paths(command_text(call) + " " + (call.arguments_raw or ""))
    if not touched or any(_same_file(a, t) for a in announced for t in touched):
        return None
    return evidence_at(
        [e, nxt],
        note=f"says it will change {', '.join(sorted(announced))}, changes {', '.join(sorted(touched))}",
    )


def _announced(e: Event, tool_names: set[str]) -> tuple[str, frozenset[str]] | None:
    """(kind, values) of an announced next action: ('tool', {name}) or ('cmd', heads of the command)."""
    text = e.content or ""
    m = _INTENT.search(text)
    if not m:
        return None
    tail = text[m.start() : m.start() + 300]
    bt = _BACKTICK.search(tail)
    if bt:
        value = bt.group(1)
        if value in tool_names:
            return ("tool", frozenset({value}))
        said = acting(parse_command(value))
        if " " in value.strip() and said and all(c.program in KNOWN_PROGRAMS for c in said):
            return ("cmd", frozenset(c.head for c in said))
    words = re.findall(r"[\w.-]+", tail[len(m.group(0)) - 1 :][:120])
    for w in words[:8]:
        w = w.rstrip(".")  # "I'll use search." ends a sentence; the dot is not part of the name
        if w in tool_names:
            return ("tool", frozenset({w}))
    return None


def reasoning_action_mismatch(trace: Trace) -> ModeVerdict:
    """Announced next action differs from the executed tool call."""
    events = [e for e in trace.events if not e.is_copied_context]
    tool_names = {e.tool_call.name for e in events if e.tool_call is not None}
    if not tool_names:
        return unknown(CODE, NAME, "no tool calls to compare with stated intentions")
    findings: list[Evidence] = []
    checked = 0
    for i, e in enumerate(events):
        if e.kind not in ("message", "reasoning") or e.role in ("user", "tool", "system") or not e.content:
            continue
        looked = _look_then_change(e, events, i)
        if looked is not None:
            findings.append(looked)
            checked += 1
            continue
        wrong_file = _file_mismatch(e, events, i)
        if wrong_file is not None:
            findings.append(wrong_file)
            checked += 1
            continue
        said = _announced(e, tool_names)
        if said is None:
            continue
        nxt = next(
            (
                x
                for x in events[i + 1 :]
                if x.tool_call is not None
                or (x.kind in ("message", "reasoning") and x.actor == e.actor and x.content)
            ),
            None,
        )
        if nxt is None or nxt.tool_call is None or nxt.actor != e.actor:
            continue
        checked += 1
        kind, values = said
        call = nxt.tool_call
        if kind == "tool" and call.name not in values:
            (value,) = values
            findings.append(evidence_at([e, nxt], note=f"says it will use {value}, calls {call.name}"))
        elif kind == "cmd":
            # structural: the commands' heads (``cd X &&``, ``sudo``, redirections dropped) share nothing
            done = {c.head for c in call_commands(call)}
            if done and values.isdisjoint(done):
                findings.append(
                    evidence_at(
                        [e, nxt],
                        note=f"says it will run '{' / '.join(sorted(values))}…', runs '{' / '.join(sorted(done))}…'",
                    )
                )
    if findings:
        return present(CODE, NAME, findings, "; ".join(f.note or "" for f in findings))
    if checked >= 2:
        return absent(CODE, NAME, f"{checked} announced actions match the calls that follow")
    return unknown(CODE, NAME, "too few explicit announcements of the next action to compare")


# Registered by a call, not a decorator: mutmut does not mutate decorated functions.
detector(CODE, NAME)(reasoning_action_mismatch)
