"""Action validation (FM-2.6 reasoning-action mismatch, FM-1.1 disobeying the specification):
each tool call is checked, before it runs, against

* allow and deny lists of tool-name patterns;
* the tool's argument schema (a JSON Schema subset, :mod:`mastkit.guard.schema_lite`);
* the declared plan: when a plan is declared, the call's tool must belong to the current plan
  step or the next one (the plan then moves on). Stop and ask tools are always allowed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from mastkit.guard._match import Globs
from mastkit.guard.decision import ALLOW, Decision
from mastkit.guard.schema_lite import schema_errors
from mastkit.guard.state import RunState
from mastkit.traces.model import Event


class PlanStep(BaseModel):
    """One step of a declared plan and the tools (patterns) it may use."""

    model_config = ConfigDict(extra="forbid")

    step: str
    tools: list[str] = Field(min_length=1)


class ValidationConfig(BaseModel):
    """Settings of the action-validation guard."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    allow: list[str] = Field(default_factory=list)
    """Tool patterns that may be called; empty means any (the deny list still applies)."""
    deny: list[str] = Field(default_factory=list)
    """Tool patterns that may never be called."""
    schemas: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Tool name (pattern) → JSON schema of its arguments."""
    plan: list[PlanStep] = Field(default_factory=list)
    """The declared plan, in order."""
    lookahead: int = Field(1, ge=0)
    """How many plan steps ahead a call may jump (1: the current step or the next)."""
    mode_policy: str = "FM-1.1"
    mode_mismatch: str = "FM-2.6"


@dataclass(slots=True)
class _Plan:
    index: int = 0


class ActionValidator:
    """Blocks a call that is denied, not allowed, malformed, or outside the declared plan."""

    name = "validation"

    def __init__(self, config: ValidationConfig | None = None, **settings: object) -> None:
        self.config = config or ValidationConfig.model_validate(settings)
        c = self.config
        self._allow = Globs(c.allow)
        self._deny = Globs(c.deny)
        self._schemas = [(Globs([k]), v) for k, v in c.schemas.items()]
        self._steps = [Globs(s.tools) for s in c.plan]

    def check(self, event: Event, state: RunState) -> Decision:
        if event.kind != "tool_call" or event.tool_call is None:
            return ALLOW
        cfg = self.config
        name = event.tool_call.name
        if self._deny(name) or (self._allow and not self._allow(name) and not _always(event, state)):
            why = "is on the deny list" if self._deny(name) else "is not on the allow list"
            return Decision(
                "block", f"Blocked: the tool {name!r} {why}. Use an allowed tool.",
                cfg.mode_policy, self.name, (event.seq,), f"{name} {why}",
            )  # fmt: skip
        for match, schema in self._schemas:
            if match(name):
                args = event.tool_call.arguments
                errors = schema_errors({} if args is None else args, schema)
                if errors:
                    return Decision(
                        "block",
                        f"Blocked: the arguments of {name!r} do not fit its schema: {'; '.join(errors[:3])}.",
                        cfg.mode_mismatch, self.name, (event.seq,), errors[0],
                    )  # fmt: skip
                break
        if self._steps and not _always(event, state):
            return self._plan(event, state, name)
        return ALLOW

    def _plan(self, event: Event, state: RunState, name: str) -> Decision:
        plan = state.slot(self.name, _Plan)
        last = min(plan.index + self.config.lookahead, len(self._steps) - 1)
        for i in range(plan.index, last + 1):
            if self._steps[i](name):
                plan.index = i
                return ALLOW
        step = self.config.plan[plan.index]
        return Decision(
            "block",
            f"Blocked: {name!r} is not part of the current plan step {step.step!r} (tools: "
            f"{', '.join(step.tools)}). Follow the plan, or state a new plan first.",
            self.config.mode_mismatch, self.name, (event.seq,), f"{name} outside plan step {step.step!r}",
        )  # fmt: skip


def _always(event: Event, state: RunState) -> bool:
    return state.is_stop(event) or state.is_ask(event)
