"""FM-1.4 Loss of Conversation History: the agent loses context it already had.

Present when an agent asks again for something already given earlier in the run (e.g.
"what is your user id?" after the user gave it), with extra confidence when a context
compaction/condensation happened between the two; or when, right after a compaction, the
agent repeats a tool call it had already completed before it.
Also present when someone has to repeat themselves in reply to an agent's question: the user
("like I said at the start", "I already told you", in the reply's first sentence: a reminder
further into a long reply is emphasis, not the answer repeated) or, in a multi-agent run,
another agent ("same as above", "I posted it just now").
History needs an exchange: a question in the agent side's first reply to a message is not a loss
of history (it is where agents gather and confirm details; answering what the message just said
is ignored input, FM-2.5, if anything), so a re-ask counts only when some agent turn lies
between the information being given and the question.
A compaction alone is reported as evidence in ``extra`` but is not a failure by itself.
Absent when there are several turns, no compaction, and no re-asking.
"""

from __future__ import annotations

import re

from mastkit.annotate.detectors._base import absent, detector, evidence_at, live_events, present, unknown
from mastkit.annotate.detectors._claims import sentences
from mastkit.annotate.detectors._signals import canonical_call, structured_enough
from mastkit.annotate.model import Evidence, ModeVerdict
from mastkit.traces.model import Event, Trace

CODE, NAME = "FM-1.4", "loss_of_history"

# Asking the user for *their* information: "what is your user id", "could you provide your email".
_ASK = re.compile(
    r"(?i)\b(?:what(?:'s| is| was)|could you (?:please )?(?:provide|tell me|share|confirm|remind me of)|"
    r"can you (?:provide|tell me|share|remind me of)|please (?:provide|share|tell me|confirm))\s+"
    r"your\s+(?P<thing>[a-z][\w -]{2,40}?)(?:\?|\.|,|$| again| so | to | for )"
)
# The user points out that they already gave the information.
_REPEAT_COMPLAINT = re.compile(
    r"(?i)\b(?:(?:as|like) i (?:said|mentioned|told you|wrote)|i (?:already|just) (?:said|told|gave|mentioned|"
    r"wrote)|as (?:mentioned|stated|said) (?:before|earlier|above|at the (?:start|beginning))|"
    r"(?:told|gave) you (?:this |that |it )?(?:before|earlier|already|at the (?:start|beginning)))\b"
)
# Another agent points out that it already posted what it is asked for.
_POSTED_BEFORE = re.compile(
    r"(?i)\b(?:same as (?:above|before)|as (?:posted|shared|stated|reported) (?:above|earlier|before)|"
    r"i (?:already |just )?(?:posted|shared|reported|sent|gave) (?:it|this|that|them|the \w+)\s*"
    r"(?:just now|above|earlier|before|already)|already (?:posted|shared|reported) (?:it |this |that )?above)"
)
# A message that asks for something: a question, or a request ("Please send the reason.").
_ASKS = re.compile(r"(?i)\?|\b(?:please|could you|can you|would you|let me know|i need)\b")
_FILLER = frozenset({"the", "a", "an", "of", "and", "or", "please", "again", "exact", "full"})
_COMPACTION = re.compile(r"(?i)compact|condens|summar|truncat|context[_ ]?(?:reset|window)")


def loss_of_history(trace: Trace) -> ModeVerdict:
    """Re-asking for information already given, or redoing done work right after a compaction."""
    if not structured_enough(trace, 4):
        return unknown(CODE, NAME, "too few structured events")
    live = live_events(trace)
    compactions = [e for e in trace.events if e.kind == "system" and _COMPACTION.search(e.subtype or "")]
    findings: list[Evidence] = []
    for i, e in enumerate(live):
        if e.kind != "message" or e.role == "user" or not e.content or "your" not in e.content.lower():
            continue
        for m in _ASK.finditer(e.content):
            thing = m.group("thing").strip().lower()
            words = [w for w in thing.split() if w not in _FILLER][:3]
            if not words:
                continue
            phrase = " ".join(words)
            # The user gave it: their message names the thing and is a statement, not a question.
            given = next(
                (
                    p
                    for p in live[:i]
                    if p.role == "user"
                    and p.content
                    and _states_value(p.content, phrase)
                    and not p.content.rstrip().endswith("?")
                ),
                None,
            )
            if given is not None and _had_exchange(live, e, since=given):
                between = [c for c in compactions if given.seq < c.seq < e.seq]
                note = f"asks again for '{phrase}', given at event {given.seq}"
                if between:
                    note += f" (context compacted at event {between[0].seq})"
                findings.append(evidence_at([given, e], note=note, text=m.group(0)))
    for i, e in enumerate(live):
        if e.kind != "message" or not e.content:
            continue
        if e.role == "user":
            low = e.content.lower()
            hint = any(w in low for w in ("said", "told", "mentioned", "gave", "wrote", "stated"))
            # only in the reply's first sentence: a reminder further in is emphasis
            m2 = _REPEAT_COMPLAINT.search(next(iter(sentences(e.content)), "")) if hint else None
        else:
            m2 = _POSTED_BEFORE.search(e.content)
        asker = next(
            (
                p
                for p in reversed(live[:i])
                if p.kind == "message" and p.role != "user" and p.actor != e.actor
            ),
            None,
        )
        if asker is None or not _ASKS.search(asker.content or ""):
            continue
        if m2 and asker is not None and _had_exchange(live, asker):
            between = [c for c in compactions if c.seq < asker.seq]
            who = "the user has" if e.role == "user" else f"{e.actor} has"
            note = f"{who} to repeat information given before (event {e.seq})"
            if between:
                note += f" after the context was compacted at event {between[-1].seq}"
            findings.append(evidence_at([asker, e], note=note, text=m2.group(0)))
    for comp in compactions:
        before = {canonical_call(c.tool_call) for c in live if c.tool_call is not None and c.seq < comp.seq}
        redo = [
            c
            for c in live
            if c.tool_call is not None and c.seq > comp.seq and canonical_call(c.tool_call) in before
        ]
        if len(redo) >= 2:
            findings.append(
                evidence_at(
                    redo[:5],
                    note=f"{len(redo)} completed calls repeated after the compaction at event {comp.seq}",
                )
            )
    if findings:
        return present(CODE, NAME, findings, "; ".join(f.note or "" for f in findings))
    if compactions:
        v = unknown(CODE, NAME, "the context was compacted, but no sign that needed history was lost")
        v.extra["compactions"] = [c.seq for c in compactions]
        return v
    if len(live) >= 6:
        return absent(CODE, NAME, "no compaction and nothing asked twice")
    return unknown(CODE, NAME, "too short to judge")


def _had_exchange(live: list[Event], ask: Event, since: Event | None = None) -> bool:
    """Whether an agent turn other than ``ask`` lies between ``since`` (default: the first user
    message) and ``ask``: without one, ``ask`` is the first reply and no history can be lost."""
    start = since or next((e for e in live if e.role == "user"), None)
    lo = start.seq if start is not None else -1
    return any(lo < e.seq < ask.seq and e.is_agent_step() for e in live)


def _states_value(text: str, phrase: str) -> bool:
    """Whether ``text`` gives a value for ``phrase``: "my user id is mia_42", "email: a@b.c";
    naming the thing without a value ("I'll look for my user id") gives nothing."""
    pattern = rf"(?i)\b{re.escape(phrase)}\b\s*(?:is|was|=|:|-)?\s*(?:is\s+)?['\"]?(?P<v>[^\s,;!?'\"]+)"
    for m in re.finditer(pattern, text):
        value = m.group("v")
        if (
            any(c.isdigit() or c in "_@" for c in value)
            or m.group(0).lower().count(" is ")
            or ":" in m.group(0)
        ):
            return True
    return False


# Registered by a call, not a decorator: mutmut does not mutate decorated functions.
detector(CODE, NAME)(loss_of_history)
