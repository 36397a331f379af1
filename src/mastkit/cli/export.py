"""``mastkit export otlp|langfuse``: send a run's annotations to an OTel backend or Langfuse."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated
from urllib.parse import unquote

import typer

from mastkit.cli._common import EXIT_NOTHING, EXIT_PARTIAL, EXIT_USAGE, err, out
from mastkit.errors import MastkitError
from mastkit.export import export_run_langfuse, export_run_otlp
from mastkit.store import Store

app = typer.Typer(
    help="Send annotations where you already look: OTLP/HTTP backends, Langfuse.", no_args_is_help=True
)

DbOpt = Annotated[Path, typer.Option(help="Store file (SQLite).", envvar="MASTKIT_DB")]
RunOpt = Annotated[
    str | None, typer.Option(help="Run: config-hash prefix, rules/llm/hybrid or model (default latest).")
]
BatchOpt = Annotated[int, typer.Option(min=1, help="Spans/scores per request.")]
TimeoutOpt = Annotated[float, typer.Option(min=0.1, help="Seconds per request (3 attempts on 429/5xx).")]


def _open(db: Path) -> Store:
    if not db.exists():
        err.print(f"error: {db}: no such store (run `mastkit annotate` first)")
        raise typer.Exit(EXIT_NOTHING)
    return Store(db)


def _headers(flags: list[str]) -> dict[str, str]:
    """Headers from ``OTEL_EXPORTER_OTLP_HEADERS`` (``k=v,k2=v2``, URL-encoded) then ``-H 'Name: value'``."""
    headers: dict[str, str] = {}
    for item in os.environ.get("OTEL_EXPORTER_OTLP_HEADERS", "").split(","):
        name, sep, value = item.partition("=")
        if sep and name.strip():
            headers[unquote(name.strip())] = unquote(value.strip())
    for h in flags:
        name, sep, value = h.partition(":")
        if not sep or not name.strip():
            err.print(f"bad --header {h!r}: use 'Name: value'")
            raise typer.Exit(EXIT_USAGE)
        headers[name.strip()] = value.strip()
    return headers


@app.command("otlp")
def otlp_cmd(
    endpoint: Annotated[
        str,
        typer.Option(
            help="OTLP/HTTP base URL (spans go to {endpoint}/v1/traces), e.g. http://collector:4318.",
            envvar=["MASTKIT_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"],
        ),
    ],
    header: Annotated[
        list[str] | None,
        typer.Option(
            "--header", "-H", help="Extra header 'Name: value' (repeatable; also OTEL_EXPORTER_OTLP_HEADERS)."
        ),
    ] = None,
    run: RunOpt = None,
    db: DbOpt = Path("mastkit.db"),
    batch_size: BatchOpt = 100,
    timeout: TimeoutOpt = 10.0,
    redact: Annotated[
        bool,
        typer.Option(
            help="Redact secrets and e-mail addresses in quotes, rationales and agent names "
            "(always on for non-loopback endpoints)."
        ),
    ] = True,
) -> None:
    """One span per annotated trace with a span event per failure mode found.

    Traces imported from OTLP keep their trace id, so the annotation shows up in the same trace."""
    headers = _headers(header or [])
    try:
        with _open(db) as store:
            config, n = export_run_otlp(
                store, endpoint, run, headers=headers, batch_size=batch_size, timeout=timeout, redact=redact
            )
    except MastkitError as exc:
        err.print(f"error: {exc}")
        raise typer.Exit(EXIT_PARTIAL) from None
    out.print(f"sent {n} annotation spans of run {config[:15]} to {endpoint}")


@app.command("langfuse")
def langfuse_cmd(
    output: Annotated[
        Path | None, typer.Option("--out", "-o", help="Write the scores as JSONL here.")
    ] = None,
    host: Annotated[
        str | None,
        typer.Option(
            "--host",
            "--endpoint",
            help="Langfuse host to post the scores to (basic auth from LANGFUSE_PUBLIC_KEY/LANGFUSE_SECRET_KEY).",
            envvar="LANGFUSE_HOST",
        ),
    ] = None,
    run: RunOpt = None,
    db: DbOpt = Path("mastkit.db"),
    batch_size: BatchOpt = 100,
    timeout: TimeoutOpt = 10.0,
    redact: Annotated[
        bool, typer.Option(help="Redact secrets and e-mail addresses in rationales and quotes.")
    ] = True,
) -> None:
    """Langfuse scores (one BOOLEAN score per judged mode, plus a count) to a file and/or a host."""
    if output is None and host is None:
        err.print("give --out FILE and/or --host URL")
        raise typer.Exit(EXIT_USAGE)
    try:
        with _open(db) as store:
            config, n = export_run_langfuse(
                store, output, host, run, batch_size=batch_size, timeout=timeout, redact=redact
            )
    except MastkitError as exc:
        err.print(f"error: {exc}")
        raise typer.Exit(EXIT_PARTIAL) from None
    where = " and ".join(x for x in (str(output) if output else "", host or "") if x)
    out.print(f"{n} scores of run {config[:15]} -> {where}")
