"""``mastkit eval`` reproduces hand-computed agreement figures exactly on a tiny fixture."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mastkit.annotate.model import Annotation, AnnotatorConfig, ModeVerdict
from mastkit.cli.main import app
from mastkit.store import Store

# gold (FM-1.3, FM-3.2) and predictions; "?" = unknown (excluded from scoring)
GOLD = {"t1": (True, False), "t2": (True, True), "t3": (False, False), "t4": (False, True)}
PRED = {
    "t1": ("present", "absent"),
    "t2": ("absent", "present"),
    "t3": ("absent", "absent"),
    "t4": ("present", "?"),
}


def _store(path: Path) -> str:
    config = AnnotatorConfig(kind="rules", taxonomy_version="test")
    h = config.config_hash()
    with Store(path) as store:
        store.register_run(config)
        for tid, (a, b) in PRED.items():
            verdicts = [
                ModeVerdict(code="FM-1.3", verdict=a),  # type: ignore[arg-type]
                ModeVerdict(code="FM-3.2", verdict="unknown" if b == "?" else b),  # type: ignore[arg-type]
            ]
            store.put_annotation(
                Annotation(trace_id=tid, config=config, config_hash=h, verdicts=verdicts), tid
            )
    return h


def test_eval_matches_hand_computed_scores(tmp_path: Path) -> None:
    run = _store(tmp_path / "m.db")
    gold = tmp_path / "gold.jsonl"
    gold.write_text(
        "\n".join(
            json.dumps({"trace_id": t, "labels": {"FM-1.3": a, "FM-3.2": b}}) for t, (a, b) in GOLD.items()
        )
    )
    res = CliRunner().invoke(
        app, ["eval", "--gold", str(gold), "--pred", run[:10], "--db", str(tmp_path / "m.db"), "--json"]
    )
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    modes = {m["code"]: m for m in out["modes"]}
    # FM-1.3: pred T F F T vs gold T T F F -> tp 1, fp 1, fn 1, tn 1: P = R = F1 = 0.5; po = pe = 0.5 -> kappa 0
    m13 = modes["FM-1.3"]
    assert (m13["tp"], m13["fp"], m13["fn"], m13["tn"]) == (1, 1, 1, 1)
    assert m13["precision"] == m13["recall"] == m13["f1"] == 0.5
    assert m13["kappa"] == 0.0
    # FM-3.2: t4 unknown is excluded; F T F vs F T F -> perfect
    m32 = modes["FM-3.2"]
    assert m32["unknown"] == 1 and m32["n"] == 3 and m32["f1"] == 1.0 and m32["kappa"] == 1.0
    # pooled: tp 2, fp 1, fn 1, tn 3 -> micro F1 2/3; po 5/7, pe 25/49 -> kappa 10/24
    assert out["micro_f1"] == pytest.approx(2 / 3, abs=1e-12)
    assert out["macro_f1"] == pytest.approx(0.75, abs=1e-12)
    assert out["kappa"] == pytest.approx(10 / 24, abs=1e-12)
    assert out["unknown"] == 1 and out["items"] == 4
    # baselines printed beside the scores
    assert out["baseline_always_absent"]["accuracy"] == pytest.approx(4 / 7)
    assert out["baseline_random"]["accuracy"] == pytest.approx(25 / 49)
    assert out["baseline_random"]["f1"] == pytest.approx(3 / 7)
    text = CliRunner().invoke(
        app, ["eval", "--gold", str(gold), "--pred", run[:10], "--db", str(tmp_path / "m.db")]
    )
    assert "always absent" in text.stdout and "kappa" in text.stdout
