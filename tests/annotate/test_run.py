"""``mastkit.annotate.run``: what the adapter passes to the runner and what it reports back.

Judge runs go to the loopback FakeLLMServer; the store is a real :class:`mastkit.store.Store`.
Each test pins one argument or field the adapter hands through (concurrency, keep, total,
on_progress, the store's error rows, the token counters), so that dropping or changing it fails.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from annotate._judgekit import make_judge, reply_json, simple_trace
from mastkit.annotate import annotate
from mastkit.annotate.model import Annotation, AnnotatorConfig
from mastkit.annotate.run import Progress, annotate_async
from mastkit.store import Store
from mastkit.testing import FakeLLMServer, Reply
from mastkit.testing.fake_llm import Usage
from mastkit.traces.model import Trace


def _traces(n: int, prefix: str = "t") -> list[Trace]:
    return [
        simple_trace(f"{prefix}{i}", [f"Task number {i}.", f"Done with {i}.", "Thanks."]) for i in range(n)
    ]


def _slow(delay: float) -> Any:
    def handler(payload: Any) -> Reply:
        return Reply(reply_json(), delay_s=delay)

    return handler


def _priced(payload: Any) -> Reply:
    return Reply(reply_json(), usage=Usage(input_tokens=1000, output_tokens=200))


@pytest.mark.parametrize(("concurrency", "n", "expected"), [(2, 4, 2), (None, 10, 8)])
def test_concurrency_bounds_the_requests_in_flight(concurrency: int | None, n: int, expected: int) -> None:
    # replies take 1 s, so every request of a round is in flight together even on a busy machine
    traces = _traces(n)
    with FakeLLMServer(handler=_slow(1.0)) as srv:
        judge = make_judge(srv, concurrency=32)  # the provider would allow far more
        kw: dict[str, Any] = {} if concurrency is None else {"concurrency": concurrency}
        report = annotate(traces, judge, **kw)
        assert srv.max_in_flight == expected
    assert report.complete and len(report.annotations) == n


def test_tokens_cost_and_calls_add_up_over_done_traces_only() -> None:
    store = Store.memory()
    traces = _traces(3)
    with FakeLLMServer(handler=_priced) as srv:
        first = annotate(traces, make_judge(srv, model="openai:gpt-4o-mini", cache=store), store=store)
        p = first.progress
        assert (p.model_calls, p.input_tokens, p.output_tokens) == (3, 3000, 600)
        assert p.cost_usd == pytest.approx(3 * (1000 * 0.15 + 200 * 0.60) / 1e6)
        assert p.input_tokens == sum(a.input_tokens for a in first.annotations)
        again = annotate(traces, make_judge(srv, model="openai:gpt-4o-mini", cache=store), store=store)
        assert srv.request_count == 3
    q = again.progress
    assert (q.cached, q.done, q.model_calls, q.cost_usd) == (3, 0, 0, 0.0)
    assert (q.input_tokens, q.output_tokens) == (0, 0)
    assert [a.trace_id for a in again.annotations] == ["t0", "t1", "t2"]


def test_on_progress_sees_the_live_counters_and_the_total() -> None:
    seen: list[tuple[int | None, int, int, int]] = []
    objects: list[Progress] = []

    def on_progress(p: Progress) -> None:
        objects.append(p)
        seen.append((p.total, p.done, p.input_tokens, p.model_calls))

    with FakeLLMServer(handler=_priced) as srv:
        report = annotate(_traces(3), make_judge(srv), concurrency=1, on_progress=on_progress, total=5)
    assert seen == [(5, 1, 1000, 1), (5, 2, 2000, 2), (5, 3, 3000, 3)]
    assert all(o is report.progress for o in objects)
    assert report.progress.total == 5
    assert report.progress.eta_s is not None  # known total: an ETA


def test_without_a_total_there_is_no_eta() -> None:
    with FakeLLMServer(handler=_priced) as srv:
        report = annotate(_traces(1), make_judge(srv))
    assert report.progress.total is None and report.progress.eta_s is None


def test_keep_false_leaves_results_out_of_the_report_but_in_the_store() -> None:
    store = Store.memory()
    traces = _traces(2)
    with FakeLLMServer(handler=_priced) as srv:
        report = annotate(traces, make_judge(srv, cache=store), store=store, keep=False)
    assert report.annotations == [] and report.outcomes == [] and report.by_hash == {}
    assert report.progress.done == 2 and report.complete
    assert report.progress.input_tokens == 2000  # counted before the result is dropped
    for t in traces:
        assert store.get_annotation(t.content_hash(), report.config_hash) is not None


def test_annotations_are_sorted_by_trace_id() -> None:
    traces = [*_traces(1, "b"), *_traces(1, "c"), *_traces(1, "a")]
    with FakeLLMServer(handler=_priced) as srv:
        report = annotate(traces, make_judge(srv))
    assert [a.trace_id for a in report.annotations] == ["a0", "b0", "c0"]
    assert [o.trace_id for o in report.outcomes] == ["b0", "c0", "a0"]  # input order


def test_a_failed_trace_is_logged_in_the_store_with_every_field() -> None:
    store = Store.memory()
    bad = simple_trace("bad", ["Break here.", "ok", "ok"]).model_copy(
        update={"source_paths": ["/data/bad.json"]}
    )
    good = _traces(1)[0]

    def handler(payload: Any) -> Reply:
        if "Break here." in str(payload):
            return Reply.error(400, "this request is refused")
        return Reply(reply_json())

    with FakeLLMServer(handler=handler) as srv:
        report = annotate([bad, good], make_judge(srv, cache=store), store=store)
    assert [o.status for o in report.outcomes] == ["failed", "done"]
    assert report.ok and not report.complete
    assert [o.trace_id for o in report.failed] == ["bad"]
    (row,) = [e for e in store.errors(report.config_hash) if e["trace_id"] is not None]
    assert row["stage"] == "annotate"
    assert row["trace_id"] == "bad"
    assert row["path"] == "/data/bad.json"
    assert row["config_hash"] == report.config_hash
    assert row["trace_hash"] == bad.content_hash()
    assert "this request is refused" in row["reason"]
    (entry,) = report.errors
    assert entry["trace_id"] == "bad" and entry["path"] == "/data/bad.json"
    assert entry["trace_hash"] == bad.content_hash()
    assert store.failed_traces(report.config_hash)[0]["trace_id"] == "bad"


def test_a_store_registers_the_run_and_the_trace() -> None:
    store = Store.memory()
    trace = _traces(1)[0]
    with FakeLLMServer(handler=_priced) as srv:
        report = annotate([trace], make_judge(srv, cache=store), store=store)
    assert report.config_hash in [r["config_hash"] for r in store.runs()]
    assert store.get_trace(trace_hash=trace.content_hash()) is not None
    assert report.by_hash[trace.content_hash()].trace_id == trace.trace_id


def test_nothing_done_is_not_ok() -> None:
    with FakeLLMServer(default=Reply.error(400, "no")) as srv:
        report = annotate(_traces(2), make_judge(srv))
    assert not report.ok and not report.complete
    assert report.progress.failed == 2 and report.annotations == []
    assert report.stop is None and not report.stopped_by_budget and report.not_done == []


def test_an_empty_run_is_neither_ok_nor_complete() -> None:
    with FakeLLMServer(handler=_priced) as srv:
        report = annotate([], make_judge(srv))
    assert not report.ok and not report.complete and report.errors == []


def test_a_budget_stop_is_reported() -> None:
    traces = _traces(4)
    with FakeLLMServer(handler=_priced) as srv:
        judge = make_judge(srv, model="openai:gpt-4o-mini", budget_usd=0.0002)
        report = annotate(traces, judge, concurrency=1)
    assert report.stopped_by_budget
    assert report.stop is not None and report.stop.kind == "budget"
    assert report.not_done and set(report.not_done) <= {t.trace_id for t in traces}
    assert report.errors[-1]["budget"] is True
    assert not report.complete


def test_an_auth_stop_is_not_a_budget_stop() -> None:
    with FakeLLMServer(default=Reply.error(401, "bad key")) as srv:
        report = annotate(_traces(3), make_judge(srv), concurrency=1)
    assert report.stop is not None and report.stop.kind == "auth"
    assert not report.stopped_by_budget
    assert report.not_done == ["t0", "t1", "t2"]


class _ClosingAnnotator:
    """An annotator (the protocol, not the judge) that records what it was asked and closed."""

    def __init__(self) -> None:
        self.config = AnnotatorConfig(kind="rules", options={"test": "closing"})
        self.closed = 0
        self.in_flight = 0
        self.peak = 0

    async def annotate(self, trace: Trace) -> Annotation:
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        await asyncio.sleep(0.2)
        self.in_flight -= 1
        return Annotation(
            trace_id=trace.trace_id, config=self.config, config_hash=self.config.config_hash(), verdicts=[]
        )

    async def aclose(self) -> None:
        self.closed += 1


def test_annotate_closes_the_annotator_and_passes_every_option() -> None:
    ann = _ClosingAnnotator()
    seen: list[int] = []
    report = annotate(
        _traces(5), ann, concurrency=3, on_progress=lambda p: seen.append(p.done), total=5, keep=False
    )
    assert ann.closed == 1
    assert ann.peak == 3
    assert seen == [1, 2, 3, 4, 5]
    assert report.progress.total == 5 and report.annotations == []


def test_annotate_async_defaults() -> None:
    ann = _ClosingAnnotator()
    report = asyncio.run(annotate_async(_traces(10), ann))
    assert ann.peak == 8 and ann.closed == 0  # only annotate() closes
    assert len(report.annotations) == 10 and report.progress.total is None
    assert report.config_hash == ann.config.config_hash()
