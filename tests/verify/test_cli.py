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
    assert res.exit_code == 0 and "failure_vector" in res.stdout


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
