"""``annotate``: traces in, failure vectors out — concurrent, cached, resumable, within budget.

The runner is independent of where results go: it talks to a :class:`ResultCache`
(implemented by :class:`mastkit.store.Store`). For each trace it computes a content hash;
a trace already annotated with the same configuration is skipped (zero model calls), so
an interrupted run simply resumes. One trace's failure is recorded and the run goes on.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from mastkit.annotate.model import Annotation, AnnotatorConfig
from mastkit.providers.errors import BudgetExceeded
from mastkit.traces.model import Trace


class ResultCache(Protocol):
    """What the runner needs from a store (``mastkit.store.Store`` implements it)."""

    def register_run(self, config: AnnotatorConfig) -> str: ...
    def upsert_trace(self, trace: Trace, t_hash: str | None = None) -> str: ...
    def get_annotation(self, t_hash: str, config_hash: str) -> Annotation | None: ...
    def put_annotation(self, annotation: Annotation, t_hash: str) -> None: ...
    def log_error(
        self,
        stage: str,
        reason: str,
        *,
        path: str | None = None,
        trace_id: str | None = None,
        config_hash: str | None = None,
    ) -> None: ...


class Annotator(Protocol):
    """Something that annotates one trace: rules, the LLM judge, or both."""

    config: AnnotatorConfig

    async def annotate(self, trace: Trace) -> Annotation: ...


@dataclass
class Progress:
    """Live counters, passed to the progress callback after each trace."""

    done: int = 0
    cached: int = 0
    failed: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    model_calls: int = 0
    started: float = field(default_factory=time.monotonic)


@dataclass
class RunReport:
    """What an annotation run did."""

    config_hash: str
    progress: Progress
    annotations: list[Annotation]
    errors: list[dict[str, Any]]
    stopped_by_budget: bool = False
    not_done: list[str] = field(default_factory=list)
    """Trace ids left unannotated (budget reached)."""

    @property
    def ok(self) -> bool:
        return self.progress.done + self.progress.cached > 0


async def _aiter(traces: Iterable[Trace]) -> AsyncIterator[Trace]:
    for t in traces:
        yield t
        await asyncio.sleep(0)


async def annotate_async(
    traces: Iterable[Trace],
    annotator: Annotator,
    *,
    store: ResultCache | None = None,
    concurrency: int = 8,
    on_progress: Callable[[Progress], None] | None = None,
    keep: bool = True,
) -> RunReport:
    """Annotate ``traces`` with ``annotator``; see :func:`annotate`."""
    config_hash = annotator.config.config_hash()
    if store is not None:
        store.register_run(annotator.config)
    progress = Progress()
    results: list[Annotation] = []
    errors: list[dict[str, Any]] = []
    not_done: list[str] = []
    stop = asyncio.Event()
    sem = asyncio.Semaphore(max(1, concurrency))

    async def one(trace: Trace) -> None:
        try:
            t_hash = trace.content_hash()
            if store is not None:
                store.upsert_trace(trace, t_hash)
                cached = store.get_annotation(t_hash, config_hash)
                if cached is not None:
                    progress.cached += 1
                    if keep:
                        results.append(cached)
                    return
            if stop.is_set():
                not_done.append(trace.trace_id)
                return
            ann = await annotator.annotate(trace)
            if store is not None:
                store.put_annotation(ann, t_hash)
            progress.done += 1
            progress.input_tokens += ann.input_tokens
            progress.output_tokens += ann.output_tokens
            progress.cost_usd += ann.cost_usd
            progress.model_calls += ann.model_calls
            if keep:
                results.append(ann)
        except BudgetExceeded as exc:
            stop.set()
            not_done.append(trace.trace_id)
            errors.append({"trace_id": trace.trace_id, "reason": str(exc), "budget": True})
        except Exception as exc:
            progress.failed += 1
            reason = f"{type(exc).__name__}: {exc}"
            errors.append({"trace_id": trace.trace_id, "reason": reason})
            if store is not None:
                store.log_error(
                    "annotate",
                    reason,
                    trace_id=trace.trace_id,
                    config_hash=config_hash,
                    path=trace.source_paths[0] if trace.source_paths else None,
                )
        finally:
            if on_progress is not None:
                on_progress(progress)

    def _finisher(pending: set[asyncio.Task[None]], slots: asyncio.Semaphore) -> Any:
        def done(t: asyncio.Task[None]) -> None:
            pending.discard(t)
            slots.release()

        return done

    tasks: set[asyncio.Task[None]] = set()
    async for trace in _aiter(traces):
        # after a budget stop each trace still goes to one(): one already in the store is answered
        # from it (and counted as cached); only the others are listed as not done
        await sem.acquire()
        task = asyncio.create_task(one(trace))
        tasks.add(task)
        task.add_done_callback(_finisher(tasks, sem))
    if tasks:
        await asyncio.gather(*tasks)
    results.sort(key=lambda a: a.trace_id)
    return RunReport(
        config_hash=config_hash,
        progress=progress,
        annotations=results,
        errors=errors,
        stopped_by_budget=stop.is_set(),
        not_done=not_done,
    )


def annotate(
    traces: Iterable[Trace],
    annotator: Annotator,
    *,
    store: ResultCache | None = None,
    concurrency: int = 8,
    on_progress: Callable[[Progress], None] | None = None,
    keep: bool = True,
) -> RunReport:
    """Annotate every trace with ``annotator`` (rules, judge or hybrid).

    Args:
        traces: any iterable of traces (e.g. ``load_traces(path)``): consumed lazily.
        annotator: see :func:`mastkit.annotate.make_annotator`.
        store: where results go; with a store, traces already annotated with the same
            configuration are skipped (resume / zero-cost re-runs).
        concurrency: traces annotated at once (model calls are further bounded by the provider).
        on_progress: called with live counters after each trace.
        keep: keep annotations in the report (set False for huge runs into a store).
    """

    async def run() -> RunReport:
        try:
            return await annotate_async(
                traces, annotator, store=store, concurrency=concurrency, on_progress=on_progress, keep=keep
            )
        finally:
            # The HTTP client's connections belong to this event loop, which ends here: close them
            # now (else the next asyncio.run with the same annotator finalises them on a closed loop).
            aclose = getattr(annotator, "aclose", None)
            if aclose is not None:
                await aclose()

    return asyncio.run(run())
