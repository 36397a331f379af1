"""``mastkit verify``: selection output, --eval table and JSON, exit codes, the real data."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import shared_path
from tests.verify._rollouts import rollout
from typer.testing import CliRunner

from mastkit.cli.main import app
from mastkit.testing import FakeLLMServer
from mastkit.traces.ops import dump_trace

runner = CliRunner()


def _write(path: Path, traces: list[Any]) -> Path:
    path.write_bytes(b"".join(dump_trace(t) for t in traces))
    return path


def _rollouts() -> list[Any]:
    out = []
    for i in range(6):
        out.append(rollout(f"t{i}", 0, success=i % 2 == 0, turns=1))
        out.append(rollout(f"t{i}", 1, success=False, turns=3, handoff=True))
    return out


def run(*args: str, tmp: Path) -> Any:
    return runner.invoke(app, ["verify", *args, "--db", str(tmp / "m.db")])


def test_selection_prints_one_rollout_per_task(tmp_path: Path) -> None:
    f = _write(tmp_path / "r.jsonl", _rollouts())
    res = run(str(f), "--scorer", "no_handoff", "--json", tmp=tmp_path)
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert {k: v["trace_id"] for k, v in data["no_handoff"].items()} == {
        f"t{i}": f"t{i}-t0" for i in range(6)
    }
    res = run(str(f), tmp=tmp_path)
    assert res.exit_code == 0 and "process" in res.stdout and "failure_vector" not in res.stdout


def test_eval_json_and_table(tmp_path: Path) -> None:
    f = _write(tmp_path / "r.jsonl", _rollouts())
    res = run(
        str(f),
        "--eval",
        "--json",
        "--scorer",
        "no_handoff",
        "--scorer",
        "failure_vector",
        "--folds",
        "3",
        tmp=tmp_path,
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    rows = {r["scorer"]: r for r in data["results"]}
    assert rows["no_handoff"]["selected"]["value"] == pytest.approx(0.5)
    assert rows["no_handoff"]["pass_at_1"]["value"] == pytest.approx(0.25)
    assert rows["failure_vector"]["protocol"] == "GroupKFold by task, k=3"
    res = run(str(f), "--eval", tmp=tmp_path)
    assert res.exit_code == 0 and "oracle" in res.stdout and "held-out" in res.stdout
    assert "Highest selected: " in " ".join(res.stdout.split())


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--scorer", "nope"], 2, "unknown scorer"),
        (["--scorer", "llm_plain"], 2, "need --model"),
        (["--group-by", "agent"], 2, "not supported"),
    ],
)
def test_usage_errors(tmp_path: Path, args: list[str], code: int, message: str) -> None:
    f = _write(tmp_path / "r.jsonl", _rollouts())
    res = run(str(f), *args, tmp=tmp_path)
    assert res.exit_code == code and message in res.output


def test_nothing_to_do_exits_3(tmp_path: Path) -> None:
    no_task = _write(tmp_path / "n.jsonl", [r.model_copy(update={"task_id": None}) for r in _rollouts()])
    assert run(str(no_task), tmp=tmp_path).exit_code == 3
    unlabelled = _write(tmp_path / "u.jsonl", [rollout("a", 0), rollout("a", 1)])
    assert run(str(unlabelled), "--eval", tmp=tmp_path).exit_code == 3


def test_llm_scorer_failures_exit_1(tmp_path: Path) -> None:
    f = _write(tmp_path / "r.jsonl", _rollouts()[:2])
    with FakeLLMServer(default=None, handler=lambda body: "garbage") as srv:
        res = run(
            str(f),
            "--scorer",
            "llm_plain",
            "--model",
            "openai:x",
            "--base-url",
            srv.openai_base_url,
            "--json",
            tmp=tmp_path,
        )
    assert res.exit_code == 1, res.output
    assert json.loads(res.stdout)["llm_plain"]["t0"]["probability"] is None


def test_llm_scorer_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    f = _write(tmp_path / "r.jsonl", _rollouts())

    def handler(body: Any) -> str:
        text = json.dumps(body)
        p = 0.2 if "transfer_to_human" in text else 0.8
        return json.dumps({"reasoning": "r", "success_probability": p})

    with FakeLLMServer(handler=handler) as srv:
        res = run(
            str(f),
            "--eval",
            "--json",
            "--scorer",
            "llm_plain",
            "--model",
            "openai:x",
            "--base-url",
            srv.openai_base_url,
            tmp=tmp_path,
        )
    assert res.exit_code == 0, res.output
    (row,) = json.loads(res.stdout)["results"]
    assert row["selected"]["value"] == pytest.approx(0.5) and row["failed"] == 0


@pytest.mark.shared_data
def test_real_multi_rollout_table(tmp_path: Path) -> None:
    data = shared_path("multi_rollout", "tau_bench_airline_gpt4o")
    res = run(str(data), "--eval", "--json", "--boot", "200", tmp=tmp_path)
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert (out["tasks"], out["rollouts"]) == (50, 200)
    rows = {r["scorer"]: r for r in out["results"]}
    assert rows["random"]["pass_at_1"]["value"] == pytest.approx(0.42)
    assert rows["random"]["oracle"]["value"] == pytest.approx(0.72)
    assert rows["random"]["selected"]["value"] == pytest.approx(0.42)
    for r in rows.values():
        assert 0.2 <= r["selected"]["value"] <= 0.72
    # the headline: the nested-CV process scorer beats every single-feature heuristic's point estimate
    heuristics = ("random", "shortest", "fewest_state_changes", "no_handoff")
    assert rows["process"]["selected"]["value"] > max(rows[h]["selected"]["value"] for h in heuristics)
    assert rows["process"]["protocol"].startswith("GroupKFold by task, k=5; chosen per fold: ")
    assert out["comparisons"][0]["scorer"] == "process"


def test_eval_html_section_is_escaped(tmp_path: Path) -> None:
    from mastkit.report.verify_section import verify_section
    from mastkit.verify import NoHandoffScorer, evaluate_selection

    f = _write(tmp_path / "r.jsonl", _rollouts())
    page = tmp_path / "v.html"
    res = run(str(f), "--eval", "--scorer", "no_handoff", "--html", str(page), tmp=tmp_path)
    assert res.exit_code == 0, res.output
    text = page.read_text()
    assert "<th>no_handoff</th>" in text and "50.0%" in text and "<script" not in text
    scorer = NoHandoffScorer()
    scorer.name = "<b>x</b>"
    section = verify_section(evaluate_selection(_rollouts(), [scorer], n_boot=100))
    assert "&lt;b&gt;x&lt;/b&gt;" in section and "<b>" not in section


def test_train_fits_failure_vector_on_other_tasks(tmp_path: Path) -> None:
    # labelled tasks where a hand-off means success: the fitted scorer picks the hand-off run,
    # the default weights (which penalise a hand-off) pick the other one
    labelled = []
    for i in range(8):
        labelled.append(rollout(f"l{i}", 0, success=True, handoff=True))
        labelled.append(rollout(f"l{i}", 1, success=False))
    train = _write(tmp_path / "train.jsonl", labelled)
    new = _write(tmp_path / "new.jsonl", [rollout("n", 0), rollout("n", 1, handoff=True)])
    fitted = run(str(new), "--json", "--scorer", "failure_vector", "--train", str(train), tmp=tmp_path)
    assert fitted.exit_code == 0, fitted.output
    assert json.loads(fitted.stdout)["failure_vector"]["n"]["trace_id"] == "n-t1"
    default = run(str(new), "--json", "--scorer", "failure_vector", tmp=tmp_path)
    assert json.loads(default.stdout)["failure_vector"]["n"]["trace_id"] == "n-t0"


def test_annotations_run_feeds_the_failure_vector(tmp_path: Path) -> None:
    from mastkit.annotate.model import Annotation, AnnotatorConfig, ModeVerdict
    from mastkit.store import Store

    config = AnnotatorConfig(kind="llm", model="openai:x", taxonomy_version="t")
    h = config.config_hash()
    with Store(tmp_path / "m.db") as store:
        store.register_run(config)
        bad = [ModeVerdict(code="FM-3.1", verdict="present")]
        store.put_annotation(Annotation(trace_id="n-t0", config=config, config_hash=h, verdicts=bad), "h0")
        store.put_annotation(Annotation(trace_id="n-t1", config=config, config_hash=h, verdicts=[]), "h1")
    new = _write(tmp_path / "new.jsonl", [rollout("n", 0), rollout("n", 1)])
    plain = run(str(new), "--json", "--scorer", "failure_vector_defaults", tmp=tmp_path)
    assert json.loads(plain.stdout)["failure_vector_defaults"]["n"]["trace_id"] == "n-t0"  # tie: trace id
    res = run(str(new), "--json", "--scorer", "failure_vector_defaults", "--annotations-run", h, tmp=tmp_path)
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["failure_vector_defaults"]["n"]["trace_id"] == "n-t1"
    assert run(str(new), "--annotations-run", "nope", tmp=tmp_path).exit_code == 2


def test_pairwise_in_eval_through_the_server(tmp_path: Path) -> None:
    f = _write(tmp_path / "r.jsonl", _rollouts()[:4])  # t0, t1: the t0 rollouts succeed (t1-t0 fails)

    def handler(body: Any) -> str:
        text = json.dumps(body)
        if '"better"' in text:  # pairwise: prefer the run that handed off (the tie-break would not)
            a_part = text.split("# Run B")[0]
            better = "A" if "transfer_to_human" in a_part else "B"
            return json.dumps({"reasoning": "r", "better": better, "confidence": 0.9})
        return json.dumps({"reasoning": "r", "success_probability": 0.5})

    with FakeLLMServer(handler=handler) as srv:
        base = ["--model", "openai:x", "--base-url", srv.openai_base_url, "--scorer", "llm_plain"]
        res = run(str(f), "--eval", "--json", "--pairwise", *base, tmp=tmp_path)
    assert res.exit_code == 0, res.output
    (row,) = json.loads(res.stdout)["results"]
    assert row["protocol"] == "no fitting + pairwise finalists"
    assert row["choices"] == {"t0": "t0-t1", "t1": "t1-t1"}
    assert row["selected"]["value"] == pytest.approx(0.0)  # t0-t1 and t1-t1 both failed


def test_train_fits_the_process_scorer_too(tmp_path: Path) -> None:
    # labelled tasks where the shorter run fails: fitted on them, process picks the longer run
    labelled = []
    for i in range(8):
        labelled.append(rollout(f"l{i}", 0, success=False, turns=1))
        labelled.append(rollout(f"l{i}", 1, success=True, turns=5))
    train = _write(tmp_path / "train.jsonl", labelled)
    new = _write(tmp_path / "new.jsonl", [rollout("n", 0, turns=1), rollout("n", 1, turns=5)])
    fitted = run(str(new), "--json", "--scorer", "process", "--train", str(train), tmp=tmp_path)
    assert fitted.exit_code == 0, fitted.output
    row = json.loads(fitted.stdout)["process"]["n"]
    assert row["trace_id"] == "n-t1" and "fitted (" in row["explanation"]
    default = run(str(new), "--json", "--scorer", "process", tmp=tmp_path)
    assert "default weights" in json.loads(default.stdout)["process"]["n"]["explanation"]
