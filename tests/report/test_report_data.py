"""build_report_data on the hand-checked store of ``_build`` (see its docstring for the cases)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from mastkit.report import build_report_data, safe_anchor
from mastkit.report.data import ReportData, _select_events, truncate
from mastkit.store import Store, StoreError

from ._build import HOSTILE_ID, HOSTILE_MODEL, build_store


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = build_store(tmp_path / "m.db")
    yield s
    s.close()


@pytest.fixture
def data(store: Store) -> ReportData:
    return build_report_data(store)


def test_counts_and_run(data: ReportData) -> None:
    c = data.counts
    assert (c.traces, c.failed, c.succeeded, c.outcome_unknown, c.with_modes) == (6, 4, 2, 0, 4)
    assert c.errors == 1 and c.not_annotated == 0
    assert data.run.kind == "rules" and data.taxonomy.id == "mast"
    assert len(data.taxonomy.modes) == 14 and [c.code for c in data.taxonomy.categories] == [
        "FC1",
        "FC2",
        "FC3",
    ]


def test_profile_overall(data: ReportData) -> None:
    prof = {r["code"]: r for r in data.tables.profile}
    assert (
        prof["FM-3.2"]["present"] == 3
        and prof["FM-3.2"]["judged"] == 6
        and prof["FM-3.2"]["prevalence"] == 0.5
    )
    assert prof["FM-1.3"]["present"] == 2 and prof["FM-1.3"]["prevalence"] == pytest.approx(1 / 3)
    assert prof["FM-2.2"]["judged"] == 5  # unknown in t1 is excluded, not counted absent
    assert prof["FM-3.2"]["category"] == "FC3"
    # 9 flags in all: FM-3.2 has 3 of them
    assert prof["FM-3.2"]["share"] == pytest.approx(3 / 9)


def test_category_profile(data: ReportData) -> None:
    cats = {r["category"]: r for r in data.tables.category_profile}
    assert (
        cats["FC1"]["with_category"] == 3
        and cats["FC2"]["with_category"] == 1
        and cats["FC3"]["with_category"] == 3
    )
    assert cats["FC2"]["prevalence"] == pytest.approx(1 / 6)


def test_profile_by_model(data: ReportData) -> None:
    by_model = {(r["group"], r["code"]): r for r in data.tables.profile_by["model"]}
    assert by_model[("gpt", "FM-1.3")]["prevalence"] == 1.0
    assert by_model[("llama", "FM-3.2")]["present"] == 1 and by_model[("llama", "FM-3.2")]["traces"] == 3
    assert by_model[(HOSTILE_MODEL, "FM-1.1")]["present"] == 1
    assert set(data.tables.profile_by) == {"model", "framework", "benchmark"}


def test_modes_per_failed_trace(data: ReportData) -> None:
    (m,) = data.tables.modes_per_failed
    assert m["failed_traces"] == 4 and m["mean_modes"] == 2.0
    assert m["histogram"] == {0: 1, 1: 1, 2: 1, 5: 1}
    assert (m["none"], m["isolated"], m["cascading"]) == (1, 2, 1)
    assert data.isolated_max == 3


def test_fatal_vs_benign(data: ReportData) -> None:
    fvb = {r["code"]: r for r in data.tables.fatal_vs_benign}
    r = fvb["FM-1.3"]
    assert (r["failed_present"], r["failed_n"], r["success_present"], r["success_n"]) == (2, 4, 0, 2)
    assert r["p_value"] == pytest.approx(7 / 15) and r["lift"] is None
    assert fvb["FM-3.2"]["lift"] == 0.0 and fvb["FM-3.2"]["verdict"] == "benign"


def test_cooccurrence_and_cascades(data: ReportData) -> None:
    co = data.tables.cooccurrence
    assert co["counts"]["FM-1.3"]["FM-3.2"] == 2 and co["conditional"]["FM-1.3"]["FM-3.2"] == 1.0
    chains = {(r["before"], r["after"]): r for r in data.tables.cascade_chains}
    assert chains[("FM-1.3", "FM-3.2")]["traces"] == 2 and chains[("FM-1.3", "FM-3.2")]["reverse"] == 0
    first = {r["code"]: r["first_in"] for r in data.tables.first_modes}
    assert first == {"FM-1.3": 2, "FM-3.2": 1, "FM-1.1": 1}


def test_trace_summaries(data: ReportData) -> None:
    s = {t.trace_id: t for t in data.traces}
    assert (
        s["t1"].present == ["FM-1.3", "FM-3.2"]
        and s["t1"].unknown == ["FM-2.2"]
        and s["t1"].outcome == "failed"
    )
    assert s["t1"].attribution is not None and s["t1"].attribution.step == 2
    assert s["t4"].present == [] and s["t4"].outcome == "success"
    assert s["t2"].framework == "ChatDev" and s["t2"].n_events == 100


def test_detail_evidence_and_blame(data: ReportData) -> None:
    d = {t.trace_id: t for t in data.details}
    t1 = d["t1"]
    ev = {e.seq: e for e in t1.events}
    assert [e.seq for e in t1.events] == [0, 1, 2, 3, 4]
    assert ev[1].cited_by == ["FM-1.3"] and ev[2].cited_by == ["FM-1.3"] and ev[4].cited_by == ["FM-3.2"]
    assert ev[2].blamed and ev[2].anchor == f"{t1.anchor}-e2" and t1.attribution_target == ev[2].anchor
    assert ev[0].anchor is None and not ev[0].cited_by
    v = {x.code: x for x in t1.verdicts}
    assert set(v) == {"FM-1.3", "FM-3.2", "FM-2.2"} and t1.absent == 11
    assert v["FM-1.3"].evidence[0].seq_start == 1 and v["FM-1.3"].evidence[0].seq_end == 2
    assert v["FM-1.3"].evidence[0].target == f"{t1.anchor}-e1"
    assert v["FM-2.2"].verdict == "unknown"


def test_long_trace_is_capped_and_marked(data: ReportData) -> None:
    t2 = next(t for t in data.details if t.trace_id == "t2")
    seqs = [e.seq for e in t2.events]
    assert t2.events_total == 100 and len(seqs) < 100 and t2.events_hidden == 100 - len(seqs)
    # cited starts/ends and the blamed step are always shown
    for s in (0, 1, 2, 3, 60, 50):
        assert s in seqs
    assert sum(e.hidden_before for e in t2.events) + t2.hidden_after == t2.events_hidden
    long = next(e for e in t2.events if e.seq == 50)
    assert long.blamed and long.truncated > 0 and "… [+" in long.text
    assert len(long.text) < 10_000
    # every event inside the FM-3.3 evidence range 3..60 that is shown is highlighted
    assert all("FM-3.3" in e.cited_by for e in t2.events if 3 <= e.seq <= 60)


def test_select_events() -> None:
    assert _select_events(5, set(), 10) == [0, 1, 2, 3, 4]
    chosen = _select_events(1000, {500}, 20)
    assert len(chosen) == 20 and {0, 999, 499, 500, 501} <= set(chosen)
    assert _select_events(0, set(), 10) == []


def test_safe_anchor() -> None:
    assert safe_anchor("t1") == "trace-t1"
    hostile = safe_anchor(HOSTILE_ID)
    assert re.fullmatch(r"trace-[A-Za-z0-9_-]+", hostile)
    assert safe_anchor("a/b") != safe_anchor("a-b") and safe_anchor("a b") != safe_anchor("a/b")
    assert re.fullmatch(r"trace-[0-9a-f]{8}", safe_anchor("///"))
    assert len(safe_anchor("x" * 500)) < 90


def test_anchors_unique(data: ReportData) -> None:
    anchors = [t.anchor for t in data.traces]
    assert len(set(anchors)) == len(anchors)
    assert all(re.fullmatch(r"trace-[A-Za-z0-9_-]+", a) for a in anchors)


def test_truncate() -> None:
    assert truncate("abc", 5) == ("abc", 0)
    text, cut = truncate("x" * 100, 10)
    assert cut == 90 and text.startswith("x" * 10) and text.endswith("… [+90 chars]")
    assert truncate(None, 3) == ("", 0)


def test_json_roundtrip(data: ReportData) -> None:
    doc = json.loads(data.model_dump_json())
    assert doc["counts"]["traces"] == 6
    assert ReportData.model_validate(doc).counts == data.counts


def test_run_selection_and_errors(store: Store, tmp_path: Path) -> None:
    assert build_report_data(store, "rules").run.kind == "rules"
    with pytest.raises(StoreError):
        build_report_data(store, "nope")
    with pytest.raises(ValueError, match="cannot group by"):
        build_report_data(store, by=("colour",))
    empty = Store(tmp_path / "empty.db")
    with pytest.raises(StoreError, match="no annotation run"):
        build_report_data(empty)
    empty.close()


def test_no_details_and_grouping(store: Store) -> None:
    d = build_report_data(store, details=False, by=("source_format",))
    assert d.details == [] and list(d.tables.profile_by) == ["source_format"]
    assert len(d.traces) == 6


def test_run_without_trace_bodies_and_unannotated_traces(store: Store) -> None:
    from mastkit.annotate.model import Annotation, AnnotatorConfig, ModeVerdict
    from mastkit.report import render_html

    other = AnnotatorConfig(kind="llm", model="fake:m", taxonomy_id="mast", taxonomy_version="test")
    store.register_run(other)
    store.put_annotation(
        Annotation(
            trace_id="ghost",
            config=other,
            config_hash=other.config_hash(),
            verdicts=[
                ModeVerdict(code="FM-1.3", verdict="present"),
                ModeVerdict(code="FM-9.9", verdict="present"),
            ],
        ),
        "t1:ghost",
    )
    d = build_report_data(store, "llm")
    assert d.run.kind == "llm" and d.counts.traces == 1 and d.counts.not_annotated == 6
    assert d.counts.outcome_unknown == 1 and d.tables.modes_per_failed == []
    (detail,) = d.details
    assert not detail.available and detail.events == [] and detail.events_total == 0
    # a code the taxonomy does not know is kept, under a "not in taxonomy" category
    assert any(m.code == "FM-9.9" and m.category == "?" for m in d.taxonomy.modes)
    html = render_html(d)
    assert "The store holds no body for this trace." in html and "FM-9.9" in html
    assert len(d.runs) == 2 and "this report shows one" in html


def test_what_the_judge_saw_is_shown_per_trace_and_counted(store: Store) -> None:
    from mastkit.annotate.model import Annotation, AnnotatorConfig, ModeVerdict
    from mastkit.report import render_html
    from mastkit.report.data import judge_coverage

    cfg = AnnotatorConfig(kind="llm", model="fake:m", taxonomy_id="mast", taxonomy_version="test")
    store.register_run(cfg)
    coverage = {"windows": 8, "events": 400, "chars": 90_000, "chars_elided": 12_345, "events_elided": 7,
                "events_omitted_by_window_cap": 37, "replayed_omitted": 2}  # fmt: skip
    for tid, cov in (
        ("big", coverage),
        ("small", {**coverage, "windows": 1, "events_omitted_by_window_cap": 0}),
    ):
        ann = Annotation(
            trace_id=tid,
            config=cfg,
            config_hash=cfg.config_hash(),
            verdicts=[ModeVerdict(code="FM-1.3", verdict="absent")],
            extra={
                "coverage": cov,
                "requests": cov["windows"] + (cov["windows"] > 1),
                "redactions": {"jwt": 2},
            },
        )
        store.put_annotation(ann, f"t2:{tid}")
    d = build_report_data(store, "llm")
    seen = {t.trace_id: t for t in d.details}
    assert seen["big"].seen == (
        "The judge saw 8 windows (9 requests); 37 event(s) in the middle shown to no window (window cap); "
        "12,345 of 90,000 characters elided from 7 long event(s); 2 replayed-context event(s) left out; "
        "redacted before sending: jwt 2."
    )
    assert seen["big"].partial and not seen["small"].partial
    assert seen["small"].seen is not None and seen["small"].seen.startswith(
        "The judge saw 1 window (1 request);"
    )
    assert d.counts.judge_partial == 1
    html = render_html(d)
    assert "not seen whole by the judge" in html and "37 event(s) in the middle shown to no window" in html
    # the rule annotator reads the whole trace: nothing to say
    rules = Annotation(trace_id="r", config=AnnotatorConfig(), config_hash="x", verdicts=[])
    assert judge_coverage(rules) == (None, False)
