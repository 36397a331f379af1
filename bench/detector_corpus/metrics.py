"""Per-mode precision, recall, F1 and coverage of an annotator against corpus labels."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from mastkit.analyze.profile import wilson

Verdict = str
"""``present``, ``absent`` or ``unknown``."""


@dataclass(frozen=True)
class ModeScore:
    """One annotator on one mode, over the samples that label the mode."""

    code: str
    n: int
    """Samples labelling the mode (skipped ones left out)."""
    positives: int
    tp: int
    fp: int
    fn: int
    decided: int
    """Samples where the annotator said present or absent (not unknown)."""

    @property
    def precision(self) -> float | None:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> float | None:
        return self.tp / self.positives if self.positives else None

    @property
    def f1(self) -> float | None:
        d = 2 * self.tp + self.fp + self.fn
        return 2 * self.tp / d if d else None

    @property
    def coverage(self) -> float | None:
        return self.decided / self.n if self.n else None

    @property
    def precision_ci(self) -> tuple[float, float] | None:
        return wilson(self.tp, self.tp + self.fp)


def score_mode(code: str, gold: Sequence[bool | None], verdicts: Sequence[Verdict]) -> ModeScore:
    """Score one mode; ``unknown`` counts as not present, a skipped label (None) is left out."""
    if len(gold) != len(verdicts):
        raise ValueError("gold and verdicts differ in length")
    n = positives = tp = fp = fn = decided = 0
    for g, v in zip(gold, verdicts, strict=True):
        if g is None:
            continue
        if v not in ("present", "absent", "unknown"):
            raise ValueError(f"not a verdict: {v!r}")
        n += 1
        positives += g
        decided += v != "unknown"
        pred = v == "present"
        tp += pred and g
        fp += pred and not g
        fn += g and not pred
    return ModeScore(code, n, positives, tp, fp, fn, decided)


def score_all(
    codes: Sequence[str], gold: Sequence[Mapping[str, bool | None]], verdicts: Sequence[Mapping[str, Verdict]]
) -> dict[str, ModeScore]:
    """One :class:`ModeScore` per code, over parallel lists of per-sample labels and verdicts."""
    return {c: score_mode(c, [g[c] for g in gold], [v.get(c, "unknown") for v in verdicts]) for c in codes}


def macro_f1(scores: Mapping[str, ModeScore]) -> float | None:
    """Mean F1 over the modes with at least one positive label (the modes the corpus labels)."""
    f1s = [s.f1 or 0.0 for s in scores.values() if s.positives]
    return sum(f1s) / len(f1s) if f1s else None
