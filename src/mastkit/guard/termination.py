"""Termination guard (FM-1.5 unaware of termination, FM-3.1 premature termination): a declared
state machine with explicit stop conditions.

The run starts in ``initial``; each transition moves it from a state (or ``*``, any) to another
when its trigger is seen: a call of a tool, a result of a tool that passes a check, or an
agent message matching a regex. Reaching a state in ``stop_states`` meets a stop condition:
from then on, any step other than stopping is redirected ("stop now: ... met"). A stop attempt
before any stop condition is met is redirected with the reason it may not stop yet.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from mastkit.guard._match import Globs
from mastkit.guard.decision import ALLOW, Decision
from mastkit.guard.predicates import ResultCheck
from mastkit.guard.state import RunState
from mastkit.traces.model import Event


class Trigger(BaseModel):
    """What fires a transition: a tool call; a passing tool result; or an agent message."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tool: str | None = None
    """Tool-name pattern: fires on the call (or, with ``result``, on a result that passes)."""
    result: ResultCheck | None = None
    """Conditions the result must meet (the check's ``tool`` is the tool that must have run)."""
    text_regex: str | None = None
    """A regex searched in an agent message's text."""

    @field_validator("text_regex")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"not a valid regular expression: {exc}") from None
        return value

    @model_validator(mode="before")
    @classmethod
    def _result_tool(cls, data: object) -> object:
        # ``{tool: run_tests, result: {exit_code: 0}}``: the check is about the same tool
        if isinstance(data, dict) and isinstance(data.get("result"), dict) and "tool" not in data["result"]:
            data = {**data, "result": {**data["result"], "tool": data.get("tool") or "*"}}
        return data

    @model_validator(mode="after")
    def _something(self) -> Trigger:
        if self.tool is None and self.result is None and self.text_regex is None:
            raise ValueError("a trigger needs tool, result or text_regex")
        return self

    @cached_property
    def _tool(self) -> Globs:
        return Globs([self.tool] if self.tool else [])

    @cached_property
    def _text(self) -> re.Pattern[str] | None:
        return re.compile(self.text_regex, re.IGNORECASE) if self.text_regex else None

    def fires(self, event: Event, state: RunState) -> bool:
        """True when ``event`` is what this trigger waits for."""
        if self.result is not None:
            if event.kind != "tool_result":
                return False
            call = state.call_of(event)
            return self.result.applies(event, call) and self.result.passed(event)
        if self.tool is not None:
            return (
                event.kind == "tool_call" and event.tool_call is not None and self._tool(event.tool_call.name)
            )
        rx = self._text
        return (
            rx is not None
            and event.kind == "message"
            and state.is_agent_step(event)
            and rx.search(event.content or "") is not None
        )


class Transition(BaseModel):
    """A move of the state machine (``from`` in YAML)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    source: str = Field("*", alias="from")
    """The state it leaves, or ``*`` for any."""
    to: str
    when: Trigger


class TerminationConfig(BaseModel):
    """Settings of the termination guard: states, transitions and stop states."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    states: list[str] = Field(min_length=1)
    initial: str | None = None
    """The starting state (the first listed when not given)."""
    transitions: list[Transition] = Field(default_factory=list)
    stop_states: list[str] = Field(min_length=1)
    """Reaching one of these meets a stop condition."""
    mode_overrun: str = "FM-1.5"
    """Mode a step after a stop condition prevents."""
    mode_premature: str = "FM-3.1"
    """Mode a stop before any stop condition prevents."""

    @model_validator(mode="after")
    def _known_states(self) -> TerminationConfig:
        known = set(self.states)
        if self.initial is not None and self.initial not in known:
            raise ValueError(f"initial state {self.initial!r} is not one of states {self.states}")
        for i, t in enumerate(self.transitions):
            for end, name in (("from", t.source), ("to", t.to)):
                if name not in known and not (end == "from" and name == "*"):
                    raise ValueError(
                        f"transitions[{i}].{end}: unknown state {name!r} (states: {self.states})"
                    )
        for s in self.stop_states:
            if s not in known:
                raise ValueError(f"stop_states: unknown state {s!r} (states: {self.states})")
        return self


@dataclass(slots=True)
class _Machine:
    state: str
    path: list[tuple[str, int]] = field(default_factory=list)
    """(state entered, seq of the event that moved there)."""
    stop_met_at: int | None = None


class TerminationGuard:
    """Tells a run to stop once its stop condition is met, and not to stop before."""

    name = "termination"

    def __init__(self, config: TerminationConfig | None = None, **settings: object) -> None:
        self.config = config or TerminationConfig.model_validate(settings)
        self._initial = self.config.initial or self.config.states[0]
        self._stops = frozenset(self.config.stop_states)

    def current(self, state: RunState) -> str:
        """The machine's state in this run."""
        return state.slot(self.name, self._new).state

    def _new(self) -> _Machine:
        return _Machine(self._initial)

    def check(self, event: Event, state: RunState) -> Decision:
        cfg = self.config
        m = state.slot(self.name, self._new)
        if state.is_stop(event):
            if m.state in self._stops:
                return ALLOW
            return Decision(
                "redirect",
                f"Not done yet: no stop condition is met (now in state {m.state!r}; the run may stop in "
                f"{_names(cfg.stop_states)}). Keep working towards it.",
                cfg.mode_premature, self.name, (event.seq,), f"stop attempted in state {m.state!r}",
            )  # fmt: skip
        if m.stop_met_at is not None and state.is_agent_step(event) and not state.is_ask(event):
            return Decision(
                "redirect",
                f"Stop now: the stop condition {m.state!r} is met (at step {m.stop_met_at}). "
                "Report the result and end the run.",
                cfg.mode_overrun, self.name, (m.stop_met_at, event.seq), f"step after stop state {m.state!r}",
            )  # fmt: skip
        for t in cfg.transitions:
            if (t.source == "*" or t.source == m.state) and t.when.fires(event, state):
                m.state = t.to
                m.path.append((t.to, event.seq))
                if t.to in self._stops and m.stop_met_at is None:
                    m.stop_met_at = event.seq
                break
        return ALLOW


def _names(names: list[str]) -> str:
    return ", ".join(repr(n) for n in names)
