"""What a worker of a distributed run does, without Ray: build the per-trace work from a
picklable job, answer its model calls' cache and log into a buffer, pace its requests, run a
batch of traces.

The Ray engine (:mod:`mastkit.scale.ray_engine`) ships these objects to its workers; nothing
here imports Ray, so the pieces are tested and used (the local ``--rpm`` pacing) without it.

A worker never opens the store: the driver is its single writer. The worker's response cache
and call log are a :class:`BufferCache` whose rows go back to the driver with each batch and are
written there, so the store ends with the same calls and cached replies as a local run.
"""

from __future__ import annotations

import asyncio
import pickle
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from mastkit.annotate.factory import make_annotator
from mastkit.attribute.run import attribute_one
from mastkit.providers.sync import run_sync
from mastkit.traces.model import Trace

__all__ = [
    "AnnotateJob",
    "AttributeJob",
    "BufferCache",
    "CallRows",
    "LocalPacer",
    "Pacer",
    "RemoteTraceError",
    "TokenBucket",
    "WorkerJob",
    "pace_provider",
    "replay_rows",
    "run_batch",
]


# -- pacing: a global requests-per-minute limit ----------------------------------------------------


class TokenBucket:
    """Requests spaced at least ``60 / rpm`` seconds apart (a bucket of one token).

    :meth:`reserve` books the next free slot and says how long the caller must wait for it, so
    many callers (coroutines here, or the workers of a cluster through one Ray actor holding the
    bucket) share one limit without polling.
    """

    def __init__(self, rpm: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        if rpm <= 0:
            raise ValueError(f"requests per minute must be > 0, got {rpm}")
        self.interval = 60.0 / rpm
        self._clock = clock
        self._next = 0.0

    def reserve(self) -> float:
        """Book a request slot; the seconds to wait before sending (0: send now)."""
        now = self._clock()
        at = max(now, self._next)
        self._next = at + self.interval
        return at - now


class Pacer(Protocol):
    """Waits until a request may be sent under the run's rate limit."""

    async def wait(self) -> None: ...


class LocalPacer:
    """A :class:`TokenBucket` for one process (the local engine's ``--rpm``)."""

    def __init__(self, rpm: float) -> None:
        self.bucket = TokenBucket(rpm)

    async def wait(self) -> None:
        delay = self.bucket.reserve()
        if delay > 0:
            await asyncio.sleep(delay)


def pace_provider(provider: Any, pacer: Pacer) -> None:
    """Make every ``provider.complete`` wait for ``pacer`` first (once per request; the
    provider's own retries of that request are not paced again).

    The provider's HTTP client for the running event loop is made before the wait, so a
    request leaves when its slot comes rather than after setting up a client."""
    complete = provider.complete
    make_client = getattr(provider, "_client", None)

    async def paced(req: Any) -> Any:
        if callable(make_client):
            make_client()
        await pacer.wait()
        return await complete(req)

    provider.complete = paced


# -- the response cache and call log of a worker ------------------------------------------------------

CallRows = list[tuple[str, dict[str, Any]]]
"""``("response", kwargs)`` / ``("call", kwargs)`` rows for the store's ``put_response`` and
``log_call``."""


@dataclass
class _Cached:
    text: str


class BufferCache:
    """A worker's stand-in for the store (see :class:`mastkit.llm.call.ResponseCache`).

    Replies are cached for the worker's lifetime (repeated requests within a run are answered as
    locally); every ``put_response`` and ``log_call`` is also kept as a row for the driver to
    write (:meth:`drain`). ``fence_secret`` is the driver's store secret, so prompts are the same
    as in a local run on that store.
    """

    def __init__(self, secret: bytes) -> None:
        self._secret = secret
        self._replies: dict[str, str] = {}
        self._rows: CallRows = []

    def fence_secret(self) -> bytes:
        return self._secret

    def cached_response(self, r_hash: str) -> _Cached | None:
        text = self._replies.get(r_hash)
        return _Cached(text) if text is not None else None

    def put_response(self, r_hash: str, text: str, **kw: Any) -> None:
        self._replies[r_hash] = text
        self._rows.append(("response", {"r_hash": r_hash, "text": text, **kw}))

    def log_call(self, **kw: Any) -> None:
        self._rows.append(("call", kw))

    def drain(self) -> CallRows:
        """The rows kept since the last drain."""
        rows, self._rows = self._rows, []
        return rows


def replay_rows(store: Any, rows: CallRows) -> None:
    """Write a worker's rows into the driver's store (``put_response`` / ``log_call``)."""
    for kind, kw in rows:
        if kind == "response":
            store.put_response(kw.pop("r_hash"), kw.pop("text"), **kw)
        else:
            store.log_call(**kw)


# -- jobs: the per-trace work, built on the worker ------------------------------------------------


@dataclass
class WorkerJob:
    """The per-trace work a worker runs, built from a job on the worker."""

    work: Callable[[Trace], Awaitable[Any]]
    target: Any = None
    """The annotator or attributor (its ``provider`` is paced, its ``budget`` shared); None for rules."""
    aclose: Callable[[], Awaitable[None]] | None = None


@dataclass(frozen=True)
class AnnotateJob:
    """Annotate with :func:`~mastkit.annotate.factory.make_annotator` built from ``kwargs``
    (picklable settings: no ``cache``, no budget — the driver keeps those)."""

    kind: str = "rules"
    kwargs: dict[str, Any] = field(default_factory=dict)

    def __call__(self, cache: BufferCache) -> WorkerJob:
        ann = make_annotator(self.kind, cache=cache, **self.kwargs)  # type: ignore[arg-type]
        if self.kind == "rules":
            return WorkerJob(ann.annotate)
        return WorkerJob(ann.annotate, target=ann, aclose=getattr(ann, "aclose", None))


@dataclass(frozen=True)
class AttributeJob:
    """Attribute with ``method``: the rules, or an LLM attributor built by
    :meth:`~mastkit.attribute.llm.LLMAttributor.from_spec` from ``model`` and ``kwargs``."""

    method: str = "rules"
    with_ground_truth: bool = False
    model: str | None = None
    kwargs: dict[str, Any] = field(default_factory=dict)

    def __call__(self, cache: BufferCache) -> WorkerJob:
        method, gt = self.method, self.with_ground_truth
        if method == "rules":

            async def rules(t: Trace) -> Any:
                return await attribute_one(t, "rules", with_ground_truth=gt)

            return WorkerJob(rules)
        from mastkit.attribute.llm import LLMAttributor

        if not self.model:
            raise ValueError(f"the {method} method needs a model")
        judge = LLMAttributor.from_spec(self.model, cache=cache, **self.kwargs)

        async def llm(t: Trace) -> Any:
            return await attribute_one(t, method, judge=judge, with_ground_truth=gt)

        return WorkerJob(llm, target=judge, aclose=judge.aclose)


# -- one batch ----------------------------------------------------------------------------------


class RemoteTraceError(Exception):
    """A worker's exception that could not be sent back as it was (not picklable)."""


def _sendable(exc: Exception) -> Exception:
    try:
        pickle.dumps(exc)
    except Exception:
        return RemoteTraceError(f"{type(exc).__name__}: {exc}")
    return exc


def run_batch(
    job: WorkerJob,
    traces: Sequence[Trace],
    *,
    concurrency: int = 8,
    loop: asyncio.AbstractEventLoop | None = None,
) -> list[tuple[bool, Any]]:
    """Run ``job`` on every trace, ``concurrency`` at once; per trace ``(True, result)`` or
    ``(False, exception)``, in order.

    On ``loop`` (a worker's own loop, kept from batch to batch with its HTTP connections) when
    given; otherwise on a new loop, after which the job's ``aclose`` is awaited (its connections
    belong to that loop)."""

    async def go() -> list[tuple[bool, Any]]:
        slots = asyncio.Semaphore(max(1, concurrency))

        async def one(trace: Trace) -> tuple[bool, Any]:
            async with slots:
                try:
                    return True, await job.work(trace)
                except Exception as exc:
                    return False, _sendable(exc)

        return list(await asyncio.gather(*(one(t) for t in traces)))

    if loop is not None:
        return loop.run_until_complete(go())

    async def once() -> list[tuple[bool, Any]]:
        try:
            return await go()
        finally:
            if job.aclose is not None:
                await job.aclose()

    return run_sync(once())
