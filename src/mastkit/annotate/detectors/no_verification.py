"""FM-3.2 No or Incomplete Verification: success is claimed without checking it after the last change.

Present when an agent claims success (fixed, resolved, tests pass, ...) — or submits its work
with a completion tool (``submit``, ``finish``, ``attempt_completion``...) — and, after the last
state-changing action (edit, apply, restart, install...) before that claim, no check
(test, probe, inspection) ran at all.
Absent when every success claim is preceded by a check that ran after the last change.
Unknown when the trace makes no success claim, or has no tool calls to tell changes from checks.
"""

from __future__ import annotations

from mastkit.annotate.detectors._base import absent, detector, evidence_at, present, unknown
from mastkit.annotate.detectors._signals import (
    SUBMIT_TOOLS,
    SUCCESS_CLAIM,
    agent_texts,
    is_check,
    is_state_change,
)
from mastkit.annotate.model import ModeVerdict
from mastkit.traces.model import Trace

CODE, NAME = "FM-3.2", "no_verification"


@detector(CODE, NAME)
def no_verification(trace: Trace) -> ModeVerdict:
    """A success claim with no check after the last change."""
    calls = [c for c, _r in trace.tool_calls() if not c.is_copied_context and c.tool_call is not None]
    if not calls:
        return unknown(CODE, NAME, "no tool calls: cannot tell changes from checks")
    claims = [e for e in agent_texts(trace) if SUCCESS_CLAIM.search(e.content or "")]
    claims += [c for c in calls if c.tool_call is not None and SUBMIT_TOOLS.match(c.tool_call.name)]
    if not claims:
        return unknown(CODE, NAME, "no success claim or submission to verify")
    claim = max(claims, key=lambda e: e.seq)
    before = [c for c in calls if c.seq < claim.seq]
    changes = [c for c in before if c.tool_call is not None and is_state_change(c.tool_call)]
    if not changes:
        return unknown(CODE, NAME, "no state-changing action before the success claim")
    last_change = changes[-1]
    checks = [
        c for c in before if c.seq > last_change.seq and c.tool_call is not None and is_check(c.tool_call)
    ]
    m = SUCCESS_CLAIM.search(claim.content or "") if claim.tool_call is None else None
    if not checks:
        return present(
            CODE,
            NAME,
            [
                evidence_at([last_change], note="last change before the claim"),
                evidence_at(
                    [claim],
                    note="success claimed with no check after the change",
                    text=m.group(0) if m else None,
                ),
            ],
            "success is claimed without any check after the last change",
            0.75,
        )
    return absent(
        CODE, NAME, f"a check ran after the last change (event {checks[-1].seq}) before the claim", 0.6
    )
