"""Budget guard (FM-1.5 unaware of termination): steps, tokens, wall time and cost.

Each limit warns once when the run passes ``warn_fraction`` of it, and at the limit does
``on_limit`` (``block`` by default in a spec; the built-in defaults only warn) on every agent
step from then on.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from mastkit.guard.decision import ALLOW, Decision
from mastkit.guard.state import RunState
from mastkit.traces.model import Event


class BudgetConfig(BaseModel):
    """Settings of the budget guard; a limit left None is not checked."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    max_steps: int | None = Field(None, ge=1)
    """Agent steps: tool calls, agent messages, stop attempts."""
    max_tokens: int | None = Field(None, ge=1)
    max_seconds: float | None = Field(None, gt=0)
    """Wall time since the run started, by the run's clock."""
    max_cost_usd: float | None = Field(None, gt=0)
    warn_fraction: float = Field(0.8, gt=0, le=1)
    """Warn once when this fraction of a limit is used."""
    on_limit: Literal["block", "redirect", "warn"] = "block"
    """What to do at the limit: block the step, redirect (tell the agent to stop and report), or
    only warn."""
    mode: str = "FM-1.5"


_UNITS = {"steps": "steps", "tokens": "tokens", "seconds": "s", "cost_usd": "USD"}


class BudgetGuard:
    """Warns near, and stops at, the run's step, token, time and cost limits."""

    name = "budget"

    def __init__(self, config: BudgetConfig | None = None, **settings: object) -> None:
        self.config = config or BudgetConfig.model_validate(settings)
        c = self.config
        self._limits = [
            (dim, limit)
            for dim, limit in (
                ("steps", c.max_steps), ("tokens", c.max_tokens),
                ("seconds", c.max_seconds), ("cost_usd", c.max_cost_usd),
            )
            if limit is not None
        ]  # fmt: skip

    def check(self, event: Event, state: RunState) -> Decision:
        if not self._limits or not state.is_agent_step(event) or state.is_stop(event):
            return ALLOW  # a stop attempt is never refused for being over budget
        warned: set[str] = state.slot(self.name, set)
        cfg = self.config
        worst = ALLOW
        for dim, limit in self._limits:
            used = _used(state, dim)
            if used >= limit:
                unit = _UNITS[dim]
                what = (
                    f"the {dim.replace('_usd', '')} budget is used up ({_fmt(used)} of {_fmt(limit)} {unit})"
                )
                if cfg.on_limit == "warn":
                    if dim + ":limit" in warned:
                        continue
                    warned.add(dim + ":limit")
                    message = f"Warning: {what}. Finish now and report what is done."
                else:
                    message = f"Stop: {what}. Do not start new work; report what is done and what is left."
                return Decision(
                    cfg.on_limit,
                    message,
                    cfg.mode,
                    self.name,
                    (event.seq,),
                    f"{dim} {_fmt(used)}/{_fmt(limit)}",
                )
            if used >= cfg.warn_fraction * limit and dim not in warned and worst is ALLOW:
                warned.add(dim)
                worst = Decision(
                    "warn",
                    f"Warning: {used / limit:.0%} of the {dim.replace('_usd', '')} budget is used "
                    f"({_fmt(used)} of {_fmt(limit)} {_UNITS[dim]}). Plan to finish.",
                    cfg.mode, self.name, (event.seq,), f"{dim} {_fmt(used)}/{_fmt(limit)}",
                )  # fmt: skip
        return worst


def _used(state: RunState, dim: str) -> float:
    if dim == "steps":
        return state.steps - 1  # steps taken before this one: the (limit+1)th step is the one stopped
    if dim == "tokens":
        return state.tokens
    if dim == "seconds":
        return state.elapsed()
    return state.cost_usd


def _fmt(x: float) -> str:
    return f"{x:g}" if isinstance(x, int) or x == int(x) else f"{x:.2f}"
