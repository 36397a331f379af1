"""``mastkit calibrate``, and the agreement line in ``mastkit report`` and ``mastkit eval``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.annotate._judgekit import make_judge, simple_trace
from tests.calibration._calkit import WHOLE, gold_handler
from typer.testing import CliRunner

from mastkit.annotate.model import Annotation, ModeVerdict
from mastkit.calibration import calibrate, calibration_for
from mastkit.cli.main import app
from mastkit.store import Store
from mastkit.testing import FakeLLMServer


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("MASTKIT_BUDGET", "MASTKIT_MODEL", "MASTKIT_BASE_URL", "MASTKIT_PRICES", "MASTKIT_DB"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")


def _calibrate(srv: FakeLLMServer, db: Path, *extra: str) -> list[str]:
    return ["calibrate", "--model", "openai:x", "--base-url", srv.openai_base_url, "--db", str(db),
            "--window-tokens", "2000000", "--no-attribution", *extra]  # fmt: skip


def test_calibrate_prints_the_estimate_then_the_table_and_stores_the_result(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    with FakeLLMServer(handler=gold_handler()) as srv:
        res = CliRunner().invoke(app, _calibrate(srv, db, "--price-in", "1", "--price-out", "2", "--yes"))
        assert srv.request_count == 19
        with Store(db) as store:
            config = make_judge(srv, cache=store, **WHOLE).config
            found = calibration_for(store, config)
    assert found is not None and found[1] is True and found[0].cost_usd > 0
    assert res.exit_code == 0, res.output
    out = res.output
    assert "estimate: ~19 calls for 19 trace(s)" in out
    assert out.index("estimate:") < out.index("FM-1.1") < out.index("macro F1 1.000 [1.00, 1.00]")
    assert "Cohen's kappa 1.000 [1.00, 1.00]" in out
    assert "measured agreement on the calibration set: macro-F1 1.00 [1.00, 1.00]" in out
    assert "19 model calls" in out


def test_calibrate_above_the_confirmation_threshold_sends_nothing_without_yes(tmp_path: Path) -> None:
    with FakeLLMServer(handler=gold_handler()) as srv:
        args = _calibrate(
            srv, tmp_path / "m.db", "--price-in", "1", "--price-out", "2", "--confirm-above", "0"
        )
        res = CliRunner().invoke(app, args)
        assert srv.request_count == 0
    assert res.exit_code == 2, res.output
    assert "estimate:" in res.output and "pass --yes" in res.output


def test_calibrate_json(tmp_path: Path) -> None:
    with FakeLLMServer(handler=gold_handler()) as srv:
        res = CliRunner().invoke(app, _calibrate(srv, tmp_path / "m.db", "--json"))
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout[res.stdout.index("{") :])
    assert doc["macro_f1"] == 1.0 and doc["kappa"] == 1.0 and len(doc["modes"]) == 14


def test_calibrate_rejects_the_rule_annotator(tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["calibrate", "--model", "openai:x", "--annotator", "rules", "--db",
                                   str(tmp_path / "m.db")])  # fmt: skip
    assert res.exit_code == 2 and "llm or hybrid" in res.output


def _judged_run(store: Store, srv: FakeLLMServer) -> str:
    judge = make_judge(srv, cache=store, **WHOLE)
    h = store.register_run(judge.config)
    trace = simple_trace("t1")
    t_hash = store.upsert_trace(trace)
    verdicts = [ModeVerdict(code="FM-1.3", verdict="present"), ModeVerdict(code="FM-3.2", verdict="absent")]
    store.put_annotation(
        Annotation(trace_id="t1", config=judge.config, config_hash=h, verdicts=verdicts), t_hash
    )
    return h


def _report_and_eval(db: Path, tmp_path: Path) -> tuple[str, str, str]:
    gold = tmp_path / "gold.jsonl"
    gold.write_text(json.dumps({"trace_id": "t1", "labels": {"FM-1.3": True, "FM-3.2": False}}) + "\n")
    md = CliRunner().invoke(app, ["report", "--db", str(db), "--out", str(tmp_path / "r.md")])
    assert md.exit_code == 0, md.output
    html = CliRunner().invoke(app, ["report", "--db", str(db), "--out", str(tmp_path / "r.html")])
    assert html.exit_code == 0, html.output
    ev = CliRunner().invoke(app, ["eval", "--gold", str(gold), "--db", str(db)])
    assert ev.exit_code == 0, ev.output
    return (tmp_path / "r.md").read_text(), (tmp_path / "r.html").read_text(), ev.output


def test_report_and_eval_say_uncalibrated_then_show_the_measured_agreement(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    with FakeLLMServer(handler=gold_handler()) as srv:
        with Store(db) as store:
            _judged_run(store, srv)
        md, html, ev = _report_and_eval(db, tmp_path)
        uncalibrated = "uncalibrated: run `mastkit calibrate --model openai:x`"
        assert uncalibrated in md and uncalibrated in ev
        assert "uncalibrated: run <code>" in html or "uncalibrated: run `mastkit calibrate" in html
        with Store(db) as store:
            calibrate(make_judge(srv, cache=store, **WHOLE), store=store, attribution=False, n_boot=100)
        md, html, ev = _report_and_eval(db, tmp_path)
    measured = (
        "measured agreement on the calibration set: macro-F1 1.00 [1.00, 1.00], kappa 1.00 [1.00, 1.00]"
    )
    assert measured in md and measured in html and measured in ev
    assert "uncalibrated" not in md + html + ev
    assert "(19 traces, " in ev


def test_report_of_a_rule_run_points_to_the_detector_table(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    res = CliRunner().invoke(app, ["annotate", str(Path(__file__).parents[2] / "src/mastkit/examples/01_sre_cart_oomkilled.json"),
                                   "--db", str(db)])  # fmt: skip
    assert res.exit_code == 0, res.output
    md = CliRunner().invoke(app, ["report", "--db", str(db), "--out", str(tmp_path / "r.md")])
    assert md.exit_code == 0, md.output
    assert (
        "rule annotator: see docs/detectors.md for its measured precision" in (tmp_path / "r.md").read_text()
    )
