"""The :class:`Guardian`: runs every guard on each event of one run, combines their decisions,
records the run (guard decisions included) as a canonical trace. It never raises into the host
from a check: an internal error becomes an allow and a logged warning."""

from __future__ import annotations

import contextlib
import logging
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mastkit.guard.base import Guard
from mastkit.guard.decision import ALLOW, Decision, combine
from mastkit.guard.state import RunConfig, RunState
from mastkit.traces.model import Event, Termination, ToolCall, ToolResult, Trace, Usage

if TYPE_CHECKING:
    from mastkit.guard.spec import GuardSpec

log = logging.getLogger("mastkit.guard")

GUARD_SUBTYPE = "guard"
"""``Event.subtype`` of the system events that record guard decisions."""
SOURCE_FORMAT = "mastkit_guard"
"""``Trace.source_format`` of a run recorded by a Guardian."""


class Guardian:
    """Holds one run's state and checks each of its events against every guard.

    Feed it every event of the run, in order (:meth:`check`, or the shortcuts
    :meth:`check_tool_call`, :meth:`record_tool_result`, :meth:`check_message`,
    :meth:`record_user`, :meth:`check_stop`). Each returns the combined :class:`Decision`: the
    most severe wins, every non-allow decision is in ``parts``, and each of those is also
    appended to the run as a ``system`` event with subtype ``guard`` (details in
    ``extra["guard"]``). The host enforces it: on ``stops`` it does not run the step and shows
    the agent ``message``; on ``warn`` it runs the step and shows the message.
    """

    def __init__(
        self,
        guards: Sequence[Guard],
        *,
        config: RunConfig | None = None,
        task: str | None = None,
        trace_id: str | None = None,
        clock: Callable[[], float] = time.monotonic,
        stamp_times: bool = True,
        actor: str | None = None,
    ) -> None:
        self.guards = list(guards)
        self.config = config or RunConfig()
        self.trace_id = trace_id or f"guarded-{uuid.uuid4().hex[:16]}"
        self.actor = actor
        """Default actor of the events the shortcuts build (the agent's name)."""
        self.stamp_times = stamp_times
        self._clock = clock
        self.state = RunState(self.config, task=task, clock=clock)
        self.decisions: list[Decision] = []
        """Every non-allow combined decision of the run, in order."""
        self.started_at = datetime.now(UTC)
        self._calls = 0

    # -- construction ------------------------------------------------------------------

    @classmethod
    def default(cls, **kwargs: Any) -> Guardian:
        """The guards that hold with no spec: the loop guard (warn at the 3rd identical call, block
        the 5th with an unchanged result) and budgets that only warn (200 steps, 1 hour)."""
        from mastkit.guard.spec import GuardSpec

        return cls.from_spec(GuardSpec(), **kwargs)

    @classmethod
    def from_spec(cls, spec: GuardSpec | dict[str, Any] | str | Path, **kwargs: Any) -> Guardian:
        """A Guardian for a spec: a :class:`GuardSpec`, its dict form, or a path to ``guards.yaml``.

        Raises :class:`~mastkit.guard.spec.GuardSpecError` for an invalid spec (this is set-up,
        not a check, so it does raise)."""
        from mastkit.guard.spec import GuardSpec, load_spec

        if isinstance(spec, (str, Path)):
            spec = load_spec(spec)
        elif isinstance(spec, dict):
            spec = GuardSpec.from_dict(spec)
        return cls(spec.build_guards(), config=spec.run, **kwargs)

    def new_run(self, **kwargs: Any) -> Guardian:
        """A Guardian with the same guards and settings and a fresh run state."""
        kwargs.setdefault("config", self.config)
        kwargs.setdefault("clock", self._clock)
        kwargs.setdefault("stamp_times", self.stamp_times)
        kwargs.setdefault("actor", self.actor)
        return Guardian(self.guards, **kwargs)

    # -- checking -----------------------------------------------------------------------

    def check(self, event: Event) -> Decision:
        """Record ``event`` (its seq is set to its place in the run) and return the guards' decision."""
        return self._check(event, emit=True)

    def replay(self, events: Iterable[Event]) -> None:
        """Feed earlier events of the run (from a transcript, a previous process) so the guards
        catch up, without emitting decisions for them."""
        for event in events:
            self._check(event, emit=False)

    def _check(self, event: Event, *, emit: bool) -> Decision:
        state = self.state
        try:
            n = len(state.events)
            changes: dict[str, Any] = {}
            if event.seq != n:
                changes["seq"] = n
            if self.stamp_times and event.started_at is None:
                changes["started_at"] = datetime.now(UTC)
            if changes:
                event = event.replace(**changes)  # the host's event object is left as it was
            state._observe(event)
        except Exception:
            log.warning("mastkit.guard: could not record event; allowing it", exc_info=True)
            return ALLOW
        found: list[Decision] = []
        for guard in self.guards:
            try:
                d = guard.check(event, state)
            except Exception:
                log.warning("mastkit.guard: guard %r failed; treating as allow", _name(guard), exc_info=True)
                continue
            if d.action != "allow":
                found.append(d)
        decision = combine(found) if found else ALLOW
        try:
            state._after(event, decision.allowed)
            if emit and found:
                self.decisions.append(decision)
                for part in decision.parts:
                    self._emit(part, event)
        except Exception:
            log.warning("mastkit.guard: could not record the decision", exc_info=True)
        return decision

    def _emit(self, d: Decision, about: Event) -> None:
        info = d.to_dict()
        info["checked_seq"] = about.seq
        event = Event(
            seq=len(self.state.events), kind="system", role="system", subtype=GUARD_SUBTYPE,
            content=d.message, extra={"guard": info},
            started_at=datetime.now(UTC) if self.stamp_times else None,
        )  # fmt: skip
        self.state.events.append(event)

    # -- shortcuts for agent loops ---------------------------------------------------------

    def check_tool_call(
        self,
        name: str,
        arguments: Any = None,
        *,
        call_id: str | None = None,
        actor: str | None = None,
        usage: Usage | None = None,
    ) -> Decision:
        """Check a tool call the agent wants to make, before running it."""
        try:
            if call_id is None:
                self._calls += 1
                call_id = f"guard-call-{self._calls}"
            event = Event(
                seq=len(self.state.events), kind="tool_call", role="assistant", actor=actor or self.actor,
                tool_call=ToolCall(name=name, call_id=call_id, arguments=arguments), usage=usage,
            )  # fmt: skip
        except Exception:
            log.warning("mastkit.guard: bad tool call; allowing it", exc_info=True)
            return ALLOW
        return self.check(event)

    def record_tool_result(
        self,
        output: str | None = None,
        *,
        call_id: str | None = None,
        name: str | None = None,
        is_error: bool | None = None,
        exit_code: int | None = None,
    ) -> Decision:
        """Record the result of a call that ran (paired by ``call_id``, else with the oldest open call)."""
        try:
            if call_id is None and self.state._open:
                open_call = self.state._open[0].tool_call
                call_id = open_call.call_id if open_call is not None else None
            event = Event(
                seq=len(self.state.events), kind="tool_result", role="tool",
                tool_result=ToolResult(call_id=call_id, name=name, output=output, is_error=is_error,
                                       exit_code=exit_code),
            )  # fmt: skip
        except Exception:
            log.warning("mastkit.guard: bad tool result; ignoring it", exc_info=True)
            return ALLOW
        return self.check(event)

    def check_message(
        self, text: str, *, role: str = "assistant", actor: str | None = None, usage: Usage | None = None
    ) -> Decision:
        """Check a message the agent writes (not its final answer: see :meth:`check_stop`)."""
        return self._message(text, role=role, actor=actor or self.actor, usage=usage)

    def record_user(self, text: str) -> Decision:
        """Record a message from the user (the task, an answer to a question)."""
        return self._message(text, role="user", actor="user")

    def check_stop(self, final_text: str | None = None, *, actor: str | None = None) -> Decision:
        """Check the agent's attempt to end the run (a final answer, a Stop)."""
        return self._message(
            final_text or "", role="assistant", actor=actor or self.actor, subtype="final_answer"
        )

    def _message(
        self,
        text: str,
        *,
        role: str,
        actor: str | None,
        usage: Usage | None = None,
        subtype: str | None = None,
    ) -> Decision:
        try:
            event = Event.validate(
                {"seq": len(self.state.events), "kind": "message", "role": role, "actor": actor,
                 "content": text, "usage": usage, "subtype": subtype}
            )  # fmt: skip
        except Exception:
            log.warning("mastkit.guard: bad message; allowing it", exc_info=True)
            return ALLOW
        return self.check(event)

    # -- the recorded run ---------------------------------------------------------------------

    @property
    def events(self) -> list[Event]:
        """Every event of the run so far, guard events included."""
        return self.state.events

    def guard_events(self) -> list[Event]:
        """The events that record guard decisions."""
        return [e for e in self.state.events if e.subtype == GUARD_SUBTYPE and e.kind == "system"]

    def trace(self, **fields: Any) -> Trace:
        """The run as a canonical :class:`Trace` (``source_format="mastkit_guard"``); ``fields``
        set or override trace fields (``framework``, ``model``, ``labels``, ...)."""
        state = self.state
        termination = None
        if state.stopped:
            last = next((e for e in reversed(state.events) if state.is_stop(e)), None)
            termination = Termination(reason="final_answer", by="agent", at_seq=last.seq if last else None)
        data: dict[str, Any] = {
            "trace_id": self.trace_id,
            "source_format": SOURCE_FORMAT,
            "framework": "mastkit.guard",
            "task": state.task,
            "events": list(state.events),
            "started_at": self.started_at if self.stamp_times else None,
            "ended_at": datetime.now(UTC) if self.stamp_times else None,
            "termination": termination,
            "extra": {"guard": {"guards": [_name(g) for g in self.guards], "decisions": len(self.decisions)}},
        }
        data.update(fields)
        return Trace.model_validate(data)

    def save(self, path: str | Path, *, append: bool = False, **fields: Any) -> Path:
        """Write the run as one canonical JSONL line (``mastkit.load_traces`` reads it back)."""
        path = Path(path)
        line = self.trace(**fields).model_dump_json().encode() + b"\n"
        with path.open("ab" if append else "wb") as fh:
            fh.write(line)
        return path


def _name(guard: object) -> str:
    return str(getattr(guard, "name", type(guard).__name__))


@contextlib.contextmanager
def guarded_run(
    guardian: Guardian | None = None,
    *,
    spec: GuardSpec | dict[str, Any] | str | Path | None = None,
    save_to: str | Path | None = None,
    task: str | None = None,
    trace_id: str | None = None,
    **trace_fields: Any,
) -> Iterator[Guardian]:
    """A guarded run: yields a fresh :class:`Guardian` (from ``guardian``'s guards, a ``spec``, or
    the defaults) and, when the block ends, writes the run to ``save_to`` as canonical JSONL.

    An exception in the block is recorded as an ``error`` event (and the run's termination) and
    then goes on up; a failure to save is logged, never raised.
    """
    kwargs: dict[str, Any] = {"task": task}
    if trace_id is not None:
        kwargs["trace_id"] = trace_id
    if guardian is not None:
        g = guardian.new_run(**kwargs)
    elif spec is not None:
        g = Guardian.from_spec(spec, **kwargs)
    else:
        g = Guardian.default(**kwargs)
    if task is not None:
        g.record_user(task)
    try:
        yield g
    except BaseException as exc:
        with contextlib.suppress(Exception):
            g.state.events.append(
                Event(
                    seq=len(g.state.events),
                    kind="error",
                    role="system",
                    content=f"{type(exc).__name__}: {exc}",
                )
            )
            trace_fields.setdefault("termination", Termination(reason="error", by="error"))
        raise
    finally:
        if save_to is not None:
            try:
                g.save(save_to, **trace_fields)
            except Exception:
                log.warning("mastkit.guard: could not save the guarded run to %s", save_to, exc_info=True)
