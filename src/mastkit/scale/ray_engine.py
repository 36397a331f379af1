"""The Ray engine: the per-trace work of ``annotate`` and ``attribute`` on a Ray cluster.

The driver keeps everything that makes a local run what it is — the one runner
(:func:`mastkit.llm.runner.run_per_trace`) with its resume, failure accounting, budget stop,
circuit breaker and progress, and the store as single writer — and only the work on one trace
moves: :meth:`RayEngine.annotator` and :meth:`RayEngine.attributor` give objects that
``annotate()`` and ``attribute()`` use like a local annotator or judge, whose per-trace call
gathers traces into batches and ships each batch to a pool of worker actors. Each worker builds
the same annotator or attributor as a local run (from a picklable job, see
:mod:`mastkit.scale.worker`), runs the batch and sends back, per trace, the result or the
exception, plus the rows of its model calls, which the driver writes into the store.

Shared across the cluster by small actors: the rate limit (one :class:`TokenBucket`, requests
per minute over all workers) and the budget (one :class:`~mastkit.providers.Budget`: every
worker reserves from it, so a cap holds for the whole run).

This is the only module that imports Ray (``pip install 'mastkit[ray]'``).
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Sequence
from typing import Any

import ray

from mastkit.annotate.model import Annotation, AnnotatorConfig
from mastkit.attribute.model import Attribution
from mastkit.errors import MastkitError
from mastkit.providers import Budget
from mastkit.providers.budget import Reservation
from mastkit.scale.worker import (
    AnnotateJob,
    AttributeJob,
    BufferCache,
    TokenBucket,
    WorkerJob,
    pace_provider,
    replay_rows,
    run_batch,
)
from mastkit.traces.model import Trace

__all__ = ["RayEngine"]


# -- actors shared by the workers ---------------------------------------------------------------


class _PacerActor:
    """Holds the run's one token bucket."""

    def __init__(self, rpm: float) -> None:
        self.bucket = TokenBucket(rpm)

    def reserve(self) -> float:
        return self.bucket.reserve()


class _BudgetActor:
    """Holds the run's one budget; refusals come back as values (raised on the worker)."""

    def __init__(self, max_usd: float | None, total_usd: float | None, spent_before: float) -> None:
        self.budget = Budget(max_usd, total_usd=total_usd, spent_before=spent_before)

    def reserve(self, estimate: float | None) -> Reservation | Exception:
        try:
            return self.budget.reserve(estimate)
        except Exception as exc:
            return exc

    def settle(self, r: Reservation, actual: float | None, input_tokens: int, output_tokens: int) -> None:
        self.budget.settle(r, actual, input_tokens=input_tokens, output_tokens=output_tokens)

    def release(self, r: Reservation) -> None:
        self.budget.release(r)


class _RayPacer:
    """A worker's view of the shared token bucket."""

    def __init__(self, actor: Any) -> None:
        self.actor = actor

    async def wait(self) -> None:
        delay = float(await self.actor.reserve.remote())
        if delay > 0:
            await asyncio.sleep(delay)


class _BudgetProxy:
    """A worker's view of the shared budget (the three calls :func:`mastkit.llm.call.cached_call`
    makes)."""

    def __init__(self, actor: Any) -> None:
        self.actor = actor

    def reserve(self, estimated_usd: float | None) -> Reservation:
        got = ray.get(self.actor.reserve.remote(estimated_usd))
        if isinstance(got, Exception):
            raise got
        assert isinstance(got, Reservation)
        return got

    def settle(
        self,
        reservation: Reservation,
        actual_usd: float | None,
        *,
        input_tokens: int | None = 0,
        output_tokens: int | None = 0,
    ) -> None:
        self.actor.settle.remote(reservation, actual_usd, input_tokens or 0, output_tokens or 0)

    def release(self, reservation: Reservation) -> None:
        self.actor.release.remote(reservation)


class _Dropped(Exception):
    """A batch nobody waited for any more (the run stopped), skipped by its worker."""


class _Worker:
    """One worker process: builds the job once, then runs batch after batch (one at a time).

    :meth:`drop` runs in its own concurrency group, so it is heard while a batch runs: a batch
    dropped before its turn is skipped (``ray.cancel`` does not stop an actor task already
    queued on the worker)."""

    def __init__(self, job: Any, secret: bytes, pacer: Any, budget: Any, concurrency: int) -> None:
        self.cache = BufferCache(secret)
        self.job: WorkerJob = job(self.cache)
        self.concurrency = concurrency
        self.dropped: set[int] = set()
        self.loop = asyncio.new_event_loop()
        """One event loop for every batch: the provider's HTTP connections are kept."""
        target = self.job.target
        if target is not None and budget is not None:
            target.budget = _BudgetProxy(budget)
        if target is not None and pacer is not None:
            pace_provider(target.provider, _RayPacer(pacer))

    def run(
        self, batch_id: int, traces: list[Trace]
    ) -> tuple[list[tuple[bool, Any]], list[tuple[str, dict[str, Any]]]]:
        if batch_id in self.dropped:
            self.dropped.discard(batch_id)
            return [(False, _Dropped())] * len(traces), []
        results = run_batch(self.job, traces, concurrency=self.concurrency, loop=self.loop)
        return results, self.cache.drain()

    @ray.method(concurrency_group="control")
    def drop(self, batch_id: int) -> None:
        self.dropped.add(batch_id)


# -- the driver side ----------------------------------------------------------------------------


class _Dispatcher:
    """Gathers per-trace calls into batches, sends each to the least busy worker, and answers
    each call from its batch's reply (the call rows are written to the store first)."""

    def __init__(self, workers: Sequence[Any], store: Any, batch_size: int, flush_s: float) -> None:
        self.workers = list(workers)
        self.busy = [0] * len(self.workers)
        self.store = store
        self.batch_size = max(1, batch_size)
        self.flush_s = flush_s
        self.pending: list[tuple[Trace, asyncio.Future[tuple[bool, Any]]]] = []
        self.timer: asyncio.TimerHandle | None = None
        self.collectors: set[asyncio.Task[None]] = set()
        self.sent: dict[asyncio.Future[tuple[bool, Any]], tuple[int, int, list[asyncio.Future[Any]]]] = {}
        """A sent trace's future -> its batch's id, worker and futures."""
        self.batch_ids = itertools.count()

    async def submit(self, trace: Trace) -> Any:
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[tuple[bool, Any]] = loop.create_future()
        self.pending.append((trace, fut))
        if len(self.pending) >= self.batch_size:
            self.flush()
        elif self.timer is None:
            self.timer = loop.call_later(self.flush_s, self.flush)
        try:
            ok, value = await fut
        except asyncio.CancelledError:
            self._abandon(fut)
            raise
        if not ok:
            raise value
        return value

    def flush(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        batch = [(t, f) for t, f in self.pending if not f.done()]
        self.pending = []
        if not batch:
            return
        i = min(range(len(self.workers)), key=self.busy.__getitem__)
        self.busy[i] += 1
        batch_id = next(self.batch_ids)
        ref = self.workers[i].run.remote(batch_id, [t for t, _ in batch])
        entry = (batch_id, i, [f for _, f in batch])
        for _, f in batch:
            self.sent[f] = entry
        task = asyncio.ensure_future(self._collect(i, ref, batch))
        self.collectors.add(task)
        task.add_done_callback(self.collectors.discard)

    async def _collect(
        self, i: int, ref: Any, batch: list[tuple[Trace, asyncio.Future[tuple[bool, Any]]]]
    ) -> None:
        try:
            results, rows = await ref
        except Exception as exc:  # the worker died or could not run the batch: each trace fails
            cause = exc.cause if isinstance(exc, ray.exceptions.RayTaskError) else exc
            for _, fut in batch:
                if not fut.done():
                    fut.set_result((False, cause))
            return
        finally:
            self.busy[i] -= 1
            for _, f in batch:
                self.sent.pop(f, None)
        if self.store is not None:
            replay_rows(self.store, rows)
        for (_, fut), result in zip(batch, results, strict=True):
            if not fut.done():
                fut.set_result(result)

    def _abandon(self, fut: asyncio.Future[Any]) -> None:
        """A trace's call was cancelled (the run stopped): when no call waits for its batch any
        more, its worker is told to skip it if it has not started it yet."""
        entry = self.sent.get(fut)
        if entry is not None and all(f.done() for f in entry[2]):
            batch_id, i, _ = entry
            self.workers[i].drop.remote(batch_id)

    async def aclose(self) -> None:
        self.flush()
        if self.collectors:
            await asyncio.gather(*self.collectors, return_exceptions=True)


class _RemoteAnnotator:
    """What ``annotate()`` sees: the local annotator's configuration, work done on the cluster."""

    def __init__(self, config: AnnotatorConfig, dispatcher: _Dispatcher) -> None:
        self.config = config
        self.dispatcher = dispatcher

    async def annotate(self, trace: Trace) -> Annotation:
        result: Annotation = await self.dispatcher.submit(trace)
        return result

    async def aclose(self) -> None:
        await self.dispatcher.aclose()


class _RemoteAttributor:
    """What ``attribute()`` sees as its judge: the local attributor's identity (version and
    model, which make the method hash), work done on the cluster, the rules method included."""

    runs_rules = True

    def __init__(self, dispatcher: _Dispatcher, version: str, model_id: str | None) -> None:
        self.dispatcher = dispatcher
        self.version = version
        self.model_id = model_id

    async def aattribute(self, trace: Trace, *, method: str, ground_truth: str | None = None) -> Attribution:
        result: Attribution = await self.dispatcher.submit(trace)
        return result

    async def aclose(self) -> None:
        await self.dispatcher.aclose()


class RayEngine:
    """A Ray cluster to run per-trace work on (a context manager).

    Args:
        address: an existing cluster (``ray://host:10001``, ``auto``); None starts a local one
            with ``num_cpus`` CPUs (all of this machine's by default). A cluster already
            initialised in this process is used as it is.
        workers: worker actors (default: the cluster's CPUs, at least 1).
        batch_size: traces per batch sent to a worker.
        concurrency: traces in flight on each worker (model calls are also bounded by the
            provider's own concurrency).
        rpm: requests per minute to the provider over the whole cluster (None: no limit).
        worker_cpus: CPUs each worker reserves (lower it, e.g. 0.25, for model-bound work).
        flush_s: how long a part-filled batch waits for more traces.
    """

    def __init__(
        self,
        *,
        address: str | None = None,
        workers: int | None = None,
        batch_size: int = 64,
        concurrency: int = 8,
        rpm: float | None = None,
        num_cpus: int | None = None,
        worker_cpus: float = 1.0,
        flush_s: float = 0.02,
    ) -> None:
        self.owns_cluster = not ray.is_initialized()
        if self.owns_cluster:
            try:
                ray.init(
                    address=address,
                    num_cpus=num_cpus if address is None else None,
                    include_dashboard=False,
                    log_to_driver=False,
                    configure_logging=False,
                )
            except (ConnectionError, ValueError, RuntimeError) as exc:
                raise MastkitError(
                    f"cannot start or reach the Ray cluster {address or '(local)'}: {exc}"
                ) from None
        cpus = float(ray.cluster_resources().get("CPU", 1.0))  # type: ignore[no-untyped-call]
        self.workers = workers or max(1, int(cpus / worker_cpus) if worker_cpus > 0 else int(cpus))
        self.batch_size = batch_size
        self.concurrency = concurrency
        self.worker_cpus = worker_cpus
        self.flush_s = flush_s
        self.pacer = ray.remote(num_cpus=0)(_PacerActor).remote(rpm) if rpm else None
        self._actors: list[Any] = [] if self.pacer is None else [self.pacer]

    @property
    def in_flight(self) -> int:
        """Traces the driver should keep in flight to keep every worker busy (two batches each)."""
        return self.workers * self.batch_size * 2

    def _dispatcher(self, job: Any, store: Any, budget: Budget | None) -> _Dispatcher:
        secret = store.fence_secret() if store is not None and hasattr(store, "fence_secret") else b"\0" * 32
        budget_actor = None
        if budget is not None:
            max_usd = None if budget.max_usd == float("inf") else budget.max_usd
            budget_actor = ray.remote(num_cpus=0)(_BudgetActor).remote(
                max_usd, budget.total_usd, budget.spent_before
            )
            self._actors.append(budget_actor)
        # (the stubs of ray.remote do not list concurrency_groups)
        options: dict[str, Any] = {"concurrency_groups": {"control": 1}}
        worker_cls = ray.remote(num_cpus=self.worker_cpus, max_restarts=3, **options)(_Worker)
        workers = [
            worker_cls.remote(job, secret, self.pacer, budget_actor, self.concurrency)
            for _ in range(self.workers)
        ]
        self._actors.extend(workers)
        return _Dispatcher(workers, store, self.batch_size, self.flush_s)

    def annotator(
        self, job: AnnotateJob, *, config: AnnotatorConfig, store: Any = None, budget: Budget | None = None
    ) -> _RemoteAnnotator:
        """An annotator for :func:`mastkit.annotate.annotate` whose work runs ``job`` on the
        workers. ``config`` is the local annotator's (results are stored under its hash);
        ``store`` gets the workers' call rows and gives them its fence secret; ``budget`` (the
        local annotator's) is shared by all workers."""
        return _RemoteAnnotator(config, self._dispatcher(job, store, budget))

    def attributor(
        self,
        job: AttributeJob,
        *,
        store: Any = None,
        budget: Budget | None = None,
        version: str = "llm",
        model_id: str | None = None,
    ) -> _RemoteAttributor:
        """A judge for :func:`mastkit.attribute.attribute` (any method, rules included) whose work
        runs ``job`` on the workers; ``version`` and ``model_id`` are the local attributor's."""
        return _RemoteAttributor(self._dispatcher(job, store, budget), version, model_id)

    def close(self) -> None:
        """Stop the actors; shut the cluster down when this engine started it."""
        for actor in self._actors:
            ray.kill(actor)
        self._actors.clear()
        if self.owns_cluster and ray.is_initialized():
            ray.shutdown()

    def __enter__(self) -> RayEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
