"""FM-2.4 Information Withholding: an agent sees a key fact and does not pass it on.

A narrow, structural reading for multi-agent runs. An observation an agent receives (a tool
result, or the message of an executor such as ``Computer_terminal`` answering it) carries an
explicit note — a ``# note:`` / ``warning:`` / ``important:`` line, or a statement of units
("amount is in kEUR") — with key tokens (``TEST_DB=replica-2``, ``kEUR``, ``read-only``). The agent
then speaks to the team without any of those tokens, and another agent acts next without them
too. Then the fact stayed with the agent that saw it.

Absent when a multi-agent run has such notes and every one is passed on (or the others see it
themselves). Unknown otherwise: which facts were key needs the judge.
"""

from __future__ import annotations

import re

from mastkit.annotate.detectors._base import absent, detector, evidence_at, live_events, present, unknown
from mastkit.annotate.model import Evidence, ModeVerdict
from mastkit.traces.model import Event, Trace

CODE, NAME = "FM-2.4", "information_withholding"

_EXECUTOR = re.compile(r"(?i)terminal|executor|computer|environment|tool|user_?proxy|interpreter|sandbox")
_NOTE = re.compile(
    r"(?i)(?:^|[#\s])(?:note|warning|important|caution|attention)\s*:|"
    r"\b(?:amounts?|values?|figures?|prices?|numbers?|costs?|units?) (?:is|are) (?:given )?in\s+\S+|\bread-only\b"
)
_KEY = re.compile(
    r"[A-Za-z_]+=[\w.:/-]+|\b[a-z][A-Z]{2,}\b|\b[A-Z][A-Z_]{2,}\b|\bread-only\b|\bthousands\b|\bmillions\b"
)


def _agents(trace: Trace, live: list[Event]) -> set[str]:
    return {e.actor for e in live if e.actor and e.is_agent_step() and not _EXECUTOR.search(e.actor)}


def _observations(live: list[Event]) -> list[tuple[Event, str, str]]:
    """(event, text, agent who received it) for tool results and executor replies."""
    out: list[tuple[Event, str, str]] = []
    calls: dict[str, Event] = {}  # the latest call with each id: ids can be reused within a run
    last_speaker: str | None = None
    last_caller: str | None = None
    for e in live:
        if e.tool_call is not None and e.tool_call.call_id:
            calls[e.tool_call.call_id] = e
        if e.tool_result is not None:
            caller = calls.get(e.tool_result.call_id or "")
            who = caller.actor if caller is not None else last_caller
            if who:
                out.append((e, e.tool_result.output or "", who))
        elif e.kind == "message" and e.actor and _EXECUTOR.search(e.actor) and last_speaker:
            out.append((e, e.content or "", last_speaker))
        if e.tool_call is not None and e.actor:
            last_caller = e.actor
        if e.kind == "message" and e.actor and not _EXECUTOR.search(e.actor) and e.is_agent_step():
            last_speaker = e.actor
    return out


def _keys(text: str) -> set[str]:
    """Key tokens of the lines that carry a note (a line is one statement of the observation)."""
    keys: set[str] = set()
    for line in text.splitlines():
        if _NOTE.search(line):
            keys.update(m.group(0).lower() for m in _KEY.finditer(line))
    return keys


def information_withholding(trace: Trace) -> ModeVerdict:
    """A note an agent observed never reaches the agents who act next."""
    live = live_events(trace)
    agents = _agents(trace, live)
    if len(agents) < 2:
        return unknown(CODE, NAME, "not a multi-agent run")
    findings: list[Evidence] = []
    notes = 0
    for obs, text, who in _observations(live):
        keys = _keys(text)
        if not keys:
            continue
        notes += 1
        after = [e for e in live if e.seq > obs.seq and e.actor in agents]
        own = next((e for e in after if e.actor == who and e.kind == "message" and e.content), None)
        other = next((e for e in after if e.actor != who), None)
        if own is None or other is None or other.seq < own.seq:
            continue
        told = [e for e in after if e.actor == who and e.kind == "message" and e.seq < other.seq]
        if any(k in (e.content or "").lower() for e in told for k in keys):
            continue
        if any(k in e.text().lower() for k in keys for e in after if e.actor != who and e.seq <= other.seq):
            continue
        findings.append(
            evidence_at(
                [obs, own],
                note=f"{who} saw '{', '.join(sorted(keys))}' and told the team nothing of it before {other.actor} acted",
            )
        )
    if findings:
        return present(CODE, NAME, findings, "; ".join(f.note or "" for f in findings))
    if notes:
        return absent(CODE, NAME, f"{notes} noted fact(s) observed were passed on")
    return unknown(CODE, NAME, "no explicit note in what the agents observed; withholding needs the judge")


# Registered by a call, not a decorator: mutmut does not mutate decorated functions.
detector(CODE, NAME)(information_withholding)
