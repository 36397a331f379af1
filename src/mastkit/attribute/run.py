"""``attribute``: run an attribution method over traces, store the results, skip what is cached."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from mastkit.annotate.model import Attribution
from mastkit.attribute.rules import attribute_rules
from mastkit.providers.errors import BudgetExceeded
from mastkit.traces.model import Trace

METHODS = ("rules", "all-at-once", "step-by-step", "binary-search")
RULES_VERSION = "attr-rules-1"


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
    cached: int = 0
    skipped_successful: int = 0
    errors: list[dict[str, Any]] = field(default_factory=list)
    stopped_by_budget: bool = False
    """True when the budget ran out (the error names the trace it stopped at)."""
    not_done: list[str] = field(default_factory=list)
    """Trace ids left unattributed because the budget ran out (those already in the store are
    still answered from it)."""


def method_hash(method: str, options: dict[str, Any]) -> str:
    data = repr(sorted({"method": method, **options}.items())).encode()
    return "m1:" + hashlib.sha256(data).hexdigest()[:24]


def attribute(
    traces: Iterable[Trace],
    method: str = "rules",
    *,
    with_ground_truth: bool = False,
    store: AttributionStore | None = None,
    include_successful: bool = False,
    judge: Any = None,
) -> AttributionReport:
    """Blame an agent and a step for each failed trace.

    Args:
        method: ``rules`` (no LLM) or an LLM method (``all-at-once``, ``step-by-step``,
            ``binary-search``), which needs ``judge`` (see :mod:`mastkit.attribute.llm`).
        with_ground_truth: let the method see the expected answer when the trace has one.
        include_successful: also attribute traces recorded as successful (skipped by default).
    """
    if method not in METHODS:
        raise ValueError(f"unknown attribution method {method!r}; use one of {', '.join(METHODS)}")
    options = {
        "with_ground_truth": with_ground_truth,
        "version": RULES_VERSION if method == "rules" else getattr(judge, "version", "llm"),
    }
    if judge is not None:
        options["model"] = getattr(judge, "model_id", None)
    mh = method_hash(method, options)
    report = AttributionReport(method=method, method_hash=mh)
    for t in traces:
        if not include_successful and t.outcome is not None and t.outcome.success is True:
            report.skipped_successful += 1
            continue
        gt = t.outcome.ground_truth if with_ground_truth and t.outcome is not None else None
        t_hash = t.content_hash()
        if store is not None:
            store.upsert_trace(t, t_hash)
            hit = store.get_attribution(t_hash, mh)
            if hit is not None:
                report.cached += 1
                report.results[t.trace_id] = hit
                continue
        if report.stopped_by_budget:
            report.not_done.append(t.trace_id)
            continue
        try:
            if method == "rules":
                a = attribute_rules(t, ground_truth=gt)
            else:
                if judge is None:
                    raise ValueError(f"the {method} method needs a model (--model provider:name)")
                a = judge.attribute(t, method=method, ground_truth=gt)
        except BudgetExceeded as exc:
            report.stopped_by_budget = True
            report.not_done.append(t.trace_id)
            report.errors.append({"trace_id": t.trace_id, "reason": f"budget reached: {exc}"})
            continue
        except Exception as exc:
            report.errors.append({"trace_id": t.trace_id, "reason": f"{type(exc).__name__}: {exc}"})
            continue
        report.results[t.trace_id] = a
        if store is not None:
            store.put_attribution(t.trace_id, t_hash, method, mh, a)
    return report
