"""``mastkit demo``: the main job on the bundled example traces, offline."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from mastkit.cli._common import err, out
from mastkit.demo import EXAMPLES, demo
from mastkit.taxonomy import load_taxonomy


def demo_cmd(
    output: Annotated[Path, typer.Option("--output", "-o", help="Folder for the results.")] = Path(
        "mastkit-out"
    ),
) -> None:
    """Annotate the bundled example traces with the rule detectors (offline) and write a report."""
    result = demo(output)
    for e in result.load_errors:
        err.print(f"[red]unreadable[/red] {e}")
    tax = load_taxonomy("mast")
    table = Table(title=f"Failure modes found by the rule detectors in {result.traces} example traces")
    table.add_column("mode")
    table.add_column("name")
    table.add_column("traces", justify="right")
    for code, n in result.mode_counts.items():
        table.add_row(code, tax.mode(code).name, str(n))
    out.print(f"examples: {EXAMPLES}")
    out.print(table)
    out.print(f"{result.failed_traces}/{result.traces} traces show at least one failure mode.")
    out.print(f"store:  {result.db}")
    out.print(f"report: [bold]{result.html}[/bold]  (open it in a browser; also {result.markdown})")
    if result.traces == 0:
        raise typer.Exit(1)
