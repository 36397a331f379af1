"""One runner for every feature that does some work per trace (annotate, attribute, and the
verifier, feedback and taxonomy learning still to come).

:func:`run_per_trace` takes traces and an async ``work(trace)`` and owns everything around it:

* **content hashing and resume** — each trace's :meth:`~mastkit.traces.model.Trace.content_hash`
  and the caller's ``key`` (the configuration or method hash) look the result up in a
  :class:`RunStore`; a stored result is reused (``cached``) and costs nothing, so a run that
  was stopped or killed simply goes on where it was.
* **bounded concurrency** — at most ``concurrency`` traces in flight on one event loop.
* **failures are failures** — an exception from ``work`` (a provider error, a reply that
  could not be used even after the repair retry, a bug) marks that trace ``failed``: the
  reason is logged in the store with the trace id and path, nothing is stored as its result
  (so the next run tries it again), and the other traces go on.
* **budget stop** — :class:`~mastkit.providers.BudgetExceeded` stops new work; traces not
  started are ``not_done`` (those already stored are still answered from the store).
* **circuit breaker** — errors that no trace can get past do not cost one prompt per trace:
  a rejected key (401/403) or an unknown model (404) stops the run at once; an unreachable
  server stops it after ``unreachable_after`` traces in a row failed to connect, and so does an
  outage: that many traces in a row answered 502/503/504 through every retry. Work in flight
  is cancelled; the remaining traces are ``not_done`` (not ``failed``), with one message saying
  what to fix (logged once in the store).
* **a broken store stops the run** — when the store cannot keep a result or a failure (a
  :class:`~mastkit.errors.StoreError`: read-only file, full disk, a lock held past the busy
  timeout), nothing more is started, work in flight is cancelled, and the error is raised once
  the run has wound down: every result committed before it stays, and the next run resumes.
* **progress** — counters with the total (when known), rate and ETA after every trace.
* **duplicate trace ids** — results are keyed by content hash, so two different traces that
  share an id are both worked on and both reported; the very same trace twice in one input is
  worked on once (the repeat is a ``duplicate``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, Protocol, TypeVar

from mastkit.errors import StoreError
from mastkit.providers.errors import (
    BudgetExceeded,
    ProviderAuthError,
    ProviderError,
    ProviderRequestError,
    ProviderUnavailableError,
)
from mastkit.providers.sync import run_sync
from mastkit.traces.model import Trace

__all__ = [
    "UNREACHABLE_AFTER",
    "RunProgress",
    "RunResult",
    "RunStore",
    "Status",
    "Stop",
    "StopKind",
    "TraceOutcome",
    "breaker_kind",
    "error_entries",
    "run_per_trace",
    "run_per_trace_sync",
]

R = TypeVar("R")

Status = Literal["done", "cached", "failed", "not_done", "duplicate"]
"""What became of one trace: worked on now, answered from the store, failed (logged, retried on
the next run), not started because the run stopped, or a repeat of a trace seen earlier."""

StopKind = Literal["budget", "auth", "not_found", "unreachable", "unavailable"]

UNREACHABLE_AFTER = 3
"""Traces in a row that failed to reach the server (or found it unavailable) before the run stops."""

OUTAGE_STATUSES = frozenset({502, 503, 504})
"""HTTP statuses that, still there after every retry, mean the service is down (not this trace)."""


class RunStore(Protocol[R]):
    """Where a runner finds and keeps results (adapters over :class:`mastkit.store.Store`)."""

    def get_result(self, trace: Trace, t_hash: str, key: str) -> R | None:
        """The stored result of this trace content under ``key`` (and note the trace), or None."""
        ...

    def put_result(self, trace: Trace, t_hash: str, key: str, result: R) -> None:
        """Keep a finished result."""
        ...

    def log_failure(
        self, key: str, reason: str, *, trace_id: str | None, path: str | None, trace_hash: str | None = None
    ) -> None:
        """Record why a trace failed (``trace_id`` None: the whole run, e.g. a breaker stop)."""
        ...


@dataclass
class TraceOutcome(Generic[R]):
    """One trace's fate in a run."""

    trace_id: str
    trace_hash: str
    status: Status
    result: R | None = None
    reason: str | None = None
    """Why it failed or was not done."""
    path: str | None = None
    """The file the trace came from, when known."""
    index: int = 0
    """Position in the input."""


@dataclass(frozen=True)
class Stop:
    """Why a run stopped starting new work."""

    kind: StopKind
    message: str
    trace_id: str | None = None
    """The trace whose work raised the stopping error."""


@dataclass
class RunProgress:
    """Live counters of a run, passed to ``on_progress`` after each trace."""

    total: int | None = None
    """Traces expected, when the caller knows; None: unknown (no ETA)."""
    done: int = 0
    cached: int = 0
    failed: int = 0
    not_done: int = 0
    duplicates: int = 0
    started: float = field(default_factory=time.monotonic)

    @property
    def finished(self) -> int:
        """Traces dealt with so far, whatever the outcome."""
        return self.done + self.cached + self.failed + self.not_done + self.duplicates

    @property
    def elapsed_s(self) -> float:
        return time.monotonic() - self.started

    @property
    def rate(self) -> float | None:
        """Traces dealt with per second so far (None before the first)."""
        elapsed = self.elapsed_s
        return self.finished / elapsed if self.finished and elapsed > 0 else None

    @property
    def eta_s(self) -> float | None:
        """Seconds left at the current rate, when the total is known."""
        rate = self.rate
        if self.total is None or rate is None:
            return None
        return max(0, self.total - self.finished) / rate


@dataclass
class RunResult(Generic[R]):
    """What a run did, trace by trace (results keyed by content hash, not trace id)."""

    key: str
    progress: RunProgress
    outcomes: list[TraceOutcome[R]]
    """In input order. With ``keep=False`` done and cached outcomes are left out (failed, not done
    and duplicate ones are always kept)."""
    stop: Stop | None = None

    @property
    def results(self) -> dict[str, R]:
        """Trace content hash -> result, for the done and cached traces kept."""
        return {o.trace_hash: o.result for o in self.outcomes if o.result is not None}

    @property
    def failed(self) -> list[TraceOutcome[R]]:
        return [o for o in self.outcomes if o.status == "failed"]

    @property
    def not_done(self) -> list[TraceOutcome[R]]:
        return [o for o in self.outcomes if o.status == "not_done"]

    @property
    def complete(self) -> bool:
        """Every trace was worked on or answered from the store (and there was at least one)."""
        p = self.progress
        return p.failed == 0 and p.not_done == 0 and p.done + p.cached > 0


def breaker_kind(exc: BaseException) -> StopKind | None:
    """Which breaker an error trips: ``auth`` (401/403, no key), ``not_found`` (404: unknown model
    or wrong URL), ``unreachable`` (the connection failed on every attempt), ``unavailable`` (502,
    503 or 504 on every attempt: an outage), else None."""
    if isinstance(exc, ProviderAuthError):
        return "auth"
    if isinstance(exc, ProviderRequestError) and (exc.status == 404 or exc.kind == "not_found"):
        return "not_found"
    if isinstance(exc, ProviderUnavailableError) and exc.kind == "connection":
        return "unreachable"
    if isinstance(exc, ProviderUnavailableError) and exc.status in OUTAGE_STATUSES:
        return "unavailable"
    return None


def _stop_message(kind: StopKind, exc: BaseException, streak: int) -> str:
    if kind == "budget":
        return f"budget reached: {exc}"
    where = ""
    if isinstance(exc, ProviderError) and exc.provider:
        where = f"{exc.provider}:{exc.model}" if exc.model else exc.provider
    if kind == "auth":
        status = exc.status if isinstance(exc, ProviderError) else None
        code = f" ({status})" if status is not None else ""
        return f"the provider rejected the API key{code}: check the key and the base URL. {exc}"
    if kind == "not_found":
        model = exc.model if isinstance(exc, ProviderError) and exc.model else where or "?"
        return f"model {model} not found (404): check the model name and the base URL. {exc}"
    if kind == "unavailable":
        status = exc.status if isinstance(exc, ProviderError) else None
        return (
            f"{where or 'the provider'} is unavailable (HTTP {status} on {streak} traces in a row, after "
            f"retries): try again later. {exc}"
        )
    return f"cannot reach {where or 'the provider'} ({streak} traces in a row): is the server running? {exc}"


def error_entries(outcomes: Iterable[TraceOutcome[Any]], stop: Stop | None) -> list[dict[str, Any]]:
    """The ``errors`` list of a report: failed traces, then the stop (when there was one)."""
    errors: list[dict[str, Any]] = [
        {"trace_id": o.trace_id, "trace_hash": o.trace_hash, "path": o.path, "reason": o.reason}
        for o in outcomes
        if o.status == "failed"
    ]
    if stop is not None:
        errors.append(
            {
                "trace_id": stop.trace_id,
                "reason": stop.message,
                "stop": stop.kind,
                "budget": stop.kind == "budget",
            }
        )
    return errors


def _reason(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


class _StoreDown(Exception):
    """Internal: the run's store failed; the first such error is raised when the run ends."""


async def run_per_trace(
    traces: Iterable[Trace],
    work: Callable[[Trace], Awaitable[R]],
    *,
    key: str,
    store: RunStore[R] | None = None,
    concurrency: int = 8,
    on_progress: Callable[[RunProgress], None] | None = None,
    on_outcome: Callable[[TraceOutcome[R]], None] | None = None,
    keep: bool = True,
    total: int | None = None,
    progress: RunProgress | None = None,
    unreachable_after: int = UNREACHABLE_AFTER,
) -> RunResult[R]:
    """Run ``work`` on every trace; see the module docstring for what the runner takes care of.

    Args:
        traces: any iterable, consumed lazily (a trace is loaded only when a slot is free).
        work: the feature's work on one trace; whatever it raises fails that trace only
            (except the budget and breaker errors, which stop the run).
        key: the configuration or method hash results are stored under.
        store: where results are looked up, kept and failures logged; None: nothing is stored.
        concurrency: traces in flight at once.
        on_progress: called with the counters after each trace.
        on_outcome: called with each trace's outcome (before ``on_progress``): adapters use it to
            add up their own counters (tokens, cost).
        keep: keep done and cached results in the returned outcomes (False for huge runs).
        total: traces expected, for the ETA (None: unknown).
        progress: counters to update (a subclass with more fields); a new one by default.
        unreachable_after: traces in a row failing to connect (or meeting an outage) before the
            run stops.
    """
    prog = progress if progress is not None else RunProgress()
    if total is not None:
        prog.total = total
    outcomes: list[TraceOutcome[R]] = []
    seen: set[str] = set()
    stop: Stop | None = None
    unreachable_streak = 0

    def finish(outcome: TraceOutcome[R]) -> None:
        if outcome.status == "done":
            prog.done += 1
        elif outcome.status == "cached":
            prog.cached += 1
        elif outcome.status == "failed":
            prog.failed += 1
        elif outcome.status == "not_done":
            prog.not_done += 1
        else:
            prog.duplicates += 1
        if on_outcome is not None:
            on_outcome(outcome)
        if keep or outcome.status not in ("done", "cached"):
            if not keep:
                outcome.result = None
            outcomes.append(outcome)
        if on_progress is not None:
            on_progress(prog)

    running: set[asyncio.Future[R]] = set()
    halted: set[asyncio.Future[R]] = set()
    store_error: BaseException | None = None

    def store_down(exc: BaseException) -> _StoreDown:
        """Note the store's failure (the first one is raised at the end) and cancel the work in
        flight: its results could not be kept."""
        nonlocal store_error
        if store_error is None:
            store_error = exc
            for job in list(running):
                halted.add(job)
                job.cancel()
        return _StoreDown()

    def halt(why: Stop) -> None:
        """Stop starting new work; a breaker also cancels the work in flight (it is doomed)."""
        nonlocal stop
        stop = why
        if why.kind == "budget":
            return  # calls in flight are paid for: let them finish
        for job in list(running):
            halted.add(job)
            job.cancel()
        if store is not None:
            try:
                store.log_failure(key, why.message, trace_id=None, path=None)
            except Exception as exc:
                raise store_down(exc) from None

    async def attempt(trace: Trace, t_hash: str, path: str | None) -> tuple[Status, R | None, str | None]:
        try:
            return await attempt_stored(trace, t_hash, path)
        except _StoreDown:
            return "not_done", None, f"the store failed: {store_error}"

    def log_failure(reason: str, trace: Trace, path: str | None, t_hash: str) -> None:
        if store is None:
            return
        try:
            store.log_failure(key, reason, trace_id=trace.trace_id, path=path, trace_hash=t_hash)
        except Exception as exc:
            raise store_down(exc) from None

    async def attempt_stored(
        trace: Trace, t_hash: str, path: str | None
    ) -> tuple[Status, R | None, str | None]:
        nonlocal unreachable_streak
        job: asyncio.Future[R] | None = None
        try:
            if t_hash in seen:
                return "duplicate", None, "the same trace appears earlier in this run"
            seen.add(t_hash)
            if store is not None:
                try:
                    hit = store.get_result(trace, t_hash, key)
                except Exception as exc:
                    raise store_down(exc) from None
                if hit is not None:
                    return "cached", hit, None
            if store_error is not None:
                raise _StoreDown()
            if stop is not None:
                return "not_done", None, stop.message
            job = asyncio.ensure_future(work(trace))
            running.add(job)
            try:
                result = await job
            finally:
                running.discard(job)
            if store is not None:
                try:
                    store.put_result(trace, t_hash, key, result)
                except Exception as exc:
                    raise store_down(exc) from None
        except _StoreDown:
            raise
        except asyncio.CancelledError:
            if job not in halted:
                raise  # the run itself was cancelled
            if store_error is not None:
                raise _StoreDown() from None
            return "not_done", None, stop.message if stop is not None else None  # cancelled by the breaker
        except BudgetExceeded as exc:
            if stop is None:
                halt(Stop("budget", _stop_message("budget", exc, 0), trace.trace_id))
            return "not_done", None, f"budget reached: {exc}"
        except StoreError as exc:
            # raised inside the work (the judge's response cache or call log): the store is broken
            raise store_down(exc) from None
        except Exception as exc:
            kind = breaker_kind(exc)
            if kind is not None and stop is not None:
                # in flight when the run stopped, and failing for the same kind of reason
                return "not_done", None, stop.message
            if kind in ("auth", "not_found"):
                message = _stop_message(kind, exc, 0)
                halt(Stop(kind, message, trace.trace_id))
                return "not_done", None, message
            reason = _reason(exc)
            log_failure(reason, trace, path, t_hash)
            if kind != "unreachable" and kind != "unavailable":
                unreachable_streak = 0
                return "failed", None, reason
            unreachable_streak += 1
            if unreachable_streak >= max(1, unreachable_after) and stop is None:
                halt(Stop(kind, _stop_message(kind, exc, unreachable_streak), trace.trace_id))
            return "failed", None, reason
        unreachable_streak = 0
        return "done", result, None

    async def one(index: int, trace: Trace) -> None:
        path = trace.source_paths[0] if trace.source_paths else None
        t_hash = trace.content_hash()
        status, result, reason = await attempt(trace, t_hash, path)
        finish(TraceOutcome(trace.trace_id, t_hash, status, result, reason, path, index))

    slots = asyncio.Semaphore(max(1, concurrency))
    tasks: set[asyncio.Task[None]] = set()

    def release(task: asyncio.Task[None]) -> None:
        tasks.discard(task)
        slots.release()

    try:
        for index, trace in enumerate(traces):
            # after a stop every trace still goes to one(): stored ones are answered from the
            # store, only the others are listed as not done
            await slots.acquire()
            if store_error is not None:
                slots.release()
                break  # nothing more can be kept: stop reading traces
            task = asyncio.create_task(one(index, trace))
            tasks.add(task)
            task.add_done_callback(release)
            await asyncio.sleep(0)
    finally:
        if tasks:
            await asyncio.gather(*tasks)
    if store_error is not None:
        raise store_error
    outcomes.sort(key=lambda o: o.index)
    return RunResult(key=key, progress=prog, outcomes=outcomes, stop=stop)


def run_per_trace_sync(
    traces: Iterable[Trace],
    work: Callable[[Trace], Awaitable[R]],
    *,
    key: str,
    aclose: Callable[[], Awaitable[None]] | None = None,
    store: RunStore[R] | None = None,
    concurrency: int = 8,
    on_progress: Callable[[RunProgress], None] | None = None,
    on_outcome: Callable[[TraceOutcome[R]], None] | None = None,
    keep: bool = True,
    total: int | None = None,
    progress: RunProgress | None = None,
    unreachable_after: int = UNREACHABLE_AFTER,
) -> RunResult[R]:
    """:func:`run_per_trace` from synchronous code, on one event loop.

    ``aclose`` (e.g. the provider's ``aclose``) is awaited at the end on that same loop: an
    HTTP client's connections belong to the loop that opened them, which ends here.
    """

    async def go() -> RunResult[R]:
        try:
            return await run_per_trace(
                traces,
                work,
                key=key,
                store=store,
                concurrency=concurrency,
                on_progress=on_progress,
                on_outcome=on_outcome,
                keep=keep,
                total=total,
                progress=progress,
                unreachable_after=unreachable_after,
            )
        finally:
            if aclose is not None:
                await aclose()

    return run_sync(go())
