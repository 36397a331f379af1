"""``mastkit experiment``: run a user's agent per task and arm, report pass rates and paired tests."""

from __future__ import annotations

import json as jsonlib
from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from mastkit.cli._common import EXIT_USAGE, err, write_bytes
from mastkit.feedback.experiment import ExperimentError, RunRecord, load_tasks, run_experiment, summarize


def experiment_cmd(
    agent_cmd: Annotated[
        str,
        typer.Option("--agent-cmd", help="The agent command (split like a shell would, run without one)."),
    ],
    tasks: Annotated[Path, typer.Option(help="Tasks JSONL: one object per line with an id and the task.")],
    arms: Annotated[str, typer.Option(help="Comma-separated arms: baseline, mast-a, mast-b.")] = (
        "baseline,mast-a,mast-b"
    ),
    n: Annotated[int, typer.Option("--n", min=1, help="Repetitions per task and arm.")] = 5,
    out_dir: Annotated[Path, typer.Option("--out", help="Results folder (rerun to resume).")] = Path(
        "mastkit-experiment"
    ),
    timeout: Annotated[float, typer.Option(min=0.1, help="Seconds per agent run.")] = 600.0,
    max_tokens: Annotated[int, typer.Option(min=1, help="Token budget of each arm's feedback.")] = 400,
    taxonomy: Annotated[str, typer.Option(help="Taxonomy name or file.")] = "mast",
    json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Run --agent-cmd once per task, arm and repetition, passing the task and the arm's feedback
    in MASTKIT_TASK(_FILE) and MASTKIT_FEEDBACK(_FILE); the agent writes its trace to
    MASTKIT_TRACE_OUT. Reports pass rates per arm with Wilson intervals and, against the
    baseline, exact McNemar and sign tests. Runs already in --out/results.jsonl are skipped.

    Exit codes: 0 done; 2 bad usage (bad tasks file, unknown arm, another command in --out).
    """
    arm_list = [a.strip() for a in arms.split(",") if a.strip()]
    try:
        task_list = load_tasks(tasks)

        def progress(rec: RunRecord) -> None:
            if not json:
                verdict = "pass" if rec.passed else "fail"
                err.print(f"{rec.task_id} {rec.arm} #{rec.rep}: {verdict} ({rec.outcome_from})")

        records = run_experiment(
            agent_cmd,
            task_list,
            out=out_dir,
            arms=arm_list,
            n=n,
            timeout=timeout,
            max_tokens=max_tokens,
            taxonomy=taxonomy,
            on_run=progress,
        )
    except ExperimentError as exc:
        err.print(Text("error: ", style="bold red") + Text(str(exc)))
        raise typer.Exit(EXIT_USAGE) from None
    report = summarize(
        [r for r in records if r.rep < n], arms=[a for a in ("baseline", "mast-a", "mast-b") if a in arm_list]
    )
    (out_dir / "report.json").write_text(report.model_dump_json(indent=2), encoding="utf-8")
    if json:
        write_bytes(jsonlib.dumps(report.model_dump(mode="json"), indent=2).encode() + b"\n")
    else:
        summary = f"{report.tasks} tasks x {report.reps} repetitions; runs and traces in {out_dir}"
        write_bytes(f"{report.text()}\n{summary}\n".encode())
