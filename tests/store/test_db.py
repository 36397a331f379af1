from __future__ import annotations

import csv
import json
import multiprocessing
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from mastkit.annotate.model import Annotation, AnnotatorConfig, Evidence, ModeVerdict
from mastkit.store import Store, StoreError, trace_hash
from mastkit.traces.model import Event, Outcome, Trace

CONFIG = AnnotatorConfig(kind="rules", prompt_version="rules-1", taxonomy_id="mast", taxonomy_version="1.0")


def make_trace(i: int = 0, text: str = "hi") -> Trace:
    return Trace(
        trace_id=f"t{i}",
        source_format="test",
        framework="fw",
        outcome=Outcome(success=i % 2 == 0),
        events=[Event(seq=0, kind="message", actor="a", content=text)],
    )


def make_annotation(trace: Trace, present: bool = True) -> Annotation:
    verdicts = [
        ModeVerdict(
            code="FM-1.3",
            verdict="present" if present else "absent",
            confidence=0.8,
            evidence=[Evidence(seq_start=0, seq_end=0, agent="a", quote="hi")],
            source="rule:x",
        ),
        ModeVerdict(code="FM-3.3", verdict="unknown", source="rule:y", rationale="no claim"),
    ]
    return Annotation(
        trace_id=trace.trace_id, config=CONFIG, config_hash=CONFIG.config_hash(), verdicts=verdicts
    )


def test_round_trip_and_cache_key(tmp_path: Path) -> None:
    with Store(tmp_path / "m.db") as store:
        h = store.register_run(CONFIG)
        t = make_trace()
        th = store.upsert_trace(t)
        assert th == trace_hash(t)
        assert store.get_annotation(th, h) is None
        a = make_annotation(t)
        store.put_annotation(a, th)
        assert store.get_annotation(th, h) == a
        # A changed trace has a different hash: the cached annotation does not apply to it.
        assert store.get_annotation(trace_hash(make_trace(text="changed")), h) is None


def test_put_twice_does_not_duplicate(tmp_path: Path) -> None:
    with Store(tmp_path / "m.db") as store:
        h = store.register_run(CONFIG)
        t = make_trace()
        th = store.upsert_trace(t)
        store.put_annotation(make_annotation(t, present=True), th)
        store.put_annotation(make_annotation(t, present=False), th)
        (only,) = list(store.annotations(h))
        assert only.verdict("FM-1.3").verdict == "absent"  # type: ignore[union-attr]
        assert len(store.verdict_rows(h)) == 2


def test_exports(tmp_path: Path) -> None:
    with Store(tmp_path / "m.db") as store:
        store.register_run(CONFIG)
        for i in range(3):
            t = make_trace(i)
            store.put_annotation(make_annotation(t), store.upsert_trace(t))
        assert store.export(tmp_path / "a.jsonl") == 3
        lines = (tmp_path / "a.jsonl").read_text().splitlines()
        assert [json.loads(x)["trace_id"] for x in lines] == ["t0", "t1", "t2"]
        assert store.export(tmp_path / "v.csv") == 6
        rows = list(csv.DictReader((tmp_path / "v.csv").open()))
        assert {r["code"] for r in rows} == {"FM-1.3", "FM-3.3"} and rows[0]["framework"] == "fw"
        with pytest.raises(StoreError, match="unknown export format"):
            store.export(tmp_path / "x.xlsx")


def test_parquet_export_or_clear_hint(tmp_path: Path) -> None:
    with Store(tmp_path / "m.db") as store:
        store.register_run(CONFIG)
        t = make_trace()
        store.put_annotation(make_annotation(t), store.upsert_trace(t))
        try:
            import pyarrow.parquet as pq
        except ImportError:
            from mastkit.errors import MissingDependencyError

            with pytest.raises(MissingDependencyError, match=r"mastkit\[parquet\]"):
                store.export(tmp_path / "v.parquet")
        else:
            assert store.export(tmp_path / "v.parquet") == 2
            assert pq.read_table(tmp_path / "v.parquet").num_rows == 2


def test_response_cache_and_call_log(tmp_path: Path) -> None:
    with Store(tmp_path / "m.db") as store:
        rh = "p1:" + "ab" * 20
        assert store.cached_response(rh) is None
        store.put_response(rh, "reply", model="m", input_tokens=10, output_tokens=2, cost_usd=0.01)
        cached = store.cached_response(rh)
        assert cached is not None and cached.text == "reply" and cached.input_tokens == 10
        store.log_call(
            trace_id="t0",
            config_hash="c",
            provider="openai",
            model="m",
            request_hash=rh,
            input_tokens=10,
            output_tokens=2,
            cost_usd=0.01,
            latency_s=0.3,
        )
        store.log_call(
            trace_id="t0", config_hash="c", provider="openai", model="m", request_hash=rh, cached=True
        )
        stats = store.call_stats("c")
        assert stats["calls"] == 2 and stats["cached"] == 1 and stats["input_tokens"] == 10


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    Store(path).close()
    db = sqlite3.connect(path)
    db.execute("UPDATE meta SET value = '999' WHERE key = 'schema_version'")
    db.commit()
    db.close()
    with pytest.raises(StoreError, match="newer mastkit"):
        Store(path)


def test_resolve_run(tmp_path: Path) -> None:
    with Store(tmp_path / "m.db") as store:
        with pytest.raises(StoreError, match="no annotation run yet"):
            store.resolve_run()
        h = store.register_run(CONFIG)
        assert store.resolve_run() == h == store.resolve_run("rules") == store.resolve_run(h[:8])
        with pytest.raises(StoreError, match="no run matches"):
            store.resolve_run("zzz")


def _writer(path: str, start: int) -> None:
    store = Store(path)
    store.register_run(CONFIG)
    for i in range(start, start + 25):
        t = make_trace(i)
        store.put_annotation(make_annotation(t), store.upsert_trace(t))
    store.close()


def test_several_processes_share_one_file(tmp_path: Path) -> None:
    path = str(tmp_path / "m.db")  # not created beforehand: the processes race to migrate it
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(path, k * 25)) for k in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    with Store(path) as store:
        assert len(list(store.annotations())) == 75


def _opener(path: str, barrier: Any) -> None:
    barrier.wait()
    Store(path).close()


def test_processes_opening_a_new_file_at_once_all_succeed(tmp_path: Path) -> None:
    # Switching a new file to WAL can get "database is locked" at once (no busy wait) when several
    # connections race; the store retries. Before it did, ~1 opener in 40 failed here.
    ctx = multiprocessing.get_context("spawn")
    for round_ in range(3):
        path = str(tmp_path / f"race{round_}.db")
        barrier = ctx.Barrier(8)
        procs = [ctx.Process(target=_opener, args=(path, barrier)) for _ in range(8)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(60)
        assert [p.exitcode for p in procs] == [0] * 8


def test_trace_body_is_kept_without_raw(tmp_path: Path) -> None:
    with Store(tmp_path / "m.db") as store:
        t = make_trace()
        t.events[0].raw = {"native": "record"}
        store.upsert_trace(t)
        back = store.get_trace("t0")
        assert back is not None and back.events[0].content == "hi" and back.events[0].raw is None
        assert store.get_trace("nope") is None
        assert "trace_zjson" not in store.traces()[0]
