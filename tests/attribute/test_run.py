"""``mastkit.attribute.run``: what ``attribute`` hands the runner and the store, and what it reports.

The judges here are small stand-ins for the protocol ``attribute`` reads (``aattribute``,
``aclose``, ``version``, ``model_id``); the LLM attributor itself runs against the loopback
FakeLLMServer in the concurrency test. The store is a real :class:`mastkit.store.Store`.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from typing import Any

import pytest

from mastkit.attribute import LLMAttributor, attribute
from mastkit.attribute.llm import AttributionOptions
from mastkit.attribute.model import Attribution
from mastkit.attribute.run import METHODS, RULE_ATTRIBUTOR_VERSION, method_hash
from mastkit.llm.runner import RunProgress
from mastkit.providers import RetryPolicy, get_provider
from mastkit.providers.errors import ProviderAuthError
from mastkit.store import Store
from mastkit.testing import FakeLLMServer, Reply
from mastkit.traces.model import Event, Outcome, Trace


def _trace(tid: str, *, success: bool | None = False, gt: str | None = "4", path: str | None = None) -> Trace:
    events = [
        Event(seq=0, kind="message", actor="user", role="user", content=f"Compute 2 + 2 ({tid})."),
        Event(seq=1, kind="message", actor="solver", role="assistant", content="The answer is 5."),
    ]
    outcome = None if success is None else Outcome(success=success, ground_truth=gt)
    return Trace(
        trace_id=tid,
        source_format="test",
        events=events,
        outcome=outcome,
        source_paths=[path] if path else [],
    )


class AsyncJudge:
    """A judge with ``aattribute`` and ``aclose``; fails the traces named in ``fail``."""

    version = "async-7"
    model_id = "test:async"

    def __init__(
        self, fail: tuple[str, ...] = (), delay: float = 0.01, error: Exception | None = None
    ) -> None:
        self.fail = fail
        self.delay = delay
        self.error = error
        self.calls: list[tuple[str, str, str | None]] = []
        self.closed = 0
        self.in_flight = 0
        self.peak = 0

    async def aattribute(self, trace: Trace, *, method: str, ground_truth: str | None) -> Attribution:
        self.calls.append((trace.trace_id, method, ground_truth))
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            await asyncio.sleep(self.delay)
        finally:
            self.in_flight -= 1
        if self.error is not None:
            raise self.error
        if trace.trace_id in self.fail:
            raise RuntimeError(f"cannot attribute {trace.trace_id}")
        return Attribution(agent="solver", step=1, reason=f"async {trace.trace_id}", confidence=0.5)

    async def aclose(self) -> None:
        self.closed += 1


def test_method_hash_is_stable() -> None:
    # stored attributions are found again by this hash: it must not drift between versions
    assert method_hash("rules", {"with_ground_truth": False, "version": "attr-rules-1"}) == (
        "m1:b00a442a69fc27898c60a435"
    )
    data = repr(sorted({"method": "x", "a": 1}.items())).encode()
    assert method_hash("x", {"a": 1}) == "m1:" + hashlib.sha256(data).hexdigest()[:24]


def test_unknown_method_and_missing_judge_are_refused() -> None:
    with pytest.raises(ValueError, match=r"unknown attribution method 'nope'; use one of rules, all-at-once, "
                       r"step-by-step, binary-search"):  # fmt: skip
        attribute([_trace("a")], "nope")
    for method in METHODS[1:]:
        with pytest.raises(
            ValueError, match=rf"^the {method} method needs a model \(--model provider:name\)$"
        ):
            attribute([_trace("a")], method)
    assert METHODS == ("rules", "all-at-once", "step-by-step", "binary-search")


def test_the_method_hash_follows_method_ground_truth_version_and_model() -> None:
    t = [_trace("a")]
    rules = attribute(t)
    assert rules.method_hash == method_hash(
        "rules", {"with_ground_truth": False, "version": RULE_ATTRIBUTOR_VERSION}
    )
    assert attribute(t, with_ground_truth=True).method_hash == method_hash(
        "rules", {"with_ground_truth": True, "version": RULE_ATTRIBUTOR_VERSION}
    )
    judge = AsyncJudge()
    llm = attribute(t, "step-by-step", judge=judge)
    assert llm.method_hash == method_hash(
        "step-by-step", {"with_ground_truth": False, "version": "async-7", "model": "test:async"}
    )

    class Bare:
        async def aattribute(self, trace: Trace, *, method: str, ground_truth: str | None) -> Attribution:
            return Attribution(agent="x")

    bare = attribute(t, "all-at-once", judge=Bare())
    assert bare.method_hash == method_hash(
        "all-at-once", {"with_ground_truth": False, "version": "llm", "model": None}
    )
    # the rules method never asks the judge: a judge given to it does not change the result's key
    assert attribute(t, judge=judge).method_hash == rules.method_hash


def test_successful_traces_are_skipped_unless_asked() -> None:
    traces = [
        _trace("ok", success=True),
        _trace("bad"),
        _trace("unknown", success=None),
        _trace("ok2", success=True),
    ]
    judge = AsyncJudge()
    report = attribute(traces, "all-at-once", judge=judge)
    assert report.skipped_successful == 2
    assert sorted(c[0] for c in judge.calls) == ["bad", "unknown"]
    assert sorted(report.results) == ["bad", "unknown"]
    everything = attribute(traces, "all-at-once", judge=AsyncJudge(), include_successful=True)
    assert everything.skipped_successful == 0 and sorted(everything.results) == [
        "bad",
        "ok",
        "ok2",
        "unknown",
    ]


def test_the_async_judge_gets_method_and_ground_truth_only_when_asked() -> None:
    judge = AsyncJudge()
    attribute([_trace("a"), _trace("n", success=None)], "binary-search", judge=judge, with_ground_truth=True)
    assert sorted(judge.calls) == [("a", "binary-search", "4"), ("n", "binary-search", None)]
    plain = AsyncJudge()
    attribute([_trace("a")], "binary-search", judge=plain)
    assert plain.calls == [("a", "binary-search", None)]
    assert judge.closed == 1 and plain.closed == 1  # closed on the run's own event loop


def test_rules_see_the_ground_truth_only_when_asked() -> None:
    # the rule attributor blames a wrong final answer only when it knows the right one
    blind = attribute([_trace("a")])
    told = attribute([_trace("a")], with_ground_truth=True)
    assert blind.results["a"] != told.results["a"]
    assert told.results["a"].method == "rules" and told.results["a"].agent == "solver"


def test_concurrency_bounds_the_traces_in_flight() -> None:
    traces = [_trace(f"t{i}") for i in range(10)]
    two = AsyncJudge(delay=0.2)
    attribute(traces[:4], "all-at-once", judge=two, concurrency=2)
    assert two.peak == 2
    default = AsyncJudge(delay=0.2)
    attribute(traces, "all-at-once", judge=default)
    assert default.peak == 8


def _reply(payload: Any) -> Reply:
    body = {"agent": "solver", "step": 1, "reason": "r", "mode": None, "confidence": 0.8, "alternatives": []}
    return Reply(json.dumps(body), delay_s=0.8)


def test_the_llm_attributor_requests_in_flight_follow_concurrency() -> None:
    traces = [_trace(f"t{i}") for i in range(6)]
    retry = RetryPolicy(max_attempts=2, initial_delay_s=0.01, max_delay_s=0.02, jitter=0.0)
    with FakeLLMServer(handler=_reply) as srv:
        provider = get_provider("openai:x", base_url=srv.openai_base_url, api_key="k", retry=retry)
        judge = LLMAttributor(provider, options=AttributionOptions())
        report = attribute(traces, "all-at-once", judge=judge, concurrency=3)
        assert srv.max_in_flight == 3
    assert len(report.results) == 6 and report.complete


def test_progress_total_and_callback() -> None:
    seen: list[tuple[int | None, int]] = []
    objects: list[RunProgress] = []

    def on_progress(p: RunProgress) -> None:
        objects.append(p)
        seen.append((p.total, p.done))

    report = attribute([_trace("a"), _trace("b")], on_progress=on_progress, total=2, concurrency=1)
    assert seen == [(2, 1), (2, 2)]
    assert report.progress is not None and all(o is report.progress for o in objects)
    assert report.progress.total == 2 and report.done == 2
    assert attribute([_trace("a")]).progress.total is None  # type: ignore[union-attr]


def test_results_are_stored_under_the_method_and_answered_from_the_store() -> None:
    store = Store.memory()
    traces = [_trace("a"), _trace("b")]
    judge = AsyncJudge()
    first = attribute(traces, "step-by-step", judge=judge, store=store)
    assert (first.done, first.cached) == (2, 0)
    for t in traces:
        got = store.get_attribution(t.content_hash(), first.method_hash)
        assert got is not None and got.method == "step-by-step" and got.reason == f"async {t.trace_id}"
        assert store.get_trace(trace_hash=t.content_hash()) is not None
    assert set(store.attributions("step-by-step")) == {"a", "b"}
    again_judge = AsyncJudge()
    again = attribute(traces, "step-by-step", judge=again_judge, store=store)
    assert again_judge.calls == []
    assert (again.done, again.cached) == (0, 2)
    assert again.results["a"].reason == "async a" and again.complete
    assert again.by_hash == {t.content_hash(): again.results[t.trace_id] for t in traces}
    assert first.by_hash[traces[0].content_hash()].reason == "async a"


def test_a_failed_trace_is_logged_with_every_field() -> None:
    store = Store.memory()
    bad = _trace("bad", path="/data/bad.json")
    judge = AsyncJudge(fail=("bad",))
    report = attribute([bad, _trace("good")], "all-at-once", judge=judge, store=store)
    assert [o.trace_id for o in report.failed] == ["bad"]
    assert not report.complete and sorted(report.results) == ["good"]
    (row,) = store.errors(report.method_hash)
    assert row["stage"] == "attribute"
    assert row["trace_id"] == "bad"
    assert row["path"] == "/data/bad.json"
    assert row["config_hash"] == report.method_hash
    assert row["trace_hash"] == bad.content_hash()
    assert row["reason"] == "RuntimeError: cannot attribute bad"
    (entry,) = report.errors
    assert entry == {
        "trace_id": "bad",
        "trace_hash": bad.content_hash(),
        "path": "/data/bad.json",
        "reason": "RuntimeError: cannot attribute bad",
    }
    assert report.stop is None and not report.stopped_by_budget and report.not_done == []


class _NoLogStore:
    """A store without ``log_error``: failures are simply not logged."""

    def __init__(self) -> None:
        self.inner = Store.memory()

    def upsert_trace(self, trace: Trace, t_hash: str | None = None) -> str:
        return self.inner.upsert_trace(trace, t_hash)

    def get_attribution(self, t_hash: str, method_hash: str) -> Attribution | None:
        return self.inner.get_attribution(t_hash, method_hash)

    def put_attribution(
        self, trace_id: str, t_hash: str, method: str, method_hash: str, a: Attribution
    ) -> None:
        self.inner.put_attribution(trace_id, t_hash, method, method_hash, a)


def test_a_store_without_log_error_still_runs() -> None:
    store = _NoLogStore()
    report = attribute(
        [_trace("bad"), _trace("good")], "all-at-once", judge=AsyncJudge(fail=("bad",)), store=store
    )
    assert [o.status for o in report.outcomes] == ["failed", "done"]
    assert store.inner.errors() == []


def test_an_auth_error_stops_the_run() -> None:
    store = Store.memory()
    judge = AsyncJudge(error=ProviderAuthError("rejected", status=401))
    report = attribute(
        [_trace("a"), _trace("b"), _trace("c")], "all-at-once", judge=judge, store=store, concurrency=1
    )
    assert report.stop is not None and report.stop.kind == "auth"
    assert not report.stopped_by_budget
    assert report.not_done == ["a", "b", "c"]
    assert report.errors[-1]["stop"] == "auth" and report.errors[-1]["budget"] is False
    assert not report.complete and report.results == {}
    (row,) = store.errors(report.method_hash)  # the stop itself, logged once for the run
    assert row["stage"] == "attribute" and row["trace_id"] is None
