"""Clarification branch (FM-2.2 fail to ask for clarification): ambiguity routes to a question.

Ambiguity signals:

* a tool result that reports several matches ("found 3 matches", "ambiguous", "did you mean");
* a permission or validation error from a tool;
* an explicit open question in the task ("which service ...?").

While a signal is open, read-only calls are allowed (narrowing a search is fine), but a
state-changing call or a stop attempt is redirected to asking the user. A signal closes when the
agent asks (an ask tool, or a question to the user), when the user speaks, or — for a tool
signal — when the same tool later answers without error or ambiguity.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field, field_validator

from mastkit.guard.decision import ALLOW, Decision
from mastkit.guard.state import RunState
from mastkit.traces.model import Event

DEFAULT_SEVERAL = [
    r"\b(multiple|several|many) (matches|results|candidates|instances|services|pods|files|records)\b",
    r"\b(found|matched|returned) ([2-9]|[1-9]\d+) (matches|results|candidates|instances|services|pods|files|records|items)\b",
    r"\bambiguous\b",
    r"\bdid you mean\b",
    r"\bmore than one\b",
]
DEFAULT_REFUSALS = [
    r"permission denied", r"\bforbidden\b", r"not authori[sz]ed", r"\bunauthori[sz]ed\b", r"access denied",
    r"validation (error|failed)", r"\binvalid (argument|parameter|value|input)", r"\b40[13]\b",
]  # fmt: skip
DEFAULT_TASK_QUESTION = r"\bwhich\b[^?.!\n]{0,200}\?"


class ClarificationConfig(BaseModel):
    """Settings of the clarification branch."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    several_matches: list[str] = Field(default_factory=lambda: list(DEFAULT_SEVERAL))
    """Regexes (case-insensitive) over a tool's output that mean it found several candidates."""
    refusals: list[str] = Field(default_factory=lambda: list(DEFAULT_REFUSALS))
    """Regexes over an error result that mean a permission or validation refusal."""
    task_question: str | None = DEFAULT_TASK_QUESTION
    """Regex over the task for an open question the user has to answer; None to skip."""
    mode: str = "FM-2.2"

    @field_validator("several_matches", "refusals")
    @classmethod
    def _compile_all(cls, values: list[str]) -> list[str]:
        for v in values:
            _compiles(v)
        return values

    @field_validator("task_question")
    @classmethod
    def _compile_one(cls, value: str | None) -> str | None:
        if value is not None:
            _compiles(value)
        return value


def _compiles(pattern: str) -> None:
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"not a valid regular expression {pattern!r}: {exc}") from None


@dataclass(slots=True)
class _Signal:
    seq: int
    what: str
    tool: str | None


@dataclass(slots=True)
class _Run:
    open: list[_Signal] = field(default_factory=list)
    task_seen: bool = False


def _any(patterns: list[str]) -> re.Pattern[str] | None:
    return re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE) if patterns else None


class ClarificationGuard:
    """Redirects to asking the user when the run acts on an unresolved ambiguity."""

    name = "clarification"

    def __init__(self, config: ClarificationConfig | None = None, **settings: object) -> None:
        self.config = config or ClarificationConfig.model_validate(settings)
        self._several = _any(self.config.several_matches)
        self._refusal = _any(self.config.refusals)
        tq = self.config.task_question
        self._task_q = re.compile(tq, re.IGNORECASE) if tq else None

    def check(self, event: Event, state: RunState) -> Decision:
        run = state.slot(self.name, _Run)
        if state.is_user_input(event) or state.is_ask(event):
            run.open.clear()  # the agent asked, or the user spoke: the open questions are answered
        if not run.task_seen and state.task is not None:
            run.task_seen = True  # the task's own open question is a signal until the next answer
            m = self._task_q.search(state.task) if self._task_q else None
            if m is not None:
                run.open.append(_Signal(event.seq, f"the task asks {m.group(0).strip()!r}", None))
        if state.is_user_input(event) or state.is_ask(event):
            return ALLOW
        if event.kind == "tool_result" and event.tool_result is not None:
            self._on_result(event, state, run)
            return ALLOW
        if not run.open:
            return ALLOW
        acting = state.is_stop(event) or (
            event.kind == "tool_call"
            and event.tool_call is not None
            and state.is_state_changing(event.tool_call.name)
        )
        if not acting:
            return ALLOW
        sig = run.open[-1]
        return Decision(
            "redirect",
            f"Ask the user first: {sig.what} (step {sig.seq}). Do not assume; ask which one is meant, "
            "then go on.",
            self.config.mode, self.name, (sig.seq, event.seq), sig.what,
        )  # fmt: skip

    def _on_result(self, event: Event, state: RunState, run: _Run) -> None:
        r = event.tool_result
        assert r is not None
        call = state.call_of(event)
        tool = r.name or (call.tool_call.name if call is not None and call.tool_call is not None else None)
        text = r.output or ""
        error = r.is_error is True or r.exit_code not in (None, 0)
        m = self._refusal.search(text) if error and self._refusal else None
        if m is not None:
            run.open.append(_Signal(event.seq, f"{tool or 'a tool'} was refused ({m.group(0)!r})", tool))
            return
        m = self._several.search(text) if self._several else None
        if m is not None:
            run.open.append(
                _Signal(event.seq, f"{tool or 'a tool'} found several candidates ({m.group(0)!r})", tool)
            )
            return
        if not error and tool is not None:
            run.open = [s for s in run.open if s.tool != tool]
