"""The benchmark scripts run (smallest sizes, one round): they are not timed here, only kept working."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import SHARED_DATA, shared_path

BENCH = Path(__file__).resolve().parents[1] / "bench"


def _run(*args: str) -> str:
    done = subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_ingest_bench_runs_and_writes_figures(tmp_path: Path) -> None:
    out = tmp_path / "figures.json"
    text = _run(
        str(BENCH / "ingest.py"), "--shared", str(SHARED_DATA), "--runs", "1", "--gb", "0",
        "--synthetic-mb", "1", "--json", str(out),
    )  # fmt: skip
    figures = json.loads(out.read_text())
    for row in ("synthetic MAST-Data array", "synthetic chat JSONL"):
        assert figures[row]["traces"] > 0 and figures[row]["ratio_vs_json"] > 0
    assert "memory: skipped" in text
    if (SHARED_DATA / "who_and_when").exists():
        assert figures["who_and_when (184 files)"]["traces"] == 184
        whole = figures["shared data together"]
        shared = [r for name, r in figures.items() if not name.startswith(("synthetic", "shared"))]
        assert whole["MB"] == sum(r["MB"] for r in shared)
        # total time over total time, not a mean of the data sets' ratios
        json_s = sum(r["MB"] / r["json_MBps"] for r in shared)
        mastkit_s = sum(r["MB"] / r["mastkit_MBps"] for r in shared)
        assert whole["ratio_vs_json"] == pytest.approx(json_s / mastkit_s)
        assert whole["mastkit_ms"] == pytest.approx(mastkit_s * 1e3)


def test_ingest_breakdown_runs() -> None:
    human = shared_path("mast_mad_human", "MAD_human_labelled_dataset.json")  # skips when absent
    text = _run(str(BENCH / "ingest_breakdown.py"), "--file", str(human), "--runs", "1")
    assert "19 traces, 1931 events" in text and "load vs floor" in text


def test_event_floor_runs() -> None:
    text = _run(str(BENCH / "event_floor.py"), "--mb", "0.3", "--runs", "1")
    for step in ("json", "orjson", "+tuples", "+bare events", "mastkit"):
        assert f"  {step} " in text


def test_ingest_bench_skips_what_it_is_told_to(tmp_path: Path) -> None:
    """No shared data, --synthetic-mb 0: every row says it was skipped, none is timed on an empty file."""
    out = tmp_path / "figures.json"
    text = _run(
        str(BENCH / "ingest.py"), "--shared", str(tmp_path / "absent"), "--runs", "1", "--gb", "0",
        "--synthetic-mb", "0", "--json", str(out),
    )  # fmt: skip
    assert "synthetic rows: skipped" in text and "who_and_when (184 files)" in text
    assert "load errors" not in text and "empty file" not in text
    assert json.loads(out.read_text()) == {}


@pytest.mark.skipif(
    shutil.which("cc") is None or not Path(sys.executable).with_name("mypyc").exists(),
    reason="bench/compiled.py needs a C compiler and mypyc (dev extras)",
)
def test_compiled_bench_runs(tmp_path: Path) -> None:
    text = _run(
        str(BENCH / "compiled.py"), "--modules", "mastkit/_util/jsonstream.py", "--runs", "1",
        "--synthetic-mb", "1", "--shared", str(tmp_path / "absent"),
    )  # fmt: skip
    assert "synthetic chat JSONL" in text and "compiled / pure" in text


def test_scale_bench_traces_are_valid_and_distinct() -> None:
    """bench/scale.py's synthetic traces: valid, all different (so none is a cached repeat), and
    the rule annotator finds something in them (the timed run is not; it needs Ray)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_scale", BENCH / "scale.py")
    assert spec is not None and spec.loader is not None
    scale = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(scale)
    from mastkit.annotate import annotate
    from mastkit.annotate.factory import make_annotator

    traces = list(scale.traces(200))
    from mastkit.traces.model import Trace

    for t in traces[:20]:  # through JSON and back, every field checked
        assert Trace.model_validate_json(t.model_dump_json()).content_hash() == t.content_hash()
    assert len({t.content_hash() for t in traces}) == 200
    report = annotate(traces, make_annotator("rules"))
    assert report.progress.done == 200
    assert any(a.present() for a in report.annotations)
