"""Blinding: a verifier never reads the answer, so flipping it changes no score and no request."""

from __future__ import annotations

import dataclasses

import pytest
from tests.verify._rollouts import flipped, rollout

from mastkit.traces.model import Outcome
from mastkit.verify import BASELINES, FailureVectorScorer, blind


def test_blind_strips_every_answer_field() -> None:
    t = rollout("a", 0, success=True, changes=1)
    t = t.model_copy(
        update={
            "outcome": Outcome(
                success=True, score=1.0, metrics={"r": 1}, ground_truth="g", final_output="out"
            ),
            "extra": {"session": "s1", "reward": 1.0, "meta": {"grading": {"ok": True}, "keep": 2}},
            "events": [dataclasses.replace(e, extra={"score": 1, "note": "n"}) for e in t.events],
        }
    )
    b = blind(t)
    assert b.outcome == Outcome(final_output="out")
    assert b.labels == [] and b.raw is None
    assert b.extra == {"session": "s1", "meta": {"keep": 2}}
    assert all(e.raw is None and e.extra == {"note": "n"} for e in b.events)
    assert [e.text() for e in b.events] == [e.text() for e in t.events]
    assert b.task == t.task and blind(t, keep_task=False).task is None
    assert t.outcome is not None and t.outcome.success is True  # the input is untouched


@pytest.mark.parametrize("success", [True, False])
def test_flipped_outcome_gives_the_same_score_from_every_offline_scorer(success: bool) -> None:
    t = rollout("a", 0, success=success, changes=2, handoff=True)
    f = flipped(t)
    assert blind(t).content_hash() == blind(f).content_hash()
    scorers = [make() for make in BASELINES.values()]
    scorers.append(FailureVectorScorer(train=False))
    fitted = FailureVectorScorer().fit(
        [rollout("x", i, success=i % 2 == 0, changes=i) for i in range(6)], [i % 2 == 0 for i in range(6)]
    )
    scorers.append(fitted)
    for s in scorers:
        assert s.assess(t) == s.assess(f), s.name


def test_fitting_on_flipped_answers_does_not_see_them_in_features() -> None:
    """Features come from the blinded trace: an outcome-reading feature would differ here."""
    s = FailureVectorScorer()
    t = rollout("a", 0, success=True, changes=1)
    assert s.features(t) == s.features(flipped(t))
