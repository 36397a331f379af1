"""The state of one guarded run, shared by every guard: events so far, counters, clock, and what
counts as a state change, a stop attempt or a question to the user."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from mastkit.guard._match import Globs
from mastkit.traces.model import Event

_T = TypeVar("_T")

DEFAULT_STATE_CHANGING = [
    "*write*", "*edit*", "*patch*", "*create*", "*delete*", "*remove*", "*update*", "*insert*",
    "*replace*", "*move*", "*rename*", "*install*", "*deploy*", "*restart*", "*apply*", "*commit*",
    "*set_*", "*put*", "*post*", "*kill*",
]  # fmt: skip
"""Tool-name patterns that change the world by default (edits, writes, deploys, restarts)."""

DEFAULT_STOP_TOOLS = [
    "done", "submit", "finish", "final_answer", "task_complete", "attempt_completion", "complete_task",
    "*_done", "mark_complete",
]  # fmt: skip
"""Tool names by which an agent declares it is finished."""

DEFAULT_ASK_TOOLS = ["ask_user", "ask_human", "askuserquestion", "clarify", "request_clarification", "ask_*"]
"""Tool names by which an agent asks the user a question."""


class RunConfig(BaseModel):
    """What the guards of one run agree on: which tools change state, which declare the run
    finished, which ask the user."""

    model_config = ConfigDict(extra="forbid")

    state_changing_tools: list[str] = Field(default_factory=lambda: list(DEFAULT_STATE_CHANGING))
    """Glob patterns (case-insensitive) of tools whose call changes the world."""
    read_only_tools: list[str] = Field(default_factory=list)
    """Patterns that are never state-changing, even when they match the list above."""
    stop_tools: list[str] = Field(default_factory=lambda: list(DEFAULT_STOP_TOOLS))
    """Patterns of tools that end the run with a success claim (``done``, ``submit``)."""
    ask_tools: list[str] = Field(default_factory=lambda: list(DEFAULT_ASK_TOOLS))
    """Patterns of tools that ask the user."""


class RunState:
    """Everything the guards know about the run so far.

    The :class:`~mastkit.guard.Guardian` fills it before the guards run on an event: the event
    is already in :attr:`events` (with its final seq), the counters include it, and a tool result
    is paired with its call (:meth:`call_of`). Guards keep their own per-run data in
    :meth:`slot`, so one guard object can serve many runs.
    """

    def __init__(
        self,
        config: RunConfig | None = None,
        *,
        task: str | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config or RunConfig()
        self.task = task
        """The task text, when known (the first user message sets it when not given)."""
        self.clock = clock
        self.started = clock()
        self.events: list[Event] = []
        """Every event of the run, guard events included, in seq order."""
        self.steps = 0
        """Agent steps: tool calls, agent messages and stop attempts (not results or user input)."""
        self.tool_calls = 0
        self.tokens = 0
        """Tokens used so far (per-event usage: total, else input + output)."""
        self.cost_usd = 0.0
        self.last_change_seq: int | None = None
        """Seq of the last allowed call of a state-changing tool."""
        self.stopped = False
        """True once a stop attempt was allowed (the run is over)."""
        self._calls: dict[str, Event] = {}
        self._open: list[Event] = []
        self._result_call: dict[int, Event] = {}
        self._slots: dict[str, Any] = {}
        self._is_changing = Globs(self.config.state_changing_tools)
        self._is_read_only = Globs(self.config.read_only_tools)
        self._is_stop_tool = Globs(self.config.stop_tools)
        self._is_ask_tool = Globs(self.config.ask_tools)

    # -- the clock ---------------------------------------------------------------------

    def elapsed(self) -> float:
        """Seconds since the run started, by the run's clock."""
        return self.clock() - self.started

    # -- per-guard data -------------------------------------------------------------------

    def slot(self, name: str, factory: Callable[[], _T]) -> _T:
        """The per-run data of guard ``name``, made by ``factory`` on first use."""
        value = self._slots.get(name)
        if value is None:
            value = self._slots[name] = factory()
        return value

    # -- classification of events ---------------------------------------------------------

    def is_state_changing(self, tool: str | None) -> bool:
        """True when a call of ``tool`` changes the world (by the run's patterns)."""
        return self._is_changing(tool) and not self._is_read_only(tool)

    def is_stop(self, event: Event) -> bool:
        """True for an attempt to end the run: a termination event by the agent, a final answer,
        or a call of a stop tool (``done``, ``submit``)."""
        if event.kind == "tool_call":
            return event.tool_call is not None and self._is_stop_tool(event.tool_call.name)
        if event.kind == "termination":
            return event.role != "user" and event.actor not in ("user", "harness")
        return event.kind == "message" and event.subtype in ("final_answer", "stop")

    def is_ask(self, event: Event) -> bool:
        """True when the agent asks the user: an ask tool, or an agent message with a question mark
        addressed to the user (or to nobody in particular)."""
        if event.kind == "tool_call":
            return event.tool_call is not None and self._is_ask_tool(event.tool_call.name)
        if event.kind == "message" and event.role not in ("user", "system", "tool") and event.content:
            to_user = not event.recipients or any(r.lower() in ("user", "human") for r in event.recipients)
            return to_user and "?" in event.content and event.subtype != "final_answer"
        return False

    def is_user_input(self, event: Event) -> bool:
        """True for a message from the user (an answer to a question, a new instruction)."""
        return event.kind == "message" and (event.role == "user" or (event.actor or "").lower() == "user")

    def is_agent_step(self, event: Event) -> bool:
        """True for an event the agent takes: a tool call, an agent message, a stop attempt."""
        if event.kind == "tool_call" or event.kind == "termination":
            return True
        return event.kind == "message" and event.role not in ("user", "system", "tool")

    def call_of(self, result: Event) -> Event | None:
        """The tool call a result answers (by call id, else the oldest call still open)."""
        return self._result_call.get(result.seq)

    def call_by_id(self, call_id: str) -> Event | None:
        """The tool call with this id, when seen."""
        return self._calls.get(call_id)

    # -- bookkeeping, done by the Guardian --------------------------------------------------

    def _observe(self, event: Event) -> None:
        """Count the event and pair a result with its call (before the guards run)."""
        self.events.append(event)
        if event.usage is not None:
            u = event.usage
            total = (
                u.total_tokens
                if u.total_tokens is not None
                else (u.input_tokens or 0) + (u.output_tokens or 0)
            )
            self.tokens += total
            if u.cost_usd:
                self.cost_usd += u.cost_usd
        if event.kind == "tool_call" and event.tool_call is not None:
            self.steps += 1
            self.tool_calls += 1
            if event.tool_call.call_id:
                self._calls[event.tool_call.call_id] = event
            self._open.append(event)
        elif event.kind == "tool_result" and event.tool_result is not None:
            call = None
            cid = event.tool_result.call_id
            if cid:
                call = self._calls.get(cid)
                if call is not None:
                    _drop(self._open, call)
            elif self._open:
                call = self._open.pop(0)
            if call is not None:
                self._result_call[event.seq] = call
        elif event.kind == "message" and self.is_user_input(event):
            if self.task is None and event.content:
                self.task = event.content
        elif self.is_agent_step(event):
            self.steps += 1

    def _after(self, event: Event, allowed: bool) -> None:
        """Note what an allowed step changed (after the guards decided)."""
        if not allowed:
            if event.kind == "tool_call":
                _drop(self._open, event)  # a refused call is not run: no result will come
            return
        if (
            event.kind == "tool_call"
            and event.tool_call is not None
            and self.is_state_changing(event.tool_call.name)
        ):
            self.last_change_seq = event.seq
        if self.is_stop(event):
            self.stopped = True


def _drop(events: list[Event], event: Event) -> None:
    """Remove ``event`` from ``events`` by identity (equal events may be different calls)."""
    for i, e in enumerate(events):
        if e is event:
            del events[i]
            return
