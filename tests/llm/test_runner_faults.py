"""The runner when its store breaks, and when the provider is down (502/503/504 through retries).

Plain coroutines raise the errors; a small in-memory store fails on demand.
"""

from __future__ import annotations

import asyncio

import pytest

from mastkit.errors import StoreError
from mastkit.llm.runner import _stop_message, breaker_kind, run_per_trace, run_per_trace_sync
from mastkit.providers.errors import ProviderUnavailableError
from mastkit.traces.model import Event, Trace


def tr(i: int) -> Trace:
    return Trace(
        trace_id=f"t{i}",
        source_format="test",
        events=[Event(seq=0, kind="message", actor="a", content=f"x {i}")],
    )


class FlakyStore:
    """Keeps results in a dict; ``put_result`` fails from the ``fail_from``-th write on."""

    def __init__(self, fail_from: int | None = None, fail_log: bool = False) -> None:
        self.results: dict[str, int] = {}
        self.logged: list[str] = []
        self.fail_from = fail_from
        self.fail_log = fail_log
        self.puts = 0

    def get_result(self, trace: Trace, t_hash: str, key: str) -> int | None:
        return self.results.get(t_hash)

    def put_result(self, trace: Trace, t_hash: str, key: str, result: int) -> None:
        self.puts += 1
        if self.fail_from is not None and self.puts >= self.fail_from:
            raise StoreError("cannot write the store x.db: the disk is full")
        self.results[t_hash] = result

    def log_failure(
        self, key: str, reason: str, *, trace_id: str | None, path: str | None, trace_hash: str | None = None
    ) -> None:
        if self.fail_log:
            raise StoreError("cannot write the store x.db: it is read-only")
        self.logged.append(reason)


def test_a_failing_store_write_stops_the_run_and_is_raised() -> None:
    started: list[str] = []
    cancelled: list[str] = []

    async def work(t: Trace) -> int:
        started.append(t.trace_id)
        try:
            await asyncio.sleep(0.5 if t.trace_id != "t0" else 0.01)
        except asyncio.CancelledError:
            cancelled.append(t.trace_id)
            raise
        return 1

    store = FlakyStore(fail_from=1)
    with pytest.raises(StoreError, match="disk is full"):
        run_per_trace_sync([tr(i) for i in range(50)], work, key="k", store=store, concurrency=4)
    # t0's write failed: the three in flight were cancelled and nothing more was started
    assert len(started) == 4 and sorted(cancelled) == ["t1", "t2", "t3"]
    assert store.results == {}


def test_committed_results_stay_when_the_store_fails_later() -> None:
    async def work(t: Trace) -> int:
        return int(t.trace_id[1:])

    store = FlakyStore(fail_from=6)
    with pytest.raises(StoreError):
        run_per_trace_sync([tr(i) for i in range(20)], work, key="k", store=store, concurrency=1)
    assert sorted(store.results.values()) == [0, 1, 2, 3, 4]
    store.fail_from = None
    done = run_per_trace_sync([tr(i) for i in range(20)], work, key="k", store=store, concurrency=1)
    assert done.complete and done.progress.cached == 5 and done.progress.done == 15


def test_a_store_error_inside_the_work_stops_the_run_too() -> None:
    async def work(t: Trace) -> int:
        raise StoreError("the response cache cannot be written")

    store = FlakyStore()
    with pytest.raises(StoreError, match="response cache"):
        asyncio.run(run_per_trace([tr(i) for i in range(10)], work, key="k", store=store, concurrency=2))
    assert store.logged == []  # not taken for a failure of one trace


def test_a_failure_that_cannot_be_logged_stops_the_run() -> None:
    calls = 0

    async def work(t: Trace) -> int:
        nonlocal calls
        calls += 1
        raise ValueError("bad reply")

    with pytest.raises(StoreError, match="read-only"):
        run_per_trace_sync(
            [tr(i) for i in range(10)], work, key="k", store=FlakyStore(fail_log=True), concurrency=1
        )
    assert calls == 1


@pytest.mark.parametrize("status", [502, 503, 504])
def test_outage_statuses_trip_the_breaker(status: int) -> None:
    exc = ProviderUnavailableError("down", provider="p", model="m", kind="server", status=status)
    assert breaker_kind(exc) == "unavailable"
    message = _stop_message("unavailable", exc, 3)
    assert f"p:m is unavailable (HTTP {status} on 3 traces in a row" in message


def test_other_server_errors_do_not() -> None:
    assert breaker_kind(ProviderUnavailableError("x", kind="server", status=500)) is None
    assert breaker_kind(ProviderUnavailableError("x", kind="rate_limit", status=429)) is None
    assert breaker_kind(ProviderUnavailableError("x", kind="timeout")) is None


def test_an_outage_stops_after_three_traces_in_a_row() -> None:
    async def work(t: Trace) -> int:
        if int(t.trace_id[1:]) >= 2:
            raise ProviderUnavailableError("503", provider="p", kind="server", status=503)
        return 1

    store = FlakyStore()
    run = run_per_trace_sync([tr(i) for i in range(10)], work, key="k", store=store, concurrency=1)
    assert run.stop is not None and run.stop.kind == "unavailable"
    assert [o.status for o in run.outcomes] == ["done"] * 2 + ["failed"] * 3 + ["not_done"] * 5
    assert len(store.logged) == 4 and "unavailable" in store.logged[-1]  # 3 traces, then the stop
