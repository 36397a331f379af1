"""Agreement between an annotator and gold labels, with the statistics the field uses.

Binary per (trace, mode) labels. ``unknown`` predictions are excluded from a mode's
scores and counted separately (coverage), never silently scored as ``absent``.
Every score comes with the trivial baselines (always-absent; prevalence-matched random)
so that accuracy on sparse labels is never mistaken for skill.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Counts:
    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0

    @property
    def n(self) -> int:
        return self.tp + self.fp + self.fn + self.tn

    @property
    def precision(self) -> float | None:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> float | None:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None

    @property
    def f1(self) -> float | None:
        d = 2 * self.tp + self.fp + self.fn
        return 2 * self.tp / d if d else None

    @property
    def accuracy(self) -> float | None:
        return (self.tp + self.tn) / self.n if self.n else None

    @property
    def kappa(self) -> float | None:
        return cohen_kappa_counts(self)

    def __add__(self, o: Counts) -> Counts:
        return Counts(self.tp + o.tp, self.fp + o.fp, self.fn + o.fn, self.tn + o.tn)


def counts(pred: Sequence[bool], gold: Sequence[bool]) -> Counts:
    tp = sum(1 for p, g in zip(pred, gold, strict=True) if p and g)
    fp = sum(1 for p, g in zip(pred, gold, strict=True) if p and not g)
    fn = sum(1 for p, g in zip(pred, gold, strict=True) if not p and g)
    return Counts(tp, fp, fn, len(pred) - tp - fp - fn)


def cohen_kappa_counts(c: Counts) -> float | None:
    """Cohen's kappa of two binary raters from their 2x2 table. None when undefined (no data)."""
    n = c.n
    if n == 0:
        return None
    po = (c.tp + c.tn) / n
    p_yes = ((c.tp + c.fp) / n) * ((c.tp + c.fn) / n)
    p_no = ((c.fn + c.tn) / n) * ((c.fp + c.tn) / n)
    pe = p_yes + p_no
    if pe == 1.0:
        return 1.0 if po == 1.0 else 0.0
    return (po - pe) / (1 - pe)


def cohen_kappa(a: Sequence[bool], b: Sequence[bool]) -> float | None:
    """Cohen's kappa between two binary label sequences."""
    return cohen_kappa_counts(counts(a, b))


def fleiss_kappa(ratings: Sequence[Sequence[bool]]) -> float | None:
    """Fleiss' kappa for binary labels: ``ratings[item]`` = the raters' labels for one item (same count each)."""
    items = [r for r in ratings if len(r) > 1]
    if not items:
        return None
    m = len(items[0])
    if any(len(r) != m for r in items):
        raise ValueError("Fleiss' kappa needs the same number of raters for every item")
    n = len(items)
    p_bar = 0.0
    yes_total = 0
    for r in items:
        yes = sum(1 for x in r if x)
        no = m - yes
        yes_total += yes
        p_bar += (yes * (yes - 1) + no * (no - 1)) / (m * (m - 1))
    p_bar /= n
    p_yes = yes_total / (n * m)
    pe = p_yes**2 + (1 - p_yes) ** 2
    if pe == 1.0:
        return 1.0 if p_bar == 1.0 else 0.0
    return (p_bar - pe) / (1 - pe)


def bootstrap_ci(
    pairs: Sequence[tuple[bool, bool]],
    stat: str = "f1",
    *,
    n_boot: int = 1000,
    alpha: float = 0.05,
    seed: int = 0,
) -> tuple[float, float] | None:
    """Percentile bootstrap confidence interval of ``stat`` (f1, kappa, precision, recall, accuracy)."""
    if not pairs:
        return None
    rnd = random.Random(seed)
    values = []
    for _ in range(n_boot):
        sample = [pairs[rnd.randrange(len(pairs))] for _ in pairs]
        v = getattr(counts([p for p, _ in sample], [g for _, g in sample]), stat)
        if v is not None:
            values.append(v)
    if not values:
        return None
    values.sort()
    lo = values[int(alpha / 2 * (len(values) - 1))]
    hi = values[int((1 - alpha / 2) * (len(values) - 1))]
    return (lo, hi)


@dataclass
class ModeScore:
    code: str
    counts: Counts
    unknown: int
    """Predictions left ``unknown`` for items with a gold label (excluded from the scores)."""
    f1_ci: tuple[float, float] | None = None
    kappa_ci: tuple[float, float] | None = None
    prevalence: float | None = None
    """Share of gold positives."""
    baseline_random_f1: float | None = None
    """Expected F1 of a random annotator that predicts positives at the gold prevalence (= prevalence)."""


@dataclass
class AgreementReport:
    modes: list[ModeScore]
    micro: Counts
    macro_f1: float | None
    micro_f1_ci: tuple[float, float] | None
    kappa: float | None
    """Cohen's kappa pooled over all (trace, mode) pairs."""
    kappa_ci: tuple[float, float] | None
    items: int
    """Traces scored."""
    unknown: int
    baseline_always_absent: dict[str, float | None] = field(default_factory=dict)
    baseline_random: dict[str, float | None] = field(default_factory=dict)


def agreement(
    pred: Mapping[str, Mapping[str, bool | None]],
    gold: Mapping[str, Mapping[str, bool]],
    codes: Sequence[str] | None = None,
    *,
    n_boot: int = 1000,
    seed: int = 0,
) -> AgreementReport:
    """Score predictions against gold labels.

    Args:
        pred: ``{trace_id: {code: True | False | None}}`` — None = unknown.
        gold: ``{trace_id: {code: bool}}``; only traces present in both are scored.
        codes: modes to score (default: every code in the gold labels).
    """
    ids = sorted(set(pred) & set(gold))
    all_codes = list(codes) if codes is not None else sorted({c for t in ids for c in gold[t]})
    mode_scores: list[ModeScore] = []
    pooled: list[tuple[bool, bool]] = []
    unknown_total = 0
    for code in all_codes:
        pairs: list[tuple[bool, bool]] = []
        unk = 0
        for t in ids:
            if code not in gold[t]:
                continue
            p = pred[t].get(code)
            if p is None:
                unk += 1
                continue
            pairs.append((bool(p), bool(gold[t][code])))
        unknown_total += unk
        pooled += pairs
        c = counts([p for p, _ in pairs], [g for _, g in pairs])
        prev = (c.tp + c.fn) / c.n if c.n else None
        mode_scores.append(
            ModeScore(
                code=code,
                counts=c,
                unknown=unk,
                f1_ci=bootstrap_ci(pairs, "f1", n_boot=n_boot, seed=seed),
                kappa_ci=bootstrap_ci(pairs, "kappa", n_boot=n_boot, seed=seed),
                prevalence=prev,
                baseline_random_f1=prev,
            )
        )
    micro = counts([p for p, _ in pooled], [g for _, g in pooled])
    f1s = [m.counts.f1 for m in mode_scores if m.counts.f1 is not None]
    gold_pos = (micro.tp + micro.fn) / micro.n if micro.n else None
    always_absent = Counts(0, 0, micro.tp + micro.fn, micro.fp + micro.tn)
    return AgreementReport(
        modes=mode_scores,
        micro=micro,
        macro_f1=sum(f1s) / len(f1s) if f1s else None,
        micro_f1_ci=bootstrap_ci(pooled, "f1", n_boot=n_boot, seed=seed),
        kappa=micro.kappa,
        kappa_ci=bootstrap_ci(pooled, "kappa", n_boot=n_boot, seed=seed),
        items=len(ids),
        unknown=unknown_total,
        baseline_always_absent={
            "accuracy": always_absent.accuracy,
            "f1": 0.0 if micro.n else None,
            "kappa": 0.0 if micro.n else None,
        },
        baseline_random={
            "accuracy": (gold_pos**2 + (1 - gold_pos) ** 2) if gold_pos is not None else None,
            "f1": gold_pos,
            "kappa": 0.0 if micro.n else None,
        },
    )
