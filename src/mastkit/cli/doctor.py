"""``mastkit doctor``: check configuration, provider, prices, database and extras; exit 1 on a failure."""

from __future__ import annotations

import json as jsonlib
import os
from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from mastkit.cli._common import EXIT_OK, out
from mastkit.doctor import doctor, failed

EXIT_FAILED = 1
_STYLE = {"OK": "green", "WARN": "yellow", "FAIL": "bold red"}


def doctor_cmd(
    model: Annotated[
        str | None,
        typer.Option(help="provider:model to check, e.g. openai:gpt-4o-mini.", envvar="MASTKIT_MODEL"),
    ] = None,
    base_url: Annotated[
        str | None, typer.Option(help="OpenAI-compatible/Anthropic endpoint.", envvar="MASTKIT_BASE_URL")
    ] = None,
    db: Annotated[Path, typer.Option(help="Store file (SQLite) to check.", envvar="MASTKIT_DB")] = Path(
        "mastkit.db"
    ),
    timeout: Annotated[float, typer.Option(min=0.1, help="Seconds to wait for the provider.")] = 10.0,
    json: Annotated[bool, typer.Option("--json", help="Print the checks as JSON.")] = False,
) -> None:
    """Check that mastkit is ready: settings, provider and key (one tiny call), price, database, extras.

    Each check says OK, WARN or FAIL and what to fix; the exit code is 1 when any check fails.
    """
    config = os.environ.get("MASTKIT_CONFIG")
    settings = Path(config) if config else Path.cwd() / "mastkit.toml"
    checks = doctor(model=model, base_url=base_url, db=db, timeout=timeout, settings_file=settings)
    if json:
        out.print_json(jsonlib.dumps([asdict(c) for c in checks]))
    else:
        table = Table("check", "status", "detail", "fix", box=None)
        for c in checks:
            table.add_row(c.name, Text(c.status, style=_STYLE[c.status]), Text(c.detail), Text(c.fix or ""))
        out.print(table)
    raise typer.Exit(EXIT_FAILED if failed(checks) else EXIT_OK)
