"""FM-3.1 Premature Termination: the run ends before the task is done.

Present when the run ended (not at a limit) and:
* the last plan still has open items (``[ ]``, pending / in_progress todos); or
* the agent's last word gives up ("I cannot complete…", "I'll stop here") — the last agent
  message, with no agent action after it, in a sentence that does not move past the setback
  ("I couldn't find the cause at first, but continuing" is not a give-up); or
* the run was cut short by an agent-side abort while work was under way.
Absent when the run ended with a final answer/submission, no open plan items, and no give-up.
"""

from __future__ import annotations

import re
from typing import Any

from mastkit.annotate.detectors._base import absent, detector, evidence_at, live_events, present, unknown
from mastkit.annotate.detectors._signals import (
    QUESTION_TO_USER,
    SUBMIT_TOOLS,
    agent_texts,
    give_up,
    is_state_change,
    result_failed,
    structured_enough,
    submitted_text,
    success_claim,
)
from mastkit.annotate.model import Evidence, ModeVerdict
from mastkit.traces.model import Event, Trace

CODE, NAME = "FM-3.1", "premature_termination"

# Calls that end the agent's part (a hand-off to a human, a submission): not further work.
_HAND_OFF = re.compile(r"(?i)transfer|escalat|hand_?off|submit|finish|end_(?:conversation|chat|session)|done")
_TO_HUMAN = re.compile(r"(?i)transfer|escalat|hand_?off")
_OPEN_ITEM = re.compile(r"(?m)^\s*(?:[-*]|\d+\.)?\s*\[\s\]")
_ANY_BOX = re.compile(r"\[[\sxX✓]\]")  # cheap pre-filter for the two below
_DONE_ITEM = re.compile(r"(?m)^\s*(?:[-*]|\d+\.)?\s*\[[xX✓]\]")


def _open_items(e: Event) -> int:
    """Open items in a plan event: unchecked boxes in text, or pending todos in a structured plan."""
    n = len(_OPEN_ITEM.findall(e.content or ""))
    args: Any = e.tool_call.arguments if e.tool_call is not None else None
    if isinstance(args, dict):
        items = args.get("plan") or args.get("todos") or args.get("items")
        if isinstance(items, list):
            for it in items:
                status = str(it.get("status", "")).lower() if isinstance(it, dict) else ""
                if status in ("pending", "in_progress", "todo", "not_started"):
                    n += 1
    return n


def _is_plan(e: Event) -> bool:
    if e.kind == "plan":
        return True
    if e.tool_call is not None and re.search(r"(?i)plan|todo", e.tool_call.name):
        return True
    return bool(
        e.content
        and _ANY_BOX.search(e.content)
        and (_OPEN_ITEM.search(e.content) or _DONE_ITEM.search(e.content))
    )


# The request asks for a change to be made (not only for information).
_CHANGE_REQUEST = re.compile(
    r"(?i)(?:^|please\s+|[,.!;]\s+|\band\s+|\b(?:want|need|like) (?:you )?to\s+|\bcan you\s+|\bcould you\s+)"
    r"(?:fix|change|cancel|update|modify|book|refund|exchange|close|deploy|implement|apply|restart|rebook|"
    r"upgrade|downgrade|remove|delete|migrate|patch|return|move)\b"
)
# The last word announces more work ("Let me ...", "Next I'll ...") or hands a request to someone.
_MORE_TO_DO = re.compile(
    r"(?i)^\W*(?:let me|let's|i(?:'ll| will)|next,? i|now i(?:'ll| will)|i am going to|i'm going to)\b"
    r"|^\W*[A-Z][\w-]+,\s+(?:please|can you|could you)\b"
)


def _request(trace: Trace) -> str:
    first_user = next((e.content for e in trace.events if e.role == "user" and e.content), None)
    return trace.task or first_user or ""


def _policy_refusal(live: list[Event], last_word: Event) -> bool:
    """ "I cannot …" and then a hand-over to a human, with the last tool result before it a success:
    a refusal under a policy (right or wrong, the judge must say), not a give-up. After a failed
    call ("the system isn't working, I'll transfer you") it is still giving up on the task."""
    handed_over = any(
        e.seq > last_word.seq and e.tool_call is not None and _TO_HUMAN.search(e.tool_call.name) for e in live
    )
    last_result = next(
        (e for e in reversed(live) if e.seq < last_word.seq and e.tool_result is not None), None
    )
    return handed_over and last_result is not None and not result_failed(last_result)


def _nothing_done(trace: Trace, live: list[Event], last_word: Event) -> Evidence | None:
    """A request for a change, a tool-using agent that never changed anything, and a last word
    that is not a question back: the run ended with the work not done. Not when the user had the
    last word or the agent handed over to a human (a refusal under a policy may be right)."""
    if not _CHANGE_REQUEST.search(_request(trace)):
        return None
    calls = [e for e in live if e.tool_call is not None and e.is_agent_step()]
    if live and live[-1].role == "user":
        return None  # the user closed the conversation: a refusal or a deferral may be right
    if any(e.tool_call is not None and _TO_HUMAN.search(e.tool_call.name) for e in calls):
        return None  # handed to a human: whether the refusal was right needs the policy
    if not calls or any(
        e.tool_call is not None and is_state_change(e.tool_call) and not _HAND_OFF.search(e.tool_call.name)
        for e in calls
    ):
        return None
    text = last_word.content or ""
    if QUESTION_TO_USER.search(text.strip().splitlines()[-1] if text.strip() else ""):
        return None
    return evidence_at([last_word], note="the request asks for a change; the run ends with nothing changed")


def premature_termination(trace: Trace) -> ModeVerdict:
    """Ended with open plan items, by giving up, or by an agent abort."""
    if not structured_enough(trace):
        return unknown(CODE, NAME, "too few structured events to judge termination")
    term = trace.termination
    if term is not None and term.by in ("limit", "user"):
        return unknown(CODE, NAME, f"the run was ended by the {term.by}, not by the agent")
    live = live_events(trace)
    findings: list[Evidence] = []
    plans = [e for e in live if e.is_agent_step() and _is_plan(e)]
    if plans and _open_items(plans[-1]) > 0:
        findings.append(evidence_at([plans[-1]], note=f"last plan has {_open_items(plans[-1])} open item(s)"))
    texts = agent_texts(trace)
    last_word = texts[-1] if texts else None
    if last_word is not None and not any(
        e.seq > last_word.seq and e.tool_call is not None and not _HAND_OFF.search(e.tool_call.name)
        for e in live
    ):
        words = give_up(last_word.content)
        if words and not _policy_refusal(live, last_word):
            findings.append(evidence_at([last_word], note="the agent gave up", text=words))
    submit = next((e for e in reversed(live) if e.tool_call is not None and e.is_agent_step()), None)
    if submit is not None and submit.tool_call is not None and SUBMIT_TOOLS.match(submit.tool_call.name):
        words = give_up(submitted_text(submit.tool_call.arguments))
        if words and (last_word is None or last_word.seq < submit.seq):
            findings.append(evidence_at([submit], note="the agent gave up in its submission", text=words))
    if term is not None and term.reason in ("aborted", "turn_aborted") and term.by in ("agent", "error"):
        findings.append(
            Evidence(
                seq_start=term.at_seq,
                seq_end=term.at_seq,
                quote=term.native,
                note="run aborted while working",
            )
        )
    if not findings and last_word is not None:
        nothing = _nothing_done(trace, live, last_word)
        if nothing is not None:
            findings.append(nothing)
        elif (term is None or term.by == "unknown") and live and live[-1] is last_word:
            m = _MORE_TO_DO.search(last_word.content or "")
            if m and not success_claim(last_word.content):
                findings.append(
                    evidence_at([last_word], note="the run stops on an announced next step", text=m.group(0))
                )
    if findings:
        return present(CODE, NAME, findings, "; ".join(f.note or "" for f in findings))
    finished = (
        term is not None
        and term.by == "agent"
        and term.reason in ("submitted", "final_answer", "completed", "end_turn", "stop")
    )
    if finished or (trace.outcome is not None and trace.outcome.final_output):
        return absent(CODE, NAME, "the run ended with a final answer and no open work")
    return unknown(CODE, NAME, "no open plan items or give-up seen, but no clear final answer either")


# Registered by a call, not a decorator: mutmut does not mutate decorated functions.
detector(CODE, NAME)(premature_termination)
