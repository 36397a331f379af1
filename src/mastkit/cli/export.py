"""``mastkit export otlp|langfuse``: send a run's annotations to an OTel backend or Langfuse."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from mastkit.cli._common import EXIT_NOTHING, EXIT_USAGE, err, out
from mastkit.errors import MastkitError
from mastkit.export import export_langfuse, export_otlp
from mastkit.store import Store

app = typer.Typer(
    help="Send annotations where you already look: OTLP/HTTP backends, Langfuse.", no_args_is_help=True
)

DbOpt = Annotated[Path, typer.Option(help="Store file (SQLite).", envvar="MASTKIT_DB")]
RunOpt = Annotated[
    str | None, typer.Option(help="Run: config-hash prefix, rules/llm/hybrid or model (default latest).")
]


def _open(db: Path) -> Store:
    if not db.exists():
        err.print(f"error: {db}: no such store (run `mastkit annotate` first)")
        raise typer.Exit(EXIT_NOTHING)
    return Store(db)


@app.command("otlp")
def otlp_cmd(
    endpoint: Annotated[
        str,
        typer.Option(help="OTLP/HTTP base URL, e.g. http://collector:4318.", envvar="MASTKIT_OTLP_ENDPOINT"),
    ],
    header: Annotated[
        list[str] | None, typer.Option("--header", "-H", help="Extra header 'Name: value' (repeatable).")
    ] = None,
    run: RunOpt = None,
    db: DbOpt = Path("mastkit.db"),
    redact: Annotated[
        bool, typer.Option(help="Redact evidence quotes (always on for non-loopback endpoints).")
    ] = True,
) -> None:
    """One span per annotated trace with a span event per failure mode found."""
    headers = {}
    for h in header or []:
        name, sep, value = h.partition(":")
        if not sep:
            err.print(f"bad --header {h!r}: use 'Name: value'")
            raise typer.Exit(EXIT_USAGE)
        headers[name.strip()] = value.strip()
    try:
        with _open(db) as store:
            config = store.resolve_run(run)
            formats = {r["trace_id"]: r["source_format"] for r in store.traces()}
            n = export_otlp(
                store.annotations(config), endpoint, formats=formats, headers=headers, redact=redact
            )
    except MastkitError as exc:
        err.print(f"error: {exc}")
        raise typer.Exit(1) from None
    out.print(f"sent {n} annotation spans of run {config[:15]} to {endpoint}")


@app.command("langfuse")
def langfuse_cmd(
    output: Annotated[
        Path | None, typer.Option("--out", "-o", help="Write the scores as JSONL here.")
    ] = None,
    host: Annotated[
        str | None, typer.Option(help="Langfuse host to post the scores to.", envvar="LANGFUSE_HOST")
    ] = None,
    run: RunOpt = None,
    db: DbOpt = Path("mastkit.db"),
) -> None:
    """Langfuse scores (one BOOLEAN score per judged mode, plus a count) to a file and/or a host."""
    if output is None and host is None:
        err.print("give --out FILE and/or --host URL")
        raise typer.Exit(EXIT_USAGE)
    try:
        with _open(db) as store:
            config = store.resolve_run(run)
            n = export_langfuse(store.annotations(config), output, host=host)
    except MastkitError as exc:
        err.print(f"error: {exc}")
        raise typer.Exit(1) from None
    where = " and ".join(x for x in (str(output) if output else "", host or "") if x)
    out.print(f"{n} scores of run {config[:15]} -> {where}")
