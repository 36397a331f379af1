"""The experiment harness: does feedback make a user's agent pass more tasks?

:func:`run_experiment` runs the agent command once per task, arm and repetition. The command is
the user's own string, split with :func:`shlex.split` and run without a shell; trace content is
never put on a command line. Each run gets, in its environment:

=========================  ==================================================================
``MASTKIT_TASK``           the task text (the task's ``task``/``prompt``/``input`` field, else
                           the whole JSON object)
``MASTKIT_TASK_FILE``      a file holding the task's JSON object
``MASTKIT_TASK_ID``        the task's id
``MASTKIT_ARM``            the arm (``baseline``, ``mast-a``, ``mast-b``)
``MASTKIT_REP``            the repetition, from 0
``MASTKIT_FEEDBACK``       the arm's feedback text (empty for ``baseline``)
``MASTKIT_FEEDBACK_FILE``  a file holding the same text
``MASTKIT_TRACE_OUT``      where the agent should write its trace (any format mastkit reads)
=========================  ==================================================================

Arms: ``baseline`` gets no feedback; ``mast-a`` gets the taxonomy's in-prompt block
(:func:`mastkit.feedback.tool.prompt_block`); ``mast-b`` gets the reflection
(:mod:`mastkit.feedback.reflection`) on the previous attempt at the same task — its own
previous repetition, or for repetition 0 the baseline's repetition 0 (so baseline runs first
within each task and repetition).

A run passes when its trace records an outcome (``outcome.success``), else when the command
exits 0; a timeout or a command that cannot start is a failure, with the reason recorded.
Results are appended to ``results.jsonl`` in the output folder as each run ends, and a rerun
skips the runs already there (resume).

:func:`summarize` reports, per arm, the pass rate with a Wilson 95% interval and, against the
baseline, an exact McNemar test on the (task, repetition) pairs (two-sided binomial test on
the discordant pairs) and an exact sign test on tasks (per task, the arm's pass count against
the baseline's; ties dropped), with Newcombe's interval for the difference in pass rates.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from mastkit.analyze.diff import mcnemar_exact, newcombe
from mastkit.analyze.profile import wilson
from mastkit.errors import MastkitError, TraceLoadError
from mastkit.feedback.reflection import Reflection
from mastkit.feedback.tool import prompt_block
from mastkit.taxonomy import Taxonomy, load_taxonomy
from mastkit.traces.load import load_traces
from mastkit.traces.model import Trace

__all__ = [
    "ARMS",
    "ArmStats",
    "ExperimentError",
    "ExperimentReport",
    "PairedTest",
    "RunRecord",
    "Task",
    "load_tasks",
    "run_experiment",
    "summarize",
]

ARMS = ("baseline", "mast-a", "mast-b")
RESULTS = "results.jsonl"


class ExperimentError(MastkitError):
    """The experiment cannot run (bad tasks file, unknown arm, a different command in the folder)."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Task(_Model):
    """One line of the tasks file."""

    id: str
    text: str
    data: dict[str, Any]


class RunRecord(_Model):
    """One run of the agent command."""

    task_id: str
    arm: str
    rep: int
    passed: bool
    outcome_from: Literal["trace", "exit_code", "timeout", "error"]
    exit_code: int | None = None
    duration_s: float = 0.0
    trace_path: str | None = None
    """The trace the agent wrote, when it wrote one that loads."""
    feedback_tokens: int = 0
    feedback_note: str | None = None
    """Why an arm's feedback is empty or reduced (no previous trace...)."""
    error: str | None = None


class ArmStats(_Model):
    arm: str
    runs: int
    passed: int
    rate: float | None
    ci: tuple[float, float] | None


class PairedTest(_Model):
    """An arm against the baseline on the same tasks and repetitions."""

    arm: str
    pairs: int
    arm_only: int
    """Pairs the arm passed and the baseline failed."""
    baseline_only: int
    diff: float | None
    """Pass rate of the arm minus that of the baseline, over the pairs."""
    diff_ci: tuple[float, float] | None
    p_mcnemar: float
    """Exact two-sided McNemar p-value on the (task, repetition) pairs."""
    tasks_better: int
    tasks_worse: int
    p_sign: float
    """Exact two-sided sign test on tasks (the arm's pass count against the baseline's)."""


class ExperimentReport(_Model):
    arms: list[ArmStats]
    tests: list[PairedTest] = Field(default_factory=list)
    tasks: int
    reps: int

    def text(self) -> str:
        """The report as a small plain-text table."""
        lines = [f"{'arm':<10} {'runs':>5} {'passed':>6} {'rate':>6}  95% CI", "-" * 44]
        for a in self.arms:
            rate = f"{a.rate:.0%}" if a.rate is not None else "-"
            ci = f"[{a.ci[0]:.0%}, {a.ci[1]:.0%}]" if a.ci else "-"
            lines.append(f"{a.arm:<10} {a.runs:>5} {a.passed:>6} {rate:>6}  {ci}")
        for t in self.tests:
            diff = f"{t.diff:+.0%}" if t.diff is not None else "-"
            ci = f" [{t.diff_ci[0]:+.0%}, {t.diff_ci[1]:+.0%}]" if t.diff_ci else ""
            lines.append(
                f"{t.arm} vs baseline: {diff}{ci} over {t.pairs} pairs; discordant {t.arm_only} "
                f"arm-only / {t.baseline_only} baseline-only, exact McNemar p = {t.p_mcnemar:.4g}; "
                f"tasks better {t.tasks_better} / worse {t.tasks_worse}, sign test p = {t.p_sign:.4g}"
            )
        return "\n".join(lines)


# -- tasks and results -----------------------------------------------------------------------------


def load_tasks(path: str | Path) -> list[Task]:
    """The tasks of a JSONL file: one JSON object per line with an ``id`` (or ``task_id``) and
    the task text in ``task``, ``prompt`` or ``input`` (else the whole object is the text)."""
    tasks: list[Task] = []
    seen: set[str] = set()
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ExperimentError(f"{path}: cannot read the tasks: {exc}") from None
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ExperimentError(f"{path}:{n}: not JSON: {exc.msg}") from None
        if not isinstance(obj, dict):
            raise ExperimentError(f"{path}:{n}: a task must be a JSON object")
        tid = obj.get("id", obj.get("task_id"))
        if tid is None or str(tid) == "":
            raise ExperimentError(f"{path}:{n}: the task has no id (or task_id)")
        if str(tid) in seen:
            raise ExperimentError(f"{path}:{n}: duplicate task id {tid!r}")
        seen.add(str(tid))
        text = next((obj[k] for k in ("task", "prompt", "input") if isinstance(obj.get(k), str)), None)
        tasks.append(Task(id=str(tid), text=text if text is not None else json.dumps(obj), data=obj))
    if not tasks:
        raise ExperimentError(f"{path}: no tasks")
    return tasks


def _read_results(path: Path) -> list[RunRecord]:
    if not path.exists():
        return []
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            try:
                out.append(RunRecord.model_validate_json(line))
            except ValueError:
                continue  # a line cut by a killed run: that run is done again
    return out


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name)[:80] or "_"


# -- one run ---------------------------------------------------------------------------------------


def _load_trace(path: Path) -> Trace | None:
    if not path.exists() or path.stat().st_size == 0:
        return None
    errors: list[TraceLoadError] = []
    traces = list(load_traces(path, on_error=errors.append))
    return traces[0] if traces else None


def _run_agent(
    argv: list[str], env: dict[str, str], cwd: Path, timeout: float, trace_out: Path
) -> tuple[bool, str, int | None, str | None, Trace | None]:
    """Run the command; (passed, outcome_from, exit code, error, trace)."""
    try:
        with (cwd / "stdout.txt").open("wb") as so, (cwd / "stderr.txt").open("wb") as se:
            proc = subprocess.run(argv, env=env, stdout=so, stderr=se, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return False, "timeout", None, f"timed out after {timeout:g} s", _load_trace(trace_out)
    except OSError as exc:
        return False, "error", None, f"cannot run {argv[0]!r}: {exc}", None
    trace = _load_trace(trace_out)
    if trace is not None and trace.outcome is not None and trace.outcome.success is not None:
        return trace.outcome.success, "trace", proc.returncode, None, trace
    return proc.returncode == 0, "exit_code", proc.returncode, None, trace


ReflectFn = Callable[[Trace], Reflection]
"""Writes the pattern B reflection of a finished run's trace."""


def _default_reflect(taxonomy: Taxonomy) -> ReflectFn:
    from mastkit.feedback.service import reflection_for

    return lambda trace: reflection_for(trace, taxonomy)


def run_experiment(
    agent_cmd: str,
    tasks: Sequence[Task],
    *,
    out: str | Path,
    arms: Iterable[str] = ARMS,
    n: int = 5,
    timeout: float = 600.0,
    max_tokens: int = 400,
    taxonomy: Taxonomy | str = "mast",
    reflect_fn: ReflectFn | None = None,
    extra_env: dict[str, str] | None = None,
    on_run: Callable[[RunRecord], None] | None = None,
) -> list[RunRecord]:
    """Run ``agent_cmd`` for every task, arm and repetition not already in ``out/results.jsonl``;
    return every record (old and new) in run order. See the module docstring for what each run
    gets. ``reflect_fn`` writes the ``mast-b`` reflections (default: templated, from the rule
    annotator). ``max_tokens`` bounds each arm's feedback.

    Raises:
        ExperimentError: an unknown arm, ``n`` < 1, an empty command, or an output folder that
            holds results of a different command.
    """
    arm_list = list(dict.fromkeys(arms))
    unknown = [a for a in arm_list if a not in ARMS]
    if unknown or not arm_list:
        raise ExperimentError(f"unknown arm(s) {', '.join(unknown) or '(none)'}; arms: {', '.join(ARMS)}")
    if n < 1:
        raise ExperimentError("--n must be at least 1")
    argv = shlex.split(agent_cmd)
    if not argv:
        raise ExperimentError("the agent command is empty")
    arm_list.sort(key=ARMS.index)  # baseline first: mast-b's repetition 0 reflects on it
    tax = load_taxonomy(taxonomy)
    reflect_one = reflect_fn or _default_reflect(tax)
    root = Path(out)
    root.mkdir(parents=True, exist_ok=True)
    meta_path = root / "experiment.json"
    meta = {"agent_cmd": agent_cmd, "taxonomy": tax.id, "max_tokens": max_tokens}
    if meta_path.exists():
        old = json.loads(meta_path.read_text(encoding="utf-8"))
        if old.get("agent_cmd") != agent_cmd:
            raise ExperimentError(
                f"{root} holds results of another command ({old.get('agent_cmd')!r}); use another --out"
            )
    meta_path.write_text(json.dumps(meta, indent=2), encoding="utf-8")
    results_path = root / RESULTS
    records = _read_results(results_path)
    done = {(r.task_id, r.arm, r.rep): r for r in records}
    block = prompt_block(tax, max_tokens=max_tokens, tool=False) if "mast-a" in arm_list else ""
    for rep in range(n):
        for task in tasks:
            for arm in arm_list:
                if (task.id, arm, rep) in done:
                    continue
                run_dir = root / "runs" / _safe(task.id) / arm / str(rep)
                run_dir.mkdir(parents=True, exist_ok=True)
                trace_out = run_dir / "trace.json"
                if trace_out.exists():
                    trace_out.unlink()  # a trace left by a killed run is not this run's
                feedback, note = "", None
                if arm == "mast-a":
                    feedback = block
                elif arm == "mast-b":
                    prev = (
                        done.get((task.id, "mast-b", rep - 1)) if rep else done.get((task.id, "baseline", 0))
                    )
                    prev_trace = _load_trace(Path(prev.trace_path)) if prev and prev.trace_path else None
                    if prev_trace is None:
                        note = "no previous trace to reflect on"
                    else:
                        feedback = reflect_one(prev_trace).render(max_tokens)
                feedback_file = run_dir / "feedback.txt"
                feedback_file.write_text(feedback, encoding="utf-8")
                task_file = run_dir / "task.json"
                task_file.write_text(json.dumps(task.data, ensure_ascii=False), encoding="utf-8")
                env = {
                    **os.environ,
                    **(extra_env or {}),
                    "MASTKIT_TASK": task.text,
                    "MASTKIT_TASK_FILE": str(task_file.resolve()),
                    "MASTKIT_TASK_ID": task.id,
                    "MASTKIT_ARM": arm,
                    "MASTKIT_REP": str(rep),
                    "MASTKIT_FEEDBACK": feedback,
                    "MASTKIT_FEEDBACK_FILE": str(feedback_file.resolve()),
                    "MASTKIT_TRACE_OUT": str(trace_out.resolve()),
                }
                t0 = time.monotonic()
                passed, source, code, error, trace = _run_agent(argv, env, run_dir, timeout, trace_out)
                record = RunRecord(
                    task_id=task.id,
                    arm=arm,
                    rep=rep,
                    passed=passed,
                    outcome_from=source,
                    exit_code=code,
                    duration_s=round(time.monotonic() - t0, 3),
                    trace_path=str(trace_out.resolve()) if trace is not None else None,
                    feedback_tokens=len(feedback) // 4 + (1 if feedback else 0),
                    feedback_note=note,
                    error=error,
                )
                with results_path.open("a", encoding="utf-8") as fh:
                    fh.write(record.model_dump_json() + "\n")
                done[(task.id, arm, rep)] = record
                records.append(record)
                if on_run is not None:
                    on_run(record)
    return records


# -- statistics ------------------------------------------------------------------------------------


def summarize(records: Iterable[RunRecord], arms: Sequence[str] | None = None) -> ExperimentReport:
    """Pass rates per arm and the paired tests of each arm against the baseline."""
    recs = list(records)
    arm_list = list(arms) if arms else [a for a in ARMS if any(r.arm == a for r in recs)]
    by_arm = {a: {(r.task_id, r.rep): r.passed for r in recs if r.arm == a} for a in arm_list}
    stats = []
    for a in arm_list:
        runs = by_arm[a]
        k, m = sum(runs.values()), len(runs)
        stats.append(ArmStats(arm=a, runs=m, passed=k, rate=k / m if m else None, ci=wilson(k, m)))
    tests = []
    base = by_arm.get("baseline")
    if base is not None:
        for a in arm_list:
            if a == "baseline":
                continue
            keys = sorted(set(base) & set(by_arm[a]))
            arm_only = sum(1 for key in keys if by_arm[a][key] and not base[key])
            base_only = sum(1 for key in keys if base[key] and not by_arm[a][key])
            k_arm = sum(1 for key in keys if by_arm[a][key])
            k_base = sum(1 for key in keys if base[key])
            better = worse = 0
            for tid in sorted({t for t, _ in keys}):
                diff = sum(by_arm[a][key] - base[key] for key in keys if key[0] == tid)
                better += diff > 0
                worse += diff < 0
            tests.append(
                PairedTest(
                    arm=a,
                    pairs=len(keys),
                    arm_only=arm_only,
                    baseline_only=base_only,
                    diff=(k_arm - k_base) / len(keys) if keys else None,
                    diff_ci=newcombe(k_base, len(keys), k_arm, len(keys)) if keys else None,
                    p_mcnemar=mcnemar_exact(arm_only, base_only),
                    tasks_better=better,
                    tasks_worse=worse,
                    p_sign=mcnemar_exact(better, worse),
                )
            )
    n_tasks = len({r.task_id for r in recs})
    reps = max((r.rep for r in recs), default=-1) + 1
    return ExperimentReport(arms=stats, tests=tests, tasks=n_tasks, reps=reps)
