"""FM-1.5 Unaware of Termination Conditions: the run does not stop when it should.

Present when:
* the harness ended the run at a cap (steps, turns, cost, time, context) — the agent never
  terminated itself; or
* agents bounce "continue"-style messages at each other 3+ times (a conversation loop
  with no termination signal); or
* agents keep going for 3+ more turns after a final answer / completion was stated; or
* the instructions name a termination signal ("reply with exactly DONE and stop"), the agent
  never emits it, and the run is ended by someone else (user, harness) or by a limit.
Absent when the agent itself ended the run (submitted / final answer) with no such loop.
"""

from __future__ import annotations

import re

from mastkit.annotate.detectors._base import absent, detector, evidence_at, live_events, present, unknown
from mastkit.annotate.detectors._signals import CONTINUE_ONLY, is_log_line, result_failed, structured_enough
from mastkit.annotate.model import Evidence, ModeVerdict
from mastkit.traces.model import Event, Trace

CODE, NAME = "FM-1.5", "unaware_of_termination"

_CAP = re.compile(
    r"(?i)(?:max|limit|exceed|cap|budget|exhaust|timeout|timed out|context[_ ]?(?:length|window)|"
    r"exit_cost|exit_context|exit_command_timeout|exit_total_execution_time)"
)
# The agent's own completion signal: "FINAL ANSWER: ..." at a line start, or TERMINATE as the
# last word of the message (not a quoted instruction like "reply 'TERMINATE' to end").
_FINAL = re.compile(
    r"(?im)(?:^\s*(?:\*\*)?final answer\b|(?<![\"'\u201c\u2018])\bTERMINATE[\s.!]*\Z|^\s*task (?:is )?complete[d.!]*\s*\Z)"
)


# "reply with exactly DONE and stop", "say TERMINATE when finished", "output FINISHED to end".
_STOP_SIGNAL = re.compile(
    r"(?:reply|respond|answer|say|output|print|write|end with|send)\s+(?:with\s+)?(?:exactly\s+|only\s+)?"
    r"[\"'`“]?(?P<token>[A-Z][A-Z_]{2,})[\"'`”]?"
    r"(?=[^.\n]{0,40}\b(?:stop|end|finish|terminat|done|complete))",
)


def _missing_stop_signal(trace: Trace) -> Evidence | None:
    """The instructions define a stop token that the agent never sends, and someone else ended the run."""
    term = trace.termination
    if term is None or term.by == "agent":
        return None
    instructions = [
        e for e in trace.events[:6] if e.content and (e.role in ("system", "user") or e.kind == "system")
    ]
    for e in instructions:
        m = _STOP_SIGNAL.search(e.content or "")
        if not m:
            continue
        token = m.group("token")
        said = any(
            token in (a.content or "")
            for a in trace.events
            if a.seq > e.seq and a.role == "assistant" and not a.is_copied_context
        )
        if not said:
            return Evidence(
                seq_start=e.seq,
                seq_end=term.at_seq if term.at_seq is not None else e.seq,
                quote=m.group(0)[:200],
                agent=None,
                note=f"the instructions' stop signal {token!r} is never sent; the run was ended by "
                f"{term.by or 'someone else'} ({term.native or term.reason})",
            )
    return None


# The user says they are done ("that's it, thanks", "no thanks", "bye").
_USER_DONE = re.compile(
    r"(?i)^\W*(?:no(?:pe)?,? thanks?(?: you)?|no,? that'?s (?:it|all)|that'?s (?:it|all)(?! right)|no\.?$|bye|goodbye|"
    r"nothing (?:else|more)|all good|i'?m (?:all set|done|good))\b"
)
# Tools that complete the task (closing the ticket, submitting, resolving).
_COMPLETES = re.compile(r"(?i)(?:^|[_.:-])(?:close|resolve|submit|finish|complete)(?:$|[_.:-])")


_CLOSING_WORD = r"(?:no(?:pe)?|ok(?:ay)?|thanks?|thank you|bye|goodbye|good ?night|that'?s (?:it|all))"
_CLOSING_ONLY = re.compile(rf"(?i)^\W*{_CLOSING_WORD}(?:[\s,.!]+{_CLOSING_WORD})*[\s,.!]*$")
_MORE = re.compile(r"(?i)\?|\b(?:can|could|would) you\b|\bi (?:want|need|would like|'d like)\b|\bplease\b")


def _says_done(text: str) -> bool:
    """The user closes the conversation: a closing phrase and no further request or question
    ("No, thank you. I just want this sorted out. Could you check again?" asks for more)."""
    return bool(_USER_DONE.search(text) or _CLOSING_ONLY.match(text)) and not _MORE.search(text)


_REJECTED = re.compile(r"(?i)\b(?:incorrect|rejected|wrong|invalid|not accepted|try again)\b")


def _past_the_end(live: list[Event], results: dict[int, Event | None]) -> list[Evidence]:
    """Work or talk that goes on after the run's end was reached: 2+ agent messages after the
    user said they are done, or 2+ more tool calls after the task-completing call."""
    found: list[Evidence] = []
    users = [e for e in live if e.role == "user" and e.kind == "message"]
    done = next((e for e in users if _says_done(e.content or "")), None)
    if done is not None and any(e.seq > done.seq and not _says_done(e.content or "") for e in users):
        done = None  # the user came back with more: answering them is not talking past the end
    if done is not None:
        after = [e for e in live if e.seq > done.seq and e.kind == "message" and e.is_agent_step()]
        if len(after) >= 2:
            found.append(
                evidence_at(
                    [done, *after],
                    note=f"{len(after)} more agent messages after the user said they were done",
                )
            )
    closing = next(
        (
            e
            for e in live
            if e.tool_call is not None
            and _COMPLETES.search(e.tool_call.name)
            and not _rejected(results.get(e.seq))
        ),
        None,
    )
    reopened = closing is not None and any(e.seq > closing.seq and e.role == "user" for e in live)
    if closing is not None and not reopened:
        more = [
            e
            for e in live
            if e.seq > closing.seq
            and e.tool_call is not None
            and e.is_agent_step()
            and not _COMPLETES.search(e.tool_call.name)
            and e.tool_call.name not in ("done", "final_answer")
        ]
        if len(more) >= 2:
            found.append(
                evidence_at(
                    [closing, *more], note=f"{len(more)} more tool calls after the task was completed"
                )
            )
    return found


def _rejected(result: Event | None) -> bool:
    """The completing call did not complete: an error, or the grader said no."""
    if result is None or result.tool_result is None:
        return True
    return result_failed(result) or bool(_REJECTED.search(result.tool_result.output or ""))


def _is_final(text: str) -> bool:
    """:data:`_FINAL`, with a cheap pre-filter (long messages make the regex costly)."""
    if "TERMINATE" not in text:
        low = text.lower()
        if "final answer" not in low and "complete" not in low:
            return False
    return bool(_FINAL.search(text))


def unaware_of_termination(trace: Trace) -> ModeVerdict:
    """Run stopped by a limit, 'continue' loops, or talk after the final answer."""
    term = trace.termination
    findings: list[Evidence] = []
    if term is not None and (
        term.by == "limit" or (term.reason and _CAP.search(term.reason) and term.by != "agent")
    ):
        at = (
            trace.events[term.at_seq] if term.at_seq is not None and term.at_seq < len(trace.events) else None
        )
        findings.append(
            Evidence(
                seq_start=at.seq if at else None,
                seq_end=at.seq if at else None,
                quote=term.native or term.reason,
                note="the run was stopped by a limit",
            )
        )
    if not structured_enough(trace):
        if findings:
            return present(CODE, NAME, findings, "the harness stopped the run at a limit")
        return unknown(CODE, NAME, "too few structured events to judge termination")
    live = live_events(trace)
    conts = [e for e in live if e.kind == "message" and e.content and CONTINUE_ONLY.match(e.content)]
    if len(conts) >= 3:
        findings.append(evidence_at(conts, note=f"{len(conts)} bare 'continue' messages"))
    msgs = [
        e
        for e in live
        if e.kind == "message" and e.content and e.role != "user" and not is_log_line(e.content)
    ]
    final_idx = next((i for i, e in enumerate(msgs) if _is_final(e.content or "")), None)
    if final_idx is not None:
        after = [e for e in msgs[final_idx + 1 :] if not _is_final(e.content or "")]
        if len(after) >= 3:
            findings.append(
                evidence_at([msgs[final_idx], *after], note=f"{len(after)} more turns after the final answer")
            )
    findings.extend(_past_the_end(live, {c.seq: r for c, r in trace.tool_calls()}))
    missing = _missing_stop_signal(trace)
    if missing is not None:
        findings.append(missing)
    if findings:
        return present(CODE, NAME, findings, "; ".join(f.note or "" for f in findings))
    if term is not None and term.by == "agent":
        return absent(CODE, NAME, f"the agent ended the run itself ({term.reason or term.native})")
    return unknown(CODE, NAME, "no limit hit and no loop, but no explicit termination by the agent either")


# Registered by a call, not a decorator: mutmut does not mutate decorated functions.
detector(CODE, NAME)(unaware_of_termination)
