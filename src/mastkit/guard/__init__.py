"""Runtime guards that stop agent failures while the agent runs.

A :class:`Guardian` sees each step of a run as a canonical :class:`~mastkit.traces.Event` and
answers with a :class:`Decision` (allow / warn / block / redirect, the MAST mode it prevents,
the evidence). Guards: loop (FM-1.3), budget (FM-1.5), termination state machine (FM-1.5,
FM-3.1), verification gate (FM-3.3), clarification branch (FM-2.2), action validation
(FM-2.6, FM-1.1). Configure them in code or in ``guards.yaml`` (:func:`load_spec`); see
``docs/guard.md``. This package imports only the trace model and the taxonomy from mastkit.
"""

from mastkit.guard.base import Guard
from mastkit.guard.budget import BudgetConfig, BudgetGuard
from mastkit.guard.clarification import ClarificationConfig, ClarificationGuard
from mastkit.guard.decision import ALLOW, SEVERITY, Action, Decision, combine
from mastkit.guard.guardian import GUARD_SUBTYPE, SOURCE_FORMAT, Guardian, guarded_run
from mastkit.guard.loop import LoopConfig, LoopGuard
from mastkit.guard.normalize import normalize_args, normalize_text
from mastkit.guard.predicates import ResultCheck
from mastkit.guard.spec import GuardSpec, GuardSpecError, load_spec
from mastkit.guard.state import RunConfig, RunState
from mastkit.guard.termination import TerminationConfig, TerminationGuard, Transition, Trigger
from mastkit.guard.validation import ActionValidator, PlanStep, ValidationConfig
from mastkit.guard.verification import CallableCheck, EvidenceCheck, VerificationConfig, VerificationGate

__all__ = [
    "ALLOW",
    "GUARD_SUBTYPE",
    "SEVERITY",
    "SOURCE_FORMAT",
    "Action",
    "ActionValidator",
    "BudgetConfig",
    "BudgetGuard",
    "CallableCheck",
    "ClarificationConfig",
    "ClarificationGuard",
    "Decision",
    "EvidenceCheck",
    "Guard",
    "GuardSpec",
    "GuardSpecError",
    "Guardian",
    "LoopConfig",
    "LoopGuard",
    "PlanStep",
    "ResultCheck",
    "RunConfig",
    "RunState",
    "TerminationConfig",
    "TerminationGuard",
    "Transition",
    "Trigger",
    "ValidationConfig",
    "VerificationConfig",
    "VerificationGate",
    "combine",
    "guarded_run",
    "load_spec",
    "normalize_args",
    "normalize_text",
]
