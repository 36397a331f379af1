"""Offline scorers: the baselines' orderings, the failure vector's defaults and fitting."""

from __future__ import annotations

import subprocess
import sys

from tests.verify._rollouts import rollout

from mastkit.annotate.model import ModeVerdict
from mastkit.traces.model import Trace
from mastkit.verify import (
    FailureVectorScorer,
    FewestStateChangesScorer,
    NoHandoffScorer,
    RandomScorer,
    ShortestScorer,
    signals,
)


def test_signals() -> None:
    s = signals(rollout("a", 0, turns=2, changes=3, handoff=True))
    assert (s.state_changes, s.handoff, s.tool_errors, s.ended_by_user) == (3, True, 0, False)
    assert s.agent_turns == 2 + 3 + 1 + 1
    assert signals(rollout("a", 0)).handoff is False


def test_baselines_order() -> None:
    short, long = rollout("a", 0, turns=1), rollout("a", 1, turns=6)
    assert ShortestScorer().score(short) > ShortestScorer().score(long)
    few, many = rollout("a", 0, changes=0), rollout("a", 1, changes=2)
    assert FewestStateChangesScorer().score(few) > FewestStateChangesScorer().score(many)
    assert NoHandoffScorer().score(rollout("a", 0)) > NoHandoffScorer().score(rollout("a", 1, handoff=True))
    assert RandomScorer().score(short) == RandomScorer().score(long)


def _vector(*present: str) -> list[ModeVerdict]:
    return [ModeVerdict(code=c, verdict="present", evidence=[]) for c in present]


def test_defaults_weigh_fatal_modes_more() -> None:
    given = {"ok": _vector(), "minor": _vector("FM-1.3"), "fatal": _vector("FM-3.1")}
    s = FailureVectorScorer(annotations=lambda t: given[t.trace_id], train=False)
    p = {k: s.score(Trace(trace_id=k, source_format="t")) for k in given}
    assert p["ok"] > p["minor"] > p["fatal"]
    assert "default weights" in s.assess(Trace(trace_id="fatal", source_format="t")).explanation


def test_unannotated_trace_uses_the_rule_detectors() -> None:
    s = FailureVectorScorer(annotations=lambda t: None, train=False)
    assert set(s.features(rollout("a", 0))) == set(s.feature_names)


def test_fit_learns_that_a_handoff_means_failure() -> None:
    traces = [rollout(f"t{i}", 0, handoff=i % 2 == 1, turns=1 + i % 3) for i in range(20)]
    labels = [i % 2 == 0 for i in range(20)]
    s = FailureVectorScorer().fit(traces, labels)
    assert s.fitted and s.weights["handoff"] < -0.5
    assert s.score(rollout("z", 0)) > 0.7 > 0.3 > s.score(rollout("z", 1, handoff=True))
    assert "fitted weights" in s.assess(rollout("z", 0)).explanation


def test_fit_with_one_class_sets_only_the_intercept() -> None:
    s = FailureVectorScorer().fit([rollout("a", 0), rollout("b", 0, handoff=True)], [True, True])
    assert s.score(rollout("a", 0)) == s.score(rollout("b", 0, handoff=True)) > 0.9


def test_sklearn_is_imported_only_when_fitting() -> None:
    code = "import sys, mastkit.verify, mastkit.cli.main; print('sklearn' in sys.modules)"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert res.stdout.strip() == "False"
