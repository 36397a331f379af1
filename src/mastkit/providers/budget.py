"""Spending cap (:class:`Budget`) and bounded concurrency (:class:`Limiter`).

A budget is checked *before* each call: the caller reserves the call's estimated cost,
makes the call, then settles the reservation with the actual cost. A reservation that
would take ``spent + reserved + estimate`` past the cap raises :class:`BudgetExceeded`
and nothing is sent, so a run stops cleanly and can report what is left undone::

    budget = Budget(max_usd=2.0)
    r = budget.reserve(provider.estimate_cost(prompt_tokens, max_output_tokens))
    try:
        resp = await provider.complete(req)
    except Exception:
        budget.settle(r, 0.0)
        raise
    budget.settle(r, resp.cost_usd, input_tokens=resp.input_tokens, output_tokens=resp.output_tokens)

A budget can hold two caps: ``max_usd``, what *this run* may spend (CLI ``--budget``), and
``total_usd``, what may be spent *in all* on a store (CLI ``--budget-total``), counting the
``spent_before`` earlier runs already spent (the sum of the store's call log costs, read
once when the run starts: runs in other processes at the same time are not seen). A refusal
names the cap that was hit (:attr:`BudgetExceeded.scope`).

The methods are synchronous and lock-protected, so they are safe from concurrent
asyncio tasks and from threads.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
from dataclasses import dataclass
from types import TracebackType

from mastkit.providers.errors import BudgetExceeded

__all__ = ["Budget", "BudgetSnapshot", "Limiter", "Reservation"]


@dataclass(frozen=True)
class Reservation:
    """A pending charge against a :class:`Budget` (settle it exactly once)."""

    id: int
    usd: float
    """The reserved estimate."""


@dataclass(frozen=True)
class BudgetSnapshot:
    """A budget's counters at one moment."""

    max_usd: float
    spent_usd: float
    reserved_usd: float
    remaining_usd: float
    calls: int
    """Settled calls."""
    unpriced_calls: int
    """Settled calls whose cost was unknown (counted as $0: the cap cannot bound them)."""
    input_tokens: int
    output_tokens: int
    refused: int
    """Reservations refused because of the cap."""


class Budget:
    """USD spending caps shared by concurrent calls, plus token counters.

    Args:
        max_usd: this run's cap (None: no per-run cap). ``reserve`` refuses once
            spent + reserved + estimate would exceed it.
        total_usd: the cap over all runs (None: none); ``spent_before`` counts against it.
        spent_before: what earlier runs spent (USD), for ``total_usd``.
    """

    def __init__(
        self, max_usd: float | None = None, *, total_usd: float | None = None, spent_before: float = 0.0
    ) -> None:
        if max_usd is None and total_usd is None:
            raise ValueError("a budget needs max_usd (per run), total_usd (over all runs), or both")
        for label, value in (("budget", max_usd), ("total budget", total_usd)):
            if value is not None and value < 0:
                raise ValueError(f"{label} must be >= 0, got {value}")
        if spent_before < 0:
            raise ValueError(f"spent_before must be >= 0, got {spent_before}")
        self.max_usd = float(max_usd) if max_usd is not None else float("inf")
        """This run's cap (``inf`` when only a total cap is set)."""
        self.total_usd = float(total_usd) if total_usd is not None else None
        self.spent_before = float(spent_before)
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._open: dict[int, float] = {}
        self._spent = 0.0
        self._calls = 0
        self._unpriced = 0
        self._input_tokens = 0
        self._output_tokens = 0
        self._refused = 0

    def __repr__(self) -> str:
        s = self.snapshot()
        return f"Budget(max_usd={s.max_usd}, spent_usd={s.spent_usd:.6f}, reserved_usd={s.reserved_usd:.6f})"

    def reserve(self, estimated_usd: float | None) -> Reservation:
        """Reserve an estimated cost before a call.

        ``None`` (an unpriced model) reserves $0: such calls are counted but not bounded.

        Raises:
            BudgetExceeded: spent + reserved + estimate would pass the cap.
        """
        estimate = max(0.0, float(estimated_usd or 0.0))
        with self._lock:
            reserved = sum(self._open.values())
            if self._spent + reserved + estimate > self.max_usd + 1e-12:
                self._refused += 1
                raise BudgetExceeded(self.max_usd, self._spent, reserved, estimate, "run")
            total_spent = self.spent_before + self._spent
            if self.total_usd is not None and total_spent + reserved + estimate > self.total_usd + 1e-12:
                self._refused += 1
                raise BudgetExceeded(self.total_usd, total_spent, reserved, estimate, "total")
            r = Reservation(next(self._ids), estimate)
            self._open[r.id] = estimate
            return r

    def settle(
        self,
        reservation: Reservation,
        actual_usd: float | None,
        *,
        input_tokens: int | None = 0,
        output_tokens: int | None = 0,
    ) -> None:
        """Replace a reservation by the actual cost (``None``: unknown, counted as $0).

        Settling the same reservation twice is a no-op.
        """
        with self._lock:
            if self._open.pop(reservation.id, None) is None:
                return
            self._calls += 1
            if actual_usd is None:
                self._unpriced += 1
            else:
                self._spent += max(0.0, float(actual_usd))
            self._input_tokens += input_tokens or 0
            self._output_tokens += output_tokens or 0

    def release(self, reservation: Reservation) -> None:
        """Drop a reservation without charging (the call was not made)."""
        with self._lock:
            self._open.pop(reservation.id, None)

    @property
    def spent_usd(self) -> float:
        with self._lock:
            return self._spent

    @property
    def reserved_usd(self) -> float:
        with self._lock:
            return sum(self._open.values())

    @property
    def remaining_usd(self) -> float:
        """What may still be reserved (under both caps)."""
        with self._lock:
            return self._remaining(sum(self._open.values()))

    def _remaining(self, reserved: float) -> float:
        left = self.max_usd - self._spent - reserved
        if self.total_usd is not None:
            left = min(left, self.total_usd - self.spent_before - self._spent - reserved)
        return max(0.0, left)

    def snapshot(self) -> BudgetSnapshot:
        """All counters, consistently."""
        with self._lock:
            reserved = sum(self._open.values())
            return BudgetSnapshot(
                max_usd=self.max_usd,
                spent_usd=self._spent,
                reserved_usd=reserved,
                remaining_usd=self._remaining(reserved),
                calls=self._calls,
                unpriced_calls=self._unpriced,
                input_tokens=self._input_tokens,
                output_tokens=self._output_tokens,
                refused=self._refused,
            )


class Limiter:
    """At most ``concurrency`` holders at once (an ``asyncio.Semaphore``), with counters.

    Usable from several event loops one after another (each ``asyncio.run``): the
    semaphore is re-created for a new loop.
    """

    def __init__(self, concurrency: int) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {concurrency}")
        self.concurrency = concurrency
        self.in_flight = 0
        self.peak = 0
        self._sem: asyncio.Semaphore | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def __repr__(self) -> str:
        return f"Limiter(concurrency={self.concurrency}, in_flight={self.in_flight})"

    def _semaphore(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        if self._sem is None or self._loop is not loop:
            self._sem = asyncio.Semaphore(self.concurrency)
            self._loop = loop
            self.in_flight = 0
        return self._sem

    async def __aenter__(self) -> Limiter:
        await self._semaphore().acquire()
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.in_flight -= 1
        self._semaphore().release()
