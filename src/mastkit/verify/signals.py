"""Cheap signals read off a trace, without a model: the inputs of the single-feature baselines
and part of the failure-vector scorer's features.

Which tool calls change state is guessed from the tool's name: a name that starts with a
read-only verb (``get``, ``search``, ``list``, ``find``, ``read``, ``calculate``, ``think``…)
does not, any other does (``book_reservation``, ``cancel_…``, ``update_…``, ``send_…``,
``write_file``). A hand-off to a human is a call of a tool whose name says so
(``transfer_to_human_agents``, ``escalate``, ``handoff_to_human``…).
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass

from mastkit.traces.model import Trace

__all__ = ["SIGNAL_NAMES", "Signals", "is_handoff_tool", "is_state_changing", "signals"]

_READ_ONLY = re.compile(
    r"^(get|search|list|find|read|fetch|lookup|look_up|query|show|view|describe|calculate|compute|"
    r"think|check|count|validate|cat|ls|grep|head|tail|open|browse|retrieve|load|inspect|whoami)(_|$|[A-Z])",
    re.IGNORECASE,
)
_HANDOFF = re.compile(
    r"(transfer|escalat|hand_?off).*(human|agent|operator|support)|^escalate", re.IGNORECASE
)


def is_handoff_tool(name: str) -> bool:
    """Whether a tool of this name hands the conversation to a human."""
    return _HANDOFF.search(name) is not None


def is_state_changing(name: str) -> bool:
    """Whether a tool of this name changes state (by its leading verb; hand-offs do not count)."""
    return not _READ_ONLY.match(name) and not is_handoff_tool(name)


@dataclass(frozen=True)
class Signals:
    """The cheap signals of one trace."""

    events: int
    """Events in the trace."""
    agent_turns: int
    """Messages and tool calls by the agent (role ``assistant``, or an agent actor)."""
    state_changes: int
    """Tool calls that change state."""
    handoff: bool
    """A hand-off to a human was called."""
    tool_errors: int
    """Tool results marked as errors (or with a non-zero exit code)."""
    ended_by_user: bool
    """The last message came from the user, not the agent."""

    def features(self) -> dict[str, float]:
        """The signals as model features (counts on a log scale)."""
        return {
            "log_events": math.log1p(self.events),
            "log_agent_turns": math.log1p(self.agent_turns),
            "state_changes": float(self.state_changes),
            "handoff": float(self.handoff),
            "tool_errors": float(self.tool_errors),
            "ended_by_user": float(self.ended_by_user),
        }

    def as_dict(self) -> dict[str, int | bool]:
        return asdict(self)


SIGNAL_NAMES = ("log_events", "log_agent_turns", "state_changes", "handoff", "tool_errors", "ended_by_user")


def signals(trace: Trace) -> Signals:
    """The cheap signals of ``trace``."""
    turns = 0
    changes = 0
    handoff = False
    errors = 0
    last_speaker: str | None = None
    for e in trace.events:
        if e.tool_call is not None:
            turns += 1
            if is_handoff_tool(e.tool_call.name):
                handoff = True
            elif is_state_changing(e.tool_call.name):
                changes += 1
        elif e.kind == "message" and e.role == "assistant":
            turns += 1
        if e.tool_result is not None and (e.tool_result.is_error or e.tool_result.exit_code not in (None, 0)):
            errors += 1
        if e.kind == "message" and e.role in ("user", "assistant"):
            last_speaker = e.role
    return Signals(
        events=len(trace.events),
        agent_turns=turns,
        state_changes=changes,
        handoff=handoff,
        tool_errors=errors,
        ended_by_user=last_speaker == "user",
    )
