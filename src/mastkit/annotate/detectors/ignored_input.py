"""FM-2.5 Ignored Other Agent's Input: a correction from another agent is neither applied nor answered.

A narrow, structural reading for multi-agent runs with tools. Another agent (a reviewer, a
critic) tells the working agent — the one that made the last change — that something is wrong or
asks for a change ("The fix misses the empty case. Please add a guard."). After that the working
agent changes nothing, and none of its messages answers the point (no "good catch", "added",
"I'll", "disagree because..."), yet it carries on (submits, reports done). Then the input was
ignored.

Absent when every such correction is followed by a change or an answer from the working agent.
Unknown when there is no correction between agents, or the agents have no tools to apply one
with (chat-only runs: whether advice was heeded needs the judge).
"""

from __future__ import annotations

import re

from mastkit.annotate.detectors._base import absent, detector, evidence_at, live_events, present, unknown
from mastkit.annotate.detectors._signals import is_state_change
from mastkit.annotate.model import Evidence, ModeVerdict
from mastkit.traces.model import Trace

CODE, NAME = "FM-2.5", "ignored_input"

_CORRECTION = re.compile(
    r"(?i)\bplease (?:add|fix|change|update|handle|use|remove|rename|guard|include|revert|adjust|correct)\b|"
    r"\b(?:misses|is missing|is wrong|is incorrect|still (?:raises|fails|crashes|breaks)|"
    r"does(?:n't| not) (?:handle|cover|work))\b"
)
_ANSWERED = re.compile(
    r"(?i)\b(?:agree|you're right|you are right|good catch|good point|will (?:add|fix|change|do)|i'll|"
    r"added|fixed|updated|handled|addressed|disagree|not needed|unnecessary|because|however|but)\b"
)


def ignored_input(trace: Trace) -> ModeVerdict:
    """Another agent's correction is followed by neither a change nor an answer."""
    live = live_events(trace)
    steps = [e for e in live if e.is_agent_step()]
    if len({e.actor for e in steps}) < 2:
        return unknown(CODE, NAME, "not a multi-agent run")
    changes = [e for e in steps if e.tool_call is not None and is_state_change(e.tool_call)]
    if not changes:
        return unknown(CODE, NAME, "no agent changes anything: whether advice was heeded needs the judge")
    findings: list[Evidence] = []
    corrections = 0
    for m in steps:
        if m.kind != "message" or not m.content or not _CORRECTION.search(m.content):
            continue
        before = [c for c in changes if c.seq < m.seq]
        if not before or before[-1].actor == m.actor:
            continue
        worker = before[-1].actor
        corrections += 1
        after = [e for e in steps if e.seq > m.seq and e.actor == worker]
        if not after:
            continue
        if any(e.tool_call is not None and is_state_change(e.tool_call) for e in after):
            continue
        if any(e.kind == "message" and _ANSWERED.search(e.content or "") for e in after):
            continue
        findings.append(
            evidence_at(
                [m, after[0]],
                note=f"{m.actor}'s correction to {worker} is neither applied nor answered",
                text=said.group(0) if (said := _CORRECTION.search(m.content)) else None,
            )
        )
    if findings:
        return present(CODE, NAME, findings, "; ".join(f.note or "" for f in findings))
    if corrections:
        return absent(CODE, NAME, f"{corrections} correction(s) between agents were applied or answered")
    return unknown(CODE, NAME, "no correction from one agent to another")


# Registered by a call, not a decorator: mutmut does not mutate decorated functions.
detector(CODE, NAME)(ignored_input)
