"""``mastkit verify``: pick the best rollout of each task, or measure how well a scorer picks."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from mastkit.cli._common import (
    EXIT_NOTHING,
    EXIT_OK,
    EXIT_PARTIAL,
    EXIT_USAGE,
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
    ConfirmAboveOpt,
    PriceInOpt,
    PriceOutOpt,
    YesOpt,
    confirm_cost,
)
from mastkit.errors import MastkitError
from mastkit.traces.model import Trace
from mastkit.traces.ops import to_json

OFFLINE = (
    "random",
    "shortest",
    "fewest_state_changes",
    "no_handoff",
    "failure_vector_defaults",
    "failure_vector",
    "failure_vector_modes_only",
    "consensus",
    "process_defaults",
    "process",
)
LLM = ("llm_plain", "llm_taxonomy")
SCORERS = (*OFFLINE, *LLM)


def _fail(message: str, code: int = EXIT_USAGE) -> typer.Exit:
    err.print(Text("error: ", style="bold red") + Text(message), soft_wrap=True)
    return typer.Exit(code)


def verify_cmd(
    paths: Annotated[list[Path], typer.Argument(help="Rollout files or folders (several runs per task).")],
    group_by: Annotated[
        str, typer.Option("--group-by", help="What makes rollouts comparable: task.")
    ] = "task",
    scorer: Annotated[
        list[str] | None,
        typer.Option(
            "--scorer",
            help=f"Repeatable. One of: {', '.join(SCORERS)}. Default: process "
            "(with --eval: every offline scorer).",
        ),
    ] = None,
    evaluate: Annotated[
        bool, typer.Option("--eval", help="Rollouts have known outcomes: print pass@1 / selected / oracle.")
    ] = False,
    train: Annotated[
        list[Path] | None,
        typer.Option(
            help="Labelled rollouts (other tasks) to fit failure_vector / process on before selecting."
        ),
    ] = None,
    annotations_run: Annotated[
        str | None,
        typer.Option(help="failure_vector reads this stored run's annotations (id or prefix) from --db."),
    ] = None,
    model: Annotated[
        str | None, typer.Option(help="provider:model for the LLM scorers.", envvar="MASTKIT_MODEL")
    ] = None,
    base_url: Annotated[str | None, typer.Option(envvar="MASTKIT_BASE_URL")] = None,
    pairwise: Annotated[
        bool, typer.Option(help="LLM scorers: settle each task's two finalists by a pairwise comparison.")
    ] = False,
    hide_task: Annotated[bool, typer.Option(help="LLM scorers: do not show the task text.")] = False,
    max_event_chars: Annotated[
        int, typer.Option(min=500, help="LLM scorers: longest event text shown whole (head and tail beyond).")
    ] = 1200,
    db: Annotated[
        Path,
        typer.Option(
            help="Store file (response cache, annotations; --eval keeps its table here for `mastkit report`).",
            envvar="MASTKIT_DB",
        ),
    ] = Path("mastkit.db"),
    budget: BudgetOpt = None,
    price_in: PriceInOpt = None,
    price_out: PriceOutOpt = None,
    assume_price: AssumePriceOpt = None,
    confirm_above: ConfirmAboveOpt = 1.0,
    yes: YesOpt = False,
    concurrency: Annotated[int, typer.Option(min=1, help="Rollouts scored at once (LLM scorers).")] = 8,
    timeout: ModelTimeoutOpt = 120.0,
    max_attempts: MaxAttemptsOpt = None,
    folds: Annotated[int, typer.Option(min=2, help="--eval: cross-validation folds (by task).")] = 5,
    n_boot: Annotated[
        int, typer.Option("--boot", min=100, help="--eval: bootstrap resamples over tasks.")
    ] = 2000,
    seed: Annotated[int, typer.Option(help="--eval: bootstrap seed.")] = 0,
    json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
    html: Annotated[
        Path | None,
        typer.Option("--html", help="--eval: also write the table as a self-contained HTML page."),
    ] = None,
) -> None:
    """Score each rollout's chance of success without seeing its outcome, and pick one per task.

    Without --eval it prints the chosen rollout of each task. With --eval (rollouts whose outcome
    is known) it prints, per scorer, pass@1 (mean over rollouts), the success of the selected
    rollouts and the oracle (any rollout succeeded), with 95% bootstrap intervals over tasks;
    fitted scorers are scored on held-out tasks (GroupKFold by task), and the table is kept in
    --db for `mastkit report`. The LLM scorers print their estimated cost first and, above
    --confirm-above, ask (or need --yes).

    Exit codes: 0 done; 1 some inputs unreadable or some rollouts not scored; 2 bad usage;
    3 no rollout with a task (or, with --eval, none with a known outcome).
    """
    from mastkit.store import Store
    from mastkit.traces.load import load_traces
    from mastkit.verify import (
        BASELINES,
        ConsensusScorer,
        FailureVectorScorer,
        ProcessScorer,
        Scorer,
        select_best,
    )

    if group_by != "task":
        raise _fail(f"--group-by {group_by!r} is not supported: use task")
    names = list(scorer or (OFFLINE if evaluate else ("process",)))
    unknown = [n for n in names if n not in SCORERS]
    if unknown:
        raise _fail(f"unknown scorer {', '.join(unknown)}; use one of {', '.join(SCORERS)}")
    if any(n in LLM for n in names) and not model:
        raise _fail("the LLM scorers need --model provider:name")
    errors, on_error = error_printer()
    rollouts = [t for t in load_traces(paths, on_error=on_error) if t.task_id is not None]
    if not rollouts:
        raise _fail("no rollout with a task id was loaded", EXIT_NOTHING)
    if evaluate and not any(t.outcome is not None and t.outcome.success is not None for t in rollouts):
        raise _fail("--eval needs rollouts with a known outcome (outcome.success)", EXIT_NOTHING)

    with Store(db) as store:
        annotations = None
        if annotations_run is not None:
            try:
                run = store.resolve_run(annotations_run)
            except MastkitError as exc:
                raise _fail(str(exc)) from None
            by_id = {a.trace_id: a for a in store.annotations(run)}
            annotations = by_id.get
        scorers: list[Scorer] = []
        judge: Any = None
        try:
            for n in names:
                if n in BASELINES:
                    scorers.append(BASELINES[n]())
                elif n == "consensus":
                    scorers.append(ConsensusScorer())
                elif n.startswith("process"):
                    scorers.append(ProcessScorer(train=n == "process"))
                elif n.startswith("failure_vector"):
                    scorers.append(
                        FailureVectorScorer(
                            annotations=(lambda t: annotations(t.trace_id)) if annotations else None,
                            train=n != "failure_vector_defaults",
                            use_signals=n != "failure_vector_modes_only",
                            name=n,
                        )
                    )
                else:
                    from mastkit.verify.llm import LLMScorer, VerifyOptions

                    assert model is not None
                    common: dict[str, Any] = {
                        "base_url": base_url,
                        "cache": store,
                        "budget_usd": budget,
                        "price_in": price_in,
                        "price_out": price_out,
                        "assume_price": assume_price,
                        "timeout": timeout,
                        "provider_options": provider_options(max_attempts),
                        "options": VerifyOptions(keep_task=not hide_task, max_event_chars=max_event_chars),
                        "concurrency": concurrency,
                    }
                    scorers.append(
                        LLMScorer.from_spec(model, taxonomy="mast" if n == "llm_taxonomy" else None, **common)
                    )
                    if pairwise and judge is None:
                        from mastkit.verify.llm import PairwiseJudge

                        common.pop("concurrency")
                        judge = PairwiseJudge.from_spec(model, **common)
        except MastkitError as exc:
            raise _fail(str(exc)) from None

        if any(s.name in LLM for s in scorers):
            known = [t for t in rollouts if t.outcome is not None and t.outcome.success is not None]
            _preflight(known if evaluate else rollouts, scorers, judge, confirm_above=confirm_above, yes=yes)
        if evaluate:
            compare = {s.name: judge.prefer_first for s in scorers if judge is not None and s.name in LLM}
            code = _evaluate(
                rollouts,
                scorers,
                store=store,
                label=", ".join(p.name or str(p) for p in paths),
                folds=folds,
                n_boot=n_boot,
                seed=seed,
                json=json,
                html=html,
                compare=compare,
            )
        else:
            if train:
                labelled = [
                    t
                    for t in load_traces(train, on_error=on_error)
                    if t.outcome is not None and t.outcome.success is not None
                ]
                for s in scorers:
                    if isinstance(s, FailureVectorScorer | ProcessScorer) and s.trainable and labelled:
                        s.fit(labelled, [bool(t.outcome.success) for t in labelled if t.outcome is not None])
            code = _select(rollouts, scorers, judge, json=json, select_best=select_best)
    if errors and code == EXIT_OK:
        code = EXIT_PARTIAL
    raise typer.Exit(code)


def _preflight(
    rollouts: list[Trace], scorers: list[Any], judge: Any, *, confirm_above: float, yes: bool
) -> None:
    """Print what the LLM scorers (and the pairwise judge) will cost; above ``confirm_above`` ask,
    or require ``--yes`` (see :func:`mastkit.cli._cost.confirm_cost`). Nothing is sent before."""
    from mastkit.llm.estimate import Estimate
    from mastkit.providers.pricing import price_info

    llm = [s for s in scorers if s.name in LLM]
    parts = [s.estimate(rollouts) for s in llm]
    if judge is not None:
        groups: dict[str, list[Trace]] = {}
        for t in rollouts:
            groups.setdefault(str(t.task_id), []).append(t)
        parts += [judge.estimate(list(groups.values()))] * len(llm)
    usd = [p.usd for p in parts]
    total = Estimate(
        calls=sum(p.calls for p in parts),
        input_tokens=sum(p.input_tokens for p in parts),
        output_tokens=sum(p.output_tokens for p in parts),
        usd=None if any(u is None for u in usd) else sum(u for u in usd if u is not None),
        traces=len(rollouts),
        skipped=sum(p.skipped for p in parts),
    )
    confirm_cost(total, price_info(llm[0].provider), confirm_above=confirm_above, yes=yes)


def _select(rollouts: list[Trace], scorers: list[Any], judge: Any, *, json: bool, select_best: Any) -> int:
    result: dict[str, Any] = {}
    failed = 0
    from mastkit.verify import assess_grouped

    for s in scorers:
        scored = assess_grouped(s, rollouts, [t.task_id for t in rollouts])
        failed += sum(1 for a in scored if a.probability is None)
        by_id = {t.trace_id: a for t, a in zip(rollouts, scored, strict=True)}
        compare = judge.prefer_first if judge is not None and s.name in LLM else None
        chosen = select_best(rollouts, s, assessments=scored, compare=compare)
        result[s.name] = {
            task: {
                "trace_id": t.trace_id,
                "probability": by_id[t.trace_id].probability,
                "explanation": by_id[t.trace_id].explanation,
            }
            for task, t in sorted(chosen.items(), key=lambda kv: _natural(kv[0]))
        }
        if not json:
            table = Table("task", "chosen rollout", "p", "why", box=None, title=s.name)
            for task, row in result[s.name].items():
                p = row["probability"]
                table.add_row(
                    task,
                    Text(row["trace_id"]),
                    "-" if p is None else f"{p:.2f}",
                    Text(row["explanation"][:90]),
                )
            out.print(table)
    if json:
        write_bytes(to_json(result) + b"\n")
    if failed:
        err.print(f"{failed} rollout score(s) failed; they were ranked last", style="yellow")
    return EXIT_PARTIAL if failed else EXIT_OK


def _signed(iv: Any) -> str:
    return f"{100 * iv.value:+.1f} [{100 * iv.lo:+.1f}, {100 * iv.hi:+.1f}]"


def _natural(key: str) -> tuple[int, int | str]:
    return (0, int(key)) if key.isdigit() else (1, key)


def _evaluate(
    rollouts: list[Trace],
    scorers: list[Any],
    *,
    folds: int,
    n_boot: int,
    seed: int,
    json: bool,
    html: Path | None,
    compare: dict[str, Any],
    store: Any,
    label: str,
) -> int:
    from mastkit.verify import evaluate_selection

    ev = evaluate_selection(rollouts, scorers, n_splits=folds, n_boot=n_boot, seed=seed, compare=compare)
    store.put_verify_eval(to_json(ev.as_dict()).decode(), label=label)  # `mastkit report` shows the latest
    if html is not None:
        from mastkit.report.verify_section import verify_page

        html.write_text(verify_page(ev), encoding="utf-8")
    if json:
        write_bytes(to_json(ev.as_dict()) + b"\n")
    else:
        table = Table("scorer", "pass@1", "selected", "oracle", "gain", "scored", box=None)
        table.columns[0].no_wrap = True
        for r in ev.results:
            table.add_row(
                r.scorer,
                r.pass_at_1.fmt(),
                r.selected.fmt(),
                r.oracle.fmt(),
                r.gain.fmt(),
                ("held-out" if r.protocol.startswith("GroupKFold") else "as is")
                + (" + pairwise" if r.protocol.endswith("pairwise finalists") else ""),
            )
        out.print(table)
        out.print(
            f"{ev.tasks} tasks, {ev.rollouts} rollouts ({ev.skipped} left out: no task or no known outcome); "
            f"95% bootstrap intervals over tasks, {ev.n_boot} resamples, seed {ev.seed}. "
            "Ties count as a uniform pick among the tied rollouts. gain = selected - pass@1. "
            f"Held-out tasks: GroupKFold by task, k={min(folds, ev.tasks)}."
        )
        if ev.comparisons:
            out.print(
                f"Highest selected: {ev.comparisons[0].scorer}. Its selected minus each other row's, "
                "paired over tasks (95% bootstrap interval): "
                + "; ".join(f"{c.versus} {_signed(c.difference)}" for c in ev.comparisons)
                + "."
            )
    failed = sum(r.failed for r in ev.results)
    if failed:
        err.print(f"{failed} rollout score(s) failed; they were ranked last", style="yellow")
    return EXIT_PARTIAL if failed else EXIT_OK
