"""End to end on the shared real data: rules annotation, rules attribution, every analysis, the report."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import shared_path
from mastkit import load_traces
from mastkit.analyze.profile import (
    cascade_chains,
    category_profile,
    cooccurrence,
    failure_profile,
    fatal_vs_benign,
    first_modes,
    modes_per_failed_trace,
    overlap,
    rows,
)
from mastkit.annotate import annotate
from mastkit.annotate.rule_annotator import RuleAnnotator
from mastkit.attribute import attribute
from mastkit.report import report
from mastkit.store import Store
from mastkit.taxonomy import load_taxonomy


def test_who_and_when_and_mast_human_end_to_end(tmp_path: Path) -> None:
    ww, mh = shared_path("who_and_when"), shared_path("mast_mad_human")
    tax = load_taxonomy("mast")
    with Store(tmp_path / "m.db") as store:
        run = annotate(load_traces([ww, mh]), RuleAnnotator(tax), store=store)
        assert len(run.annotations) == 184 + 19 and not run.errors
        att = attribute(load_traces(ww), "rules", store=store)
        assert len(att.results) == 184
        meta = {t["trace_id"]: {"success": t["success"], "framework": t["framework"]} for t in store.traces()}
        data = rows(run.annotations, meta)
        codes = tax.codes
        assert failure_profile(data, codes)
        cats = category_profile(data, {m.code: m.category for m in tax.modes})
        assert {c["category"] for c in cats if c["with_category"]} == {"FC1", "FC3"}
        assert modes_per_failed_trace(data)
        assert fatal_vs_benign(data, codes)
        assert cooccurrence(data, codes)
        first_modes(data)
        cascade_chains(data)
        assert overlap(data, by="framework")
        html = report(store, tmp_path / "r.html")
        js = report(store, tmp_path / "r.json", fmt="json")
    text = html.read_text(encoding="utf-8")
    assert text.count('id="trace-') >= 203
    assert "blamed" in text  # attribution steps are highlighted on the trace pages
    doc = json.loads(js.read_text(encoding="utf-8"))
    assert doc and html.stat().st_size < 10_000_000
