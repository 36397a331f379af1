"""Check the judge's evidence against the trace it was shown.

A judge asked for evidence can still invent it: a quote that is not in the cited events, a
seq outside the trace, a "present" with no evidence at all. Each evidence item is looked up:

* **verified** — the quote occurs in the cited events (whitespace, case, typographic quotes
  and "…" gaps do not matter);
* **relocated** — the quote occurs in other events: the item is kept with the seqs where it
  actually is, and a note saying so;
* **unverified** — there is no quote, the quote is too short to identify a place (under
  :data:`MIN_QUOTE_CHARS` characters once normalised), or it occurs nowhere in the trace.

A ``present`` verdict keeps only its verified and relocated evidence; with none left it is
downgraded to ``unknown`` (the judge saw something it could not show), and the annotation
says so in the verdict's ``extra`` (``downgraded_from``, ``unverified_evidence``).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from mastkit.annotate.model import Evidence, ModeVerdict
from mastkit.traces.model import Trace

MIN_QUOTE_CHARS = 8
"""Shorter quotes (normalised) match too many places to count as evidence."""

_GAP = re.compile(r"\s*(?:\.\.\.+|…|\[\.\.\.\]|\[…\])\s*")
_SPACE = re.compile(r"\s+")
_TRANSLATE = str.maketrans({"‘": "'", "’": "'", "“": '"', "”": '"', "‹": "<", "›": ">", "`": "'"})
_STRIP = "\"' .,;:"


def normalise(text: str) -> str:
    """Text as quotes are compared: NFKC, case-folded, quotes unified, whitespace collapsed."""
    text = unicodedata.normalize("NFKC", text).translate(_TRANSLATE).casefold()
    return _SPACE.sub(" ", text).strip()


@dataclass(frozen=True)
class TraceText:
    """The searchable text of each event of a trace (what the judge could quote)."""

    by_seq: dict[int, str]

    @classmethod
    def of(cls, trace: Trace) -> TraceText:
        out: dict[int, str] = {}
        for e in trace.events:
            bits = [e.actor or "", e.role or "", e.text()]
            if e.tool_call is not None:
                bits.append(e.tool_call.name)
            if e.tool_result is not None and e.tool_result.name:
                bits.append(e.tool_result.name)
            out[e.seq] = normalise("\n".join(b for b in bits if b))
        return cls(out)

    def find(self, pieces: Sequence[str], seqs: Sequence[int] | None = None) -> list[int]:
        """Seqs (in order) of the events, among ``seqs`` (default: all), containing every piece in order."""
        hits = []
        for seq in seqs if seqs is not None else list(self.by_seq):
            text = self.by_seq.get(seq)
            if text is None:
                continue
            pos = 0
            for piece in pieces:
                pos = text.find(piece, pos)
                if pos < 0:
                    break
                pos += len(piece)
            else:
                hits.append(seq)
        return hits


def _pieces(quote: str) -> list[str]:
    return [p for p in (normalise(part).strip(_STRIP) for part in _GAP.split(quote)) if p]


def check_item(item: Evidence, text: TraceText) -> tuple[Evidence | None, str | None]:
    """``(kept item, None)`` when it is verified or relocated, ``(None, reason)`` when not."""
    pieces = _pieces(item.quote or "")
    if sum(len(p) for p in pieces) < MIN_QUOTE_CHARS:
        return None, "quote too short to locate" if pieces else "no quote"
    start = item.seq_start
    end = item.seq_end if item.seq_end is not None else start
    if start is not None and end is not None:
        lo, hi = min(start, end), max(start, end)
        cited = [s for s in text.by_seq if lo <= s <= hi]
        # a multi-event quote: its pieces may sit in consecutive events of the range
        if text.find(pieces, cited) or (cited and _across(pieces, cited, text)):
            return item, None
    found = text.find(pieces)
    if found:
        note = f"quote found at event {found[0]}, not at the cited {start}..{end}"
        return item.model_copy(update={"seq_start": found[0], "seq_end": found[0], "note": note}), None
    return None, f"quote not found in the trace: {item.quote[:80] if item.quote else ''!r}"


def _across(pieces: Sequence[str], seqs: Sequence[int], text: TraceText) -> bool:
    joined = " ".join(text.by_seq[s] for s in sorted(seqs))
    pos = 0
    for piece in pieces:
        pos = joined.find(piece, pos)
        if pos < 0:
            return False
        pos += len(piece)
    return True


def verify(verdict: ModeVerdict, text: TraceText) -> ModeVerdict:
    """``verdict`` with its evidence checked; a ``present`` without verifiable evidence becomes ``unknown``."""
    if not verdict.evidence and verdict.verdict != "present":
        return verdict
    kept: list[Evidence] = []
    rejected: list[dict[str, object]] = []
    for item in verdict.evidence:
        ok, reason = check_item(item, text)
        if ok is not None:
            kept.append(ok)
        else:
            rejected.append({**item.model_dump(exclude_none=True), "reason": reason})
    extra = dict(verdict.extra)
    if rejected:
        extra["unverified_evidence"] = rejected
    if verdict.verdict == "present" and not kept:
        extra["downgraded_from"] = "present"
        why = "no evidence given" if not verdict.evidence else "none of its evidence was found in the trace"
        rationale = f"judged present, but {why}; kept as unknown" + (
            f" (judge's reasoning: {verdict.rationale})" if verdict.rationale else ""
        )
        return verdict.model_copy(
            update={"verdict": "unknown", "evidence": [], "extra": extra, "rationale": rationale}
        )
    return verdict.model_copy(update={"evidence": kept, "extra": extra})
