"""A verifier for best-of-N: score each rollout's probability of success without seeing the
answer, pick the best rollout of each task, and measure how much that beats a random pick.

* :func:`blind` — a trace without its outcome, reward, grading info and labels;
* scorers (:mod:`.scorers`, :mod:`.process_scorer`, :mod:`.llm`) — ``process`` (process
  signals, consensus and the failure vector; families and strength chosen by nested
  cross-validation by task), ``consensus`` (agreement with the other rollouts of the task),
  ``failure_vector`` (failure vector + cheap signals, fitted by logistic regression),
  ``llm_plain``, ``llm_taxonomy``, and the single-feature baselines ``random``, ``shortest``,
  ``fewest_state_changes``, ``no_handoff``;
* :func:`select_best` — the best rollout per task (deterministic tie-break);
* :func:`evaluate_selection` — pass@1 / selected / oracle with bootstrap CIs over tasks,
  trainable scorers cross-validated by task.
"""

from mastkit.verify.blind import blind
from mastkit.verify.evaluate import Evaluation, ScorerResult, cross_val_assess, cv_splits, evaluate_selection
from mastkit.verify.process import Process, process
from mastkit.verify.process_scorer import ConsensusScorer, ProcessScorer
from mastkit.verify.scorers import (
    BASELINES,
    Assessment,
    FailureVectorScorer,
    FewestStateChangesScorer,
    NoHandoffScorer,
    RandomScorer,
    Scorer,
    ShortestScorer,
)
from mastkit.verify.select import assess_grouped, by_task, rank, select_best
from mastkit.verify.signals import Signals, signals

__all__ = [
    "BASELINES",
    "Assessment",
    "ConsensusScorer",
    "Evaluation",
    "FailureVectorScorer",
    "FewestStateChangesScorer",
    "NoHandoffScorer",
    "Process",
    "ProcessScorer",
    "RandomScorer",
    "Scorer",
    "ScorerResult",
    "ShortestScorer",
    "Signals",
    "assess_grouped",
    "blind",
    "by_task",
    "cross_val_assess",
    "cv_splits",
    "evaluate_selection",
    "process",
    "rank",
    "select_best",
    "signals",
]
