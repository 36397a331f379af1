"""``mastkit attribute``: which agent and step caused each failed run."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from mastkit.attribute import METHODS, attribute
from mastkit.cli._common import (
    EXIT_NOTHING,
    EXIT_OK,
    MaxAttemptsOpt,
    ModelTimeoutOpt,
    err,
    error_printer,
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
    load_all,
    preflight_attribute,
)
from mastkit.errors import MastkitError
from mastkit.store import Store
from mastkit.traces.load import load_traces
from mastkit.traces.model import Trace
from mastkit.traces.ops import to_json


def attribute_cmd(
    paths: Annotated[list[Path], typer.Argument(help="Trace files or folders (failed runs).")],
    method: Annotated[
        str, typer.Option(help=f"One of: {', '.join(METHODS)}.", envvar="MASTKIT_ATTRIBUTE_METHOD")
    ] = "rules",
    model: Annotated[
        str | None, typer.Option(help="provider:model for the LLM methods.", envvar="MASTKIT_MODEL")
    ] = None,
    base_url: Annotated[str | None, typer.Option(envvar="MASTKIT_BASE_URL")] = None,
    with_ground_truth: Annotated[bool, typer.Option(help="Let the method see the expected answer.")] = False,
    db: Annotated[Path, typer.Option(help="Store file.", envvar="MASTKIT_DB")] = Path("mastkit.db"),
    hints: Annotated[bool, typer.Option(help="LLM methods: pass rule-detector evidence as hints.")] = False,
    counterfactual: Annotated[
        bool, typer.Option(help="LLM methods: check the chosen step counterfactually.")
    ] = False,
    samples: Annotated[int, typer.Option(help="LLM methods: self-consistency samples (vote).")] = 1,
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
    json: Annotated[bool, typer.Option("--json", help="Print results as JSON.")] = False,
) -> None:
    """Blame an agent and a decisive step for each failed trace; results go to the store."""
    errors, on_error = error_printer()
    if method != "rules" and not model:
        err.print(f"the {method} method needs --model provider:name")
        raise typer.Exit(2)
    with Store(db) as store:
        judge = None
        if method != "rules" and model:
            from mastkit.attribute.llm import LLMAttributor

            try:
                judge = LLMAttributor.from_spec(
                    model,
                    base_url=base_url,
                    cache=store,
                    budget_usd=budget,
                    budget_total_usd=budget_total,
                    prices=prices,
                    price_in=price_in,
                    price_out=price_out,
                    assume_price=assume_price,
                    hints=hints,
                    counterfactual=counterfactual,
                    samples=samples,
                    timeout=timeout,
                    provider_options=provider_options(max_attempts),
                )
            except MastkitError as exc:
                err.print(Text("error: ", style="bold red") + Text(str(exc)))
                raise typer.Exit(2) from None
        traces: Iterable[Trace] = load_traces(paths, on_error=on_error)
        if judge is not None:  # estimate the cost first (the traces are read once, into a list)
            traces = load_all(paths, format=None, on_error=on_error)
            preflight_attribute(
                traces,
                judge,
                store,
                method=method,
                with_ground_truth=with_ground_truth,
                budget_total=budget_total,
                confirm_above=confirm_above,
                yes=yes,
            )
        report = attribute(
            traces,
            method,
            with_ground_truth=with_ground_truth,
            store=store,
            judge=judge,
        )
    if json:
        write_bytes(to_json({k: v.model_dump() for k, v in report.results.items()}) + b"\n")
    else:
        table = Table("trace", "agent", "step", "mode", "why", box=None)
        for tid, a in sorted(report.results.items()):
            table.add_row(
                Text(tid),
                Text(a.agent or "-"),
                str(a.step if a.step is not None else "-"),
                a.mode or "-",
                Text((a.reason or "")[:90]),
            )
        out.print(table)
        out.print(
            f"{len(report.results)} attributed ({report.cached} cached), {report.skipped_successful} successful "
            f"skipped, {len(report.errors)} failed, {len(errors)} unreadable; method {method}; results in {db}"
        )
    for e in report.errors[:10]:
        err.print(Text(f"failed: {e['trace_id']}: {e['reason']}", style="red"))
    if report.stopped_by_budget:
        err.print(
            f"budget reached: {len(report.not_done)} trace(s) not attributed; "
            "run again with a larger --budget to go on (what is stored is not redone)"
        )
    raise typer.Exit(EXIT_OK if report.results else EXIT_NOTHING)
