"""The experiment harness end to end with a scripted agent whose success depends on its feedback."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from mastkit.feedback.experiment import ExperimentError, load_tasks, run_experiment, summarize

AGENT = Path(__file__).with_name("scripted_agent.py")
CMD = f"{shlex.quote(sys.executable)} {shlex.quote(str(AGENT))}"
TASKS = [
    {"id": "t1", "task": "Fix the checkout timeouts.", "weakness": "FM-1.3", "heeds_block": [0]},
    {"id": "t2", "task": "Fix the payments timeouts.", "weakness": "FM-3.1", "outcome_in_trace": True},
    {"id": "t3", "task": "Fix the search timeouts.", "weakness": "FM-1.3", "heeds_block": [0, 1]},
]


def _tasks(tmp_path: Path) -> Path:
    path = tmp_path / "tasks.jsonl"
    path.write_text("\n".join(json.dumps(t) for t in TASKS) + "\n", encoding="utf-8")
    return path


def test_three_arms_report_and_exact_tests(tmp_path: Path) -> None:
    out = tmp_path / "out"
    records = run_experiment(CMD, load_tasks(_tasks(tmp_path)), out=out, n=2)
    got = {(r.task_id, r.arm, r.rep): r.passed for r in records}
    assert len(got) == 18
    # baseline: no feedback, the agent always commits its mode
    assert not any(p for (t, a, _), p in got.items() if a == "baseline")
    # mast-a: the block names every mode; the agent heeds it only on its heeds_block repetitions
    assert [got[(t, "mast-a", r)] for t in ("t1", "t2", "t3") for r in (0, 1)] == [1, 0, 0, 0, 1, 1]
    # mast-b: rep 0 reflects on the failed baseline rep 0 (names the mode) -> pass; rep 1 reflects on
    # its own passing rep 0 (nothing found) -> fail
    assert [got[(t, "mast-b", r)] for t in ("t1", "t2", "t3") for r in (0, 1)] == [1, 0, 1, 0, 1, 0]
    t2 = next(r for r in records if r.task_id == "t2" and r.arm == "baseline")
    assert t2.outcome_from == "trace" and t2.exit_code == 0 and not t2.passed  # the trace's outcome wins
    fb = (out / "runs" / "t2" / "mast-b" / "0" / "feedback.txt").read_text()
    assert fb.startswith("A review of your previous attempt") and "FM-3.1 Premature Termination [fatal]" in fb
    assert (out / "runs" / "t1" / "baseline" / "0" / "feedback.txt").read_text() == ""

    report = summarize(records)
    rates = {a.arm: (a.passed, a.runs) for a in report.arms}
    assert rates == {"baseline": (0, 6), "mast-a": (3, 6), "mast-b": (3, 6)}
    a, b = report.tests
    # by hand: 3 discordant pairs all for the arm -> two-sided exact p = 2 * (1/2)^3 = 0.25
    assert (a.arm, a.arm_only, a.baseline_only, a.p_mcnemar) == ("mast-a", 3, 0, 0.25)
    # tasks: t1 and t3 better, t2 tied -> sign test 2/0 -> p = 2 * (1/2)^2 = 0.5
    assert (a.tasks_better, a.tasks_worse, a.p_sign) == (2, 0, 0.5)
    assert (b.tasks_better, b.tasks_worse, b.p_sign) == (3, 0, 0.25)
    assert a.diff == pytest.approx(0.5) and a.diff_ci is not None and a.diff_ci[0] < 0.5 < a.diff_ci[1]
    scipy_stats = pytest.importorskip("scipy.stats")
    assert a.p_mcnemar == pytest.approx(scipy_stats.binomtest(3, 3, 0.5).pvalue)
    assert b.p_sign == pytest.approx(scipy_stats.binomtest(0, 3, 0.5).pvalue)
    assert "mast-b vs baseline: +50%" in report.text()


def test_resume_skips_done_runs_and_redoes_a_cut_line(tmp_path: Path) -> None:
    out = tmp_path / "out"
    tasks = load_tasks(_tasks(tmp_path))[:1]
    first = run_experiment(CMD, tasks, out=out, n=2, arms=["baseline", "mast-b"])
    assert len(first) == 4
    ran: list[object] = []
    again = run_experiment(CMD, tasks, out=out, n=2, arms=["baseline", "mast-b"], on_run=ran.append)
    assert ran == [] and again == first
    results = out / "results.jsonl"
    lines = results.read_text().splitlines()
    results.write_text("\n".join(lines[:-1]) + "\n" + lines[-1][:20])  # a run killed mid-write
    run_experiment(CMD, tasks, out=out, n=2, arms=["baseline", "mast-b"], on_run=ran.append)
    assert len(ran) == 1
    with pytest.raises(ExperimentError, match="another command"):
        run_experiment("other-agent", tasks, out=out, n=2)


def test_timeout_missing_command_and_no_shell(tmp_path: Path) -> None:
    tasks = load_tasks(_tasks(tmp_path))[:1]
    slow = f"{shlex.quote(sys.executable)} -c 'import time; time.sleep(10)'"
    (r,) = run_experiment(slow, tasks, out=tmp_path / "a", n=1, arms=["baseline"], timeout=0.5)
    assert (r.passed, r.outcome_from) == (False, "timeout") and "timed out" in (r.error or "")
    (r,) = run_experiment("/no/such/agent", tasks, out=tmp_path / "b", n=1, arms=["baseline"])
    assert (r.passed, r.outcome_from) == (False, "error")
    marker = tmp_path / "hacked"
    sneaky = f"{shlex.quote(sys.executable)} -c 'import sys' ; touch {marker}"
    (r,) = run_experiment(sneaky, tasks, out=tmp_path / "c", n=1, arms=["baseline"])
    assert r.passed and not marker.exists()  # ';' and 'touch' went to python as arguments


def test_bad_tasks_and_arms(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"task": "no id"}\n')
    with pytest.raises(ExperimentError, match="no id"):
        load_tasks(bad)
    bad.write_text('{"id": 1}\n{"id": 1}\n')
    with pytest.raises(ExperimentError, match="duplicate"):
        load_tasks(bad)
    with pytest.raises(ExperimentError, match="unknown arm"):
        run_experiment(CMD, load_tasks(_tasks(tmp_path)), out=tmp_path / "o", arms=["mast-c"])


def test_summarize_by_hand() -> None:
    from mastkit.feedback.experiment import RunRecord

    outcomes = {  # (task, rep): (baseline, arm)
        ("t1", 0): (True, False),
        ("t1", 1): (False, True),
        ("t2", 0): (True, True),
        ("t2", 1): (False, True),
        ("t3", 0): (False, True),
        ("t3", 1): (False, False),
    }
    recs = [
        RunRecord(task_id=t, arm=arm, rep=r, passed=p[i], outcome_from="exit_code")
        for (t, r), p in outcomes.items()
        for i, arm in enumerate(("baseline", "mast-a"))
    ]
    (test,) = summarize(recs).tests
    # discordant: 3 for the arm, 1 for the baseline: p = 2 * (C(4,0) + C(4,1)) / 2^4 = 0.625
    assert (test.arm_only, test.baseline_only, test.p_mcnemar) == (3, 1, 0.625)
    # per task: t1 tied (1 vs 1), t2 better (2 vs 1), t3 better (1 vs 0)
    assert (test.tasks_better, test.tasks_worse, test.p_sign) == (2, 0, 0.5)
    assert test.diff == pytest.approx(2 / 6)
