"""Compare two taxonomies: which modes correspond, which are new, which have no counterpart.

The match is lexical (word overlap of name, definition and cues, with aliases and equal
codes as exact matches), good enough to line up a learned taxonomy against MAST in a
report; it is not a semantic judgement.
"""

from __future__ import annotations

import re

from pydantic import BaseModel

from mastkit.taxonomy.model import FailureMode, Taxonomy

_WORD = re.compile(r"[a-z]{3,}")
_STOP = frozenset(
    [
        "the",
        "and",
        "for",
        "that",
        "with",
        "from",
        "this",
        "are",
        "not",
        "but",
        "its",
        "into",
        "when",
        "which",
        "was",
        "were",
        "has",
        "have",
        "had",
        "one",
        "other",
        "agent",
        "agents",
        "task",
        "tasks",
        "their",
        "them",
        "they",
        "than",
        "then",
        "such",
    ]
)


class ModeMatch(BaseModel):
    a: str
    b: str | None
    score: float
    """1.0 for a code/alias match, else word-overlap (Jaccard) of the two modes' text."""


class TaxonomyComparison(BaseModel):
    a: str
    b: str
    matches: list[ModeMatch]
    """Best counterpart in ``b`` for every mode of ``a`` (``b`` None under the threshold)."""
    only_in_a: list[str]
    only_in_b: list[str]
    coverage: float
    """Share of ``a``'s modes with a counterpart in ``b``."""


def _words(m: FailureMode) -> set[str]:
    text = " ".join([m.name, m.definition, *m.cues]).lower()
    return {w for w in _WORD.findall(text) if w not in _STOP}


def _score(x: FailureMode, y: FailureMode) -> float:
    if x.code == y.code or x.code in y.aliases or y.code in x.aliases or x.name.lower() == y.name.lower():
        return 1.0
    wx, wy = _words(x), _words(y)
    return len(wx & wy) / len(wx | wy) if wx | wy else 0.0


def compare_taxonomies(a: Taxonomy, b: Taxonomy, *, threshold: float = 0.12) -> TaxonomyComparison:
    """Line up the modes of ``a`` with those of ``b``."""
    matches: list[ModeMatch] = []
    matched_b: set[str] = set()
    for m in a.modes:
        best = max(((_score(m, n), n.code) for n in b.modes), default=(0.0, ""))
        if best[0] >= threshold:
            matches.append(ModeMatch(a=m.code, b=best[1], score=round(best[0], 3)))
            matched_b.add(best[1])
        else:
            matches.append(ModeMatch(a=m.code, b=None, score=round(best[0], 3)))
    only_a = [x.a for x in matches if x.b is None]
    only_b = [n.code for n in b.modes if n.code not in matched_b]
    cov = (len(a.modes) - len(only_a)) / len(a.modes) if a.modes else 0.0
    return TaxonomyComparison(
        a=a.id, b=b.id, matches=matches, only_in_a=only_a, only_in_b=only_b, coverage=cov
    )


def jaccard_overlap(a: Taxonomy, b: Taxonomy, *, threshold: float = 0.12) -> float:
    """Jaccard overlap of two taxonomies' mode sets, a mode counting as shared when it has a
    counterpart (:func:`compare_taxonomies`); the shared count is averaged over both directions."""
    if a is b or (a.id == b.id and a.codes == b.codes):
        return 1.0
    ab = compare_taxonomies(a, b, threshold=threshold)
    ba = compare_taxonomies(b, a, threshold=threshold)
    shared = (len(a.modes) - len(ab.only_in_a) + len(b.modes) - len(ba.only_in_a)) / 2
    union = len(a.modes) + len(b.modes) - shared
    return round(shared / union, 3) if union else 0.0


def overlap_matrix(taxonomies: list[Taxonomy], *, threshold: float = 0.12) -> list[list[float]]:
    """The Jaccard overlap of every pair (the cross-domain matrix of the ATLAS slides)."""
    return [[jaccard_overlap(x, y, threshold=threshold) for y in taxonomies] for x in taxonomies]
