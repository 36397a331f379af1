"""FM-3.2 No or Incomplete Verification: success is claimed without checking it after the last change.

Present when the agent's last success claim — a clause that asserts success (not negated, not
conditional, not a question: "fixed", "resolved", "all tests pass") or a submission with a
completion tool (``submit``, ``finish``, ``attempt_completion``...) — comes after a
state-changing action (an edit, ``kubectl apply``, a restart, ``sed -i``, output redirected
into a file...) with no check at all in between (a test run, a probe, an inspection; a command
line such as ``sed -i ... && pytest`` checks its own change).
Absent when a check ran after the last change and before the claim.
Unknown when there is no asserted claim or submission, when work went on after the last claim,
or when there are no tool calls to tell changes from checks.
"""

from __future__ import annotations

from mastkit.annotate.detectors._base import absent, detector, evidence_at, present, unknown
from mastkit.annotate.detectors._signals import (
    SUBMIT_TOOLS,
    agent_texts,
    checks_after_own_change,
    is_check,
    is_state_change,
    success_claim,
)
from mastkit.annotate.model import ModeVerdict
from mastkit.traces.model import Event, Trace

CODE, NAME = "FM-3.2", "no_verification"


def final_claim(trace: Trace, calls: list[Event]) -> tuple[Event, str | None] | None:
    """The last success claim (event, claimed words; None words for a submission), when no
    state-changing call follows it."""
    claims: list[tuple[Event, str | None]] = []
    for e in agent_texts(trace):
        words = success_claim(e.content)
        if words:
            claims.append((e, words))
    claims += [(c, None) for c in calls if c.tool_call is not None and SUBMIT_TOOLS.match(c.tool_call.name)]
    if not claims:
        return None
    claim = max(claims, key=lambda pair: pair[0].seq)
    later = [
        c for c in calls if c.seq > claim[0].seq and c.tool_call is not None and is_state_change(c.tool_call)
    ]
    return None if later else claim


@detector(CODE, NAME)
def no_verification(trace: Trace) -> ModeVerdict:
    """A success claim with no check after the last change."""
    calls = [c for c, _r in trace.tool_calls() if not c.is_copied_context and c.tool_call is not None]
    if not calls:
        return unknown(CODE, NAME, "no tool calls: cannot tell changes from checks")
    found = final_claim(trace, calls)
    if found is None:
        return unknown(CODE, NAME, "no asserted success claim or submission that ends the work")
    claim, words = found
    before = [c for c in calls if c.seq < claim.seq]
    changes = [c for c in before if c.tool_call is not None and is_state_change(c.tool_call)]
    if not changes:
        return unknown(CODE, NAME, "no state-changing action before the success claim")
    last_change = changes[-1]
    checks = [
        c
        for c in before
        if c.tool_call is not None
        and (
            (c.seq > last_change.seq and is_check(c.tool_call))
            or (c is last_change and checks_after_own_change(c.tool_call))
        )
    ]
    if not checks:
        return present(
            CODE,
            NAME,
            [
                evidence_at([last_change], note="last change before the claim"),
                evidence_at([claim], note="success claimed with no check after the change", text=words),
            ],
            "success is claimed without any check after the last change",
        )
    return absent(CODE, NAME, f"a check ran after the last change (event {checks[-1].seq}) before the claim")
