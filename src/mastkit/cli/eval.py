"""``mastkit eval``: how far to trust an annotator — agreement with human labels, beside trivial baselines."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from mastkit.analyze.evaluate import as_rows, evaluate, evaluate_attribution
from mastkit.analyze.gold import gold_from_jsonl, gold_from_traces
from mastkit.calibration import run_agreement_line
from mastkit.cli._common import EXIT_NOTHING, err, error_printer, out, write_bytes
from mastkit.errors import MastkitError
from mastkit.store import Store
from mastkit.traces.load import load_traces
from mastkit.traces.ops import to_json


def _f(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def _ci(ci: tuple[float, float] | None) -> str:
    return "" if ci is None else f"[{ci[0]:.2f}, {ci[1]:.2f}]"


def eval_cmd(
    gold: Annotated[
        Path,
        typer.Option(
            "--gold",
            help="Gold labels: trace files/folders with labels (e.g. the MAST "
            "human file, Who&When) or a gold .jsonl file.",
        ),
    ],
    pred: Annotated[
        str | None,
        typer.Option(
            "--pred",
            help="Run to score: config-hash prefix, 'rules', 'llm', "
            "'hybrid', a model, or an attribution method; default: latest run.",
        ),
    ] = None,
    db: Annotated[Path, typer.Option(envvar="MASTKIT_DB")] = Path("mastkit.db"),
    attribution: Annotated[
        bool, typer.Option("--attribution", help="Score attribution (agent/step) instead of failure modes.")
    ] = False,
    json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Score a stored run against gold labels: per-mode P/R/F1, micro/macro F1, Cohen's kappa with 95% CIs,
    beside the always-absent and prevalence-matched random baselines (or agent/step accuracy for attribution)."""
    errors, on_error = error_printer()
    try:
        with Store(db) as store:
            if attribution:
                traces = list(load_traces(gold, on_error=on_error))
                preds = store.attributions(pred)
                s = evaluate_attribution(preds, traces)
                if json:
                    write_bytes(to_json(s.__dict__) + b"\n")
                else:
                    out.print(
                        f"attribution ({pred or 'all methods'}) on {s.n} labelled traces, {s.missing} "
                        "without prediction"
                    )
                    t = Table("metric", "method", "random", "most active agent", box=None)
                    t.add_row(
                        "agent accuracy", _f(s.agent_accuracy), _f(s.random_agent), _f(s.most_active_agent)
                    )
                    t.add_row("step accuracy", _f(s.step_accuracy), _f(s.random_step), "")
                    for k, v in s.step_within.items():
                        t.add_row(f"step within ±{k}", _f(v), _f(s.random_step_within[k]), "")
                    out.print(t)
                raise typer.Exit(0 if s.n else EXIT_NOTHING)
            run = store.resolve_run(pred)
            annotations = list(store.annotations(run))
            calibration = run_agreement_line(store, run)
    except MastkitError as exc:
        err.print(f"error: {exc}")
        raise typer.Exit(EXIT_NOTHING) from None
    g = (
        gold_from_jsonl(gold)
        if gold.suffix == ".jsonl" and gold.is_file()
        else gold_from_traces(load_traces(gold, on_error=on_error))
    )
    if not g.labels:
        err.print(f"no gold failure-mode labels found in {gold}")
        raise typer.Exit(EXIT_NOTHING)
    result = evaluate(annotations, g)
    r = result.agreement
    if json:
        write_bytes(
            to_json(
                {
                    "run": run,
                    "items": r.items,
                    "unknown": r.unknown,
                    "micro_f1": r.micro.f1,
                    "micro_f1_ci": r.micro_f1_ci,
                    "macro_f1": r.macro_f1,
                    "kappa": r.kappa,
                    "kappa_ci": r.kappa_ci,
                    "baseline_always_absent": r.baseline_always_absent,
                    "baseline_random": r.baseline_random,
                    "gold_ties": g.ties,
                    "calibration": calibration,
                    "modes": as_rows(result),
                }
            )
            + b"\n"
        )
        raise typer.Exit(0 if r.items else EXIT_NOTHING)
    out.print(
        f"run {run[:15]} vs {gold}: {r.items} traces scored, {r.unknown} unknown verdicts excluded, "
        f"{g.ties} tied gold votes (counted absent)"
    )
    t = Table(
        "mode",
        "n",
        "unk",
        "P",
        "R",
        "F1",
        "F1 95% CI",
        "kappa",
        "prev.",
        "random F1",
        "human Fleiss",
        box=None,
    )
    for row in as_rows(result):
        t.add_row(
            row["code"],
            str(row["n"]),
            str(row["unknown"]),
            _f(row["precision"]),
            _f(row["recall"]),
            _f(row["f1"]),
            _ci(row["f1_ci"]),
            _f(row["kappa"]),
            _f(row["gold_prevalence"]),
            _f(row["baseline_random_f1"]),
            _f(row["human_fleiss"]),
        )
    out.print(t)
    out.print(
        f"micro F1 {_f(r.micro.f1)} {_ci(r.micro_f1_ci)}  macro F1 {_f(r.macro_f1)}  Cohen's kappa "
        f"{_f(r.kappa)} {_ci(r.kappa_ci)}  accuracy {_f(r.micro.accuracy)}"
    )
    out.print(
        f"baselines — always absent: accuracy {_f(r.baseline_always_absent['accuracy'])}, F1 0, kappa 0; "
        f"prevalence-matched random: accuracy {_f(r.baseline_random['accuracy'])}, "
        f"F1 {_f(r.baseline_random['f1'])}, kappa 0"
    )
    out.print(Text(f"judge: {calibration}"), soft_wrap=True)
    raise typer.Exit(0 if r.items and not errors else (EXIT_NOTHING if not r.items else 1))
