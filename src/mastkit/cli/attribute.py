"""``mastkit attribute``: which agent and step caused each failed run."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from mastkit.attribute import METHODS, attribute
from mastkit.cli._common import (
    MaxAttemptsOpt,
    ModelTimeoutOpt,
    RunProgressBar,
    err,
    error_printer,
    list_failures,
    out,
    provider_options,
    run_exit_code,
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
from mastkit.cli._scale import (
    AddressOpt,
    BatchSizeOpt,
    Engine,
    EngineOpt,
    RpmOpt,
    ShardOpt,
    WorkersOpt,
    open_engine,
    pace_locally,
    shard_option,
)
from mastkit.errors import MastkitError
from mastkit.scale.shard import in_shard
from mastkit.scale.worker import AttributeJob
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
    concurrency: Annotated[
        int, typer.Option(min=1, help="Traces attributed at once.", envvar="MASTKIT_CONCURRENCY")
    ] = 8,
    timeout: ModelTimeoutOpt = 120.0,
    max_attempts: MaxAttemptsOpt = None,
    json: Annotated[bool, typer.Option("--json", help="Print results as JSON.")] = False,
    engine: EngineOpt = Engine.local,
    address: AddressOpt = None,
    workers: WorkersOpt = None,
    batch_size: BatchSizeOpt = 64,
    rpm: RpmOpt = None,
    shard: ShardOpt = None,
) -> None:
    """Blame an agent and a decisive step for each failed trace; results go to the store.

    Traces are attributed concurrently; stored results are reused, failed traces are tried
    again on the next run. A rejected API key (401/403), an unknown model (404) or an
    unreachable server stops the run early.

    Exit codes: 0 every failed run attributed or answered from the store; 1 some traces failed,
    were unreadable or not done (budget or early stop); 2 bad usage; 3 nothing attributed.

    Bigger runs: --engine ray sends the work to a Ray cluster (results, resume and exit codes as
    here); --shard i/N keeps one job's share of the traces (docs/scale.md).
    """
    errors, on_error = error_printer()
    only = shard_option(shard)
    # the settings a Ray worker builds the same attributor from (the store and budget stay here)
    settings = {
        "base_url": base_url,
        "prices": prices,
        "price_in": price_in,
        "price_out": price_out,
        "assume_price": assume_price,
        "hints": hints,
        "counterfactual": counterfactual,
        "samples": samples,
        "timeout": timeout,
        "provider_options": provider_options(max_attempts),
    }
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
                    cache=store,
                    budget_usd=budget,
                    budget_total_usd=budget_total,
                    **settings,  # type: ignore[arg-type]
                )
            except MastkitError as exc:
                err.print(Text("error: ", style="bold red") + Text(str(exc)))
                raise typer.Exit(2) from None
        traces: Iterable[Trace] = in_shard(load_traces(paths, on_error=on_error), only)
        if judge is not None:  # estimate the cost first (the traces are read once, into a list)
            traces = list(in_shard(load_all(paths, format=None, on_error=on_error), only))
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
        with (
            open_engine(
                engine,
                address=address,
                workers=workers,
                batch_size=batch_size,
                concurrency=concurrency,
                rpm=rpm,
            ) as cluster,
            RunProgressBar("attributing", total=len(traces) if isinstance(traces, list) else None) as bar,
        ):
            runner: Any = judge
            in_flight = concurrency
            if cluster is not None:
                job = AttributeJob(method, with_ground_truth, model, settings if judge is not None else {})
                runner = cluster.attributor(
                    job,
                    store=store,
                    budget=getattr(judge, "budget", None),
                    version=getattr(judge, "version", "llm"),
                    model_id=getattr(judge, "model_id", None),
                )
                in_flight = cluster.in_flight
            else:
                pace_locally(judge, rpm)
            report = attribute(
                traces,
                method,
                with_ground_truth=with_ground_truth,
                store=store,
                judge=runner,
                concurrency=in_flight,
                total=len(traces) if isinstance(traces, list) else None,
                on_progress=bar.update,
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
        not_done = f", {len(report.not_done)} not done" if report.not_done else ""
        out.print(
            f"{len(report.by_hash)} attributed ({report.cached} cached), {report.skipped_successful} successful "
            f"skipped, {len(report.failed)} failed{not_done}, {len(errors)} unreadable; method {method}; "
            f"results in {db}"
        )
    list_failures(report.outcomes, report.stop, db=db, verb="attribute", done_word="attributed")
    raise typer.Exit(
        run_exit_code(
            ok=len(report.by_hash),
            failed=len(report.failed),
            not_done=len(report.not_done),
            unreadable=len(errors),
        )
    )
