"""FM-1.4 Loss of Conversation History: the agent loses context it already had.

Present when an agent asks again for something already given earlier in the run (e.g.
"what is your user id?" after the user gave it), with extra confidence when a context
compaction/condensation happened between the two; or when, right after a compaction, the
agent repeats a tool call it had already completed before it.
Also present when the user has to repeat themselves ("like I said at the start", "I already
told you") in reply to an agent's question.
A compaction alone is reported as evidence in ``extra`` but is not a failure by itself.
Absent when there are several turns, no compaction, and no re-asking.
"""

from __future__ import annotations

import re

from mastkit.annotate.detectors._base import absent, detector, evidence_at, live_events, present, unknown
from mastkit.annotate.detectors._signals import canonical_call, structured_enough
from mastkit.annotate.model import Evidence, ModeVerdict
from mastkit.traces.model import Trace

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
_COMPACTION = re.compile(r"(?i)compact|condens|summar|truncat|context[_ ]?(?:reset|window)")


@detector(CODE, NAME)
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
            words = [w for w in thing.split() if len(w) > 2][:3]
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
                    and phrase in p.content.lower()
                    and not p.content.rstrip().endswith("?")
                ),
                None,
            )
            if given is not None:
                between = [c for c in compactions if given.seq < c.seq < e.seq]
                note = f"asks again for '{phrase}', given at event {given.seq}"
                if between:
                    note += f" (context compacted at event {between[0].seq})"
                findings.append(evidence_at([given, e], note=note, text=m.group(0)))
    for i, e in enumerate(live):
        if e.role != "user" or e.kind != "message" or not e.content:
            continue
        low = e.content.lower()
        hint = any(w in low for w in ("said", "told", "mentioned", "gave", "wrote", "stated"))
        m2 = _REPEAT_COMPLAINT.search(e.content) if hint else None
        asker = next((p for p in reversed(live[:i]) if p.kind == "message" and p.role != "user"), None)
        if m2 and asker is not None:
            between = [c for c in compactions if c.seq < asker.seq]
            note = f"the user has to repeat information they gave before (event {e.seq})"
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
