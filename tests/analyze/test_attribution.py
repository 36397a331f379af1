"""Attribution scores (Who&When style) against numbers computed by hand."""

from __future__ import annotations

import pytest

from mastkit.analyze.attribution import gold_attribution, score_attribution
from mastkit.analyze.evaluate import evaluate_attribution
from mastkit.annotate.model import Attribution
from mastkit.traces.model import Event, Label, Trace


def _trace(tid: str, actors: list[str], agent: str | None = None, step: int | None = None) -> Trace:
    events = [Event(seq=i, kind="message", actor=a, content="x") for i, a in enumerate(actors)]
    labels = [Label(kind="failure_mode", code="FM-1.1", present=True)]
    if agent is not None or step is not None:
        labels.append(Label(kind="attribution", agent=agent, step=step))
    return Trace(trace_id=tid, source_format="t", events=events, labels=labels)


TRACES = [
    _trace("t4", ["A", "B"], "A", None),  # no gold step: not scored (and the traces after it still are)
    _trace("t5", ["A", "B"]),  # no attribution label: not scored
    # 5 events, agents Checker and Coder (human and System are not agents); Coder is the most active.
    _trace("t1", ["human", "Coder", "Checker", "Coder", "System"], "Coder", 3),
    # 4 events, agents Coder and Planner; Planner is the most active.
    _trace("t2", ["Planner", "Coder", "Planner", "user"], "Coder", 0),
    # The gold agent never acts in the trace: a random pick cannot hit it.
    _trace("t3", ["A", "B", "A"], "Ghost", 1),
    # Two agents tied on activity: the tie goes to the later name (Y), so X is missed.
    _trace("t6", ["X", "Y"], "X", 1),
    # Users act most, but are not agents; the most active agent, Alice, sorts first.
    _trace("t7", ["user", "user", "User", "Alice", "Zed", "Alice"], "Alice", 5),
    _trace("t8", [], "A", 0),  # no events: every baseline is 0 for it
]

PREDS: dict[str, Attribution | None] = {
    "t1": Attribution(agent="Coder", step=6),  # agent right; step off by 3
    "t2": Attribution(agent="Planner", step=0),  # agent wrong; step exact (0, not None)
    # t3: no prediction -> missing, wrong
    "t6": Attribution(agent="X", step=None),  # agent right; no step
    "t4": Attribution(agent="A", step=0),
    # t7: no prediction -> missing, wrong
    "t8": Attribution(agent="A", step=0),  # all right
}


def test_scores_by_hand() -> None:
    s = score_attribution(PREDS, TRACES)
    assert (s.n, s.missing) == (6, 2)  # t1 t2 t3 t6 t7 t8; t3 and t7 have no prediction
    assert s.agent_accuracy == pytest.approx(3 / 6)  # t1, t6, t8
    assert s.step_accuracy == pytest.approx(2 / 6)  # t2, t8
    assert s.step_within[1] == pytest.approx(2 / 6)  # t2, t8 (t1 is 3 away)
    assert s.step_within[3] == pytest.approx(3 / 6)  # t1, t2, t8
    # Random agent: 1/2 (t1), 1/2 (t2), 0 (t3: Ghost is not an agent there), 1/2 (t6), 1/2 (t7), 0 (t8).
    assert s.random_agent == pytest.approx(2 / 6)
    # Random step: 1/5, 1/4, 1/3, 1/2, 1/6, 0.
    assert s.random_step == pytest.approx((1 / 5 + 1 / 4 + 1 / 3 + 1 / 2 + 1 / 6) / 6)
    # Within ±1: t1 steps 2-4 of 5, t2 0-1 of 4, t3 0-2 of 3, t6 0-1 of 2, t7 4-5 of 6, t8 none.
    assert s.random_step_within[1] == pytest.approx((3 / 5 + 2 / 4 + 1 + 1 + 2 / 6) / 6)
    # Within ±3: all steps of t1, t2, t3, t6; t7 steps 2-5 of 6; t8 none.
    assert s.random_step_within[3] == pytest.approx((4 + 4 / 6) / 6)
    assert s.most_active_agent == pytest.approx(2 / 6)  # t1 (Coder), t7 (Alice)


def test_tolerances_and_empty_input() -> None:
    s = score_attribution(PREDS, TRACES, tolerances=(0, 2))
    assert s.step_within == {0: pytest.approx(2 / 6), 2: pytest.approx(2 / 6)}
    assert s.random_step_within[0] == pytest.approx(s.random_step or 0)
    empty = score_attribution({}, TRACES[:2])
    assert (empty.n, empty.agent_accuracy, empty.random_step, empty.most_active_agent) == (
        0,
        None,
        None,
        None,
    )
    assert empty.step_within == {1: None, 3: None}


def test_gold_step_outside_the_trace_gives_no_negative_baseline() -> None:
    far = _trace("far", ["A", "B"], "A", 10)  # step 10 of a 2-event trace
    s = score_attribution({"far": Attribution(agent="A", step=10)}, [far])
    assert (s.step_accuracy, s.random_step_within[1], s.random_step_within[3]) == (1.0, 0.0, 0.0)


def test_gold_attribution_and_evaluate_attribution() -> None:
    gold = gold_attribution(TRACES[2])
    assert gold is not None and (gold.agent, gold.step) == ("Coder", 3)
    assert gold_attribution(TRACES[1]) is None
    preds = {k: v for k, v in PREDS.items() if v is not None}
    assert evaluate_attribution(preds, iter(TRACES)) == score_attribution(preds, TRACES)
