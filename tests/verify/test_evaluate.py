"""Evaluation: hand-computed pass@1 / selected / oracle, ties as expected values, bootstrap over
tasks, and cross-validation that never scores a rollout with a model fitted on its task."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from tests.verify._rollouts import rollout

from mastkit.traces.model import Trace
from mastkit.verify import FailureVectorScorer, RandomScorer, ShortestScorer, cv_splits, evaluate_selection
from mastkit.verify.evaluate import compare_rows, cross_val_assess, task_bootstrap
from mastkit.verify.scorers import Assessment


def _data() -> list[Trace]:
    # task a: the short run succeeds; task b: both fail; task c: the long run succeeds
    return [
        rollout("a", 0, success=False, turns=4),
        rollout("a", 1, success=True, turns=1),
        rollout("b", 0, success=False, turns=1),
        rollout("b", 1, success=False, turns=2),
        rollout("c", 0, success=False, turns=1),
        rollout("c", 1, success=True, turns=3),
        rollout("d", 0, success=None),  # unknown outcome: left out
    ]


def test_hand_computed_table() -> None:
    ev = evaluate_selection(_data(), [ShortestScorer(), RandomScorer()], n_boot=200)
    short, rnd = ev.results
    assert (ev.tasks, ev.rollouts, ev.skipped) == (3, 6, 1)
    assert short.pass_at_1.value == pytest.approx(1 / 3)
    assert short.oracle.value == pytest.approx(2 / 3)
    assert short.selected.value == pytest.approx(1 / 3)  # a: 1, b: 0, c: 0
    assert short.choices == {"a": "a-t1", "b": "b-t0", "c": "c-t0"}
    assert short.gain.value == pytest.approx(0.0)
    # every rollout ties under random: selected is the expected value of a uniform pick = pass@1
    # (the tie-break's own choice, every *-t0, would score 0)
    assert rnd.selected.value == pytest.approx(rnd.pass_at_1.value)
    assert set(rnd.choices.values()) == {"a-t0", "b-t0", "c-t0"}
    for r in (short, rnd):
        for iv in (r.pass_at_1, r.selected, r.oracle):
            assert iv.lo <= iv.value <= iv.hi


def test_bootstrap_resamples_tasks_jointly() -> None:
    (lo, hi), (lo2, hi2) = task_bootstrap([[1.0, 0.0], [1.0, 0.0]], n_boot=500)
    assert (lo, hi) == (lo2, hi2) == (0.0, 1.0)
    ((lo, hi),) = task_bootstrap([[0.5, 0.5, 0.5]], n_boot=50)
    assert lo == hi == 0.5


def test_cv_splits_keep_each_task_on_one_side() -> None:
    groups = [f"task{i // 4}" for i in range(40)]
    splits = cv_splits(groups, 5)
    assert len(splits) == 5
    tested = sorted(i for _, te in splits for i in te)
    assert tested == list(range(40))
    for train, test in splits:
        assert {groups[i] for i in train}.isdisjoint({groups[i] for i in test})


class _Spy(FailureVectorScorer):
    """Records the tasks each fitted copy saw, and checks them when it scores."""

    def fresh(self) -> _Spy:
        return _Spy()

    def fit(
        self, traces: Sequence[Trace], labels: Sequence[bool], groups: Sequence[str] | None = None
    ) -> _Spy:
        self.seen = {t.task_id for t in traces}
        super().fit(traces, labels, groups)
        return self

    def assess(self, trace: Trace) -> Assessment:
        assert trace.task_id not in self.seen, "scored by a model fitted on its own task"
        return super().assess(trace)


def test_cross_validation_never_scores_a_rollout_with_its_own_task() -> None:
    traces = [rollout(f"t{i // 3}", i % 3, success=i % 2 == 0, handoff=i % 2 == 1) for i in range(30)]
    labels = [i % 2 == 0 for i in range(30)]
    scored = cross_val_assess(_Spy(), traces, labels, [t.task_id or "" for t in traces], n_splits=5)
    assert all(a.probability is not None for a in scored)


def test_evaluate_uses_held_out_tasks_for_trainable_scorers() -> None:
    traces = [rollout(f"t{i // 2}", i % 2, success=i % 2 == 0, handoff=i % 2 == 1) for i in range(20)]
    (row,) = evaluate_selection(traces, [_Spy()], n_boot=100).results
    assert row.protocol.startswith("GroupKFold by task")
    assert row.selected.value == pytest.approx(1.0)  # the hand-off pattern carries across tasks


def test_cv_needs_two_tasks() -> None:
    with pytest.raises(ValueError, match="two tasks"):
        cv_splits(["a", "a", "a"], 5)


def test_compare_settles_finalists_in_the_evaluation() -> None:
    # shortest ranks a-t1 (success) first; a comparison that always prefers the runner-up loses it
    data = _data()
    ev = evaluate_selection(data, [ShortestScorer()], n_boot=100, compare={"shortest": lambda a, b: 0.0})
    (row,) = ev.results
    assert row.protocol.endswith("pairwise finalists")
    assert row.choices == {"a": "a-t0", "b": "b-t1", "c": "c-t1"}
    assert row.selected.value == pytest.approx(1 / 3)  # a: 0, b: 0, c: 1


def test_best_row_is_compared_paired_with_every_other() -> None:
    data = [
        rollout("a", 0, success=True, turns=1),
        rollout("a", 1, success=False, turns=3),
        rollout("b", 0, success=True, turns=1),
        rollout("b", 1, success=False, turns=2),
        rollout("c", 0, success=False, turns=1),
        rollout("c", 1, success=True, turns=2),
    ]
    ev = evaluate_selection(data, [RandomScorer(), ShortestScorer()], n_boot=300)
    rnd, short = ev.results
    assert short.per_task == {"a": 1.0, "b": 1.0, "c": 0.0}
    assert rnd.per_task == {"a": 0.5, "b": 0.5, "c": 0.5}
    (c,) = ev.comparisons
    assert (c.scorer, c.versus) == ("shortest", "random")
    assert c.difference.value == pytest.approx((0.5 + 0.5 - 0.5) / 3)
    assert c.difference.lo < 0 < c.difference.value < c.difference.hi == pytest.approx(0.5)
    other = evaluate_selection(data[:4], [RandomScorer()], n_boot=50).results[0]
    with pytest.raises(ValueError, match="same tasks"):
        compare_rows(short, other)
    assert evaluate_selection(data, [RandomScorer()], n_boot=50).comparisons == []
