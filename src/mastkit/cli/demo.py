"""``mastkit demo``: the main job on the bundled example traces, offline."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from mastkit.cli._common import error_printer, exit_code, out
from mastkit.traces import ops

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def demo_cmd(
    output: Annotated[Path, typer.Option("--output", "-o", help="Folder for the results.")] = Path(
        "mastkit-out"
    ),
) -> None:
    """Run the main job on the bundled example traces (offline): load, convert, summarise."""
    output.mkdir(parents=True, exist_ok=True)
    errors, on_error = error_printer()
    canonical = output / "traces.jsonl"
    report = ops.convert(EXAMPLES, canonical, on_error=on_error)
    s = ops.stats(canonical)
    out.print(f"loaded {report.traces} example traces ({report.events} events) from {EXAMPLES}")
    out.print(f"formats: {', '.join(f'{k} {v}' for k, v in s.by_format.items())}")
    out.print(f"outcomes: {', '.join(f'{k} {v}' for k, v in s.outcomes.items())}")
    out.print(f"canonical traces written to {canonical}")
    raise typer.Exit(exit_code(report.traces, len(errors)))
