"""FM-3.2 No or Incomplete Verification: success is claimed without checking it after the last change.

Present when the agent's last success claim — a clause that asserts success (not negated, not
conditional, not a question: "fixed", "resolved", "all tests pass") or a submission with a
completion tool (``submit``, ``finish``, ``attempt_completion``...) — comes after a
state-changing action (an edit, ``kubectl apply``, a restart, ``sed -i``, output redirected
into a file...) with no call at all in between that could have checked it (any call that does
not itself change state counts — a test run, a probe, an unknown program — so the detector only
fires when nothing was looked at; a command line such as ``sed -i ... && pytest`` checks its
own change).
In a chat-only team whose roster has a checking role (critic, reviewer, verifier, tester, QA),
also present when the final answer goes out and that agent never spoke after the first draft.
Absent when a check ran after the last change and before the claim, or the checker spoke.
Unknown when there is no asserted claim or submission, when work went on after the last claim,
or when there are no tool calls to tell changes from checks.
"""

from __future__ import annotations

import re

from mastkit.annotate.detectors._base import absent, detector, evidence_at, present, unknown
from mastkit.annotate.detectors._signals import (
    SUBMIT_TOOLS,
    agent_texts,
    call_commands,
    checks_after_own_change,
    is_check,
    is_state_change,
    result_failed,
    submitted_text,
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
    for c in calls:
        if c.tool_call is not None and SUBMIT_TOOLS.match(c.tool_call.name):
            claims.append((c, success_claim(submitted_text(c.tool_call.arguments))))
    if not claims:
        return None
    claim = max(claims, key=lambda pair: pair[0].seq)
    later = [
        c for c in calls if c.seq > claim[0].seq and c.tool_call is not None and is_state_change(c.tool_call)
    ]
    return None if later else claim


# Calls that report or hand over rather than change what the claim is about.
_WRAP_UP = re.compile(
    r"(?i)(?:^|[_.:-])(?:close|resolve|submit|finish|done|transfer|notify|reply|respond|comment|report|"
    r"escalate|handoff|hand_off|send_message|post_message|final_answer|attempt_completion)(?:$|[_.:-])"
)


def _wrap_up(call: Event) -> bool:
    return (
        call.tool_call is not None
        and not call_commands(call.tool_call)
        and bool(_WRAP_UP.search(call.tool_call.name))
    )


_CONFIRMED = re.compile(
    r"(?i)\b(?:added|updated|created|cancell?ed|deleted|removed|sent|booked|transferred|applied|issued|"
    r"refunded|scheduled|saved|(?:is|are) now (?:on|off|enabled|disabled|active|inactive|connected|disconnected))\b"
)
_FILE_ARG = frozenset({"path", "file", "filename", "file_path", "filepath", "target_file"})
_FILE_TOOL = re.compile(r"(?i)file|edit|str_replace|patch|write")


def echoes_record(call: Event, result: Event | None) -> bool:
    """An API write (not a shell command) whose result is the updated record as JSON, or the
    service's confirmation naming what it did: the agent saw the new state (tau-bench's
    ``update_reservation_flights`` returns the reservation, ``send_certificate`` says it was added)."""
    if (
        call.tool_call is None
        or call_commands(call.tool_call)
        or result is None
        or result.tool_result is None
    ):
        return False
    r = result.tool_result
    out = (r.output or "").lstrip()
    if r.is_error or result_failed(result):
        return False
    if out.startswith("{") and out.count(":") >= 3:
        return True
    # A service's own confirmation naming what it did ("Certificate c_1 added to user u_2 with
    # amount 200", "Airplane Mode is now OFF. Status Bar: 5G"); not for file tools, whose "file
    # edited" says nothing about behaviour.
    args = call.tool_call.arguments if isinstance(call.tool_call.arguments, dict) else {}
    file_tool = bool(_FILE_ARG.intersection(k.lower() for k in args)) or _FILE_TOOL.search(
        call.tool_call.name
    )
    return not file_tool and bool(_CONFIRMED.search(out)) and bool(re.search(r"\w*\d\w*", out))


_CHECKER = re.compile(r"(?i)\b(?:critic|review(?:er)?|verif(?:ier|y)|checker|checks?|tester|qa|quality)\b")
_DRAFT = re.compile(r"(?i)^\W*(?:draft|proposed answer|candidate)\b")


def _unchecked_team_answer(trace: Trace) -> ModeVerdict:
    """Chat-only team: the final answer goes out without the checking agent's word on the draft."""
    checkers = {
        a.name
        for a in trace.agents
        if _CHECKER.search(a.name) or _CHECKER.search((a.role_description or "").split(";")[0])
    }
    term = trace.termination
    texts = [e for e in agent_texts(trace) if e.kind == "message"]
    if not checkers or not texts or term is None or term.by != "agent":
        return unknown(CODE, NAME, "no tool calls, and no checking role in a team to tell whether it checked")
    final = texts[-1]
    if final.actor in checkers:
        return absent(CODE, NAME, f"the checking agent {final.actor} has the last word")
    drafts = [e for e in texts[:-1] if e.actor not in checkers and e.actor == final.actor]
    since = drafts[0].seq if drafts else -1
    spoke = [e for e in texts if e.actor in checkers and since < e.seq < final.seq]
    if spoke:
        return absent(
            CODE, NAME, f"{spoke[-1].actor} checked the answer (event {spoke[-1].seq}) before it went out"
        )
    last_draft = drafts[0] if drafts else final
    if not drafts and not any(_DRAFT.search(e.content or "") for e in texts):
        return unknown(CODE, NAME, "no draft stage to check")
    return present(
        CODE,
        NAME,
        [
            evidence_at(
                [last_draft, final],
                note=f"the answer goes out without {', '.join(sorted(checkers))} checking it",
            )
        ],
        f"the team's checker ({', '.join(sorted(checkers))}) never checked the answer before it went out",
    )


def last_changes(before: list[Event]) -> list[Event]:
    """The state-changing calls among ``before``, wrap-ups (closing a ticket, a hand-off) left out."""
    return [c for c in before if c.tool_call is not None and is_state_change(c.tool_call) and not _wrap_up(c)]


def no_verification(trace: Trace) -> ModeVerdict:
    """A success claim with no check after the last change."""
    pairs = [(c, r) for c, r in trace.tool_calls() if not c.is_copied_context and c.tool_call is not None]
    calls = [c for c, _r in pairs]
    results = {c.seq: r for c, r in pairs}
    if not calls:
        return _unchecked_team_answer(trace)
    found = final_claim(trace, calls)
    if found is None:
        return unknown(CODE, NAME, "no asserted success claim or submission that ends the work")
    claim, words = found
    before = [c for c in calls if c.seq < claim.seq]
    changes = [
        c for c in before if c.tool_call is not None and is_state_change(c.tool_call) and not _wrap_up(c)
    ]
    if not changes:
        return unknown(CODE, NAME, "no state-changing action before the success claim")
    last_change = changes[-1]
    checks = [
        c
        for c in before
        if c.tool_call is not None
        and (
            (c.seq > last_change.seq and (is_check(c.tool_call) or not is_state_change(c.tool_call)))
            or (c is last_change and checks_after_own_change(c.tool_call))
        )
    ]
    if not checks and echoes_record(last_change, results.get(last_change.seq)):
        return absent(CODE, NAME, f"the change at event {last_change.seq} returned the updated record")
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


# Registered by a call, not a decorator: mutmut does not mutate decorated functions.
detector(CODE, NAME)(no_verification)
