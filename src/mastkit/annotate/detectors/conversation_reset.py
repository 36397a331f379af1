"""FM-2.1 Conversation Reset: the dialogue restarts mid-run and progress is lost.

Present when the task or system prompt — the opening system/user message, or the trace's task —
is issued again after work has started (not as replayed context from a resumed session), or an
agent announces starting over from scratch. A repeated harness nudge ("Please proceed to the
next step") or a framework's per-phase prompt is not the task and does not count.
Absent when the run has several turns and neither happens.
"""

from __future__ import annotations

import re

from mastkit.annotate.detectors._base import absent, detector, evidence_at, live_events, present, unknown
from mastkit.annotate.detectors._signals import structured_enough
from mastkit.annotate.model import Evidence, ModeVerdict
from mastkit.traces.model import Trace

CODE, NAME = "FM-2.1", "conversation_reset"

_RESTART = re.compile(
    r"(?i)\b(?:let'?s start (?:over|again|from scratch)|starting (?:over|from scratch|again)|"
    r"start(?:ing)? a new (?:conversation|session)|reset(?:ting)? the conversation|"
    r"forget (?:everything|all) (?:above|before))\b"
)


def _maybe_restart(text: str) -> bool:
    """Cheap pre-filter for :data:`_RESTART` (long messages make the regex costly)."""
    low = text.lower()
    return "start" in low or "reset" in low or "forget" in low


def _norm(text: str) -> str:
    return " ".join(text.split()).lower()


def conversation_reset(trace: Trace) -> ModeVerdict:
    """Task/system prompt re-issued mid-run, or an explicit start-over."""
    if not structured_enough(trace, 4):
        return unknown(CODE, NAME, "too few structured events")
    live = live_events(trace)
    first: dict[str, int] = {}
    opening = {
        _norm(e.content)
        for e in live[:3]
        if e.kind == "message" and e.role in ("system", "user") and e.content
    }
    if trace.task:
        opening.add(_norm(trace.task))
    findings: list[Evidence] = []
    worked = False
    for e in live:
        if e.kind in ("tool_call", "tool_result") or (e.role == "assistant" and e.kind == "message"):
            worked = True
        if e.kind == "message" and e.role in ("system", "user") and e.content and len(e.content) >= 50:
            key = _norm(e.content)
            if key in first and worked and key in opening:
                findings.append(
                    evidence_at([e], note=f"the {e.role} prompt of event {first[key]} is issued again")
                )
            first.setdefault(key, e.seq)
        if (
            e.kind in ("message", "reasoning")
            and e.role != "user"
            and e.content
            and _maybe_restart(e.content)
            and _RESTART.search(e.content)
        ):
            m = _RESTART.search(e.content)
            findings.append(evidence_at([e], note="an agent starts over", text=m.group(0) if m else None))
    if findings:
        return present(CODE, NAME, findings, "; ".join(f.note or "" for f in findings))
    if len(live) >= 6:
        return absent(CODE, NAME, "the task is issued once and nobody starts over")
    return unknown(CODE, NAME, "too short to judge")


# Registered by a call, not a decorator: mutmut does not mutate decorated functions.
detector(CODE, NAME)(conversation_reset)
