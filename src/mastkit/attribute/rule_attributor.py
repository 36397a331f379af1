"""The ``rules`` attribution method: which agent and step caused a failure, without an LLM.

The signals are the single heuristics of :mod:`mastkit.attribute.heuristics`, tried in a fixed
order; the first that fires names the step, and the blamed agent is that step's actor (the
simulated user included). The order was tuned on Who&When Algorithm-Generated and half of the
hand-labelled tau-bench airline runs (``bench/attribution.py`` reports the other parts):

1. ``user_pivot`` — after the agent declined or found nothing, the user asks for a different
   kind of change and a write carries it out: the user's request is blamed.
2. ``error_step`` — the first agent action whose direct result is an error (a failing tool call,
   a terminal reply with a traceback or non-zero exit): the agent step that acted is blamed.
3. ``first_write`` — the first state-changing action (a tool named with a write verb). When its
   arguments hold a value nobody gave before (no user message, tool result or system prompt
   stated it), the write itself is the unverified assumption and is blamed; otherwise the
   decision was made where the agent proposed it, so the agent's last message before the write
   is blamed when only the user's confirmation sits between them.
4. ``stall_report`` — a supervising agent reports no progress or a loop (Magentic-One ledger):
   the last step of another agent before the report.
5. ``wrong_answer`` (only with the ground truth) — the first stated answer that does not contain
   the expected one.
6. ``detector`` — the earliest rule-detector evidence, mapped to the agent step at or before it.
7. ``first_action`` — fallback: the first agent step after the task statement.

Only the events are read: never the outcome, the labels, the raw record or the task field (the
detectors get a blinded copy), so the answer does not change with the grade.
"""

from __future__ import annotations

import re

from mastkit.attribute import heuristics as h
from mastkit.attribute.model import Attribution
from mastkit.traces.model import Event, Trace

__all__ = ["CONFIDENCE", "attribute_by_rules", "decision_step"]

CONFIDENCE = {
    "user_pivot": 0.4,
    "error_step": 0.5,
    "first_write": 0.45,
    "unverified": 0.45,
    "stall_report": 0.4,
    "wrong_answer": 0.45,
    "detector": 0.35,
    "first_action": 0.1,
}
"""Confidence reported per signal: roughly its exact-step precision on the tuning data."""

_CONFIRM = re.compile(
    r"(?i)\b(?:yes|yeah|yep|confirm\w*|proceed|go ahead|please do|sounds good|that works|okay|ok|sure)\b"
)


def decision_step(events: list[Event], write: Event) -> Event:
    """Where the decision to make ``write`` was taken.

    Walking back from the write: the agent's last text message, if nothing but the agent's own
    tool calls and at most one user confirmation ("yes", "go ahead", ...) lie in between;
    otherwise the write itself.
    """
    confirmed = False
    for e in reversed(events[: events.index(write)]):
        if h.is_user(e):
            if confirmed or not _CONFIRM.search(e.content or ""):
                return write
            confirmed = True
        elif h.is_step(e) and e.tool_call is None:
            return e
    return write


def _first_write(events: list[Event]) -> h.Finding | None:
    write = h.first_write_attempt(events)
    if write is None:
        return None
    unverified = h.unverified_action(events)
    if unverified is not None and unverified.step is write:
        return unverified
    name = write.tool_call.name if write.tool_call else "?"
    step = decision_step(events, write)
    where = "" if step is write else f", decided at event {step.seq}"
    return h.Finding("first_write", step, f"first state-changing action {name} at event {write.seq}{where}")


def attribute_by_rules(trace: Trace, *, ground_truth: str | None = None) -> Attribution:
    """Blame an agent and a step of a failed ``trace`` using the rule signals (see module doc)."""
    events = h.live_events(trace)
    if not events:
        return Attribution(method="rules", reason="empty trace", confidence=0.0)
    found = (
        h.user_pivot(events)
        or h.first_error(events)
        or _first_write(events)
        or h.stall_report(events)
        or h.wrong_answer(events, ground_truth)
    )
    mode = None
    if found is None:
        hit = h.detector_finding(trace, events)
        if hit is not None:
            found, mode = hit
    if found is None:
        first = h.first_agent_step(events)
        if first is None:
            return Attribution(method="rules", reason="no agent step found", confidence=0.0)
        found = h.Finding("first_action", first.step, "no failure signal found; first agent step")
    return Attribution(
        agent=found.agent,
        step=found.step.seq,
        reason=f"{found.signal}: {found.reason}",
        mode=mode,
        confidence=CONFIDENCE[found.signal],
        method="rules",
    )
