"""Group-aware offline scorers: ``consensus`` and ``process``.

* :class:`ConsensusScorer` (``consensus``) — best-of-N self-consistency: a rollout scores the mean
  agreement of its effects with its siblings' (:mod:`mastkit.verify.consensus`). No fitting.
* :class:`ProcessScorer` (``process``; ``process_defaults`` unfitted) — a logistic model over
  feature *families*: the process signals (:data:`mastkit.verify.process.PROCESS_FAMILIES`:
  size, confirmation, errors, grounding, ending), consensus, and the failure vector (modes
  present, fatal modes present, from the rule detectors on the blinded trace).

How :class:`ProcessScorer` is fitted (:meth:`ProcessScorer.fit`): unless the families and the
L2 strength ``c`` are fixed, it chooses them **on its training rollouts only**, by an inner
GroupKFold by task: every candidate (each family alone, and all families together, each with
``c`` in :data:`C_GRID`) is fitted on the inner training tasks and scored on the inner held-out
tasks; the candidate whose held-out selections succeed most often wins (ties: the higher
held-out log-likelihood, then fewer features, then the earlier candidate). The winner is then
refitted on every training rollout. Run inside :func:`mastkit.verify.evaluate_selection`'s outer GroupKFold this is nested
cross-validation: no choice ever sees the tasks it is scored on.

Without labels the defaults apply: each unconfirmed write −0.5, each unresolved tool error
−0.7, each ungrounded value −0.3, agreement with the siblings +1.5 (0..1), each unshared effect
−0.5, each mode present −1 and each fatal one −1 more. Signals whose direction is not known
beforehand (size, hand-off, who ended the run) weigh 0 until fitted.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from mastkit.annotate.rule_annotator import run_detectors
from mastkit.taxonomy import Taxonomy, load_taxonomy
from mastkit.traces.model import Trace
from mastkit.verify.blind import blind
from mastkit.verify.consensus import CONSENSUS_FEATURES, consensus_features
from mastkit.verify.process import PROCESS_FAMILIES, process_features
from mastkit.verify.scorers import DEFAULT_FATAL, Assessment, Scorer

__all__ = ["C_GRID", "FAMILIES", "ConsensusScorer", "ProcessScorer"]

FAMILIES: dict[str, tuple[str, ...]] = {
    **PROCESS_FAMILIES,
    "consensus": CONSENSUS_FEATURES,
    "failure_vector": ("modes_present", "fatal_present"),
}
"""Feature families of :class:`ProcessScorer`, by name."""

FAMILIES_ALL: tuple[str, ...] = tuple(f for fam in FAMILIES.values() for f in fam)

C_GRID = (0.1, 1.0)
"""The L2 strengths the inner cross-validation chooses from."""

DEFAULT_WEIGHTS = {
    "unconfirmed_writes": -0.5,
    "unresolved_errors": -0.7,
    "ungrounded_values": -0.3,
    "agreement": 1.5,
    "unshared": -0.5,
    "modes_present": -1.0,
    "fatal_present": -1.0,
}


def _sigmoid(z: float) -> float:
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    ez = math.exp(z)
    return ez / (1.0 + ez)


class ConsensusScorer(Scorer):
    """Prefers the rollout whose effects agree most with its siblings' (not calibrated)."""

    name = "consensus"
    group_aware = True

    def _assess(self, trace: Trace) -> Assessment:
        return self._score([trace])[0]

    def assess_group(self, traces: Sequence[Trace]) -> list[Assessment]:
        return self._score([blind(t) for t in traces])

    def _score(self, blinded: Sequence[Trace]) -> list[Assessment]:
        out = []
        for f in consensus_features(blinded):
            why = f"agrees {f['agreement']:.2f} with its siblings; {f['unshared']:g} unshared effect(s)"
            out.append(Assessment(f["agreement"], why, dict(f)))
        return out


def _selected_rate(scores: Sequence[float], labels: Sequence[int], groups: Sequence[str]) -> float:
    """Mean over groups of the success of the top-scored rollouts (ties: their mean)."""
    by: dict[str, list[tuple[float, int]]] = {}
    for s, y, g in zip(scores, labels, groups, strict=True):
        by.setdefault(g, []).append((s, y))
    total = 0.0
    for members in by.values():
        best = max(s for s, _ in members)
        tied = [y for s, y in members if s == best]
        total += sum(tied) / len(tied)
    return total / len(by) if by else 0.0


class ProcessScorer(Scorer):
    """A logistic model over feature families (see the module docstring).

    ``families`` and ``c`` fix the model; left as None, :meth:`fit` chooses them by an inner
    cross-validation by task on the training rollouts (``inner_folds``).
    """

    group_aware = True

    def __init__(
        self,
        *,
        families: Sequence[str] | None = None,
        c: float | None = None,
        train: bool = True,
        inner_folds: int = 4,
        taxonomy: str | Taxonomy = "mast",
        name: str | None = None,
    ) -> None:
        unknown = [f for f in families or () if f not in FAMILIES]
        if unknown:
            raise ValueError(f"unknown feature families: {', '.join(unknown)}; known: {', '.join(FAMILIES)}")
        self.families = list(families) if families is not None else None
        self.c = c
        self.trainable = train
        self.inner_folds = inner_folds
        self.taxonomy = taxonomy if isinstance(taxonomy, Taxonomy) else load_taxonomy(taxonomy)
        self.name = name or ("process" if train else "process_defaults")
        self._fatal = {
            m.code
            for m in self.taxonomy.modes
            if (m.severity or "").lower() in ("fatal", "critical", "high")
            or (not m.severity and m.code in DEFAULT_FATAL)
        }
        self.feature_names = list(FAMILIES_ALL)
        self.weights: dict[str, float] = {f: DEFAULT_WEIGHTS.get(f, 0.0) for f in self.feature_names}
        self.intercept = 0.0
        self.fitted = False
        self.chosen: tuple[tuple[str, ...], float] | None = None
        """(families, c) of the fitted model."""
        self._memo: dict[str, dict[str, float]] = {}
        """Per-rollout features by blinded content hash, shared with :meth:`fresh` copies."""

    def fresh(self) -> ProcessScorer:
        """An unfitted copy with the same settings (one per cross-validation fold)."""
        copy = ProcessScorer(
            families=self.families,
            c=self.c,
            train=self.trainable,
            inner_folds=self.inner_folds,
            taxonomy=self.taxonomy,
            name=self.name,
        )
        copy._memo = self._memo
        return copy

    def describe(self) -> str:
        """What the fitted model uses, e.g. ``ending, C=0.1`` (``defaults`` unfitted)."""
        if self.chosen is None:
            return "defaults"
        fams, c = self.chosen
        return f"{'+'.join(fams) if len(fams) < len(FAMILIES) else 'all'}, C={c:g}"

    # -- features --------------------------------------------------------------------------------

    def _own(self, trace: Trace) -> dict[str, float]:
        key = trace.content_hash()
        hit = self._memo.get(key)
        if hit is None:
            present = {v.code for v in run_detectors(trace, self.taxonomy) if v.verdict == "present"}
            hit = process_features(trace)
            hit["modes_present"] = float(len(present))
            hit["fatal_present"] = float(len(present & self._fatal))
            self._memo[key] = hit
        return dict(hit)

    def group_features(self, traces: Sequence[Trace]) -> list[dict[str, float]]:
        """The features of the rollouts of one task (blinded here)."""
        blinded = [blind(t) for t in traces]
        return self._group_features(blinded)

    def _group_features(self, blinded: Sequence[Trace]) -> list[dict[str, float]]:
        rows = [self._own(t) for t in blinded]
        for row, cons in zip(rows, consensus_features(blinded), strict=True):
            row.update(cons)
        return rows

    def features(self, traces: Sequence[Trace], groups: Sequence[str | None]) -> list[dict[str, float]]:
        """The features of every trace, each computed with the other traces of its group."""
        if len(groups) != len(traces):
            raise ValueError(f"one group per trace: {len(traces)} traces, {len(groups)} groups")
        members: dict[str | int, list[int]] = {}
        for i, g in enumerate(groups):
            members.setdefault(i if g is None else g, []).append(i)
        out: list[dict[str, float]] = [{} for _ in traces]
        for idx in members.values():
            for i, row in zip(idx, self.group_features([traces[i] for i in idx]), strict=True):
                out[i] = row
        return out

    # -- fitting ---------------------------------------------------------------------------------

    def _candidates(self) -> list[tuple[tuple[str, ...], float]]:
        fams: list[tuple[str, ...]] = (
            [tuple(self.families)]
            if self.families is not None
            else [tuple(FAMILIES)] + [(f,) for f in FAMILIES]
        )
        cs = [self.c] if self.c is not None else list(C_GRID)
        return [(f, c) for f in fams for c in cs]

    def fit(
        self, traces: Sequence[Trace], labels: Sequence[bool], groups: Sequence[str] | None = None
    ) -> ProcessScorer:
        """Fit on labelled rollouts; ``groups`` are their tasks (default: ``task_id``, else the
        trace id). Families and ``c`` not fixed are chosen by the inner cross-validation."""
        if len(traces) != len(labels) or not traces:
            raise ValueError("fit needs as many labels as traces, and at least one")
        keys = list(groups) if groups is not None else [t.task_id or t.trace_id for t in traces]
        rows = self.features(traces, keys)
        y = [int(bool(v)) for v in labels]
        candidates = self._candidates()
        if len(candidates) > 1:
            chosen = self._choose(rows, y, keys, candidates)
        else:
            chosen = candidates[0]
        self.chosen = chosen
        cols = [f for fam in chosen[0] for f in FAMILIES[fam]]
        self.weights, self.intercept = _logistic(rows, y, cols, chosen[1])
        self.fitted = True
        return self

    def _choose(
        self,
        rows: Sequence[dict[str, float]],
        y: Sequence[int],
        groups: Sequence[str],
        candidates: Sequence[tuple[tuple[str, ...], float]],
    ) -> tuple[tuple[str, ...], float]:
        from mastkit.verify.evaluate import cv_splits

        if len(set(groups)) < 2:
            return candidates[0]
        splits = cv_splits(groups, self.inner_folds)
        best: tuple[float, float, int, int] | None = None
        pick = candidates[0]
        for n, (fams, c) in enumerate(candidates):
            cols = [f for fam in fams for f in FAMILIES[fam]]
            scores = [0.0] * len(rows)
            for train, test in splits:
                w, b = _logistic([rows[i] for i in train], [y[i] for i in train], cols, c)
                for i in test:
                    scores[i] = b + sum(w[f] * rows[i][f] for f in cols)
            rate = _selected_rate(scores, y, groups)
            loglik = sum(
                math.log(max(1e-9, _sigmoid(s) if yy else 1 - _sigmoid(s)))
                for s, yy in zip(scores, y, strict=True)
            ) / len(y)
            key = (round(rate, 9), round(loglik, 6), -len(cols), -n)
            if best is None or key > best:
                best, pick = key, (fams, c)
        return pick

    # -- scoring ---------------------------------------------------------------------------------

    def _assess(self, trace: Trace) -> Assessment:
        return self._score([trace])[0]

    def assess_group(self, traces: Sequence[Trace]) -> list[Assessment]:
        return self._score([blind(t) for t in traces])

    def _score(self, blinded: Sequence[Trace]) -> list[Assessment]:
        out = []
        how = f"fitted ({self.describe()})" if self.fitted else "default weights"
        for values in self._group_features(blinded):
            parts = {f: self.weights.get(f, 0.0) * v for f, v in values.items()}
            p = _sigmoid(self.intercept + sum(parts.values()))
            top = sorted((kv for kv in parts.items() if kv[1]), key=lambda kv: -abs(kv[1]))[:4]
            why = ", ".join(f"{f}={values[f]:g} ({w:+.2f})" for f, w in top) or "no feature moved the score"
            out.append(Assessment(p, f"{how}: {why}", {"features": values}))
        return out


def _logistic(
    rows: Sequence[dict[str, float]], y: Sequence[int], cols: Sequence[str], c: float
) -> tuple[dict[str, float], float]:
    """Weights (on the raw feature scale; 0 for columns not used) and intercept of an L2
    logistic regression on standardised ``cols``. One class only: the intercept is its log-odds."""
    weights = dict.fromkeys(FAMILIES_ALL, 0.0)
    rate = min(max(sum(y) / len(y), 0.02), 0.98)
    if len(set(y)) < 2 or not cols:
        return weights, math.log(rate / (1 - rate))
    from sklearn.linear_model import LogisticRegression  # lazy: an optional dependency

    x = [[r[f] for f in cols] for r in rows]
    n = len(x)
    mean = [sum(col) / n for col in zip(*x, strict=True)]
    std = [
        math.sqrt(sum((v - m) ** 2 for v in col) / n) or 1.0
        for col, m in zip(zip(*x, strict=True), mean, strict=True)
    ]
    z = [[(v - m) / s for v, m, s in zip(row, mean, std, strict=True)] for row in x]
    model = LogisticRegression(C=c, max_iter=1000)
    model.fit(z, list(y))
    coef = [float(w) for w in model.coef_[0]]
    for f, w, s in zip(cols, coef, std, strict=True):
        weights[f] = w / s
    intercept = float(model.intercept_[0]) - sum(w * m / s for w, m, s in zip(coef, mean, std, strict=True))
    return weights, intercept
