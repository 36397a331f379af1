"""``annotate``: traces in, failure vectors out — concurrent, cached, resumable, within budget.

A thin adapter over :func:`mastkit.llm.runner.run_per_trace`, which owns hashing, resume,
concurrency, failures, the budget stop and the circuit breaker. Results go to a
:class:`ResultCache` (implemented by :class:`mastkit.store.Store`): a trace already annotated
with the same configuration is skipped (zero model calls), so an interrupted run simply
resumes. One trace's failure is recorded and the run goes on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from mastkit.annotate.model import Annotation, AnnotatorConfig
from mastkit.llm.runner import RunProgress, Stop, TraceOutcome, error_entries, run_per_trace
from mastkit.providers.sync import run_sync
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
        trace_hash: str | None = None,
    ) -> None: ...


class Annotator(Protocol):
    """Something that annotates one trace: rules, the LLM judge, or both."""

    config: AnnotatorConfig

    async def annotate(self, trace: Trace) -> Annotation: ...


@dataclass
class Progress(RunProgress):
    """Live counters, passed to the progress callback after each trace (the runner's counters —
    total, done, cached, failed, not done, rate, ETA — plus what the model calls used)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    model_calls: int = 0


@dataclass
class RunReport:
    """What an annotation run did."""

    config_hash: str
    progress: Progress
    annotations: list[Annotation]
    """Done and cached annotations, by trace id (two traces sharing an id are both here)."""
    errors: list[dict[str, Any]]
    """One entry per failed trace (``trace_id``, ``trace_hash``, ``path``, ``reason``), then, when
    the run stopped early, one for the stop (``stop``: its kind; ``budget`` True for a budget stop)."""
    stopped_by_budget: bool = False
    not_done: list[str] = field(default_factory=list)
    """Trace ids left unannotated (budget reached or the run stopped by the circuit breaker)."""
    stop: Stop | None = None
    """Why the run stopped starting new work (budget, rejected key, unknown model, unreachable)."""
    outcomes: list[TraceOutcome[Annotation]] = field(default_factory=list)
    """Every trace's fate in input order, keyed by content hash (with ``keep=False``: failed, not
    done and duplicate ones only)."""

    @property
    def ok(self) -> bool:
        """At least one trace was annotated or answered from the store."""
        return self.progress.done + self.progress.cached > 0

    @property
    def complete(self) -> bool:
        """Every trace was annotated or answered from the store (and there was at least one)."""
        return self.ok and self.progress.failed == 0 and self.progress.not_done == 0

    @property
    def by_hash(self) -> dict[str, Annotation]:
        """Trace content hash -> annotation (kept ones)."""
        return {o.trace_hash: o.result for o in self.outcomes if o.result is not None}

    @property
    def failed(self) -> list[TraceOutcome[Annotation]]:
        """The failed traces (id, content hash, path, reason)."""
        return [o for o in self.outcomes if o.status == "failed"]


class _AnnotationStore:
    """The runner's view of a :class:`ResultCache`: annotations under the configuration hash."""

    def __init__(self, cache: ResultCache) -> None:
        self.cache = cache

    def get_result(self, trace: Trace, t_hash: str, key: str) -> Annotation | None:
        self.cache.upsert_trace(trace, t_hash)
        return self.cache.get_annotation(t_hash, key)

    def put_result(self, trace: Trace, t_hash: str, key: str, result: Annotation) -> None:
        self.cache.put_annotation(result, t_hash)

    def log_failure(
        self, key: str, reason: str, *, trace_id: str | None, path: str | None, trace_hash: str | None = None
    ) -> None:
        self.cache.log_error(
            "annotate", reason, path=path, trace_id=trace_id, config_hash=key, trace_hash=trace_hash
        )


async def annotate_async(
    traces: Iterable[Trace],
    annotator: Annotator,
    *,
    store: ResultCache | None = None,
    concurrency: int = 8,
    on_progress: Callable[[Progress], None] | None = None,
    keep: bool = True,
    total: int | None = None,
) -> RunReport:
    """Annotate ``traces`` with ``annotator``; see :func:`annotate`."""
    config_hash = annotator.config.config_hash()
    if store is not None:
        store.register_run(annotator.config)
    progress = Progress(total=total)

    def count(o: TraceOutcome[Annotation]) -> None:
        if o.status == "done" and o.result is not None:
            progress.input_tokens += o.result.input_tokens
            progress.output_tokens += o.result.output_tokens
            progress.cost_usd += o.result.cost_usd
            progress.model_calls += o.result.model_calls

    def report_progress(_: RunProgress) -> None:
        if on_progress is not None:
            on_progress(progress)

    run = await run_per_trace(
        traces,
        annotator.annotate,
        key=config_hash,
        store=_AnnotationStore(store) if store is not None else None,
        concurrency=concurrency,
        on_progress=report_progress,
        on_outcome=count,
        keep=keep,
        progress=progress,
    )
    annotations = sorted((o.result for o in run.outcomes if o.result is not None), key=lambda a: a.trace_id)
    return RunReport(
        config_hash=config_hash,
        progress=progress,
        annotations=annotations,
        errors=error_entries(run.outcomes, run.stop),
        stopped_by_budget=run.stop is not None and run.stop.kind == "budget",
        not_done=[o.trace_id for o in run.not_done],
        stop=run.stop,
        outcomes=run.outcomes,
    )


def annotate(
    traces: Iterable[Trace],
    annotator: Annotator,
    *,
    store: ResultCache | None = None,
    concurrency: int = 8,
    on_progress: Callable[[Progress], None] | None = None,
    keep: bool = True,
    total: int | None = None,
) -> RunReport:
    """Annotate every trace with ``annotator`` (rules, judge or hybrid).

    Args:
        traces: any iterable of traces (e.g. ``load_traces(path)``): consumed lazily.
        annotator: see :func:`mastkit.annotate.make_annotator`.
        store: where results go; with a store, traces already annotated with the same
            configuration are skipped (resume / zero-cost re-runs), and failures are logged.
        concurrency: traces annotated at once (model calls are further bounded by the provider).
        on_progress: called with live counters after each trace.
        keep: keep annotations in the report (set False for huge runs into a store).
        total: traces expected, for the progress ETA (None: unknown).

    A trace whose annotation raises is failed (logged, not stored, tried again next run); a
    budget stop or a provider error no trace can get past (rejected key, unknown model,
    unreachable server) stops the run and leaves the rest not done. See
    :mod:`mastkit.llm.runner`.
    """

    async def run() -> RunReport:
        try:
            return await annotate_async(
                traces,
                annotator,
                store=store,
                concurrency=concurrency,
                on_progress=on_progress,
                keep=keep,
                total=total,
            )
        finally:
            # The HTTP client's connections belong to this event loop, which ends here: close them
            # now (else the next run with the same annotator finalises them on a closed loop).
            aclose = getattr(annotator, "aclose", None)
            if aclose is not None:
                await aclose()

    return run_sync(run())
