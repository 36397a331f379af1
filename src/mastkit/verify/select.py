"""Best-of-N selection: group rollouts by task, score them, keep the best of each group.

Order within a group (:func:`rank`): higher probability first; a rollout the scorer failed
on (probability None) comes after every scored one; ties are broken by trace id (string
order), then by input position. So the choice never depends on the order the rollouts were
loaded in, and the same inputs always give the same choice.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from mastkit.traces.model import Trace
from mastkit.verify.scorers import Assessment, Scorer

__all__ = ["GroupKey", "Ranked", "assess_grouped", "by_task", "group", "rank", "select_best"]

GroupKey = Callable[[Trace], str | None]
"""Which group (task) a rollout belongs to; None: it belongs to none and is left out."""


def by_task(trace: Trace) -> str | None:
    """The default group key: the trace's ``task_id``."""
    return trace.task_id


@dataclass(frozen=True)
class Ranked:
    """A rollout with its score and input position."""

    trace: Trace
    assessment: Assessment
    index: int

    def sort_key(self) -> tuple[int, float, str, int]:
        p = self.assessment.probability
        return (p is None, -(p or 0.0), self.trace.trace_id, self.index)


def group(rollouts: Iterable[Trace], key: GroupKey = by_task) -> dict[str, list[tuple[int, Trace]]]:
    """Rollouts by group, with their input positions (rollouts without a group are left out)."""
    groups: dict[str, list[tuple[int, Trace]]] = {}
    for i, t in enumerate(rollouts):
        k = key(t)
        if k is not None:
            groups.setdefault(str(k), []).append((i, t))
    return groups


def rank(
    rollouts: Sequence[Trace], assessments: Sequence[Assessment], key: GroupKey = by_task
) -> dict[str, list[Ranked]]:
    """Each group's rollouts, best first (see the module docstring for the order)."""
    if len(rollouts) != len(assessments):
        raise ValueError("one assessment per rollout is needed")
    out: dict[str, list[Ranked]] = {}
    for k, members in group(rollouts, key).items():
        ranked = [Ranked(t, assessments[i], i) for i, t in members]
        out[k] = sorted(ranked, key=Ranked.sort_key)
    return out


def assess_grouped(scorer: Scorer, traces: Sequence[Trace], groups: Sequence[str | None]) -> list[Assessment]:
    """One assessment per trace, in order. A group-aware scorer gets each group's traces
    together (:meth:`~mastkit.verify.scorers.Scorer.assess_group`; a trace whose group is None
    is scored alone); any other scorer scores them all in one :meth:`assess_many` call (the LLM
    scorers run those concurrently)."""
    if len(traces) != len(groups):
        raise ValueError("one group per trace is needed")
    if not scorer.group_aware:
        return scorer.assess_many(traces)
    members: dict[str | int, list[int]] = {}
    for i, g in enumerate(groups):
        members.setdefault(i if g is None else g, []).append(i)
    out: list[Assessment | None] = [None] * len(traces)
    for idx in members.values():
        for i, a in zip(idx, scorer.assess_group([traces[i] for i in idx]), strict=True):
            out[i] = a
    return [a if a is not None else Assessment(None, "not scored") for a in out]


def select_best(
    rollouts: Iterable[Trace],
    scorer: Scorer,
    *,
    key: GroupKey = by_task,
    assessments: Sequence[Assessment] | None = None,
    compare: Callable[[Trace, Trace], float] | None = None,
) -> dict[str, Trace]:
    """The best rollout of each group (task) by ``scorer``; ties as the module docstring says.

    ``assessments`` (one per rollout, in order) skips scoring when they are already known.
    ``compare(a, b)`` — the probability that ``a`` rather than ``b`` succeeded, e.g.
    :meth:`mastkit.verify.llm.PairwiseJudge.prefer_first` — settles the two finalists of each
    group with at least two rollouts: the runner-up is chosen only when the comparison favours
    it (below 0.5); at exactly 0.5 the scorer's order stands.
    """
    items = list(rollouts)
    if assessments is None:  # rollouts outside every group are not scored (an LLM call each)
        items = [t for t in items if key(t) is not None]
        scored = assess_grouped(scorer, items, [key(t) for t in items])
    else:
        scored = list(assessments)
    chosen = {}
    for k, ranked in rank(items, scored, key).items():
        best = ranked[0].trace
        if compare is not None and len(ranked) > 1 and compare(best, ranked[1].trace) < 0.5:
            best = ranked[1].trace
        chosen[k] = best
    return chosen
