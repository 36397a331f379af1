"""``mastkit calibrate``: measure a judge's agreement with humans on the shipped calibration set."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, cast

import typer
from rich.table import Table
from rich.text import Text

from mastkit.annotate.factory import make_annotator
from mastkit.annotate.model import AnnotatorKind
from mastkit.calibration import CalibrationResult, agreement_line, calibrate, load_calibration_set
from mastkit.cli._common import (
    EXIT_NOTHING,
    EXIT_PARTIAL,
    EXIT_USAGE,
    MaxAttemptsOpt,
    ModelTimeoutOpt,
    RunProgressBar,
    err,
    out,
    provider_options,
    write_bytes,
)
from mastkit.cli._cost import (
    AssumePriceOpt,
    BudgetOpt,
    BudgetTotalOpt,
    ConfirmAboveOpt,
    PriceInOpt,
    PriceOutOpt,
    PricesOpt,
    YesOpt,
    preflight_annotate,
)
from mastkit.errors import MastkitError
from mastkit.store import Store


def _f(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def _ci(ci: tuple[float, float] | None) -> str:
    return "" if ci is None else f"[{ci[0]:.2f}, {ci[1]:.2f}]"


def _say(text: str) -> None:
    out.print(Text(text), soft_wrap=True)


def print_result(r: CalibrationResult) -> None:
    """The per-mode table and the summary lines of a calibration."""
    t = Table("mode", "n", "unk", "P", "R", "F1", "F1 95% CI", "kappa", "kappa 95% CI", "random F1", box=None)
    for m in r.modes:
        t.add_row(
            m.code,
            str(m.n),
            str(m.unknown),
            _f(m.precision),
            _f(m.recall),
            _f(m.f1),
            _ci(m.f1_ci),
            _f(m.kappa),
            _ci(m.kappa_ci),
            _f(m.baseline_random_f1),
        )
    out.print(t)
    _say(
        f"micro F1 {_f(r.micro_f1)} {_ci(r.micro_f1_ci)}  macro F1 {_f(r.macro_f1)} {_ci(r.macro_f1_ci)}  "
        f"Cohen's kappa {_f(r.kappa)} {_ci(r.kappa_ci)}  coverage {_f(r.coverage)} ({r.unknown} unknown)"
    )
    _say(
        f"baselines — always absent: F1 0, kappa {_f(r.baseline_always_absent.get('kappa'))}; "
        f"prevalence-matched random: F1 {_f(r.baseline_random.get('f1'))}, kappa 0"
    )
    if r.attribution is not None:
        a = r.attribution
        _say(
            f"attribution on {a.n} Who&When traces: agent {_f(a.agent_accuracy)} (random {_f(a.random_agent)}), "
            f"step {_f(a.step_accuracy)} (random {_f(a.random_step)}), {a.missing} without an answer"
        )
    _say(
        f"{r.model_calls} model calls, {r.input_tokens:,} in / {r.output_tokens:,} out tokens, ${r.cost_usd:.4f}"
        + (f"; {len(r.failed)} trace(s) failed or not done: {', '.join(r.failed)}" if r.failed else "")
    )


def calibrate_cmd(
    model: Annotated[
        str, typer.Option(help="provider:model, e.g. openai:gpt-4o-mini.", envvar="MASTKIT_MODEL")
    ],
    annotator: Annotated[str, typer.Option(help="llm or hybrid.")] = "llm",
    base_url: Annotated[
        str | None, typer.Option(help="OpenAI-compatible/Anthropic endpoint.", envvar="MASTKIT_BASE_URL")
    ] = None,
    samples: Annotated[
        int, typer.Option(min=1, help="Self-consistency samples per window.", envvar="MASTKIT_SAMPLES")
    ] = 1,
    taxonomy: Annotated[str, typer.Option(help="Taxonomy: 'mast' or a YAML/JSON file.")] = "mast",
    window_tokens: Annotated[
        int | None,
        typer.Option(min=500, help="Trace tokens per judge window (default: the model's context)."),
    ] = None,
    concurrency: Annotated[int, typer.Option(help="Traces (and model calls) in flight.")] = 8,
    attribution: Annotated[
        bool, typer.Option(help="Also annotate the Who&When traces and score the judge's attribution.")
    ] = True,
    db: Annotated[Path, typer.Option(help="Store file (SQLite).", envvar="MASTKIT_DB")] = Path("mastkit.db"),
    budget: BudgetOpt = None,
    budget_total: BudgetTotalOpt = None,
    prices: PricesOpt = None,
    price_in: PriceInOpt = None,
    price_out: PriceOutOpt = None,
    assume_price: AssumePriceOpt = None,
    confirm_above: ConfirmAboveOpt = 1.0,
    yes: YesOpt = False,
    timeout: ModelTimeoutOpt = 120.0,
    max_attempts: MaxAttemptsOpt = None,
    json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Run the judge on the shipped calibration set (19 MAST traces with human failure-mode labels,
    24 Who&When traces with human attribution) and store its measured agreement.

    Prints the cost estimate first (above --confirm-above it asks, or needs --yes), then per-mode
    precision, recall, F1 and Cohen's kappa with 95% trace-bootstrap intervals beside trivial
    baselines, and the cost. Reports and `mastkit eval` of runs made with this judge then show
    the measured agreement. Exit codes: 0 done; 1 some traces failed; 2 bad usage; 3 nothing scored.
    """
    if annotator not in ("llm", "hybrid"):
        err.print(Text("error: ", style="bold red") + Text("--annotator must be llm or hybrid"))
        raise typer.Exit(EXIT_USAGE)
    with Store(db) as store:
        try:
            ann = make_annotator(
                cast(AnnotatorKind, annotator),
                taxonomy=taxonomy,
                model=model,
                base_url=base_url,
                cache=store,
                budget_usd=budget,
                budget_total_usd=budget_total,
                samples=samples,
                window_tokens=window_tokens,
                concurrency=concurrency,
                prices=prices,
                price_in=price_in,
                price_out=price_out,
                assume_price=assume_price,
                timeout=timeout,
                provider_options=provider_options(max_attempts),
            )
        except MastkitError as exc:
            err.print(Text("error: ", style="bold red") + Text(str(exc)))
            raise typer.Exit(EXIT_USAGE) from None
        cs = load_calibration_set()
        traces = cs.traces if attribution else cs.mode_traces
        err.print(
            f"calibration set {cs.version}: {len(cs.mode_traces)} MAST traces (failure modes)"
            + (f", {len(cs.attribution_traces)} Who&When traces (attribution)" if attribution else "")
        )
        preflight_annotate(
            traces, ann, store, budget_total=budget_total, confirm_above=confirm_above, yes=yes
        )
        with RunProgressBar("calibrating", total=len(traces)) as bar:
            result = calibrate(
                ann,
                store=store,
                attribution=attribution,
                concurrency=concurrency,
                on_progress=lambda p: bar.update(p),
            )
    if json:
        write_bytes(result.model_dump_json(indent=2).encode() + b"\n")
    else:
        _say(
            f"calibration of {model} ({annotator}), config {result.config_hash[:15]}, set {result.set_version}"
        )
        print_result(result)
        _say(agreement_line(result.config, (result, True)) + f"; stored in {db}")
    if not result.traces:
        raise typer.Exit(EXIT_NOTHING)
    raise typer.Exit(EXIT_PARTIAL if result.failed else 0)
