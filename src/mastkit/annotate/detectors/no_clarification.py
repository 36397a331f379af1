"""FM-2.2 Fail to Ask for Clarification: the task is ambiguous and the agent acts on a guess.

FM-2.2 is about ambiguity in what was asked, not about recovering from a tool's error:
correcting a date format after "must be YYYY-MM-DD", or retrying with a fixed argument after a
validation error, is the right behaviour and never fires. Two narrow signals:

* the environment reports that the request is ambiguous (several matching users/orders/
  records, "ambiguous", "did you mean") and the agent's next step changes state on one of the
  candidates without asking first;
* the agent itself says the request is unclear, that it is assuming what the user means, or
  that it picks one of several candidates ("the task does not specify which…, I'll assume…";
  "assuming 'the tower' means…"; "X is the one that matters"; "I'll restart the prod one") and
  then acts on that — a state change, or in a chat-only run its next message — without asking.

Absent when every such ambiguity is met with a question (to the user, or an ask tool).
Unknown otherwise: whether plain instructions were under-specified needs the judge.
"""

from __future__ import annotations

import re

from mastkit.annotate.detectors._base import absent, detector, evidence_at, live_events, present, unknown
from mastkit.annotate.detectors._signals import ASK_TOOLS, QUESTION_TO_USER, is_state_change
from mastkit.annotate.model import Evidence, ModeVerdict
from mastkit.traces.model import Event, Trace

CODE, NAME = "FM-2.2", "no_clarification"

_AMBIGUOUS_RESULT = re.compile(
    r"(?i)\b(?:ambiguous|did you mean|multiple (?:matches|matching|results|records|users|accounts|customers|"
    r"orders|items|entries|candidates)(?: (?:found|match))?|more than one (?:match|result|record|user|account|"
    r"customer|order|item|entry)|\d+ (?:matches|matching (?:users|accounts|customers|orders|records)) found)\b"
)
_ASSUMPTION = re.compile(
    r"(?i)\b(?:(?:i(?:'ll| will)|let me|i am going to|i'm going to) (?:just )?(?:go with|pick)\b|"
    r"(?:i(?:'ll| will)|let me|i am going to|i'm going to) (?:just )?(?:assume|guess)\b(?=[^.;\n]{0,60}"
    r"\b(?:you|user|customer|meant|means|mean|intended|refers|one|which)\b)|"
    r"assuming (?:that )?(?:you|the user|the customer|the task|the request)\b|"
    r"(?:task|request|instructions?|requirements?|question|user) (?:is|are|was|were|seems?|appears?) "
    r"(?:to be )?(?:ambiguous|unclear|vague|under-?specified)|"
    r"(?:does not|doesn't|did not|didn't) (?:specify|say|mention|state) (?:which|what|whether|the)|"
    r"(?:not|isn't|wasn't) (?:specified|clear) (?:which|what|whether)|"
    r"assuming ['\"\u2018\u201c]?[^'\"\u2019\u201d.]{1,40}['\"\u2019\u201d]? (?:means|refers to|is meant)|"
    r"\bis the one that matters\b|\bi(?:'ll| will) \w+ the \w+ one\b|^\W*proceeding with\b)"
)


def _asks(e: Event) -> bool:
    if e.tool_call is not None:
        return bool(ASK_TOOLS.search(e.tool_call.name))
    return (
        e.kind == "message"
        and e.is_agent_step()
        and bool(e.content)
        and bool(QUESTION_TO_USER.search(e.content or ""))
    )


def _reaction(after: list[Event], chat_only: bool) -> tuple[str, Event] | None:
    """What the agent does first: ('ask', e) or ('act', e) for a state change — in a chat-only
    run, for the next agent message that goes on with the work; None if neither."""
    for e in after[:12]:
        if _asks(e):
            return ("ask", e)
        if e.tool_call is not None and e.is_agent_step() and is_state_change(e.tool_call):
            return ("act", e)
        if chat_only and e.kind == "message" and e.is_agent_step() and e.content:
            return ("act", e)
        if e.role == "user" and e.kind == "message":
            return None  # the user spoke first: not the agent's choice any more
    return None


def no_clarification(trace: Trace) -> ModeVerdict:
    """The request is ambiguous (said by a tool or by the agent) and the agent acts on a guess."""
    live = live_events(trace)
    findings: list[Evidence] = []
    asked = 0
    chat_only = not any(e.tool_call is not None for e in live)
    for i, e in enumerate(live):
        trigger: str | None = None
        if e.tool_result is not None:
            m = _AMBIGUOUS_RESULT.search((e.tool_result.output or "")[:4000])
            trigger = m.group(0) if m else None
        elif e.kind in ("message", "reasoning") and e.is_agent_step() and e.content:
            m = _ASSUMPTION.search(e.content)
            trigger = m.group(0) if m and not QUESTION_TO_USER.search(e.content) else None
        if trigger is None:
            continue
        reaction = _reaction(live[i + 1 :], chat_only)
        if reaction is None:
            continue
        kind, at = reaction
        if kind == "ask":
            asked += 1
            continue
        source = "the environment reports" if e.tool_result is not None else "the agent says"
        findings.append(
            evidence_at(
                [e, at],
                note=f"{source} '{trigger}', then the agent acts without asking (event {at.seq})",
                text=trigger,
            )
        )
    if findings:
        return present(CODE, NAME, findings, "; ".join(f.note or "" for f in findings))
    if asked:
        return absent(CODE, NAME, "each ambiguity seen was met with a question before acting")
    return unknown(
        CODE, NAME, "no sign of an ambiguous request; whether the instructions were clear needs the judge"
    )


# Registered by a call, not a decorator: mutmut does not mutate decorated functions.
detector(CODE, NAME)(no_clarification)
