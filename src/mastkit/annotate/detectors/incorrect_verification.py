"""FM-3.3 Incorrect Verification: a check was run, but it did not support the success claimed.

Present when, after the last change, the agent asserts success (see FM-3.2 for what counts as
a claim) and
* the last check before the claim failed — structurally: the error flag, a non-zero exit
  code, a test runner's summary with failures ("3 passed, 1 failed"; "5 passed, 0 failed" is
  a pass) or a bare 5xx status; failure words count only in a test run's output — the agent
  read a failing check as a pass; or
* the only checks are status probes (``kubectl get pods``, ``ls``, ``cat``, ``ps``...) while
  the task or claim is about behaviour (errors, latency, alerts, tests): the check did not
  test the claim.
Absent when a behavioural check passed after the last change before the claim.
"""

from __future__ import annotations

import re

from mastkit.annotate.detectors._base import absent, detector, evidence_at, present, unknown
from mastkit.annotate.detectors._signals import (
    call_commands,
    checks_after_own_change,
    is_check,
    is_status_probe,
    is_test_run,
    result_failed,
)
from mastkit.annotate.detectors.no_verification import echoes_record, final_claim, last_changes
from mastkit.annotate.model import ModeVerdict
from mastkit.traces.model import Event, Trace

CODE, NAME = "FM-3.3", "incorrect_verification"

_BEHAVIOUR = re.compile(
    r"(?i)\b(?:error|errors|5\d\d|latency|alert|alerts|failing|failure|tests?|bug|crash|"
    r"exception|timeout|slow|outage|incident)\b"
)


_SAYS_CHECKED = re.compile(
    r"(?i)\b(?:double[- ]?check\w*|re-?check\w*|verif\w*|i (?:have )?(?:checked|looked|confirmed)|"
    r"(?:shows?|showing) the change)\b"
)


def _other_target(change: Event, check: Event) -> str | None:
    """API calls: the check names another record than the change (same id argument, other value)."""
    a = change.tool_call.arguments if change.tool_call is not None else None
    b = check.tool_call.arguments if check.tool_call is not None else None
    if (
        not isinstance(a, dict)
        or not isinstance(b, dict)
        or change.tool_call is None
        or check.tool_call is None
    ):
        return None
    if call_commands(change.tool_call) or call_commands(check.tool_call):
        return None
    keys = [
        k for k in a if k in b and (k == "id" or k.endswith(("_id", "Id"))) and isinstance(a[k], str | int)
    ]
    if keys and all(a[k] != b[k] for k in keys):
        k = keys[0]
        return f"changed {k}={a[k]}, then checked {k}={b[k]}"
    return None


def incorrect_verification(trace: Trace) -> ModeVerdict:
    """Success claimed on a failing check, or on a check that does not test the claim."""
    pairs = [(c, r) for c, r in trace.tool_calls() if not c.is_copied_context and c.tool_call is not None]
    if not pairs:
        return unknown(CODE, NAME, "no tool calls to judge verification")
    found = final_claim(trace, [c for c, _r in pairs])
    if found is None or found[1] is None:
        return unknown(CODE, NAME, "no asserted success claim that ends the work")
    claim, words = found
    before = [(c, r) for c, r in pairs if c.seq < claim.seq]
    changes = last_changes([c for c, _r in before])
    start = changes[-1].seq if changes else -1
    checks = [
        (c, r)
        for c, r in before
        if c.tool_call is not None
        and (
            (c.seq > start and is_check(c.tool_call))
            or (c.seq == start and checks_after_own_change(c.tool_call))
        )
    ]
    if not checks:
        return unknown(CODE, NAME, "no check between the last change and the claim (see FM-3.2)")
    last_check, last_result = checks[-1]
    claim_ev = evidence_at([claim], note="success claimed", text=words)
    assert last_check.tool_call is not None
    if result_failed(last_result, strict=not is_test_run(last_check.tool_call)):
        evs = [evidence_at([last_check], note="the check that ran")]
        if last_result is not None:
            evs.append(evidence_at([last_result], note="its result shows failure"))
        return present(CODE, NAME, [*evs, claim_ev], "success claimed although the last check failed")
    results = {c.seq: r for c, r in pairs}
    # A change whose own answer showed the new state was checked there; later reads of other
    # records serve something else (the next question), not as its check — unless the claim
    # itself presents a check ("I double-checked: ..."), which then is that read.
    self_checked = echoes_record(changes[-1], results.get(changes[-1].seq)) if changes else False
    if changes and (not self_checked or _SAYS_CHECKED.search(claim.content or "")):
        other = _other_target(changes[-1], last_check)
        if other is not None:
            return present(
                CODE,
                NAME,
                [evidence_at([changes[-1], last_check], note=other), claim_ev],
                "the check after the change looked at something else than what was changed",
            )
    about_behaviour = _BEHAVIOUR.search((claim.content or "") + " " + (trace.task or ""))
    status_only = all(c.tool_call is not None and is_status_probe(c.tool_call) for c, _r in checks)
    if about_behaviour and status_only:
        return present(
            CODE,
            NAME,
            [evidence_at([c for c, _r in checks], note="only status probes were run"), claim_ev],
            "the checks only show that things run, not that the problem claimed fixed is gone",
        )
    return absent(CODE, NAME, f"a passing check (event {last_check.seq}) supports the claim")


# Registered by a call, not a decorator: mutmut does not mutate decorated functions.
detector(CODE, NAME)(incorrect_verification)
