"""``mastkit annotate``: failure vectors for traces, into the store, with live progress."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, cast

import typer
from rich.table import Table
from rich.text import Text

from mastkit.annotate import Progress, annotate
from mastkit.annotate.factory import make_annotator
from mastkit.annotate.model import AnnotatorKind
from mastkit.cli._common import (
    RunProgressBar,
    err,
    list_failures,
    out,
    provider_options,
    run_exit_code,
)
from mastkit.cli._cost import (
    AssumePriceOpt,
    BudgetOpt,
    BudgetTotalOpt,
    ConfirmAboveOpt,
    PriceInOpt,
    PriceOutOpt,
    YesOpt,
    load_all,
    preflight_annotate,
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
from mastkit.errors import MastkitError, TraceLoadError
from mastkit.scale.shard import in_shard
from mastkit.scale.worker import AnnotateJob
from mastkit.store import Store
from mastkit.traces.load import load_traces
from mastkit.traces.model import Trace


def _extra(p: Progress, load_errors: int) -> str:
    unreadable = f"unreadable {load_errors}  " if load_errors else ""
    return f"{unreadable}calls {p.model_calls}  tokens {p.input_tokens + p.output_tokens:,}  cost ${p.cost_usd:.4f}"


def annotate_cmd(
    paths: Annotated[list[Path], typer.Argument(help="Trace files or folders.")],
    taxonomy: Annotated[
        str, typer.Option(help="Taxonomy: 'mast' or a YAML/JSON file.", envvar="MASTKIT_TAXONOMY")
    ] = "mast",
    annotator: Annotated[
        str, typer.Option(help="rules (offline), llm or hybrid.", envvar="MASTKIT_ANNOTATOR")
    ] = "rules",
    model: Annotated[
        str | None, typer.Option(help="provider:model, e.g. openai:gpt-4o-mini.", envvar="MASTKIT_MODEL")
    ] = None,
    base_url: Annotated[
        str | None, typer.Option(help="OpenAI-compatible/Anthropic endpoint.", envvar="MASTKIT_BASE_URL")
    ] = None,
    concurrency: Annotated[
        int, typer.Option(help="Traces (and model calls) in flight.", envvar="MASTKIT_CONCURRENCY")
    ] = 8,
    budget: BudgetOpt = None,
    budget_total: BudgetTotalOpt = None,
    db: Annotated[Path, typer.Option(help="Store file (SQLite).", envvar="MASTKIT_DB")] = Path("mastkit.db"),
    samples: Annotated[
        int, typer.Option(help="Self-consistency samples per window.", envvar="MASTKIT_SAMPLES")
    ] = 1,
    examples: Annotated[
        bool, typer.Option(help="Few-shot examples from the taxonomy in the prompt.")
    ] = False,
    redact: Annotated[
        bool, typer.Option(help="Redact secrets before sending traces to the model.", envvar="MASTKIT_REDACT")
    ] = True,
    prices: Annotated[
        str | None, typer.Option(help="Price table override (TOML/JSON).", envvar="MASTKIT_PRICES")
    ] = None,
    structured_output: Annotated[bool, typer.Option(help="Request JSON-schema structured output.")] = True,
    window_tokens: Annotated[
        int | None,
        typer.Option(min=500, help="Trace tokens per judge window (default: the model's context)."),
    ] = None,
    max_windows: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="Most windows per trace (default 8); beyond it the middle of the trace is left out "
            "and the annotation records how much.",
        ),
    ] = None,
    max_event_chars: Annotated[
        int | None,
        typer.Option(
            min=200,
            help="Longest event text shown whole (default 1200); longer ones keep head and tail, "
            "and the annotation records the characters left out.",
        ),
    ] = None,
    timeout: Annotated[
        float,
        typer.Option(
            min=0.1, help="Seconds to wait for each model response attempt.", envvar="MASTKIT_TIMEOUT"
        ),
    ] = 120.0,
    max_attempts: Annotated[
        int | None,
        typer.Option(min=1, help="Attempts per model call (retries on 429/5xx/timeouts); default 5."),
    ] = None,
    format: Annotated[str | None, typer.Option("--format", "-f", help="Force a trace importer.")] = None,
    price_in: PriceInOpt = None,
    price_out: PriceOutOpt = None,
    assume_price: AssumePriceOpt = None,
    confirm_above: ConfirmAboveOpt = 1.0,
    yes: YesOpt = False,
    engine: EngineOpt = Engine.local,
    address: AddressOpt = None,
    workers: WorkersOpt = None,
    batch_size: BatchSizeOpt = 64,
    rpm: RpmOpt = None,
    shard: ShardOpt = None,
) -> None:
    """Annotate traces with failure modes (MAST by default) and store the results.

    Re-running on unchanged traces with the same settings makes no model call; an
    interrupted run resumes where it stopped, and failed traces are tried again. A rejected
    API key (401/403), an unknown model (404) or an unreachable server stops the run early.

    Exit codes: 0 every trace annotated or answered from the store; 1 some traces failed,
    were unreadable or not done (budget or early stop); 2 bad usage; 3 nothing annotated.

    Bigger runs: --engine ray sends the work to a Ray cluster (results, resume and exit codes as
    here); --shard i/N keeps one job's share of the traces (docs/scale.md).
    """
    load_errors: list[TraceLoadError] = []
    only = shard_option(shard)
    # the settings a Ray worker builds the same annotator from (the store and budget stay here)
    settings = {
        "taxonomy": taxonomy,
        "model": model,
        "base_url": base_url,
        "price_in": price_in,
        "price_out": price_out,
        "assume_price": assume_price,
        "samples": samples,
        "examples": examples,
        "redact": redact,
        "concurrency": concurrency,
        "prices": prices,
        "structured_output": structured_output,
        "window_tokens": window_tokens,
        "max_windows": max_windows,
        "max_event_chars": max_event_chars,
        "timeout": timeout,
        "provider_options": provider_options(max_attempts),
    }
    with Store(db) as store:
        try:
            ann = make_annotator(
                cast(AnnotatorKind, annotator),
                cache=store,
                budget_usd=budget,
                budget_total_usd=budget_total,
                **settings,  # type: ignore[arg-type]
            )
        except MastkitError as exc:
            err.print(Text("error: ", style="bold red") + Text(str(exc)))
            raise typer.Exit(2) from None

        def on_load_error(e: TraceLoadError) -> None:
            load_errors.append(e)
            store.log_error("load", e.reason, path=e.path, config_hash=ann.config.config_hash())
            err.print(Text("unreadable: ", style="red") + Text(str(e)))

        traces: Iterable[Trace] = in_shard(load_traces(paths, format=format, on_error=on_load_error), only)
        if annotator != "rules":  # estimate the cost first (the traces are read once, into a list)
            traces = list(in_shard(load_all(paths, format=format, on_error=on_load_error), only))
            preflight_annotate(
                traces, ann, store, budget_total=budget_total, confirm_above=confirm_above, yes=yes
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
            RunProgressBar("annotating", total=len(traces) if isinstance(traces, list) else None) as bar,
        ):
            runner = ann
            in_flight = concurrency
            if cluster is not None:
                job = AnnotateJob(annotator, settings)
                runner = cluster.annotator(
                    job, config=ann.config, store=store, budget=getattr(ann, "budget", None)
                )
                in_flight = cluster.in_flight
            else:
                pace_locally(ann, rpm)
            report = annotate(
                traces,
                runner,
                store=store,
                concurrency=in_flight,
                total=len(traces) if isinstance(traces, list) else None,
                on_progress=lambda p: bar.update(p, _extra(p, len(load_errors))),
                keep=False,  # results are read back from the store: memory stays flat on big runs
            )
        counts = store.verdict_counts(report.config_hash)  # in SQL: not every annotation in memory
        table = Table(
            "mode",
            "present",
            "absent",
            "unknown",
            title=f"run {report.config_hash[:15]} ({annotator})",
            box=None,
            title_justify="left",
        )
        for code in sorted(counts):
            c = counts[code]
            table.add_row(code, *(str(c.get(v, 0)) for v in ("present", "absent", "unknown")))
        out.print(table)
        p = report.progress
        not_done = f", {p.not_done} not done" if p.not_done else ""
        out.print(
            f"{p.done} annotated, {p.cached} from cache, {p.failed} failed{not_done}, {len(load_errors)} "
            f"unreadable; {p.model_calls} model calls, {p.input_tokens:,} in / {p.output_tokens:,} out tokens, "
            f"${p.cost_usd:.4f}; results in {db}"
        )
        list_failures(report.outcomes, report.stop, db=db, verb="annotate", done_word="annotated")
    # Failures are listed above and kept in the store (errors table); see EXIT CODES in the help.
    raise typer.Exit(
        run_exit_code(ok=p.done + p.cached, failed=p.failed, not_done=p.not_done, unreadable=len(load_errors))
    )
