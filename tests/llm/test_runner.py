"""The per-trace runner (mastkit.llm.runner) and the annotate/attribute adapters over it, end to end
against the real loopback FakeLLMServer: failures are logged and retried, never stored; errors no
trace can get past (rejected key, unknown model, unreachable server) stop the run after a handful
of requests; duplicate trace ids are both kept; progress counts up to the total."""

from __future__ import annotations

import asyncio
import json
import socket
import sqlite3
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from annotate._judgekit import FAST_RETRY, make_judge, reply_json, simple_trace, trace_id_of
from mastkit.annotate import annotate
from mastkit.attribute import LLMAttributor, attribute
from mastkit.attribute.llm import AttributionOptions
from mastkit.cli._common import MAX_LISTED, failures_file
from mastkit.cli.main import app
from mastkit.llm.reply import ReplyError
from mastkit.llm.runner import RunProgress, breaker_kind, run_per_trace, run_per_trace_sync
from mastkit.providers import ProviderUnavailableError, get_provider
from mastkit.store import Store
from mastkit.testing import FakeLLMServer, Reply
from mastkit.traces.model import Event, Outcome, Trace

runner = CliRunner()


class DictStore:
    """A RunStore kept in memory (what a feature without a table of its own could use)."""

    def __init__(self) -> None:
        self.results: dict[tuple[str, str], str] = {}
        self.errors: list[tuple[str | None, str]] = []
        self.error_hashes: list[str | None] = []

    def get_result(self, trace: Trace, t_hash: str, key: str) -> str | None:
        return self.results.get((t_hash, key))

    def put_result(self, trace: Trace, t_hash: str, key: str, result: str) -> None:
        self.results[(t_hash, key)] = result

    def log_failure(
        self, key: str, reason: str, *, trace_id: str | None, path: str | None, trace_hash: str | None = None
    ) -> None:
        self.errors.append((trace_id, reason))
        self.error_hashes.append(trace_hash)


def closed_port_url() -> str:
    """An OpenAI base URL on a loopback port nothing listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def unreachable() -> ProviderUnavailableError:
    return ProviderUnavailableError("cannot connect", provider="openai", model="x", kind="connection")


def attr_trace(trace_id: str, n: int = 4) -> Trace:
    events = [Event(seq=0, kind="message", actor="human", role="user", content="What is 6 x 7?")]
    events += [
        Event(seq=i, kind="message", actor=("Planner", "Coder")[i % 2], role="assistant", content=f"step {i}")
        for i in range(1, n + 1)
    ]
    return Trace(trace_id=trace_id, source_format="test", events=events, outcome=Outcome(success=False))


def attribution_reply(payload: Any, *, broken: set[str] = frozenset()) -> Reply:  # type: ignore[assignment]
    text = "\n".join(m["content"] for m in payload["messages"] if m["role"] == "user")
    tid = text.split("(trace id: ", 1)[1].split(";", 1)[0]
    if tid in broken:
        return Reply("I cannot tell, sorry.")
    body = {"agent": "Coder", "step": 2, "reason": "r", "mode": None, "confidence": 0.8, "alternatives": []}
    return Reply(json.dumps(body))


def attributor(url: str, **kw: Any) -> LLMAttributor:
    provider = get_provider("openai:x", base_url=url, api_key="test", retry=FAST_RETRY, **kw)
    return LLMAttributor(provider, options=AttributionOptions())


def write_traces(path: Path, traces: list[Trace]) -> Path:
    path.write_text("".join(t.model_dump_json() + "\n" for t in traces), encoding="utf-8")
    return path


# -- failures are failures ----------------------------------------------------------------------------


def test_a_failing_trace_is_logged_not_stored_and_retried_next_run() -> None:
    traces = [simple_trace(f"t{i}") for i in range(5)]
    store = DictStore()
    calls: Counter[str] = Counter()
    broken = {"t2"}

    async def work(t: Trace) -> str:
        calls[t.trace_id] += 1
        if t.trace_id in broken:
            raise ReplyError("unusable reply after one repair")
        return f"ok {t.trace_id}"

    first = run_per_trace_sync(traces, work, key="k", store=store)
    assert (first.progress.done, first.progress.failed, first.progress.cached) == (4, 1, 0)
    assert not first.complete and first.stop is None
    (failed,) = first.failed
    assert failed.trace_id == "t2" and failed.reason == "ReplyError: unusable reply after one repair"
    assert failed.trace_hash == traces[2].content_hash()
    assert store.errors == [("t2", "ReplyError: unusable reply after one repair")]
    assert store.error_hashes == [traces[2].content_hash()]
    assert len(store.results) == 4  # nothing stored for the failed trace
    broken.clear()
    second = run_per_trace_sync(traces, work, key="k", store=store)
    assert (second.progress.done, second.progress.cached, second.progress.failed) == (1, 4, 0)
    assert second.complete
    assert calls == {"t0": 1, "t1": 1, "t2": 2, "t3": 1, "t4": 1}
    assert set(second.results) == {t.content_hash() for t in traces}


def test_cli_attribute_unusable_reply_exit_1_then_rerun_finishes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = write_traces(tmp_path / "t.jsonl", [attr_trace(f"a{i}") for i in range(4)])
    db = tmp_path / "m.db"
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    with FakeLLMServer(handler=lambda p: attribution_reply(p, broken={"a1"})) as srv:
        args = ["attribute", str(src), "--method", "all-at-once", "--model", "openai:x"]
        args += ["--base-url", srv.openai_base_url, "--db", str(db)]
        res = runner.invoke(app, args)
        assert res.exit_code == 1, res.output
        assert "failed: a1" in res.stderr and "AttributionReplyError" in res.stderr
        assert "3 attributed (0 cached)" in res.stdout and "1 failed" in res.stdout
        with Store(db) as store:
            assert [e["trace_id"] for e in store.errors()] == ["a1"]
            assert sorted(store.attributions()) == ["a0", "a2", "a3"]
        n_first = len(srv.chat_requests)
        assert n_first == 3 + 2  # a1: one request and one repair
    # the two unusable replies were not put in the response cache
    con = sqlite3.connect(db)
    try:
        assert con.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 3
    finally:
        con.close()
    with FakeLLMServer(handler=attribution_reply) as srv:
        args[args.index("--base-url") + 1] = srv.openai_base_url
        res = runner.invoke(app, args)
        assert res.exit_code == 0, res.output
        assert "4 attributed (3 cached)" in res.stdout
        # only a1 was asked about again: its first request is answered by the response cache, so
        # only the repair request (which gets a good reply now) is sent
        assert len(srv.chat_requests) == 1
        texts = [m["content"] for r in srv.chat_requests for m in r.json["messages"] if m["role"] == "user"]
        assert all("(trace id: a1;" in t for t in texts if "trace id" in t)


def test_cli_annotate_failed_trace_exit_1_rerun_asks_only_about_it(tmp_path: Path) -> None:
    src = write_traces(tmp_path / "t.jsonl", [simple_trace(f"t{i}") for i in range(4)])
    db = tmp_path / "m.db"
    down = {"t1"}

    def handler(payload: Any) -> Reply:
        return Reply.server_error() if trace_id_of(payload) in down else Reply(reply_json(("FM-1.3",)))

    with FakeLLMServer(handler=handler) as srv:
        args = ["annotate", str(src), "--annotator", "llm", "--model", "openai:x", "--db", str(db)]
        args += ["--base-url", srv.openai_base_url, "--max-attempts", "1"]
        res = runner.invoke(app, args, env={"OPENAI_API_KEY": "test"})
        assert res.exit_code == 1, res.output
        assert "failed: t1" in res.stderr and "HTTP 500" in res.stderr
        assert "3 annotated, 0 from cache, 1 failed" in res.stdout
        down.clear()
        srv.reset()
        res = runner.invoke(app, args, env={"OPENAI_API_KEY": "test"})
        assert res.exit_code == 0, res.output
        assert "1 annotated, 3 from cache, 0 failed" in res.stdout
        assert [trace_id_of(r.json) for r in srv.chat_requests] == ["t1"]


def test_cli_exit_3_when_nothing_was_annotated(tmp_path: Path) -> None:
    src = write_traces(tmp_path / "t.jsonl", [simple_trace(f"t{i}") for i in range(2)])
    with FakeLLMServer(default=Reply.server_error()) as srv:
        args = ["annotate", str(src), "--annotator", "llm", "--model", "openai:x", "--max-attempts", "1"]
        args += ["--base-url", srv.openai_base_url, "--db", str(tmp_path / "m.db")]
        res = runner.invoke(app, args, env={"OPENAI_API_KEY": "test"})
    assert res.exit_code == 3, res.output


def test_cli_lists_all_failures_up_to_20_then_writes_the_full_list(tmp_path: Path) -> None:
    n = MAX_LISTED + 5
    traces = [simple_trace(f"t{i:02d}") for i in range(n + 1)]
    src = write_traces(tmp_path / "t.jsonl", traces)
    db = tmp_path / "m.db"

    def handler(payload: Any) -> Reply:
        return Reply(reply_json()) if trace_id_of(payload) == "t00" else Reply.server_error()

    with FakeLLMServer(handler=handler) as srv:
        args = ["annotate", str(src), "--annotator", "llm", "--model", "openai:x", "--max-attempts", "1"]
        args += ["--base-url", srv.openai_base_url, "--db", str(db)]
        res = runner.invoke(app, args, env={"OPENAI_API_KEY": "test"})
    assert res.exit_code == 1, res.output
    listed = [line for line in res.stderr.splitlines() if line.startswith("failed: ")]
    assert len(listed) == MAX_LISTED
    assert "and 5 more failed" in res.stderr
    path = failures_file(db, "annotate")
    assert str(path) in res.stderr.replace("\n", "")
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert sorted(r["trace_id"] for r in rows) == [f"t{i:02d}" for i in range(1, n + 1)]
    assert all(r["status"] == "failed" and "HTTP 500" in r["reason"] for r in rows)
    with Store(db) as store:  # and queryable in the store
        assert len([e for e in store.errors() if e["stage"] == "annotate"]) == n


def test_cli_few_failures_are_all_printed_and_no_file(tmp_path: Path) -> None:
    traces = [simple_trace(f"t{i}") for i in range(4)]
    db = tmp_path / "m.db"

    def handler(payload: Any) -> Reply:
        return Reply(reply_json()) if trace_id_of(payload) == "t0" else Reply.server_error()

    with FakeLLMServer(handler=handler) as srv:
        args = ["annotate", str(write_traces(tmp_path / "t.jsonl", traces)), "--annotator", "llm"]
        args += [
            "--model",
            "openai:x",
            "--max-attempts",
            "1",
            "--base-url",
            srv.openai_base_url,
            "--db",
            str(db),
        ]
        res = runner.invoke(app, args, env={"OPENAI_API_KEY": "test"})
    assert res.exit_code == 1
    assert sorted(
        line.split(":")[1].split()[0] for line in res.stderr.splitlines() if line.startswith("failed: ")
    ) == [
        "t1",
        "t2",
        "t3",
    ]
    assert not failures_file(db, "annotate").exists()


# -- circuit breaker ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "kind", "says"),
    [
        (401, "auth", "rejected the API key (401)"),
        (403, "auth", "rejected the API key (403)"),
        (404, "not_found", "model x not found (404)"),
    ],
)
def test_breaker_stops_at_once_on_auth_and_unknown_model(status: int, kind: str, says: str) -> None:
    traces = [simple_trace(f"t{i:02d}") for i in range(50)]
    store = Store.memory()
    concurrency = 4
    with FakeLLMServer(default=Reply.error(status, "nope")) as srv:
        t0 = time.monotonic()
        report = annotate(traces, make_judge(srv, cache=store), store=store, concurrency=concurrency)
        elapsed = time.monotonic() - t0
        n_requests = len(srv.chat_requests)
    assert n_requests <= concurrency + 2, n_requests
    assert elapsed < 10
    assert report.stop is not None and report.stop.kind == kind and says in report.stop.message
    p = report.progress
    assert (p.done, p.cached, p.failed, p.not_done) == (0, 0, 0, 50)
    assert sorted(report.not_done) == [t.trace_id for t in traces]
    assert report.errors[-1]["stop"] == kind and not report.errors[-1]["budget"]
    assert not report.complete
    (logged,) = store.errors()  # one message for the run, not one per trace
    assert logged["trace_id"] is None and says in logged["reason"]


def test_breaker_stops_after_three_unreachable_traces_in_a_row() -> None:
    traces = [simple_trace(f"t{i:02d}") for i in range(50)]
    store = Store.memory()
    concurrency = 4
    t0 = time.monotonic()
    report = annotate(
        traces,
        make_judge_url(closed_port_url(), store),
        store=store,
        concurrency=concurrency,
    )
    elapsed = time.monotonic() - t0
    assert report.stop is not None and report.stop.kind == "unreachable"
    assert "cannot reach openai:x" in report.stop.message and "is the server running?" in report.stop.message
    p = report.progress
    attempted = store.call_stats()["failed"]  # one call log row per trace whose call was sent
    assert 3 <= attempted <= concurrency + 2, attempted
    assert p.failed + p.not_done == 50 and p.failed <= concurrency and p.not_done >= 50 - concurrency
    assert elapsed < 15


def make_judge_url(url: str, store: Store) -> Any:
    from mastkit.annotate.factory import make_annotator

    return make_annotator(
        "llm",
        model="openai:x",
        base_url=url,
        api_key="k",
        cache=store,
        provider_options={"retry": FAST_RETRY},
    )


def test_unreachable_streak_is_reset_by_a_success() -> None:
    fails = {"t0", "t1", "t3", "t4", "t6", "t7"}  # never three in a row

    async def work(t: Trace) -> str:
        if t.trace_id in fails:
            raise unreachable()
        return "ok"

    run = run_per_trace_sync([simple_trace(f"t{i}") for i in range(9)], work, key="k", concurrency=1)
    assert run.stop is None
    assert (run.progress.done, run.progress.failed, run.progress.not_done) == (3, 6, 0)
    fails.add("t5")  # t3, t4, t5: the breaker trips at t5
    run = run_per_trace_sync([simple_trace(f"t{i}") for i in range(9)], work, key="k", concurrency=1)
    assert run.stop is not None and run.stop.kind == "unreachable" and run.stop.trace_id == "t5"
    assert [o.status for o in run.outcomes] == ["failed", "failed", "done", "failed", "failed", "failed"] + [
        "not_done"
    ] * 3


def test_breaker_kinds() -> None:
    from mastkit.providers import ProviderAuthError, ProviderRequestError

    assert breaker_kind(ProviderAuthError("x", status=401)) == "auth"
    assert breaker_kind(ProviderRequestError("x", status=404, kind="not_found")) == "not_found"
    assert breaker_kind(ProviderRequestError("x", status=400, kind="bad_request")) is None
    assert breaker_kind(unreachable()) == "unreachable"
    assert breaker_kind(ProviderUnavailableError("x", kind="server", status=500)) is None
    assert breaker_kind(ReplyError("x")) is None


def test_attribute_breaker_on_401_sends_few_requests() -> None:
    traces = [attr_trace(f"a{i:02d}") for i in range(50)]
    with FakeLLMServer(default=Reply.error(401, "bad key")) as srv:
        report = attribute(traces, "all-at-once", judge=attributor(srv.openai_base_url), concurrency=4)
        assert len(srv.chat_requests) <= 4 + 2
    assert report.stop is not None and report.stop.kind == "auth"
    assert len(report.not_done) == 50 and not report.failed and not report.results


def test_cli_breaker_message_and_exit_code(tmp_path: Path) -> None:
    src = write_traces(tmp_path / "t.jsonl", [simple_trace(f"t{i:02d}") for i in range(30)])
    db = tmp_path / "m.db"
    with FakeLLMServer(default=Reply.error(401, "Incorrect API key provided")) as srv:
        args = ["annotate", str(src), "--annotator", "llm", "--model", "openai:x", "--concurrency", "2"]
        args += ["--base-url", srv.openai_base_url, "--db", str(db)]
        res = runner.invoke(app, args, env={"OPENAI_API_KEY": "test"})
        assert len(srv.chat_requests) <= 4
    assert res.exit_code == 3, res.output  # nothing annotated
    err = res.stderr.replace("\n", " ")
    assert "stopped: the provider rejected the API key (401)" in err and "OPENAI_API_KEY" in err
    assert "30 trace(s) not annotated" in err
    assert not [line for line in res.stderr.splitlines() if line.startswith("failed: ")]
    rows = [json.loads(line) for line in failures_file(db, "annotate").read_text().splitlines()]
    assert len(rows) == 30 and {r["status"] for r in rows} == {"not_done"}


def test_cli_exit_1_when_some_are_cached_and_the_rest_not_done(tmp_path: Path) -> None:
    traces = [simple_trace(f"t{i}") for i in range(4)]
    db = tmp_path / "m.db"

    def args(src: Path, url: str) -> list[str]:
        return [
            "annotate",
            str(src),
            "--annotator",
            "llm",
            "--model",
            "openai:x",
            "--db",
            str(db),
            "--base-url",
            url,
        ]

    with FakeLLMServer(handler=lambda p: reply_json()) as srv:  # an earlier run did two of them
        res = runner.invoke(app, args(write_traces(tmp_path / "two.jsonl", traces[:2]), srv.openai_base_url))
        assert res.exit_code == 0, res.output
        # no progress display when stderr is not a terminal (the cost estimate line is there)
        assert "cached 0" not in res.stderr and "annotating" not in res.stderr
    with FakeLLMServer(default=Reply.error(401, "bad key")) as srv:
        res = runner.invoke(app, args(write_traces(tmp_path / "all.jsonl", traces), srv.openai_base_url))
    assert res.exit_code == 1, res.output
    assert "0 annotated, 2 from cache, 0 failed, 2 not done" in res.stdout


# -- budget, duplicates, concurrency, progress --------------------------------------------------------


def test_budget_stop_lists_the_rest_as_not_done_but_answers_stored_ones() -> None:
    from mastkit.providers import BudgetExceeded

    store = DictStore()
    traces = [simple_trace(f"t{i}") for i in range(6)]
    store.put_result(traces[5], traces[5].content_hash(), "k", "stored")
    started: list[str] = []

    async def work(t: Trace) -> str:
        started.append(t.trace_id)
        if t.trace_id == "t2":
            raise BudgetExceeded(1.0, 1.0, 0.0, 0.1)
        return "ok"

    run = run_per_trace_sync(traces, work, key="k", store=store, concurrency=1)
    assert started == ["t0", "t1", "t2"]
    assert [o.status for o in run.outcomes] == ["done", "done", "not_done", "not_done", "not_done", "cached"]
    assert run.stop is not None and run.stop.kind == "budget" and run.stop.trace_id == "t2"
    assert store.errors == []  # a budget stop is not a trace failure


def test_duplicate_trace_ids_are_both_annotated_and_reported() -> None:
    one = simple_trace("same", ["Fix the bug.", "Done."])
    other = simple_trace("same", ["Write the docs.", "Written."])
    store = Store.memory()
    with FakeLLMServer(handler=lambda p: reply_json(("FM-1.3",))) as srv:
        report = annotate([one, other, one], make_judge(srv, cache=store), store=store)
        assert len(srv.chat_requests) == 2  # the exact repeat is not asked about again
    assert [a.trace_id for a in report.annotations] == ["same", "same"]
    assert set(report.by_hash) == {one.content_hash(), other.content_hash()}
    assert [o.status for o in report.outcomes] == ["done", "done", "duplicate"]
    assert report.complete
    assert store.get_annotation(one.content_hash(), report.config_hash) is not None
    assert store.get_annotation(other.content_hash(), report.config_hash) is not None


def test_attribute_keeps_duplicate_ids_apart_by_hash() -> None:
    a, b = attr_trace("dup", 3), attr_trace("dup", 5)
    report = attribute([a, b], "rules")
    assert set(report.by_hash) == {a.content_hash(), b.content_hash()}
    assert [o.trace_hash for o in report.outcomes] == [a.content_hash(), b.content_hash()]


def test_attribution_runs_concurrently_on_one_event_loop() -> None:
    traces = [attr_trace(f"a{i}") for i in range(8)]

    def slow(payload: Any) -> Reply:
        r = attribution_reply(payload)
        r.delay_s = 0.3
        return r

    with FakeLLMServer(handler=slow) as srv:
        t0 = time.monotonic()
        report = attribute(traces, "all-at-once", judge=attributor(srv.openai_base_url), concurrency=8)
        elapsed = time.monotonic() - t0
        assert srv.max_in_flight >= 4, srv.max_in_flight
    assert len(report.results) == 8 and not report.errors
    assert elapsed < 8 * 0.3, elapsed  # serial would take at least 2.4 s


def test_concurrency_is_bounded() -> None:
    in_flight = 0
    peak = 0

    async def work(t: Trace) -> str:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.01)
        in_flight -= 1
        return "ok"

    run = run_per_trace_sync([simple_trace(f"t{i}") for i in range(20)], work, key="k", concurrency=3)
    assert peak == 3 and run.progress.done == 20


def test_progress_counts_up_to_the_total_with_rate_and_eta() -> None:
    seen: list[tuple[int, int | None, float | None, float | None]] = []

    async def work(t: Trace) -> str:
        await asyncio.sleep(0.01)
        if t.trace_id == "t3":
            raise ValueError("boom")
        return "ok"

    def on_progress(p: RunProgress) -> None:
        seen.append((p.finished, p.total, p.rate, p.eta_s))

    traces = [simple_trace(f"t{i}") for i in range(10)]
    run = asyncio.run(run_per_trace(traces, work, key="k", total=10, on_progress=on_progress, concurrency=2))
    assert [s[0] for s in seen] == list(range(1, 11))
    assert all(total == 10 and rate is not None and rate > 0 for _f, total, rate, _e in seen)
    etas = [e for _f, _t, _r, e in seen]
    assert etas[-1] == 0 and all(e is not None for e in etas) and etas[0] > etas[-1]  # type: ignore[operator]
    assert (run.progress.done, run.progress.failed) == (9, 1)


def test_keep_false_drops_results_but_keeps_failures() -> None:
    async def work(t: Trace) -> str:
        if t.trace_id == "t1":
            raise ValueError("boom")
        return "ok"

    run = run_per_trace_sync([simple_trace(f"t{i}") for i in range(4)], work, key="k", keep=False)
    assert [(o.trace_id, o.status) for o in run.outcomes] == [("t1", "failed")]
    assert run.progress.done == 3 and not run.results


def test_an_unusable_cached_reply_is_asked_again() -> None:
    """A reply cached before ``accept`` existed (or by a caller without it) is not replayed."""
    from mastkit.llm.call import cached_call
    from mastkit.providers import ChatMessage, ChatRequest

    store = Store.memory()
    req = ChatRequest(messages=[ChatMessage(role="user", content="answer in JSON")])
    with FakeLLMServer(["no JSON here", '{"ok": true}']) as srv:
        provider = get_provider("openai:x", base_url=srv.openai_base_url, api_key="k", retry=FAST_RETRY)

        async def ask(accept: Any) -> str:
            try:
                return await cached_call(
                    provider, req, cache=store, budget=None, trace_id="t", config_hash="c", accept=accept
                )
            finally:
                await provider.aclose()

        assert asyncio.run(ask(None)) == "no JSON here"  # cached as it is
        assert asyncio.run(ask(lambda text: text.startswith("{"))) == '{"ok": true}'
        assert asyncio.run(ask(lambda text: text.startswith("{"))) == '{"ok": true}'  # now from the cache
        assert len(srv.chat_requests) == 2


def test_breaker_cancels_work_in_flight_and_releases_its_budget() -> None:
    traces = [simple_trace(f"t{i}") for i in range(6)]

    def handler(payload: Any) -> Reply:
        if trace_id_of(payload) == "t0":
            return Reply(status=401, error_message="bad key", delay_s=0.3)
        return Reply(reply_json(), delay_s=5.0)  # would answer, but far too late

    store = Store.memory()
    with FakeLLMServer(handler=handler) as srv:
        ann = make_judge(srv, model="openai:gpt-4o-mini", cache=store, budget_usd=1.0)
        t0 = time.monotonic()
        report = annotate(traces, ann, store=store, concurrency=4)
        elapsed = time.monotonic() - t0
        assert len(srv.chat_requests) == 4
    assert elapsed < 3, elapsed  # t1..t3 were cancelled, not waited for
    assert report.stop is not None and report.stop.kind == "auth"
    assert [o.status for o in report.outcomes] == ["not_done"] * 6
    budget = ann.budget  # type: ignore[attr-defined]
    assert budget.reserved_usd == 0 and budget.spent_usd == 0  # the cancelled calls' reservations released


def test_a_budget_stop_lets_calls_in_flight_finish() -> None:
    from mastkit.providers import BudgetExceeded

    async def work(t: Trace) -> str:
        if t.trace_id == "t0":
            await asyncio.sleep(0.01)  # t1 and t2 are in flight by now
            raise BudgetExceeded(1.0, 1.0, 0.0, 0.1)
        await asyncio.sleep(0.1)
        return "ok"

    run = run_per_trace_sync([simple_trace(f"t{i}") for i in range(5)], work, key="k", concurrency=3)
    assert [o.status for o in run.outcomes] == ["not_done", "done", "done", "not_done", "not_done"]
