"""``mastkit report``: one run of the store as a self-contained HTML page, a Markdown summary or JSON."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from mastkit.cli._common import EXIT_NOTHING, EXIT_OK, EXIT_USAGE, err, out, write_bytes
from mastkit.errors import MastkitError
from mastkit.report import FORMATS, build_report_data, render_html, render_json, render_markdown
from mastkit.store import Store

_SUFFIX = {"html": "html", "htm": "html", "md": "md", "markdown": "md", "json": "json"}


def report_cmd(
    out_path: Annotated[
        Path | None,
        typer.Option(
            "--out", "-o", help="Output file ('-' for stdout with md/json). Default: mastkit-report.<format>."
        ),
    ] = None,
    fmt: Annotated[
        str | None,
        typer.Option("--format", "-f", help="html, md or json (default: from --out's suffix, else html)."),
    ] = None,
    run: Annotated[
        str | None,
        typer.Option(help="Run: config-hash prefix, kind (rules/llm/hybrid) or model. Default: latest."),
    ] = None,
    by: Annotated[
        str, typer.Option(help="Comma-separated trace fields to break down by.")
    ] = "model,framework,benchmark",
    db: Annotated[Path, typer.Option(help="Store file (SQLite).", envvar="MASTKIT_DB")] = Path("mastkit.db"),
    redact: Annotated[
        bool,
        typer.Option(
            "--redact/--no-redact",
            help="Redact secrets and e-mail addresses in trace and annotation text (default on).",
        ),
    ] = True,
) -> None:
    """Report on an annotated run: failure profile, breakdowns, lift, co-occurrence, per-trace timelines.

    The HTML report is one file that opens offline in any browser; Markdown is a short summary
    for CI logs; JSON holds every table and trace detail. Secrets and e-mail addresses in
    trace and annotation text are redacted (--no-redact to keep them).
    """
    if fmt is None:
        suffix = out_path.suffix.lstrip(".").lower() if out_path is not None and str(out_path) != "-" else ""
        fmt = _SUFFIX.get(suffix, "html")
    fmt = fmt.lower()
    if fmt not in FORMATS:
        err.print(f"unknown format {fmt!r}: use {', '.join(FORMATS)}")
        raise typer.Exit(EXIT_USAGE)
    to_stdout = out_path is not None and str(out_path) == "-"
    if to_stdout and fmt == "html":
        err.print("write HTML to a file (--out report.html), not to stdout")
        raise typer.Exit(EXIT_USAGE)
    if not db.exists():
        err.print(
            Text("error: ", style="bold red") + Text(f"{db}: no such store (run `mastkit annotate` first)")
        )
        raise typer.Exit(EXIT_NOTHING)
    fields = tuple(f.strip() for f in by.split(",") if f.strip())
    started = time.perf_counter()
    try:
        with Store(db) as store:
            data = build_report_data(store, run, by=fields, details=fmt != "md", redact=redact)
    except (MastkitError, ValueError) as exc:
        err.print(Text("error: ", style="bold red") + Text(str(exc)))
        raise typer.Exit(EXIT_NOTHING) from None
    text = render_html(data) if fmt == "html" else render_markdown(data) if fmt == "md" else render_json(data)
    if to_stdout:
        write_bytes(text.encode("utf-8"))
        raise typer.Exit(EXIT_OK)
    path = out_path or Path(f"mastkit-report.{fmt}")
    path.write_text(text, encoding="utf-8")
    size = path.stat().st_size
    out.print(
        Text(
            f"{fmt} report of run {data.run.config_hash[:15]} ({data.counts.traces} traces, "
            f"{data.counts.failed} failed) written to {path} ({size / 1e6:.2f} MB, "
            f"{time.perf_counter() - started:.1f}s)"
        )
    )
    raise typer.Exit(EXIT_OK if data.counts.traces else EXIT_NOTHING)
