"""Store behaviour pinned down against surviving mutants of ``mastkit.store.db`` (docs/mutation.md).

Every test runs on a real SQLite file; expected values are worked out by hand.
"""

from __future__ import annotations

import csv
import json
import sqlite3
from pathlib import Path

import pytest

from mastkit.annotate.model import Annotation, AnnotatorConfig, Evidence, ModeVerdict
from mastkit.attribute.model import Attribution
from mastkit.store import Store, StoreError, db
from mastkit.traces.model import Event, Outcome, Trace

RULES = AnnotatorConfig(kind="rules", prompt_version="rules-1", taxonomy_id="mast", taxonomy_version="1.0")
LLM = AnnotatorConfig(
    kind="llm", model="openai:m", prompt_version="p-1", taxonomy_id="mast", taxonomy_version="1.0"
)
EMAIL = "alice@acme-corp.io"


def make_trace(trace_id: str, text: str = "hi", path: str = "/runs/a.jsonl") -> Trace:
    return Trace(
        trace_id=trace_id,
        source_format="test",
        source_paths=[path],
        outcome=Outcome(success=False),
        events=[Event(seq=0, kind="message", actor="a", content=text)],
    )


def annotate(store: Store, t: Trace, config: AnnotatorConfig, agent: str = "a") -> str:
    store.register_run(config)
    h = store.upsert_trace(t)
    verdict = ModeVerdict(
        code="FM-1.3", verdict="present", confidence=0.5, evidence=[Evidence(seq_start=0, agent=agent)]
    )
    a = Annotation(
        trace_id=t.trace_id,
        config=config,
        config_hash=config.config_hash(),
        verdicts=[verdict],
        summary=agent,
    )
    store.put_annotation(a, h)
    return h


# -- export ------------------------------------------------------------------------------------------


def test_export_of_one_run_leaves_the_other_out(tmp_path: Path) -> None:
    with Store(tmp_path / "m.db") as store:
        annotate(store, make_trace("t1"), RULES)
        annotate(store, make_trace("t2", "other"), LLM)
        out = tmp_path / "one.jsonl"
        assert store.export(out, config_hash=LLM.config_hash()) == 1
        assert [json.loads(line)["trace_id"] for line in out.read_text().splitlines()] == ["t2"]
        assert store.export(tmp_path / "one.csv", config_hash=RULES.config_hash()) == 1
        with (tmp_path / "one.csv").open(newline="") as fh:
            rows = list(csv.DictReader(fh))
        assert [(r["trace_id"], r["kind"]) for r in rows] == [("t1", "rules")]


def test_export_without_a_suffix_is_jsonl_and_an_unknown_suffix_is_named(tmp_path: Path) -> None:
    with Store(tmp_path / "m.db") as store:
        annotate(store, make_trace("t1"), RULES)
        assert store.export(tmp_path / "plain") == 1
        assert json.loads((tmp_path / "plain").read_text())["trace_id"] == "t1"
        with pytest.raises(StoreError, match="unknown export format 'xlsx'"):
            store.export(tmp_path / "out.XLSX")


def test_csv_export_redacts_free_text_but_keeps_ids(tmp_path: Path) -> None:
    with Store(tmp_path / "m.db") as store:
        annotate(store, make_trace(f"run-{EMAIL}"), RULES, agent=f"agent {EMAIL}")
        out = tmp_path / "v.csv"
        assert store.export(out) == 1
        with out.open(newline="") as fh:
            (row,) = list(csv.DictReader(fh))
        assert row["trace_id"] == f"run-{EMAIL}"  # an id: kept, or rows could not be joined back
        assert EMAIL not in row["agent"] and row["agent"].startswith("agent ")
        assert (row["code"], row["verdict"], row["config_hash"]) == ("FM-1.3", "present", RULES.config_hash())
        assert store.export(out, redact=False) == 1
        with out.open(newline="") as fh:
            (row,) = list(csv.DictReader(fh))
        assert row["agent"] == f"agent {EMAIL}"


def test_csv_export_of_nothing_has_the_default_header(tmp_path: Path) -> None:
    with Store(tmp_path / "m.db") as store:
        out = tmp_path / "empty.csv"
        assert store.export(out) == 0
        assert out.read_bytes() == b"trace_id,code,verdict\r\n"


def test_csv_export_of_one_row_names_its_columns(tmp_path: Path) -> None:
    with Store(tmp_path / "m.db") as store:
        annotate(store, make_trace("t1"), RULES)
        out = tmp_path / "one.csv"
        assert store.export(out) == 1
        header = out.read_text().splitlines()[0].split(",")
        assert header[:7] == [
            "trace_id",
            "trace_hash",
            "config_hash",
            "kind",
            "annotator_model",
            "code",
            "verdict",
        ]


# -- attributions ------------------------------------------------------------------------------------


@pytest.mark.parametrize("methods", [("rules", "llm"), ("llm", "rules")])
def test_latest_attribution_of_a_trace_is_the_one_stored_last(
    tmp_path: Path, methods: tuple[str, str]
) -> None:
    with Store(tmp_path / "m.db") as store:
        t = make_trace("t1")
        h = store.upsert_trace(t)
        for step, method in enumerate(methods):
            store.put_attribution(
                "t1", h, method, f"{method}-hash", Attribution(agent="a", step=step, method=method)
            )
        assert {k: (a.method, a.step) for k, a in store.attributions().items()} == {"t1": (methods[1], 1)}
        assert store.attributions(methods[0])["t1"].step == 0


# -- the one definition of "latest" ------------------------------------------------------------------


def test_latest_cte_with_defaults_and_with_several_columns(tmp_path: Path) -> None:
    """``_latest`` is used at import time for the module's CTEs; run fresh ones on a real file."""
    with Store(tmp_path / "m.db") as store:
        h1 = annotate(store, make_trace("t1", "v1"), RULES)
        h2 = annotate(store, make_trace("t1", "v2"), RULES)  # a new version of the same key
        annotate(store, make_trace("t1", "v2"), LLM)
        con = sqlite3.connect(store.path)
        try:
            plain = db._latest("trace_bodies", "trace_id")
            assert con.execute(f"WITH {plain} SELECT trace_hash, trace_id FROM latest").fetchall() == [
                (h2, "t1")
            ]
            many = db._latest(
                "annotations",
                "config_hash, trace_id",
                per="config_hash, trace_id",
                tiebreak="x.created_at DESC",
            )
            rows = con.execute(f"WITH {many} SELECT trace_hash, config_hash, trace_id FROM latest").fetchall()
        finally:
            con.close()
        assert sorted(rows) == sorted([(h2, RULES.config_hash(), "t1"), (h2, LLM.config_hash(), "t1")])
        assert h1 != h2


def test_every_attribution_reader_returns_every_field(tmp_path: Path) -> None:
    full = Attribution(
        agent="Coder", step=3, mode="FM-3.3", confidence=0.625, reason="adds wrong", method="llm"
    )
    with Store(tmp_path / "m.db") as store:
        h = store.upsert_trace(make_trace("t1"))
        store.put_attribution("t1", h, "llm", "llm-hash", full)
        assert store.get_attribution(h, "llm-hash") == full
        assert store.get_attribution(h, "other-hash") is None
        assert store.attributions_by_hash() == {h: full}
        assert store.attributions_by_hash("llm") == {h: full}
        assert store.attributions_by_hash("rules") == {}
        assert store.attributions() == {"t1": full}
        assert store.attributions("llm") == {"t1": full}


# -- model calls -------------------------------------------------------------------------------------


def test_call_stats_of_one_run_and_of_all(tmp_path: Path) -> None:
    with Store(tmp_path / "m.db") as store:
        common = {"provider": "openai", "model": "m", "request_hash": "r", "trace_id": "t"}
        store.log_call(config_hash="A", input_tokens=10, output_tokens=2, cost_usd=0.5, **common)
        store.log_call(config_hash="A", input_tokens=1, status="error", error="boom", cached=True, **common)
        store.log_call(config_hash="B", input_tokens=100, output_tokens=20, cost_usd=2.0, **common)
        assert store.call_stats("A") == {
            "calls": 2,
            "cached": 1,
            "failed": 1,
            "input_tokens": 11,
            "output_tokens": 2,
            "cost_usd": 0.5,
        }
        assert store.call_stats() == {
            "calls": 3,
            "cached": 1,
            "failed": 1,
            "input_tokens": 111,
            "output_tokens": 22,
            "cost_usd": 2.5,
        }
        assert store.call_stats("none")["calls"] == 0


def test_parquet_without_pyarrow_names_the_feature(tmp_path: Path) -> None:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("pyarrow is installed: the export works, no message to check")
    from mastkit.errors import MissingDependencyError

    with Store(tmp_path / "m.db") as store, pytest.raises(MissingDependencyError) as info:
        store.export(tmp_path / "v.parquet")
    assert str(info.value) == "Parquet export needs an optional dependency: pip install 'mastkit[parquet]'"


def test_an_attribution_of_a_hash_never_upserted_is_read_back_by_its_id(tmp_path: Path) -> None:
    a = Attribution(agent="Coder", step=1, method="rules")
    with Store(tmp_path / "m.db") as store:
        store.put_attribution("t9", "sha256:never-upserted", "rules", "rules-hash", a)
        assert store.attributions() == {"t9": a}
        assert store.get_attribution("sha256:never-upserted", "rules-hash") == a
