"""Process signals: how a rollout went about its task, read off the trace without a model.

Each signal is general (tool names, argument values, who spoke when), not tied to one benchmark:

* **confirmation discipline** — a state-changing call whose nearest earlier user message (since
  the previous state-changing call) holds no explicit agreement ("yes", "confirm", "go ahead"…)
  is *unconfirmed*;
* **tool errors** — a result flagged as an error, with a non-zero exit code, or whose text starts
  with "error"; an error is *unresolved* when no later call of the same tool succeeded;
* **grounding** — a value passed to a state-changing call (an id, a date, an amount: every scalar
  of two characters or more) that appears neither in an earlier user message nor in an earlier
  tool result is *ungrounded* (the agent made it up or misread it); the task text is not read;
* **how the run ended** — a hand-off to a human, who spoke last, whether the agent's final
  message asks a question, and agent messages that decline or apologise ("sorry", "unable",
  "cannot"…): refusing what the rules forbid is part of many tasks.

Which calls change state and which hand off is decided as in :mod:`mastkit.verify.signals`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import Any

from mastkit.traces.model import Event, ToolResult, Trace
from mastkit.verify.signals import is_handoff_tool, is_state_changing

__all__ = ["PROCESS_FAMILIES", "Process", "is_error_result", "process", "process_features"]

_AGREE = re.compile(
    r"\b(yes|yeah|yep|sure|confirm(ed|s)?|go ahead|proceed|please do|do it|that'?s (right|correct|fine)|"
    r"correct|ok(ay)?|sounds good|agreed?|approve[ds]?)\b",
    re.IGNORECASE,
)
_DECLINE = re.compile(
    r"\b(sorry|apologi[sz]e|unable|cannot|can't|can not|not able|unfortunately|not (allowed|permitted|possible))\b",
    re.IGNORECASE,
)


def is_error_result(result: ToolResult) -> bool:
    """Whether a tool result reports a failure (flag, exit code, or text starting with "error")."""
    if result.is_error or result.exit_code not in (None, 0):
        return True
    return (result.output or "").lstrip().lower().startswith("error")


@dataclass(frozen=True)
class Process:
    """The process signals of one rollout (see the module docstring)."""

    writes: int
    """State-changing tool calls (hand-offs not counted)."""
    unconfirmed_writes: int
    tool_errors: int
    unresolved_errors: int
    ungrounded_values: int
    handoff: bool
    ended_by_user: bool
    final_question: bool
    """The agent's last message asks a question."""
    declines: int
    """Agent messages that decline or apologise."""
    final_decline: bool
    """The agent's last message declines or apologises."""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


PROCESS_FAMILIES: dict[str, tuple[str, ...]] = {
    "size": ("log_writes", "log_events", "log_user_turns"),
    "confirmation": ("unconfirmed_writes",),
    "errors": ("tool_errors", "unresolved_errors"),
    "grounding": ("ungrounded_values",),
    "ending": ("handoff", "ended_by_user", "final_question", "declines", "final_decline"),
}
"""Feature names of the per-rollout families (the consensus family is in :mod:`.consensus`)."""


def _leaves(value: Any) -> Iterator[Any]:
    if isinstance(value, dict):
        for v in value.values():
            yield from _leaves(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _leaves(v)
    else:
        yield value


def _scalar_text(value: Any) -> str | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = str(value).strip().lower()
    return text if len(text) >= 2 else None


def _messages(trace: Trace) -> list[Event]:
    return [e for e in trace.events if e.kind == "message" and e.role in ("user", "assistant")]


def process(trace: Trace) -> Process:
    """The process signals of ``trace`` (read it blinded: :func:`mastkit.verify.blind`)."""
    writes = unconfirmed = errors = ungrounded = 0
    handoff = False
    failing: dict[str, int] = {}
    seen: list[str] = []
    last_user: str | None = None
    for e in trace.events:
        if e.kind == "message" and e.role == "user":
            last_user = e.content or ""
            seen.append(last_user.lower())
        if e.tool_result is not None:
            seen.append((e.tool_result.output or "").lower())
            name = e.tool_result.name or "?"
            if is_error_result(e.tool_result):
                errors += 1
                failing[name] = failing.get(name, 0) + 1
            else:
                failing.pop(name, None)
        call = e.tool_call
        if call is None:
            continue
        if is_handoff_tool(call.name):
            handoff = True
            continue
        if not is_state_changing(call.name):
            continue
        writes += 1
        if last_user is None or not _AGREE.search(last_user):
            unconfirmed += 1
        last_user = None  # the next write needs its own agreement
        known = "\n".join(seen)
        for leaf in _leaves(call.arguments):
            text = _scalar_text(leaf)
            if text is not None and text not in known:
                ungrounded += 1
    msgs = _messages(trace)
    agent = [e.content or "" for e in msgs if e.role == "assistant"]
    final = next((a for a in reversed(agent) if a.strip()), "")
    return Process(
        writes=writes,
        unconfirmed_writes=unconfirmed,
        tool_errors=errors,
        unresolved_errors=sum(failing.values()),
        ungrounded_values=ungrounded,
        handoff=handoff,
        ended_by_user=bool(msgs) and msgs[-1].role == "user",
        final_question="?" in final,
        declines=sum(1 for a in agent if _DECLINE.search(a)),
        final_decline=bool(_DECLINE.search(final)),
    )


def process_features(trace: Trace) -> dict[str, float]:
    """:func:`process` as model features (counts of events and turns on a log scale)."""
    p = process(trace)
    users = sum(1 for e in _messages(trace) if e.role == "user")
    return {
        "log_writes": math.log1p(p.writes),
        "log_events": math.log1p(len(trace.events)),
        "log_user_turns": math.log1p(users),
        "unconfirmed_writes": float(p.unconfirmed_writes),
        "tool_errors": float(p.tool_errors),
        "unresolved_errors": float(p.unresolved_errors),
        "ungrounded_values": float(p.ungrounded_values),
        "handoff": float(p.handoff),
        "ended_by_user": float(p.ended_by_user),
        "final_question": float(p.final_question),
        "declines": float(p.declines),
        "final_decline": float(p.final_decline),
    }
