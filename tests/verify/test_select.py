"""Selection: grouping by task, best first, deterministic tie-break, finalists by comparison."""

from __future__ import annotations

from tests.verify._rollouts import rollout

from mastkit.traces.model import Trace
from mastkit.verify import Assessment, RandomScorer, ShortestScorer, rank, select_best


def test_picks_the_highest_score_per_task() -> None:
    rs = [
        rollout("a", 0, turns=5),
        rollout("a", 1, turns=1),
        rollout("b", 0, turns=2),
        rollout("b", 1, turns=3),
    ]
    chosen = select_best(rs, ShortestScorer())
    assert {k: t.trace_id for k, t in chosen.items()} == {"a": "a-t1", "b": "b-t0"}


def test_ties_break_by_trace_id_whatever_the_input_order() -> None:
    rs = [rollout("a", 2), rollout("a", 0), rollout("a", 1)]
    assert select_best(rs, RandomScorer())["a"].trace_id == "a-t0"
    assert select_best(list(reversed(rs)), RandomScorer())["a"].trace_id == "a-t0"


def test_failed_scores_rank_last_and_groupless_rollouts_are_left_out() -> None:
    rs = [rollout("a", 0), rollout("a", 1), rollout("a", 2).model_copy(update={"task_id": None})]
    scored = [Assessment(None, "failed"), Assessment(0.1, "low"), Assessment(0.9, "x")]
    ranked = rank(rs, scored)
    assert list(ranked) == ["a"]
    assert [r.trace.trace_id for r in ranked["a"]] == ["a-t1", "a-t0"]


def test_custom_key() -> None:
    rs = [rollout("a", 0, turns=3), rollout("b", 0, turns=1)]
    chosen = select_best(rs, ShortestScorer(), key=lambda t: "all")
    assert list(chosen) == ["all"] and chosen["all"].trace_id == "b-t0"


def test_compare_settles_the_two_finalists() -> None:
    rs = [rollout("a", 0, turns=1), rollout("a", 1, turns=2), rollout("a", 2, turns=3)]
    asked: list[tuple[str, str]] = []

    def prefer_second(x: Trace, y: Trace) -> float:
        asked.append((x.trace_id, y.trace_id))
        return 0.2

    assert select_best(rs, ShortestScorer(), compare=prefer_second)["a"].trace_id == "a-t1"
    assert asked == [("a-t0", "a-t1")]
    assert select_best(rs, ShortestScorer(), compare=lambda x, y: 0.5)["a"].trace_id == "a-t0"
    single = select_best(rs[:1], ShortestScorer(), compare=prefer_second)
    assert single["a"].trace_id == "a-t0" and len(asked) == 1
