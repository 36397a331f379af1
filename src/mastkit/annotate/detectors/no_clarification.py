"""FM-2.2 Fail to Ask for Clarification: on missing or invalid information, the agent guesses.

Present when a tool result reports an authentication or validation problem (401/403,
invalid credentials, missing required field, invalid value...) and the agent then retries
with changed arguments — guessing — without asking the user or another agent first.
Absent when every such error is followed by a question to the user (or an ask tool).
Unknown when no such error occurs: ambiguity in the instructions themselves is for the judge.
"""

from __future__ import annotations

from mastkit.annotate.detectors._base import absent, detector, evidence_at, present, unknown
from mastkit.annotate.detectors._signals import (
    ASK_TOOLS,
    AUTH_OR_VALIDATION_ERROR,
    QUESTION_TO_USER,
    canonical_call,
)
from mastkit.annotate.model import Evidence, ModeVerdict
from mastkit.traces.model import Trace

CODE, NAME = "FM-2.2", "no_clarification"


@detector(CODE, NAME)
def no_clarification(trace: Trace) -> ModeVerdict:
    """Auth/validation error followed by guessed retries instead of a question."""
    events = [e for e in trace.events if not e.is_copied_context]
    pairs = [(c, r) for c, r in trace.tool_calls() if not c.is_copied_context]
    findings: list[Evidence] = []
    errors_seen = 0
    asked = 0
    for idx, (call, result) in enumerate(pairs):
        if result is None or result.tool_result is None or call.tool_call is None:
            continue
        m = AUTH_OR_VALIDATION_ERROR.search((result.tool_result.output or "")[:4000])
        if not m:
            continue
        errors_seen += 1
        following = [e for e in events if e.seq > result.seq]
        next_calls = [c for c, _r in pairs[idx + 1 :]]
        question = next(
            (
                e
                for e in following[:6]
                if (
                    e.kind == "message"
                    and e.role != "user"
                    and e.content
                    and QUESTION_TO_USER.search(e.content)
                )
                or (e.tool_call is not None and ASK_TOOLS.search(e.tool_call.name))
            ),
            None,
        )
        retry = next(
            (
                c
                for c in next_calls[:3]
                if c.tool_call is not None
                and c.tool_call.name == call.tool_call.name
                and canonical_call(c.tool_call) != canonical_call(call.tool_call)
            ),
            None,
        )
        if question is not None and (retry is None or question.seq < retry.seq):
            asked += 1
            continue
        if retry is not None:
            findings.append(
                evidence_at(
                    [call, result, retry],
                    note=f"'{m.group(0)}' answered by retrying {retry.tool_call.name if retry.tool_call else ''} "
                    "with guessed arguments instead of asking",
                    text=m.group(0),
                )
            )
    if findings:
        return present(CODE, NAME, findings, "; ".join(f.note or "" for f in findings), 0.7)
    if errors_seen and asked == errors_seen:
        return absent(CODE, NAME, "every auth/validation error was followed by a question", 0.6)
    return unknown(
        CODE, NAME, "no auth or validation error to react to; instruction ambiguity needs the judge"
    )
