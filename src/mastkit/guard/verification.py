"""Verification gate (FM-3.3 incorrect verification): no success claim without fresh evidence.

A success claim is a stop attempt: a final answer, a call of a stop tool (``done``, ``submit``)
or a termination event. It is refused (redirected: "verify first") until every named evidence
check has run AFTER the last state-changing action and its latest such run passed. A check is
a tool with a result predicate (:class:`~mastkit.guard.predicates.ResultCheck`) or, in code, a
user callable over a result event and its call.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field

from mastkit.guard.decision import ALLOW, Decision
from mastkit.guard.predicates import ResultCheck, ResultPredicate
from mastkit.guard.state import RunState
from mastkit.traces.model import Event


class EvidenceCheck(ResultCheck):
    """A named evidence check: a tool (pattern) whose result must pass."""

    name: str
    """What the check is called in messages (``tests``, ``health check``)."""


class VerificationConfig(BaseModel):
    """Settings of the verification gate."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    checks: list[EvidenceCheck] = Field(default_factory=list)
    """Every one of these must have passed since the last state change before a success claim."""
    require_change: bool = False
    """When True, a claim with no state change at all is refused too (nothing was done)."""
    mode: str = "FM-3.3"


@dataclass(slots=True)
class _Run:
    last: dict[str, tuple[int, bool]] = field(default_factory=dict)
    """Check name → (seq of its latest result, passed)."""


class CallableCheck:
    """An evidence check from a user callable: ``applies(result, call)`` picks the results it is
    about (by tool name when given as a string), ``predicate(result, call)`` says if one passed."""

    def __init__(self, name: str, tool: str, predicate: ResultPredicate) -> None:
        self.name = name
        self._tool = ResultCheck(tool=tool, no_error=False)
        self._predicate = predicate

    def applies(self, result: Event, call: Event | None) -> bool:
        return self._tool.applies(result, call)

    def passed_with(self, result: Event, call: Event | None) -> bool:
        return bool(self._predicate(result, call))


class VerificationGate:
    """Refuses a success claim until the declared evidence checks have passed after the last change."""

    name = "verification"

    def __init__(
        self,
        config: VerificationConfig | None = None,
        *,
        callables: list[CallableCheck] | None = None,
        **settings: object,
    ) -> None:
        self.config = config or VerificationConfig.model_validate(settings)
        self.callables = list(callables or [])

    def check(self, event: Event, state: RunState) -> Decision:
        if not self.config.checks and not self.callables:
            return ALLOW
        run = state.slot(self.name, _Run)
        if event.kind == "tool_result":
            call = state.call_of(event)
            for c in self.config.checks:
                if c.applies(event, call):
                    run.last[c.name] = (event.seq, c.passed(event))
            for u in self.callables:
                if u.applies(event, call):
                    run.last[u.name] = (event.seq, u.passed_with(event, call))
            return ALLOW
        if not state.is_stop(event):
            return ALLOW
        since = state.last_change_seq
        if since is None and self.config.require_change:
            return Decision(
                "redirect", "Not verified: nothing has been changed yet, so there is no result to claim.",
                self.config.mode, self.name, (event.seq,), "success claimed with no change made",
            )  # fmt: skip
        problems: list[str] = []
        seqs: list[int] = []
        for name in [c.name for c in self.config.checks] + [u.name for u in self.callables]:
            seen = run.last.get(name)
            if seen is None or (since is not None and seen[0] < since):
                after = f" since the last change (step {since})" if since is not None else ""
                problems.append(f"{name!r} has not been run{after}")
            elif not seen[1]:
                problems.append(f"{name!r} failed (step {seen[0]})")
                seqs.append(seen[0])
        if not problems:
            return ALLOW
        if since is not None:
            seqs.insert(0, since)
        return Decision(
            "redirect",
            "Not verified: " + "; ".join(problems) + ". Run the check(s) and see them pass before "
            "declaring success.",
            self.config.mode, self.name, (*seqs, event.seq), "success claimed without passing evidence",
        )  # fmt: skip
