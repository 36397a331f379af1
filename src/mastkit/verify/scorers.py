"""Scorers: each reads a (blinded) rollout and gives its probability of success, with a reason.

* :class:`FailureVectorScorer` (``failure_vector``) — a logistic model over the failure vector
  (rule annotations computed here, or annotations already in the store) and cheap trace
  signals; weights fitted on labelled rollouts (:meth:`~FailureVectorScorer.fit`, scikit-learn)
  or, without labels, defaults in which fatal modes weigh more.
* Single-feature baselines: ``random`` (every rollout ties, so a selection is a uniform pick:
  pass@1), ``shortest`` (fewest events), ``fewest_state_changes`` (fewest state-changing tool
  calls), ``no_handoff`` (no hand-off to a human).

The LLM scorers are in :mod:`mastkit.verify.llm`. Every scorer blinds what it reads
(:func:`mastkit.verify.blind.blind`) inside :meth:`Scorer.assess`, so no caller can hand it the
answer by mistake.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from mastkit.annotate.model import Annotation, ModeVerdict
from mastkit.annotate.rule_annotator import run_detectors
from mastkit.taxonomy import Taxonomy, load_taxonomy
from mastkit.traces.model import Trace
from mastkit.verify.blind import blind
from mastkit.verify.signals import SIGNAL_NAMES, signals

__all__ = [
    "BASELINES",
    "DEFAULT_FATAL",
    "Assessment",
    "FailureVectorScorer",
    "FewestStateChangesScorer",
    "NoHandoffScorer",
    "RandomScorer",
    "Scorer",
    "ShortestScorer",
]


@dataclass(frozen=True)
class Assessment:
    """One rollout's score."""

    probability: float | None
    """Probability of success, 0..1; None when the scorer failed on this rollout."""
    explanation: str
    details: dict[str, Any] = field(default_factory=dict)


class Scorer:
    """A verifier: :meth:`assess` one rollout, or :meth:`assess_many` (LLM scorers run those
    concurrently). Subclasses implement :meth:`_assess` on the blinded trace."""

    name: str = "scorer"
    trainable: bool = False
    """Whether :func:`mastkit.verify.evaluate_selection` should fit it on held-out folds."""
    group_aware: bool = False
    """Whether a rollout's score depends on the other rollouts of its task: such a scorer is
    given each task's rollouts together (:meth:`assess_group`; see
    :func:`mastkit.verify.select.assess_grouped`)."""

    def assess(self, trace: Trace) -> Assessment:
        """The score of ``trace``, read blinded (a group-aware scorer sees it alone)."""
        return self._assess(blind(trace))

    def _assess(self, trace: Trace) -> Assessment:
        raise NotImplementedError

    def score(self, trace: Trace) -> float:
        """The probability of success of ``trace`` (0 when the scorer failed on it)."""
        p = self.assess(trace).probability
        return 0.0 if p is None else p

    def assess_many(self, traces: Sequence[Trace]) -> list[Assessment]:
        """:meth:`assess` for each trace, in order (each on its own, whatever its task)."""
        return [self.assess(t) for t in traces]

    def assess_group(self, traces: Sequence[Trace]) -> list[Assessment]:
        """The scores of the rollouts of ONE task, in order. The default scores each on its own;
        a group-aware scorer compares them with each other (reading them blinded)."""
        return self.assess_many(traces)


class RandomScorer(Scorer):
    """Every rollout scores 0.5: all tie, so picking among them is a uniform draw (= pass@1)."""

    name = "random"

    def _assess(self, trace: Trace) -> Assessment:
        return Assessment(0.5, "no information: every rollout ties")


class ShortestScorer(Scorer):
    """Prefers the run with the fewest events (a monotone score, not a calibrated probability)."""

    name = "shortest"

    def _assess(self, trace: Trace) -> Assessment:
        n = len(trace.events)
        return Assessment(1.0 / (1.0 + n / 10.0), f"{n} events", {"events": n})


class FewestStateChangesScorer(Scorer):
    """Prefers the run with the fewest state-changing tool calls (monotone, not calibrated)."""

    name = "fewest_state_changes"

    def _assess(self, trace: Trace) -> Assessment:
        n = signals(trace).state_changes
        return Assessment(1.0 / (1.0 + n), f"{n} state-changing tool calls", {"state_changes": n})


class NoHandoffScorer(Scorer):
    """Prefers a run that did not hand the user to a human (0.75 vs 0.25; not calibrated)."""

    name = "no_handoff"

    def _assess(self, trace: Trace) -> Assessment:
        h = signals(trace).handoff
        return Assessment(
            0.25 if h else 0.75, "handed off to a human" if h else "no hand-off", {"handoff": h}
        )


BASELINES: dict[str, Callable[[], Scorer]] = {
    "random": RandomScorer,
    "shortest": ShortestScorer,
    "fewest_state_changes": FewestStateChangesScorer,
    "no_handoff": NoHandoffScorer,
}
"""The single-feature baselines by name."""

DEFAULT_FATAL = frozenset({"FM-1.1", "FM-2.3", "FM-3.1", "FM-3.3"})
"""MAST modes that most often end a run in failure (disobeyed task specification, derailment,
premature termination, incorrect verification); a taxonomy's own ``severity`` of ``fatal``,
``critical`` or ``high`` takes precedence."""

_DEFAULT_SIGNAL_WEIGHTS = {"handoff": -1.5, "tool_errors": -0.3}
_DEFAULT_INTERCEPT = 0.5


def _sigmoid(z: float) -> float:
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    ez = math.exp(z)
    return ez / (1.0 + ez)


AnnotationSource = Callable[[Trace], Annotation | Sequence[ModeVerdict] | None]
"""Gives the failure vector of a (blinded) trace, or None when it has none."""


class FailureVectorScorer(Scorer):
    """A logistic model of success over the failure vector and (optionally) cheap signals.

    Features: one indicator per taxonomy mode (1 when ``present``; ``absent`` and ``unknown``
    are 0) and, with ``use_signals``, :meth:`mastkit.verify.signals.Signals.features`.
    Unfitted, the defaults apply: each present mode costs 2 logits when fatal, 1 otherwise, a
    hand-off 1.5, each tool error 0.3, from an intercept of 0.5. :meth:`fit` replaces them by a
    logistic regression on labelled rollouts (features standardised, L2 penalty ``c``).

    ``annotations`` gives the failure vector of a blinded trace (default: the rule detectors
    run on it; :meth:`with_store` reads annotations already in a store by trace id).
    """

    trainable = True

    def __init__(
        self,
        taxonomy: str | Taxonomy = "mast",
        *,
        annotations: AnnotationSource | None = None,
        use_signals: bool = True,
        train: bool = True,
        c: float = 1.0,
        name: str | None = None,
    ) -> None:
        self.taxonomy = taxonomy if isinstance(taxonomy, Taxonomy) else load_taxonomy(taxonomy)
        self._annotations = annotations
        self.use_signals = use_signals
        self.trainable = train
        self.c = c
        self.name = name or ("failure_vector" if train else "failure_vector_defaults")
        if not use_signals and name is None:
            self.name += "_modes_only"
        codes = [m.code for m in self.taxonomy.modes]
        self.feature_names: list[str] = [f"fm:{c}" for c in codes] + (
            list(SIGNAL_NAMES) if use_signals else []
        )
        fatal = {
            m.code
            for m in self.taxonomy.modes
            if (m.severity or "").lower() in ("fatal", "critical", "high")
            or (not m.severity and m.code in DEFAULT_FATAL)
        }
        self.weights: dict[str, float] = {f"fm:{c}": -2.0 if c in fatal else -1.0 for c in codes}
        if use_signals:
            self.weights.update({s: _DEFAULT_SIGNAL_WEIGHTS.get(s, 0.0) for s in SIGNAL_NAMES})
        self.intercept = _DEFAULT_INTERCEPT
        self.fitted = False
        self._memo: dict[str, dict[str, float]] = {}
        """Feature values by blinded content hash, shared with :meth:`fresh` copies."""

    def fresh(self) -> FailureVectorScorer:
        """An unfitted copy with the same settings (one per cross-validation fold)."""
        copy = FailureVectorScorer(
            self.taxonomy,
            annotations=self._annotations,
            use_signals=self.use_signals,
            train=self.trainable,
            c=self.c,
            name=self.name,
        )
        copy._memo = self._memo
        return copy

    @classmethod
    def with_store(cls, store: Any, config_hash: str, **kw: Any) -> FailureVectorScorer:
        """A scorer reading the failure vectors a run (``config_hash``) stored in ``store`` (by
        trace id; a trace without a stored annotation gets the rule detectors' vector)."""
        by_id = {a.trace_id: a for a in store.annotations(config_hash)}
        return cls(annotations=lambda t: by_id.get(t.trace_id), **kw)

    # -- features ------------------------------------------------------------------------------

    def _verdicts(self, trace: Trace) -> Sequence[ModeVerdict]:
        got = self._annotations(trace) if self._annotations is not None else None
        if got is None:
            return run_detectors(trace, self.taxonomy)
        return got.verdicts if isinstance(got, Annotation) else got

    def features(self, trace: Trace) -> dict[str, float]:
        """The feature values of ``trace`` (blinded first)."""
        return self._features(blind(trace))

    def _features(self, trace: Trace) -> dict[str, float]:
        t_hash = trace.content_hash()
        hit = self._memo.get(t_hash)
        if hit is None:
            hit = self._memo[t_hash] = self._compute(trace)
        return dict(hit)

    def _compute(self, trace: Trace) -> dict[str, float]:
        present = {v.code for v in self._verdicts(trace) if v.verdict == "present"}
        values = {f"fm:{m.code}": float(m.code in present) for m in self.taxonomy.modes}
        if self.use_signals:
            values.update(signals(trace).features())
        return values

    # -- fitting and scoring ---------------------------------------------------------------------

    def fit(
        self, traces: Sequence[Trace], labels: Sequence[bool], groups: Sequence[str] | None = None
    ) -> FailureVectorScorer:
        """Fit the weights on labelled rollouts (scikit-learn logistic regression); ``groups``
        (the rollouts' tasks) is accepted for the common interface and not needed here.

        With a single class among the labels only the intercept is set (to its log-odds, clipped).
        Returns ``self``.
        """
        if len(traces) != len(labels) or not traces:
            raise ValueError("fit needs as many labels as traces, and at least one")
        rows = [self.features(t) for t in traces]
        x = [[r[f] for f in self.feature_names] for r in rows]
        y = [int(bool(v)) for v in labels]
        mean = [sum(col) / len(col) for col in zip(*x, strict=True)]
        std = [
            math.sqrt(sum((v - m) ** 2 for v in col) / len(col)) or 1.0
            for col, m in zip(zip(*x, strict=True), mean, strict=True)
        ]
        self.fitted = True
        if len(set(y)) < 2:
            rate = min(max(sum(y) / len(y), 0.02), 0.98)
            self.weights = dict.fromkeys(self.feature_names, 0.0)
            self.intercept = math.log(rate / (1 - rate))
            return self
        from sklearn.linear_model import LogisticRegression  # lazy: an optional dependency

        z = [[(v - m) / s for v, m, s in zip(row, mean, std, strict=True)] for row in x]
        model = LogisticRegression(C=self.c, max_iter=1000)
        model.fit(z, y)
        coef = [float(w) for w in model.coef_[0]]
        self.weights = {f: w / s for f, w, s in zip(self.feature_names, coef, std, strict=True)}
        self.intercept = float(model.intercept_[0]) - sum(
            w * m / s for w, m, s in zip(coef, mean, std, strict=True)
        )
        return self

    def _assess(self, trace: Trace) -> Assessment:
        values = self._features(trace)
        parts = {f: self.weights.get(f, 0.0) * v for f, v in values.items()}
        p = _sigmoid(self.intercept + sum(parts.values()))
        top = sorted((kv for kv in parts.items() if kv[1]), key=lambda kv: -abs(kv[1]))[:4]
        how = "fitted" if self.fitted else "default"
        why = ", ".join(f"{f}={values[f]:g} ({w:+.2f})" for f, w in top) or "no feature moved the score"
        return Assessment(p, f"{how} weights: {why}", {"features": values})
