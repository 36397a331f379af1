"""``mastkit diff``: which failure modes rose or fell between two runs, with significance."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from mastkit.analyze.diff import RunDiff, diff_runs
from mastkit.cli._common import EXIT_NOTHING, EXIT_USAGE, err, out, write_bytes
from mastkit.errors import MastkitError
from mastkit.store import Store


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def _delta(delta: float | None, ci: tuple[float, float] | None) -> str:
    if delta is None:
        return "-"
    text = f"{100 * delta:+.1f}"
    return text + (f" [{100 * ci[0]:+.0f}, {100 * ci[1]:+.0f}]" if ci else "")


def _markdown(d: RunDiff) -> str:
    lines = [
        f"# mastkit diff {d.run_a[:15]} → {d.run_b[:15]}",
        "",
        f"{d.a_traces} vs {d.b_traces} traces ({d.paired_traces} paired). alpha = {d.alpha}.",
        "",
        "| mode | A | B | Δ pts [95% CI] | test | p | direction |",
        "|---|---|---|---|---|---|---|",
    ]
    for m in d.modes:
        p = "-" if m.p_value is None else f"{m.p_value:.3g}"
        delta = _delta(m.delta, m.delta_ci)
        lines.append(
            f"| {m.code} | {_pct(m.p_a)} ({m.a_present}/{m.a_judged}) | {_pct(m.p_b)} ({m.b_present}/{m.b_judged}) "
            f"| {delta} | {m.test} | {p} | {m.direction} |"
        )
    if d.categories:
        lines += [
            "",
            "| category | A traces | B traces | A flags | B flags | Δ pts [95% CI] | test | p | direction |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for cat in d.categories:
            p = "-" if cat.p_value is None else f"{cat.p_value:.3g}"
            delta = _delta(cat.delta, cat.delta_ci)
            lines.append(
                f"| {cat.category} {cat.name or ''} | {_pct(cat.p_a)} ({cat.a_present}/{cat.a_judged}) "
                f"| {_pct(cat.p_b)} ({cat.b_present}/{cat.b_judged}) | {cat.a_flags} | {cat.b_flags} | {delta} "
                f"| {cat.test} | {p} | {cat.direction} |"
            )
    if d.only_in_a or d.only_in_b:
        lines += ["", f"{len(d.only_in_a)} trace(s) only in A, {len(d.only_in_b)} only in B."]
    return "\n".join(lines) + "\n"


def diff_cmd(
    run_a: Annotated[
        str, typer.Argument(help="Baseline run: config-hash prefix, rules/llm/hybrid or a model.")
    ],
    run_b: Annotated[str, typer.Argument(help="Run to compare with the baseline.")],
    db: Annotated[Path, typer.Option(help="Store file (SQLite).", envvar="MASTKIT_DB")] = Path("mastkit.db"),
    fmt: Annotated[str, typer.Option("--format", "-f", help="table, md or json.")] = "table",
    alpha: Annotated[float, typer.Option(help="Significance level.")] = 0.05,
) -> None:
    """Compare two annotation runs: prevalence per mode in each, difference, exact test (McNemar when
    the runs judged the same traces, Fisher otherwise) and whether the mode rose or fell."""
    if fmt not in ("table", "md", "json"):
        err.print(f"unknown format {fmt!r}: use table, md or json")
        raise typer.Exit(EXIT_USAGE)
    if not db.exists():
        err.print(f"error: {db}: no such store")
        raise typer.Exit(EXIT_NOTHING)
    try:
        with Store(db) as store:
            d = diff_runs(store, run_a, run_b, alpha=alpha)
    except MastkitError as exc:
        err.print(f"error: {exc}")
        raise typer.Exit(EXIT_NOTHING) from None
    if fmt == "json":
        write_bytes(d.model_dump_json(indent=2).encode() + b"\n")
        return
    if fmt == "md":
        write_bytes(_markdown(d).encode())
        return
    t = Table(
        title=f"{d.run_a[:15]} → {d.run_b[:15]}  ({d.a_traces} vs {d.b_traces} traces, {d.paired_traces} paired)"
    )
    for col in ("mode", "A", "B", "Δ pts [95% CI]", "test", "p", "direction"):
        t.add_column(col, justify="left" if col in ("mode", "test", "direction") else "right")
    for m in d.modes:
        style = {"rose": "red", "fell": "green"}.get(m.direction, "")
        t.add_row(
            m.code,
            f"{_pct(m.p_a)} ({m.a_present}/{m.a_judged})",
            f"{_pct(m.p_b)} ({m.b_present}/{m.b_judged})",
            _delta(m.delta, m.delta_ci),
            m.test,
            "-" if m.p_value is None else f"{m.p_value:.3g}",
            Text(m.direction, style=style),
        )
    out.print(t)
    if d.categories:
        ct = Table(title="categories (traces with at least one mode of the category)")
        for col in ("category", "A", "B", "flags A→B", "Δ pts [95% CI]", "test", "p", "direction"):
            ct.add_column(col, justify="left" if col in ("category", "test", "direction") else "right")
        for cat in d.categories:
            style = {"rose": "red", "fell": "green"}.get(cat.direction, "")
            ct.add_row(
                f"{cat.category} {cat.name or ''}".strip(),
                f"{_pct(cat.p_a)} ({cat.a_present}/{cat.a_judged})",
                f"{_pct(cat.p_b)} ({cat.b_present}/{cat.b_judged})",
                f"{cat.a_flags}→{cat.b_flags}",
                _delta(cat.delta, cat.delta_ci),
                cat.test,
                "-" if cat.p_value is None else f"{cat.p_value:.3g}",
                Text(cat.direction, style=style),
            )
        out.print(ct)
    if d.only_in_a or d.only_in_b:
        out.print(f"{len(d.only_in_a)} trace(s) only in A, {len(d.only_in_b)} only in B")
    for c in d.changes[:20]:
        out.print(Text(f"{c.trace_id}: +{','.join(c.gained) or '-'}  -{','.join(c.lost) or '-'}"))
    if len(d.changes) > 20:
        out.print(f"... and {len(d.changes) - 20} more changed traces (--format json for all)")
