"""``mastkit taxonomy show|validate|compare``."""

from __future__ import annotations

import json as jsonlib
from typing import Annotated

import typer
from rich.table import Table

from mastkit.cli._common import EXIT_USAGE, err, out
from mastkit.errors import TaxonomyError
from mastkit.taxonomy import Taxonomy, compare_taxonomies, load_taxonomy, overlap_matrix

app = typer.Typer(help="Show, validate and compare taxonomies.", no_args_is_help=True)


def _load(ref: str) -> Taxonomy:
    try:
        return load_taxonomy(ref)
    except TaxonomyError as exc:
        err.print(str(exc))
        raise typer.Exit(EXIT_USAGE) from None


@app.command("show")
def show_cmd(ref: Annotated[str, typer.Argument(help="Built-in name or file.")] = "mast") -> None:
    """The modes of a taxonomy, by category."""
    tax = _load(ref)
    typer.echo(f"{tax.name} ({tax.id} v{tax.version}): {len(tax.modes)} modes. {tax.source}")
    for cat in tax.categories:
        typer.echo(f"{cat.code} {cat.name}")
        for m in tax.modes_in(cat.code):
            typer.echo(f"  {m.code:<8} {m.name}: {' '.join(m.definition.split())[:100]}")


@app.command("validate")
def validate_cmd(refs: Annotated[list[str], typer.Argument(help="Taxonomy files.")]) -> None:
    """Check that each file loads as a valid taxonomy (exit 2 on the first invalid one)."""
    for ref in refs:
        tax = _load(ref)
        typer.echo(f"{ref}: valid, {len(tax.modes)} modes in {len(tax.categories)} categories")


@app.command("compare")
def compare_cmd(
    refs: Annotated[list[str], typer.Argument(help="Two or more taxonomies (names or files).")],
    threshold: Annotated[float, typer.Option(help="Word-overlap score a match needs.")] = 0.12,
    json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Mode mapping of the first taxonomy onto each other one, and the Jaccard overlap matrix."""
    if len(refs) < 2:
        err.print("compare needs at least two taxonomies")
        raise typer.Exit(EXIT_USAGE)
    taxes = [_load(r) for r in refs]
    matrix = overlap_matrix(taxes, threshold=threshold)
    comparisons = [compare_taxonomies(taxes[0], t, threshold=threshold) for t in taxes[1:]]
    if json:
        typer.echo(jsonlib.dumps({
            "taxonomies": [t.id for t in taxes],
            "jaccard": matrix,
            "mappings": [c.model_dump() for c in comparisons],
        }, indent=2))  # fmt: skip
        return
    for c in comparisons:
        table = Table(title=f"{c.a} -> {c.b} (coverage {c.coverage:.2f})")
        for col in ("mode", "counterpart", "score"):
            table.add_column(col)
        for m in c.matches:
            table.add_row(m.a, m.b or "(new)", f"{m.score:.3f}")
        out.print(table)
    grid = Table(title="Jaccard overlap of mode sets")
    grid.add_column("")
    labels = [f"{i + 1}:{t.id}" for i, t in enumerate(taxes)]
    for lab in labels:
        grid.add_column(lab, justify="right")
    for lab, row in zip(labels, matrix, strict=True):
        grid.add_row(lab, *(f"{v:.2f}" for v in row))
    out.print(grid)
