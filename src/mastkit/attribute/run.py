"""``attribute``: run an attribution method over traces, store the results, skip what is cached.

A thin adapter over :func:`mastkit.llm.runner.run_per_trace` (the same runner as ``annotate``).
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

from mastkit.attribute.model import Attribution
from mastkit.attribute.rule_attributor import attribute_by_rules
from mastkit.llm.runner import RunProgress, Stop, TraceOutcome, error_entries, run_per_trace_sync
from mastkit.traces.model import Trace

METHODS = ("rules", "all-at-once", "step-by-step", "binary-search")
RULE_ATTRIBUTOR_VERSION = "attr-rules-3"
"""Bumped when the rule attributor's answers change (3: supervised-run signals, no detectors)."""


class AttributionStore(Protocol):
    def upsert_trace(self, trace: Trace, t_hash: str | None = None) -> str: ...
    def get_attribution(self, t_hash: str, method_hash: str) -> Attribution | None: ...
    def put_attribution(
        self, trace_id: str, t_hash: str, method: str, method_hash: str, a: Attribution
    ) -> None: ...


@dataclass
class AttributionReport:
    method: str
    method_hash: str
    results: dict[str, Attribution] = field(default_factory=dict)
    """Trace id -> attribution (done and cached). Two traces sharing an id: see ``by_hash``."""
    cached: int = 0
    skipped_successful: int = 0
    errors: list[dict[str, Any]] = field(default_factory=list)
    """One entry per failed trace (``trace_id``, ``trace_hash``, ``path``, ``reason``), then, when
    the run stopped early, one for the stop (``stop``: its kind; ``budget`` True for a budget stop)."""
    stopped_by_budget: bool = False
    """True when the budget ran out (the error names the trace it stopped at)."""
    not_done: list[str] = field(default_factory=list)
    """Trace ids left unattributed because the budget ran out or the circuit breaker stopped the
    run (those already in the store are still answered from it)."""
    done: int = 0
    """Traces attributed in this run (not from the store)."""
    stop: Stop | None = None
    """Why the run stopped starting new work (budget, rejected key, unknown model, unreachable)."""
    by_hash: dict[str, Attribution] = field(default_factory=dict)
    """Trace content hash -> attribution (done and cached)."""
    outcomes: list[TraceOutcome[Attribution]] = field(default_factory=list)
    """Every attempted trace's fate, in input order (successful traces skipped are not here)."""
    progress: RunProgress | None = None

    @property
    def failed(self) -> list[TraceOutcome[Attribution]]:
        """The failed traces (id, content hash, path, reason)."""
        return [o for o in self.outcomes if o.status == "failed"]

    @property
    def complete(self) -> bool:
        """Every attempted trace was attributed or answered from the store (at least one)."""
        return bool(self.by_hash) and not self.failed and not self.not_done


def method_hash(method: str, options: dict[str, Any]) -> str:
    data = repr(sorted({"method": method, **options}.items())).encode()
    return "m1:" + hashlib.sha256(data).hexdigest()[:24]


class _AttributionStore:
    """The runner's view of an :class:`AttributionStore`: attributions under the method hash."""

    def __init__(self, store: AttributionStore, method: str) -> None:
        self.store = store
        self.method = method

    def get_result(self, trace: Trace, t_hash: str, key: str) -> Attribution | None:
        self.store.upsert_trace(trace, t_hash)
        return self.store.get_attribution(t_hash, key)

    def put_result(self, trace: Trace, t_hash: str, key: str, result: Attribution) -> None:
        self.store.put_attribution(trace.trace_id, t_hash, self.method, key, result)

    def log_failure(
        self, key: str, reason: str, *, trace_id: str | None, path: str | None, trace_hash: str | None = None
    ) -> None:
        log_error = getattr(self.store, "log_error", None)
        if log_error is not None:
            log_error(
                "attribute", reason, path=path, trace_id=trace_id, config_hash=key, trace_hash=trace_hash
            )


async def attribute_one(
    trace: Trace, method: str, *, judge: Any = None, with_ground_truth: bool = False
) -> Attribution:
    """One trace's attribution by ``method``: the rules, or the judge's ``aattribute`` (its
    synchronous ``attribute`` off the event loop when it has no async one).

    With the ``rules`` method the rules run here, unless the judge says it runs them itself
    (``runs_rules`` True: the Ray engine's judge, which sends the trace to a worker).
    """
    gt = trace.outcome.ground_truth if with_ground_truth and trace.outcome is not None else None
    if method == "rules" and not getattr(judge, "runs_rules", False):
        return attribute_by_rules(trace, ground_truth=gt)
    aattribute = getattr(judge, "aattribute", None)
    if aattribute is not None:
        result: Attribution = await aattribute(trace, method=method, ground_truth=gt)
        return result
    # a judge with only a synchronous attribute(): off the event loop
    return cast(Attribution, await asyncio.to_thread(judge.attribute, trace, method=method, ground_truth=gt))


def attribute(
    traces: Iterable[Trace],
    method: str = "rules",
    *,
    with_ground_truth: bool = False,
    store: AttributionStore | None = None,
    include_successful: bool = False,
    judge: Any = None,
    concurrency: int = 8,
    on_progress: Callable[[RunProgress], None] | None = None,
    total: int | None = None,
) -> AttributionReport:
    """Blame an agent and a step for each failed trace.

    Args:
        method: ``rules`` (no LLM) or an LLM method (``all-at-once``, ``step-by-step``,
            ``binary-search``), which needs ``judge`` (see :mod:`mastkit.attribute.llm`).
        with_ground_truth: let the method see the expected answer when the trace has one.
        include_successful: also attribute traces recorded as successful (skipped by default).
        concurrency: traces attributed at once, on one event loop (the judge's ``aattribute``).
        on_progress: called with live counters after each trace.
        total: traces expected, for the progress ETA (None: unknown).

    Runs on :func:`mastkit.llm.runner.run_per_trace`: a trace whose attribution raises is failed
    (logged in the store when it has ``log_error``, not stored, tried again next run); a budget
    stop or a provider error no trace can get past (rejected key, unknown model, unreachable
    server) stops the run and leaves the rest not done.
    """
    if method not in METHODS:
        raise ValueError(f"unknown attribution method {method!r}; use one of {', '.join(METHODS)}")
    if method != "rules" and judge is None:
        raise ValueError(f"the {method} method needs a model (--model provider:name)")
    options = {
        "with_ground_truth": with_ground_truth,
        "version": RULE_ATTRIBUTOR_VERSION if method == "rules" else getattr(judge, "version", "llm"),
    }
    if judge is not None and method != "rules":
        options["model"] = getattr(judge, "model_id", None)
    mh = method_hash(method, options)
    report = AttributionReport(method=method, method_hash=mh)

    def failed_runs() -> Iterator[Trace]:
        for t in traces:
            if not include_successful and t.outcome is not None and t.outcome.success is True:
                report.skipped_successful += 1
                continue
            yield t

    async def work(t: Trace) -> Attribution:
        return await attribute_one(t, method, judge=judge, with_ground_truth=with_ground_truth)

    run = run_per_trace_sync(
        failed_runs(),
        work,
        key=mh,
        aclose=getattr(judge, "aclose", None),
        store=_AttributionStore(store, method) if store is not None else None,
        concurrency=concurrency,
        on_progress=on_progress,
        total=total,
    )
    for o in run.outcomes:
        if o.result is not None:
            report.results[o.trace_id] = o.result
            report.by_hash[o.trace_hash] = o.result
    report.cached = run.progress.cached
    report.done = run.progress.done
    report.errors = error_entries(run.outcomes, run.stop)
    report.stop = run.stop
    report.stopped_by_budget = run.stop is not None and run.stop.kind == "budget"
    report.not_done = [o.trace_id for o in run.not_done]
    report.outcomes = run.outcomes
    report.progress = run.progress
    return report
