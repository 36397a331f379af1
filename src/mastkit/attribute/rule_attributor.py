"""The ``rules`` attribution method: which agent and step caused a failure, without an LLM.

Signals, in a fixed order decided before measuring (first that fires wins):

1. ``error_step`` — the first agent action whose direct result is an error (a failing tool
   call, a terminal/executor reply with a traceback or non-zero exit): the agent step that
   produced the failing action is blamed.
2. ``stall_report`` — the first time a supervising agent reports that no progress is being made
   or that the team is looping (e.g. a Magentic-One orchestrator ledger with
   ``is_progress_being_made: false`` / ``is_in_loop: true``): the last step of another agent
   before that report is blamed.
3. ``wrong_answer`` (only when the ground truth is available) — the first agent message that
   states an answer not containing the expected one.
4. ``detector`` — the earliest evidence event of any rule detector hit (FM codes), mapped to
   the agent step at or before it.
5. ``first_action`` — fallback: the first substantive agent step after the task statement.

The blamed agent is the actor of the blamed step. Steps are event ``seq`` numbers.
"""

from __future__ import annotations

import re

from mastkit.annotate.detectors._base import detectors
from mastkit.annotate.detectors._signals import FAILURE_OUTPUT
from mastkit.attribute.model import Attribution
from mastkit.traces.model import Event, Trace, is_agent_name

# Executor-like agents whose messages are outputs of someone else's action.
_EXECUTORS = re.compile(r"(?i)(?:terminal|executor|computer|environment|tool|runner)")
_STALL = re.compile(
    r'(?is)"is_(?:progress_being_made)"\s*:\s*\{[^{}]*?"answer"\s*:\s*false'
    r'|"is_in_loop"\s*:\s*\{[^{}]*?"answer"\s*:\s*true|\bno progress (?:is being|has been) made\b'
)
_ANSWER = re.compile(r"(?i)(?:final answer|the answer is|answer:|result is|result:)\s*(?P<ans>[^\n]{1,200})")


def _is_agent(e: Event) -> bool:
    """An agent's event, its tool outputs included (``_is_output`` tells those apart)."""
    return is_agent_name(e.actor) and e.role != "user"


def _is_output(e: Event) -> bool:
    """An event that reports the outcome of a previous action (tool result, executor reply)."""
    return e.kind == "tool_result" or bool(e.actor and _EXECUTORS.search(e.actor))


def _failed(e: Event) -> bool:
    if e.tool_result is not None:
        r = e.tool_result
        if r.is_error or (r.exit_code not in (None, 0)):
            return True
        return bool(FAILURE_OUTPUT.search((r.output or "")[-4000:]))
    text = e.content or ""
    if re.search(r"(?i)exitcode:\s*[1-9]|execution failed", text):
        return True
    return bool(FAILURE_OUTPUT.search(text[-4000:]))


def _acting_step(events: list[Event], before: int) -> Event | None:
    """The last agent (non-executor) step before index ``before``."""
    for e in reversed(events[:before]):
        if _is_agent(e) and not _is_output(e):
            return e
    return None


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9.]+", " ", text.lower()).strip()


def attribute_by_rules(trace: Trace, *, ground_truth: str | None = None) -> Attribution:
    """Blame an agent and a step of a failed ``trace`` using the rule signals (see module doc)."""
    events = [e for e in trace.events if not e.is_copied_context]
    if not events:
        return Attribution(method="rules", reason="empty trace", confidence=0.0)

    def blame(e: Event, signal: str, reason: str, conf: float) -> Attribution:
        return Attribution(
            agent=e.actor, step=e.seq, reason=f"{signal}: {reason}", confidence=conf, method="rules"
        )

    for i, e in enumerate(events):
        if _is_output(e) and _failed(e):
            actor = _acting_step(events, i)
            if actor is not None:
                return blame(actor, "error_step", f"its action failed at event {e.seq}", 0.5)
    for i, e in enumerate(events):
        if _is_agent(e) and e.content and _STALL.search(e.content):
            other = next(
                (
                    x
                    for x in reversed(events[:i])
                    if _is_agent(x) and not _is_output(x) and x.actor != e.actor
                ),
                None,
            )
            if other is not None:
                return blame(other, "stall_report", f"{e.actor} reports no progress at event {e.seq}", 0.4)
    if ground_truth:
        gt = _norm(ground_truth)
        for e in events:
            if _is_agent(e) and not _is_output(e) and e.content:
                m = _ANSWER.search(e.content)
                if m and gt and gt not in _norm(m.group("ans")):
                    return blame(
                        e,
                        "wrong_answer",
                        f"states '{m.group('ans')[:60]}', expected '{ground_truth[:60]}'",
                        0.45,
                    )
    hits: list[tuple[int, str]] = []
    for det in detectors():
        v = det(trace)
        if v.verdict == "present":
            hits += [(ev.seq_start, v.code) for ev in v.evidence if ev.seq_start is not None]
    if hits:
        seq, code = min(hits)
        idx = next((i for i, e in enumerate(events) if e.seq >= seq), len(events) - 1)
        target = (
            events[idx]
            if _is_agent(events[idx]) and not _is_output(events[idx])
            else _acting_step(events, idx)
        )
        if target is not None:
            a = blame(target, "detector", f"first rule finding {code} at event {seq}", 0.35)
            return a.model_copy(update={"mode": code})
    first_task = next((i for i, e in enumerate(events) if e.role == "user" or not _is_agent(e)), -1)
    for e in events[first_task + 1 :]:
        if _is_agent(e) and not _is_output(e) and (e.content or e.tool_call):
            return blame(e, "first_action", "no failure signal found; first agent step", 0.1)
    return Attribution(method="rules", reason="no agent step found", confidence=0.0)
