"""Agreement between an annotator and gold labels, with the statistics the field uses.

Binary per (trace, mode) labels. ``unknown`` predictions (and modes a prediction leaves out) are
excluded from a mode's scores and counted separately (``unknown``, ``coverage``), never silently
scored as ``absent``; gold traces with no prediction at all are counted in ``missing``.
Every score comes with the trivial baselines (always-absent; prevalence-matched random)
so that accuracy on sparse labels is never mistaken for skill.

Confidence intervals come from a trace-cluster percentile bootstrap: the (trace, mode) pairs of
one trace are correlated (a judge that misreads a trace tends to get several of its modes wrong),
so the unit that is resampled is the trace, never the pair.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

Pair = tuple[bool, bool]
"""One (prediction, gold) label pair."""

STATS = ("f1", "kappa", "precision", "recall", "accuracy")
"""Statistics :func:`bootstrap_ci` can resample."""


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
    """The 2x2 table of predictions against gold labels (sequences of the same length)."""
    cells = Counter((bool(p), bool(g)) for p, g in zip(pred, gold, strict=True))
    return Counts(cells[True, True], cells[True, False], cells[False, True], cells[False, False])


def cohen_kappa_counts(c: Counts) -> float | None:
    """Cohen's kappa of two binary raters from their 2x2 table.

    kappa = (p_o - p_e) / (1 - p_e), with p_o the observed agreement and p_e the agreement
    expected from the two raters' marginal rates. It is computed in integers (both terms scaled
    by n²) so that the undefined case is exact: None when there is no data or when p_e = 1, i.e.
    both raters gave the same single label to every item (0/0). When only one rater is constant,
    p_o = p_e and kappa is 0, as the definition gives.
    """
    n = c.n
    expected = (c.tp + c.fp) * (c.tp + c.fn) + (c.fn + c.tn) * (c.fp + c.tn)  # p_e * n²
    if expected == n * n:  # p_e = 1, and also n = 0 (0 = 0)
        return None
    return (n * (c.tp + c.tn) - expected) / (n * n - expected)


def cohen_kappa(a: Sequence[bool], b: Sequence[bool]) -> float | None:
    """Cohen's kappa between two binary label sequences."""
    return cohen_kappa_counts(counts(a, b))


def fleiss_kappa(ratings: Sequence[Sequence[bool]]) -> float | None:
    """Fleiss' kappa for binary labels: ``ratings[item]`` = the raters' labels for one item (same count each).

    Items with fewer than two ratings are skipped. None when nothing is left, or when every
    rating is the same label (chance agreement is then 1 and kappa is 0/0).
    """
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
    if yes_total in (0, n * m):
        return None  # every rater gave every item the same label: p_e = 1, kappa is 0/0
    return (p_bar - pe) / (1 - pe)


def _table(clusters: Sequence[Sequence[Pair]]) -> npt.NDArray[np.int64]:
    """Per cluster, its (tp, fp, fn, tn) counts: an array of shape (clusters, 4)."""
    out = np.zeros((len(clusters), 4), dtype=np.int64)
    for i, pairs in enumerate(clusters):
        c = counts([p for p, _ in pairs], [g for _, g in pairs])
        out[i] = (c.tp, c.fp, c.fn, c.tn)
    return out


def _stat_values(totals: npt.NDArray[np.int64], stat: str) -> npt.NDArray[np.float64]:
    """``stat`` for each row of (tp, fp, fn, tn) totals; NaN where it is undefined."""
    tp, fp, fn, tn = (totals[:, i].astype(np.float64) for i in range(4))
    n = tp + fp + fn + tn
    if stat == "f1":
        num, den = 2 * tp, 2 * tp + fp + fn
    elif stat == "precision":
        num, den = tp, tp + fp
    elif stat == "recall":
        num, den = tp, tp + fn
    elif stat == "accuracy":
        num, den = tp + tn, n
    else:  # kappa (bootstrap_ci checked the name)
        expected = (tp + fp) * (tp + fn) + (fn + tn) * (fp + tn)
        num, den = n * (tp + tn) - expected, n * n - expected
    with np.errstate(invalid="ignore"):  # 0/0 only: a zero denominator has a zero numerator
        return np.where(den > 0, num / den, np.nan)


_BLOCK_CELLS = 2_000_000
"""Resampled trace indices drawn at once (bounds memory; the draws do not depend on it)."""


def _resampled_totals(table: npt.NDArray[np.int64], n_boot: int, seed: int) -> npt.NDArray[np.int64]:
    """Totals of ``n_boot`` bootstrap samples of the clusters (rows of ``table``), drawn with replacement.

    Each sample draws as many clusters as there are; its totals are the sum of the drawn
    clusters' counts. Work is done in blocks so memory stays bounded for many clusters."""
    rng = np.random.default_rng(seed)
    k = len(table)
    block = max(1, _BLOCK_CELLS // k)
    parts = []
    for start in range(0, n_boot, block):
        rows = min(block, n_boot - start)
        idx = rng.integers(k, size=(rows, k))
        weights = np.bincount((idx + k * np.arange(rows)[:, None]).ravel(), minlength=rows * k)
        parts.append(weights.reshape(rows, k) @ table)
    return np.concatenate(parts)


def bootstrap_ci(
    clusters: Sequence[Sequence[Pair]],
    stat: str = "f1",
    *,
    n_boot: int = 1000,
    alpha: float = 0.05,
    seed: int = 0,
) -> tuple[float, float] | None:
    """Percentile confidence interval of ``stat`` by a cluster bootstrap.

    ``clusters`` holds one sequence of (prediction, gold) pairs per trace. Each bootstrap sample
    draws traces with replacement and recomputes ``stat`` (f1, kappa, precision, recall or
    accuracy) over all the pairs of the drawn traces; a trace may contribute no pair (all its
    verdicts unknown) and still counts as a draw. Samples where the statistic is undefined (no
    positives for F1, a constant pair of raters for kappa) are left out, so the interval is
    conditional on it being defined. The same seed gives the same interval.

    None when there is nothing to resample — fewer than two traces with a pair, or fewer than
    two resamples — or when the statistic is undefined in every sample. Passing each pair as
    its own cluster gives the ordinary pair bootstrap, which is too narrow when pairs within a
    trace are correlated.
    """
    if stat not in STATS:
        raise ValueError(f"unknown statistic {stat!r}; expected one of {', '.join(STATS)}")
    if not 0 < alpha < 1:
        raise ValueError("alpha must be between 0 and 1")
    if n_boot < 2 or sum(1 for c in clusters if c) < 2:
        return None
    values = _stat_values(_resampled_totals(_table(clusters), n_boot, seed), stat)
    values = values[~np.isnan(values)]
    if values.size == 0:
        return None
    lo, hi = np.quantile(values, [alpha / 2, 1 - alpha / 2])
    return (float(lo), float(hi))


@dataclass
class ModeScore:
    code: str
    counts: Counts
    unknown: int
    """Predictions left ``unknown`` (or left out) for items with a gold label (excluded from the scores)."""
    f1_ci: tuple[float, float] | None = None
    kappa_ci: tuple[float, float] | None = None
    prevalence: float | None = None
    """Share of gold positives among the scored pairs."""
    baseline_random_f1: float | None = None
    """Expected F1 of a random annotator that predicts positives at the gold prevalence (= prevalence)."""

    @property
    def coverage(self) -> float | None:
        """Share of the gold-labelled items that got a present/absent prediction."""
        total = self.counts.n + self.unknown
        return self.counts.n / total if total else None


@dataclass
class AgreementReport:
    modes: list[ModeScore]
    micro: Counts
    macro_f1: float | None
    """Mean F1 over the modes where F1 is defined (a mode with no gold and no predicted positive has none)."""
    micro_f1_ci: tuple[float, float] | None
    kappa: float | None
    """Cohen's kappa pooled over all (trace, mode) pairs."""
    kappa_ci: tuple[float, float] | None
    items: int
    """Traces scored (in both the predictions and the gold)."""
    unknown: int
    """Gold-labelled (trace, mode) items of scored traces without a present/absent prediction."""
    baseline_always_absent: dict[str, float | None] = field(default_factory=dict)
    baseline_random: dict[str, float | None] = field(default_factory=dict)
    missing: int = 0
    """Gold traces with no prediction at all (not scored)."""

    @property
    def coverage(self) -> float | None:
        """Share of the scored traces' gold-labelled items that got a present/absent prediction."""
        total = self.micro.n + self.unknown
        return self.micro.n / total if total else None


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
        pred: ``{trace_id: {code: True | False | None}}`` — None (or a missing code) = unknown.
        gold: ``{trace_id: {code: bool}}``; only traces present in both are scored.
        codes: modes to score (default: every code in the gold labels).

    Intervals resample traces (see :func:`bootstrap_ci`); every interval of one call uses the
    same resampled traces, drawn from ``seed``.
    """
    ids = sorted(set(pred) & set(gold))
    all_codes = list(codes) if codes is not None else sorted({c for t in ids for c in gold[t]})
    mode_scores: list[ModeScore] = []
    by_trace: list[list[Pair]] = [[] for _ in ids]
    unknown_total = 0
    for code in all_codes:
        clusters: list[list[Pair]] = []
        unk = 0
        for i, t in enumerate(ids):
            pairs: list[Pair] = []
            if code in gold[t]:
                p = pred[t].get(code)
                if p is None:
                    unk += 1
                else:
                    pairs.append((bool(p), bool(gold[t][code])))
            clusters.append(pairs)
            by_trace[i] += pairs
        unknown_total += unk
        flat = [pair for pairs in clusters for pair in pairs]
        c = counts([p for p, _ in flat], [g for _, g in flat])
        prev = (c.tp + c.fn) / c.n if c.n else None
        mode_scores.append(
            ModeScore(
                code=code,
                counts=c,
                unknown=unk,
                f1_ci=bootstrap_ci(clusters, "f1", n_boot=n_boot, seed=seed),
                kappa_ci=bootstrap_ci(clusters, "kappa", n_boot=n_boot, seed=seed),
                prevalence=prev,
                baseline_random_f1=prev,
            )
        )
    micro = sum((m.counts for m in mode_scores), Counts())
    f1s = [m.counts.f1 for m in mode_scores if m.counts.f1 is not None]
    gold_pos = (micro.tp + micro.fn) / micro.n if micro.n else None
    always_absent = Counts(0, 0, micro.tp + micro.fn, micro.fp + micro.tn)
    return AgreementReport(
        modes=mode_scores,
        micro=micro,
        macro_f1=sum(f1s) / len(f1s) if f1s else None,
        micro_f1_ci=bootstrap_ci(by_trace, "f1", n_boot=n_boot, seed=seed),
        kappa=micro.kappa,
        kappa_ci=bootstrap_ci(by_trace, "kappa", n_boot=n_boot, seed=seed),
        items=len(ids),
        unknown=unknown_total,
        baseline_always_absent={
            "accuracy": always_absent.accuracy,
            "f1": always_absent.f1,
            "kappa": always_absent.kappa,
        },
        baseline_random={
            "accuracy": (gold_pos**2 + (1 - gold_pos) ** 2) if gold_pos is not None else None,
            "f1": gold_pos,
            "kappa": 0.0 if gold_pos is not None and 0 < gold_pos < 1 else None,
        },
        missing=len(set(gold) - set(pred)),
    )


def macro_f1_ci(
    pred: Mapping[str, Mapping[str, bool | None]],
    gold: Mapping[str, Mapping[str, bool]],
    codes: Sequence[str] | None = None,
    *,
    n_boot: int = 1000,
    alpha: float = 0.05,
    seed: int = 0,
) -> tuple[float, float] | None:
    """Percentile interval of the macro F1 of :func:`agreement` by the same trace-cluster bootstrap.

    Every mode is scored on the same resampled traces (one draw per sample, from ``seed``); a
    sample's macro F1 is the mean over the modes whose F1 is defined in it, as
    :attr:`AgreementReport.macro_f1` is. None when fewer than two traces have a scored pair.
    """
    if not 0 < alpha < 1:
        raise ValueError("alpha must be between 0 and 1")
    ids = sorted(set(pred) & set(gold))
    all_codes = list(codes) if codes is not None else sorted({c for t in ids for c in gold[t]})
    per_mode: list[list[list[Pair]]] = []
    for code in all_codes:
        clusters: list[list[Pair]] = []
        for t in ids:
            p = pred[t].get(code) if code in gold[t] else None
            clusters.append([] if p is None else [(bool(p), bool(gold[t][code]))])
        per_mode.append(clusters)
    scored = sum(1 for i in range(len(ids)) if any(m[i] for m in per_mode))
    if n_boot < 2 or scored < 2 or not per_mode:
        return None
    f1s = np.stack([_stat_values(_resampled_totals(_table(m), n_boot, seed), "f1") for m in per_mode])
    defined = ~np.isnan(f1s)
    n_defined = defined.sum(axis=0)
    keep = n_defined > 0
    if not keep.any():
        return None
    values = np.where(defined, f1s, 0.0).sum(axis=0)[keep] / n_defined[keep]
    lo, hi = np.quantile(values, [alpha / 2, 1 - alpha / 2])
    return (float(lo), float(hi))
