"""Cost options and the pre-run cost check of the verbs that call a model (annotate, attribute).

Before a model-backed run the traces are loaded once into a list (so they can be measured
and then annotated without reading the files twice), the cost is estimated
(:func:`mastkit.llm.estimate.estimate_cost`) and printed, and a run estimated above
``--confirm-above`` asks for confirmation on a terminal, or needs ``--yes`` otherwise.
Trade-off: an LLM run holds all its traces in memory; a rules run still streams them. A trace
set too big for memory would cost far more in model calls than it takes in RAM.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.text import Text

from mastkit.cli._common import EXIT_USAGE, err
from mastkit.errors import TraceLoadError
from mastkit.llm.estimate import Estimate, estimate_cost
from mastkit.llm.spend import store_spent
from mastkit.providers import Provider
from mastkit.providers.pricing import PriceInfo, price_info
from mastkit.store import Store
from mastkit.traces.load import load_traces
from mastkit.traces.model import Trace

# -- options shared by annotate and attribute --------------------------------------------------------

BudgetOpt = Annotated[
    float | None,
    typer.Option(
        "--budget",
        min=0.0,
        help="Per-run cap (USD): this run stops cleanly before spending more. Needs a known price.",
        envvar="MASTKIT_BUDGET",
    ),
]
BudgetTotalOpt = Annotated[
    float | None,
    typer.Option(
        "--budget-total",
        min=0.0,
        help="Cumulative cap (USD) over all runs on this --db: what its call log already spent counts.",
        envvar="MASTKIT_BUDGET_TOTAL",
    ),
]
PricesOpt = Annotated[
    str | None, typer.Option("--prices", help="Price table override (TOML/JSON).", envvar="MASTKIT_PRICES")
]
PriceInOpt = Annotated[
    float | None, typer.Option("--price-in", min=0.0, help="The model's price, USD per million input tokens.")
]
PriceOutOpt = Annotated[
    float | None,
    typer.Option("--price-out", min=0.0, help="The model's price, USD per million output tokens."),
]
AssumePriceOpt = Annotated[
    float | None,
    typer.Option(
        "--assume-price",
        min=0.0,
        help="For a model with no known price: count every token at this USD per million (an upper bound).",
    ),
]
ConfirmAboveOpt = Annotated[
    float,
    typer.Option(
        "--confirm-above",
        min=0.0,
        help="Ask before a run estimated above this (USD); non-interactive runs need --yes.",
        envvar="MASTKIT_CONFIRM_ABOVE",
    ),
]
YesOpt = Annotated[
    bool, typer.Option("--yes", "-y", help="Run even when the estimate is above --confirm-above.")
]


# -- the check ---------------------------------------------------------------------------------------


def confirm_cost(
    estimate: Estimate,
    price: PriceInfo,
    *,
    confirm_above: float,
    yes: bool,
    interactive: bool | None = None,
    ask: Callable[[str], bool] | None = None,
    console: Console = err,
) -> None:
    """Print the estimate; above ``confirm_above`` ask (on a terminal) or require ``yes``.

    Raises:
        typer.Exit: code 2 when the run is not confirmed.
    """
    console.print(Text(estimate.describe(price.describe())))
    if estimate.usd is None or estimate.usd <= confirm_above or yes:
        return
    if interactive is None:
        interactive = sys.stdin.isatty()
    question = f"estimated ~${estimate.usd:.4f} is above --confirm-above ${confirm_above:.2f}; run anyway?"
    if interactive:
        if (ask or (lambda q: typer.confirm(q, default=False, err=True)))(question):
            return
        console.print("not confirmed: nothing was sent")
        raise typer.Exit(EXIT_USAGE)
    console.print(
        Text("error: ", style="bold red")
        + Text(
            f"estimated ~${estimate.usd:.4f} is above --confirm-above ${confirm_above:.2f}; pass --yes to run "
            "anyway, or raise --confirm-above"
        )
    )
    raise typer.Exit(EXIT_USAGE)


def note_total_budget(store: Store, budget_total: float | None) -> None:
    """Say how much of ``--budget-total`` the store's earlier runs already spent."""
    if budget_total is None:
        return
    spent = store_spent(store)
    line = f"total budget: ${spent:.4f} of ${budget_total:.4f} already spent on {store.path}"
    if spent >= budget_total:
        line += "; no model call will be made (raise --budget-total to continue)"
    err.print(Text(line, style="yellow" if spent >= budget_total else ""))


def load_all(
    paths: list[Path], *, format: str | None, on_error: Callable[[TraceLoadError], None]
) -> list[Trace]:
    """Every trace of ``paths`` in a list (the LLM verbs read them once, estimate, then run)."""
    return list(load_traces(paths, format=format, on_error=on_error))


def preflight_annotate(
    traces: list[Trace],
    annotator: Any,
    store: Store,
    *,
    budget_total: float | None,
    confirm_above: float,
    yes: bool,
) -> None:
    """The estimate-and-confirm block of ``mastkit annotate`` for an LLM or hybrid annotator."""
    from mastkit.annotate.judge.judge import JudgeAnnotator
    from mastkit.annotate.judge.prompt import system_prompt

    if not isinstance(annotator, JudgeAnnotator):
        return
    provider: Provider = annotator.provider
    opts = annotator.options
    system_tokens = provider.estimate_tokens(
        system_prompt(annotator.taxonomy, "trace-0123456789", examples=opts.examples)
    )
    window = opts.window_tokens or max(
        2000, provider.context_window - system_tokens - opts.max_output_tokens - 1500
    )
    config_hash = annotator.config_hash

    def done(t: Trace) -> bool:
        return store.get_annotation(t.content_hash(), config_hash) is not None

    estimate = estimate_cost(
        traces,
        provider,
        system_tokens=system_tokens,
        window_tokens=window,
        max_output_tokens=opts.max_output_tokens,
        samples=opts.samples,
        max_windows=opts.max_windows,
        overlap_events=opts.overlap_events,
        skip=done,
    )
    note_total_budget(store, budget_total)
    confirm_cost(estimate, price_info(provider), confirm_above=confirm_above, yes=yes)


def preflight_attribute(
    traces: Iterable[Trace],
    attributor: Any,
    store: Store,
    *,
    method: str,
    with_ground_truth: bool,
    budget_total: float | None,
    confirm_above: float,
    yes: bool,
) -> None:
    """The estimate-and-confirm block of ``mastkit attribute`` for an LLM method."""
    from mastkit.attribute.llm import LLMAttributor
    from mastkit.attribute.run import method_hash

    if not isinstance(attributor, LLMAttributor):
        return
    mh = method_hash(
        method,
        {"with_ground_truth": with_ground_truth, "version": attributor.version, "model": attributor.model_id},
    )

    def skip(t: Trace) -> bool:
        if t.outcome is not None and t.outcome.success is True:
            return True  # successful runs are not attributed
        return store.get_attribution(t.content_hash(), mh) is not None

    estimate = estimate_cost(
        traces,
        attributor.provider,
        system_tokens=attributor.system_tokens(),
        window_tokens=attributor.log_tokens(),
        max_output_tokens=attributor.options.max_output_tokens,
        samples=attributor.options.samples,
        calls_per_trace=lambda t: attributor.requests_for(t, method),
        skip=skip,
    )
    note_total_budget(store, budget_total)
    confirm_cost(estimate, price_info(attributor.provider), confirm_above=confirm_above, yes=yes)
