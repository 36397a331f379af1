"""The feedback and experiment verbs."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from tests.annotate._judgekit import EXAMPLES
from typer.testing import CliRunner

from mastkit.cli.main import app

RUNNER = CliRunner()
TRACE = str(EXAMPLES / "04_taubench_retail_gives_up.json")


def test_feedback_pattern_b_budget_and_json(tmp_path: Path) -> None:
    db = str(tmp_path / "m.db")
    res = RUNNER.invoke(app, ["feedback", TRACE, "--pattern", "b", "--db", db, "--max-tokens", "80"])
    assert res.exit_code == 0, res.output
    assert res.output.splitlines()[1].startswith("1. FM-3.1 Premature Termination [fatal]")
    assert "Evidence" not in res.output  # cut to fit 80 tokens
    res = RUNNER.invoke(app, ["feedback", TRACE, "--db", db, "--json"])
    doc = json.loads(res.output)
    assert doc["pattern"] == "b" and doc["reflection"]["items"][0]["code"] == "FM-3.1"
    assert "Evidence" in doc["text"]


def test_feedback_pattern_a(tmp_path: Path) -> None:
    db = str(tmp_path / "m.db")
    res = RUNNER.invoke(app, ["feedback", TRACE, "--pattern", "a", "--db", db])
    assert res.exit_code == 0 and "FM-3.1 Premature Termination [fatal] at step 20" in res.output
    res = RUNNER.invoke(app, ["feedback", "--pattern", "a", "--schema", "anthropic"])
    assert json.loads(res.output)["name"] == "mast_self_check"
    res = RUNNER.invoke(app, ["feedback", "--pattern", "a", "--block", "--max-tokens", "120"])
    assert res.output.startswith("Known ways agent runs fail") and "left out" in res.output
    assert RUNNER.invoke(app, ["feedback", "--pattern", "c"]).exit_code == 2
    assert RUNNER.invoke(app, ["feedback", "--pattern", "b"]).exit_code == 2


def test_experiment_verb(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"id": "t1", "task": "x", "weakness": "FM-1.3", "heeds_block": [0]}) + "\n")
    agent = Path(__file__).parents[1] / "feedback" / "scripted_agent.py"
    cmd = f"{shlex.quote(sys.executable)} {shlex.quote(str(agent))}"
    args = ["experiment", "--agent-cmd", cmd, "--tasks", str(tasks), "--n", "1", "--out", str(tmp_path / "o")]
    res = RUNNER.invoke(app, [*args, "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert [(a["arm"], a["passed"]) for a in doc["arms"]] == [("baseline", 0), ("mast-a", 1), ("mast-b", 1)]
    assert doc["tests"][0]["p_mcnemar"] == 1.0
    assert (tmp_path / "o" / "report.json").exists()
    bad = RUNNER.invoke(app, [*args[:-2], "--arms", "nope", "--out", str(tmp_path / "p")])
    assert bad.exit_code == 2
