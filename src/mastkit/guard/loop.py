"""Loop guard (FM-1.3 step repetition): the same call again and again with nothing changing.

A call is identified by its tool name and normalised arguments (:func:`normalize_args`). Its
*streak* counts the times it was made since the last state change, where a state change is a
different result from the same call, or an allowed call of a state-changing tool in between
(both configurable). At ``warn_at`` the agent is warned; at ``block_at`` the call is blocked.

Cycles (A-B-A-B, A-B-C-A-B-C) are found over the recent calls: the last calls repeat a pattern
of 2..``max_period`` calls, each with the same result as the time before.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field, model_validator

from mastkit.guard.decision import ALLOW, Decision
from mastkit.guard.normalize import fingerprint, normalize_args
from mastkit.guard.state import RunState
from mastkit.traces.model import Event


class LoopConfig(BaseModel):
    """Settings of the loop guard."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    warn_at: int = Field(3, ge=1)
    """Warn when the same call is made this many times without a state change."""
    block_at: int = Field(5, ge=2)
    """Block the call that would be the Nth identical one without a state change."""
    result_change_resets: bool = True
    """A result different from the previous one of the same call starts the count again."""
    state_change_resets: bool = True
    """An allowed call of a state-changing tool in between starts the count again."""
    cycles: bool = True
    """Also look for cycles of 2..max_period different calls."""
    max_period: int = Field(3, ge=2, le=8)
    cycle_warn_repeats: int = Field(3, ge=2)
    """Warn when a cycle has repeated this many times with unchanged results."""
    cycle_block_repeats: int = Field(4, ge=2)
    """Block the call that completes this many repeats of a cycle."""
    mode: str = "FM-1.3"

    @model_validator(mode="after")
    def _order(self) -> LoopConfig:
        if self.warn_at > self.block_at:
            raise ValueError(f"warn_at ({self.warn_at}) must not be above block_at ({self.block_at})")
        if self.cycle_warn_repeats > self.cycle_block_repeats:
            raise ValueError("cycle_warn_repeats must not be above cycle_block_repeats")
        return self


@dataclass(slots=True)
class _Streak:
    count: int = 0
    last_seq: int = -1
    seqs: list[int] = field(default_factory=list)
    last_fp: str | None = None


@dataclass(slots=True)
class _LoopRun:
    streaks: dict[str, _Streak] = field(default_factory=dict)
    key_of: dict[int, str] = field(default_factory=dict)
    """Call seq → key."""
    recent: list[int] = field(default_factory=list)
    """Seqs of the recent calls, oldest first."""
    fp_of: dict[int, str] = field(default_factory=dict)
    """Call seq → fingerprint of its result."""


class LoopGuard:
    """Warns, then blocks, a call repeated with nothing changing; also A-B-A-B cycles."""

    name = "loop"

    def __init__(self, config: LoopConfig | None = None, **settings: object) -> None:
        self.config = config or LoopConfig.model_validate(settings)
        self._window = self.config.max_period * self.config.cycle_block_repeats + 1

    def check(self, event: Event, state: RunState) -> Decision:
        if event.kind == "tool_call" and event.tool_call is not None:
            return self._on_call(event, state)
        if event.kind == "tool_result" and event.tool_result is not None:
            self._on_result(event, state)
        return ALLOW

    def _on_result(self, event: Event, state: RunState) -> None:
        call = state.call_of(event)
        run = state.slot(self.name, _LoopRun)
        if call is None or call.seq not in run.key_of:
            return
        r = event.tool_result
        assert r is not None
        fp = fingerprint(r.output) + ("!" if r.is_error else "") + (str(r.exit_code) if r.exit_code else "")
        run.fp_of[call.seq] = fp
        streak = run.streaks.get(run.key_of[call.seq])
        if streak is None:
            return
        if streak.last_fp is not None and fp != streak.last_fp and self.config.result_change_resets:
            streak.count = 1
            streak.seqs = [call.seq]
        streak.last_fp = fp

    def _on_call(self, event: Event, state: RunState) -> Decision:
        cfg = self.config
        call = event.tool_call
        assert call is not None
        run = state.slot(self.name, _LoopRun)
        key = call.name + "\x00" + normalize_args(call.arguments, call.arguments_raw)
        run.key_of[event.seq] = key
        streak = run.streaks.get(key)
        changed = (
            streak is not None
            and cfg.state_change_resets
            and state.last_change_seq is not None
            and state.last_change_seq > streak.last_seq
        )
        if streak is None or changed:
            streak = run.streaks[key] = _Streak()
        streak.count += 1
        streak.last_seq = event.seq
        streak.seqs.append(event.seq)
        del streak.seqs[: -cfg.block_at]
        run.recent.append(event.seq)
        if len(run.recent) > self._window:
            old = run.recent.pop(0)
            run.fp_of.pop(old, None)
        if streak.count >= cfg.warn_at:
            blocked = streak.count >= cfg.block_at
            what = (
                f"{call.name} has been called {streak.count} times with the same arguments and the same "
                "result, with no change in between"
            )
            if blocked:
                message = f"Blocked: {what}. Repeating it will not help; change approach or stop and report."
            else:
                message = f"Warning: {what}. It is looping; try something different."
            return Decision(
                "block" if blocked else "warn", message, cfg.mode, self.name, tuple(streak.seqs),
                f"{call.name} x{streak.count}, result unchanged",
            )  # fmt: skip
        if cfg.cycles:
            return self._cycle(run, event)
        return ALLOW

    def _cycle(self, run: _LoopRun, event: Event) -> Decision:
        cfg = self.config
        seqs = run.recent
        keys = [run.key_of[s] for s in seqs]
        n = len(keys)
        for p in range(2, cfg.max_period + 1):
            if n < p * cfg.cycle_warn_repeats or len(set(keys[-p:])) == 1:
                continue
            matched = 0
            for i in range(1, n - p + 1):
                a, b = seqs[-i], seqs[-i - p]
                if keys[-i] != keys[-i - p]:
                    break
                fa, fb = run.fp_of.get(a), run.fp_of.get(b)
                if fa is not None and fb is not None and fa != fb:
                    break
                matched += 1
            repeats = (matched + p) // p
            if repeats >= cfg.cycle_warn_repeats:
                blocked = repeats >= cfg.cycle_block_repeats
                names = " -> ".join(k.split("\x00", 1)[0] for k in keys[-p:])
                what = f"the cycle {names} has repeated {repeats} times with the same results"
                message = (
                    f"Blocked: {what}. Going round again will not help; change approach or stop and report."
                    if blocked
                    else f"Warning: {what}. It is looping; try something different."
                )
                return Decision(
                    "block" if blocked else "warn", message, cfg.mode, self.name,
                    tuple(seqs[-p * repeats :]), f"cycle of {p} calls x{repeats}",
                )  # fmt: skip
        return ALLOW
