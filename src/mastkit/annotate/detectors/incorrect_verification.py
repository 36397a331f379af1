"""FM-3.3 Incorrect Verification: a check was run, but it did not support the success claimed.

Present when, after the last change, the agent claims success and
* the last check before the claim failed (error flag, non-zero exit, failure output) — the
  agent read a failing check as a pass; or
* the only checks are status-only probes (``kubectl get pods``, ``ls``, ``cat``, ``ps``...)
  while the task or claim is about behaviour (errors, latency, alerts, tests) — the check did
  not test the claim.
Absent when a behavioural check passed after the last change before the claim.
"""

from __future__ import annotations

import re

from mastkit.annotate.detectors._base import absent, detector, evidence_at, present, unknown
from mastkit.annotate.detectors._signals import (
    STATUS_ONLY_COMMANDS,
    SUCCESS_CLAIM,
    agent_texts,
    full_command,
    is_check,
    is_state_change,
    result_failed,
)
from mastkit.annotate.model import ModeVerdict
from mastkit.traces.model import Trace

CODE, NAME = "FM-3.3", "incorrect_verification"

_BEHAVIOUR = re.compile(
    r"(?i)\b(?:error|errors|5\d\d|latency|alert|alerts|failing|failure|tests?|bug|crash|"
    r"exception|timeout|slow|outage|incident)\b"
)


@detector(CODE, NAME)
def incorrect_verification(trace: Trace) -> ModeVerdict:
    """Success claimed on a failing check, or on a check that does not test the claim."""
    pairs = [(c, r) for c, r in trace.tool_calls() if not c.is_copied_context and c.tool_call is not None]
    if not pairs:
        return unknown(CODE, NAME, "no tool calls to judge verification")
    claims = [e for e in agent_texts(trace) if SUCCESS_CLAIM.search(e.content or "")]
    if not claims:
        return unknown(CODE, NAME, "no success claim")
    claim = claims[-1]
    before = [(c, r) for c, r in pairs if c.seq < claim.seq]
    changes = [c for c, _r in before if c.tool_call is not None and is_state_change(c.tool_call)]
    start = changes[-1].seq if changes else -1
    checks = [
        (c, r) for c, r in before if c.seq > start and c.tool_call is not None and is_check(c.tool_call)
    ]
    if not checks:
        return unknown(CODE, NAME, "no check between the last change and the claim (see FM-3.2)")
    last_check, last_result = checks[-1]
    m = SUCCESS_CLAIM.search(claim.content or "")
    claim_ev = evidence_at([claim], note="success claimed", text=m.group(0) if m else None)
    if result_failed(last_result):
        evs = [evidence_at([last_check], note="the check that ran")]
        if last_result is not None:
            evs.append(evidence_at([last_result], note="its result shows failure"))
        return present(CODE, NAME, [*evs, claim_ev], "success claimed although the last check failed", 0.8)
    about_behaviour = _BEHAVIOUR.search((claim.content or "") + " " + (trace.task or ""))
    status_only = all(
        c.tool_call is not None and STATUS_ONLY_COMMANDS.search(full_command(c.tool_call)) for c, _r in checks
    )
    if about_behaviour and status_only:
        return present(
            CODE,
            NAME,
            [evidence_at([c for c, _r in checks], note="only status probes were run"), claim_ev],
            "the checks only show that things run, not that the problem claimed fixed is gone",
            0.65,
        )
    return absent(CODE, NAME, f"a passing check (event {last_check.seq}) supports the claim", 0.55)
