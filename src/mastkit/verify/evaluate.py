"""How good is a verifier: pass@1, verifier-selected success and the oracle, with bootstrap
confidence intervals over tasks.

For each task (group) with known outcomes:

* **pass@1** — the mean success of its rollouts (what one random run achieves);
* **selected** — the success of the rollout the scorer ranks first. When several rollouts tie
  for first, the task counts the mean success of the tied ones: the expected result of a
  uniform pick among them, so a scorer is not credited (or blamed) for the order of the trials.
  (:func:`mastkit.verify.select_best` itself breaks ties by trace id, to be deterministic.)
* **oracle** — 1 when any rollout succeeded.

Each figure is the mean over tasks; its 95 % interval is a percentile bootstrap that
resamples **tasks** (rollouts of one task are not independent). ``gain`` is selected minus
pass@1, bootstrapped paired on the same resamples.

A trainable scorer (:class:`~mastkit.verify.scorers.FailureVectorScorer`) is never scored
on rollouts it was fitted on: every rollout gets the score of a model fitted on the other
folds of a :class:`sklearn.model_selection.GroupKFold` split **by task**, so no task has
rollouts on both sides (a split by rollout would let the model learn a task's answer from
its sibling rollouts).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Protocol

from mastkit.traces.model import Trace
from mastkit.verify.scorers import Assessment, Scorer
from mastkit.verify.select import GroupKey, assess_grouped, by_task, rank

__all__ = [
    "Comparison",
    "Evaluation",
    "Interval",
    "ScorerResult",
    "compare_rows",
    "cross_val_assess",
    "cv_splits",
    "evaluate_selection",
    "task_bootstrap",
]


class Trainable(Protocol):
    def fresh(self) -> Any: ...
    def fit(
        self, traces: Sequence[Trace], labels: Sequence[bool], groups: Sequence[str] | None = None
    ) -> Any: ...


@dataclass(frozen=True)
class Interval:
    """A mean over tasks and its 95 % bootstrap interval (over tasks)."""

    value: float
    lo: float
    hi: float

    def fmt(self) -> str:
        return f"{self.value:.1%} [{self.lo:.1%}, {self.hi:.1%}]"


@dataclass
class ScorerResult:
    """One scorer's row of the table."""

    scorer: str
    protocol: str
    """How scores were obtained: ``no fitting`` or the cross-validation used."""
    tasks: int
    rollouts: int
    pass_at_1: Interval
    selected: Interval
    oracle: Interval
    gain: Interval
    """selected - pass@1, paired over the same task resamples."""
    failed: int = 0
    """Rollouts the scorer could not score (ranked last)."""
    choices: dict[str, str] = field(default_factory=dict)
    """Task -> trace id chosen (ties broken as :func:`mastkit.verify.select_best` does)."""
    per_task: dict[str, float] = field(default_factory=dict)
    """Task -> its selected value (success of the chosen rollout; a tie's mean)."""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Evaluation:
    """The table: one row per scorer, plus how it was computed."""

    results: list[ScorerResult]
    tasks: int
    rollouts: int
    n_boot: int
    seed: int
    skipped: int = 0
    """Rollouts left out: no group or unknown outcome."""
    comparisons: list[Comparison] = field(default_factory=list)
    """The best row (highest selected) against every other row, paired over tasks."""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Comparison:
    """Selected of ``scorer`` minus selected of ``versus``: the mean over tasks and its 95 %
    bootstrap interval, both rows resampled on the same tasks (paired)."""

    scorer: str
    versus: str
    difference: Interval


def compare_rows(a: ScorerResult, b: ScorerResult, *, n_boot: int = 2000, seed: int = 0) -> Comparison:
    """:class:`Comparison` of two rows of one evaluation (the same tasks)."""
    tasks = sorted(a.per_task)
    if tasks != sorted(b.per_task):
        raise ValueError("the two rows were not evaluated on the same tasks")
    diff = [a.per_task[t] - b.per_task[t] for t in tasks]
    (ci,) = task_bootstrap([diff], n_boot=n_boot, seed=seed)
    return Comparison(a.scorer, b.scorer, _interval(diff, ci))


def cv_splits(groups: Sequence[str], n_splits: int = 5) -> list[tuple[list[int], list[int]]]:
    """Train/test index lists of a GroupKFold split: every group's rows fall in one test fold."""
    from sklearn.model_selection import GroupKFold  # lazy: an optional dependency

    k = min(n_splits, len(set(groups)))
    if k < 2:
        raise ValueError("cross-validation by task needs at least two tasks")
    rows = list(range(len(groups)))
    return [
        ([int(i) for i in tr], [int(i) for i in te])
        for tr, te in GroupKFold(n_splits=k).split(rows, groups=list(groups))
    ]


def cross_val_assess(
    scorer: Trainable,
    traces: Sequence[Trace],
    labels: Sequence[bool],
    groups: Sequence[str],
    *,
    n_splits: int = 5,
) -> list[Assessment]:
    """Held-out scores: each rollout is scored by a fresh copy of ``scorer`` fitted on the folds
    that do not hold its task (:func:`cv_splits`). A test fold holds whole tasks, so a
    group-aware scorer sees every rollout of a task together. Each assessment's ``details`` get
    ``fold`` (its test fold) and, when the fitted copy can say, ``model`` (what it chose)."""
    out: list[Assessment | None] = [None] * len(traces)
    for fold, (train, test) in enumerate(cv_splits(groups, n_splits)):
        model = scorer.fresh().fit(
            [traces[i] for i in train], [labels[i] for i in train], [groups[i] for i in train]
        )
        scored = assess_grouped(model, [traces[i] for i in test], [groups[i] for i in test])
        describe = getattr(model, "describe", None)
        tag: dict[str, Any] = {"fold": fold}
        if callable(describe):
            tag["model"] = str(describe())
        for i, a in zip(test, scored, strict=True):
            out[i] = replace(a, details={**a.details, **tag})
    return [a if a is not None else Assessment(None, "not scored") for a in out]


def _fold_models(scored: Sequence[Assessment]) -> str:
    """``"; per fold: A (4), B (1)"`` from the ``model`` each fold's fitted copy reported."""
    by_fold = {
        a.details["fold"]: a.details["model"] for a in scored if "model" in a.details and "fold" in a.details
    }
    if not by_fold:
        return ""
    counts = Counter(by_fold.values())
    return "; chosen per fold: " + ", ".join(f"{m} ({n})" for m, n in counts.most_common())


def task_bootstrap(
    per_task: Sequence[Sequence[float]], *, n_boot: int = 2000, seed: int = 0, alpha: float = 0.05
) -> list[tuple[float, float]]:
    """Percentile intervals of the means of several per-task series, resampling tasks jointly."""
    n = len(per_task[0]) if per_task else 0
    if n == 0:
        return [(0.0, 0.0) for _ in per_task]
    rnd = random.Random(seed)
    draws: list[list[float]] = [[] for _ in per_task]
    for _ in range(n_boot):
        idx = [rnd.randrange(n) for _ in range(n)]
        for series, acc in zip(per_task, draws, strict=True):
            acc.append(sum(series[i] for i in idx) / n)
    out = []
    for acc in draws:
        acc.sort()
        out.append((acc[int(alpha / 2 * (len(acc) - 1))], acc[int((1 - alpha / 2) * (len(acc) - 1))]))
    return out


def _interval(values: Sequence[float], ci: tuple[float, float]) -> Interval:
    return Interval(sum(values) / len(values) if values else 0.0, ci[0], ci[1])


def evaluate_selection(
    rollouts: Sequence[Trace],
    scorers: Sequence[Scorer],
    *,
    key: GroupKey = by_task,
    n_splits: int = 5,
    n_boot: int = 2000,
    seed: int = 0,
    assessments: dict[str, Sequence[Assessment]] | None = None,
    compare: Mapping[str, Callable[[Trace, Trace], float]] | None = None,
) -> Evaluation:
    """The pass@1 / selected / oracle table of each scorer on rollouts with known outcomes.

    Rollouts without a group or without ``outcome.success`` are left out (counted in
    ``skipped``). Trainable scorers are scored out of fold (:func:`cross_val_assess`).
    ``assessments`` (scorer name -> one per kept rollout) reuses scores already computed.
    ``compare`` (scorer name -> ``compare(a, b)``, as for :func:`mastkit.verify.select_best`)
    settles that scorer's two finalists of each task: selected is then the success of the
    rollout the comparison keeps (the first two in rank order are the finalists).
    """
    kept = [
        t for t in rollouts if key(t) is not None and t.outcome is not None and t.outcome.success is not None
    ]
    labels = [bool(t.outcome.success) for t in kept if t.outcome is not None]
    groups = [str(key(t)) for t in kept]
    results = []
    for scorer in scorers:
        if assessments is not None and scorer.name in assessments:
            scored = list(assessments[scorer.name])
            protocol = "given"
        elif scorer.trainable and hasattr(scorer, "fresh"):
            k = min(n_splits, len(set(groups)))
            scored = cross_val_assess(scorer, kept, labels, groups, n_splits=n_splits)  # type: ignore[arg-type]
            protocol = f"GroupKFold by task, k={k}" + _fold_models(scored)
        else:
            scored = assess_grouped(scorer, kept, groups)
            protocol = "no fitting"
        settle = (compare or {}).get(scorer.name)
        if settle is not None:
            protocol += " + pairwise finalists"
        results.append(_row(scorer.name, protocol, kept, labels, scored, key, n_boot, seed, settle))
    comparisons = []
    if len(results) > 1:
        best = max(results, key=lambda r: r.selected.value)  # the first of equals
        comparisons = [compare_rows(best, r, n_boot=n_boot, seed=seed) for r in results if r is not best]
    return Evaluation(
        results=results,
        tasks=len(set(groups)),
        rollouts=len(kept),
        n_boot=n_boot,
        seed=seed,
        skipped=len(rollouts) - len(kept),
        comparisons=comparisons,
    )


def _row(
    name: str,
    protocol: str,
    kept: Sequence[Trace],
    labels: Sequence[bool],
    scored: Sequence[Assessment],
    key: GroupKey,
    n_boot: int,
    seed: int,
    settle: Callable[[Trace, Trace], float] | None = None,
) -> ScorerResult:
    success = {id(t): float(y) for t, y in zip(kept, labels, strict=True)}
    ranked = rank(kept, scored, key)
    tasks = sorted(ranked)
    pass1, selected, oracle, gain = [], [], [], []
    choices = {}
    per_task: dict[str, float] = {}
    for task in tasks:
        members = ranked[task]
        outcomes = [success[id(r.trace)] for r in members]
        best = members[0].assessment.probability
        tied = [success[id(r.trace)] for r in members if r.assessment.probability == best]
        p1 = sum(outcomes) / len(outcomes)
        sel = sum(tied) / len(tied)
        choice = members[0].trace
        if settle is not None and len(members) > 1:
            if settle(members[0].trace, members[1].trace) < 0.5:
                choice = members[1].trace
            sel = success[id(choice)]
        pass1.append(p1)
        selected.append(sel)
        oracle.append(max(outcomes))
        gain.append(sel - p1)
        choices[task] = choice.trace_id
        per_task[task] = sel
    cis = task_bootstrap([pass1, selected, oracle, gain], n_boot=n_boot, seed=seed)
    return ScorerResult(
        scorer=name,
        protocol=protocol,
        tasks=len(tasks),
        rollouts=len(kept),
        pass_at_1=_interval(pass1, cis[0]),
        selected=_interval(selected, cis[1]),
        oracle=_interval(oracle, cis[2]),
        gain=_interval(gain, cis[3]),
        failed=sum(1 for a in scored if a.probability is None),
        choices=choices,
        per_task=per_task,
    )
