"""``mastkit merge``: combine the stores of a sharded run (``--shard i/N``) into one."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from mastkit.cli._common import EXIT_USAGE, err, out
from mastkit.errors import MastkitError


def merge_cmd(
    target: Annotated[Path, typer.Argument(help="Store to merge into (created when missing).")],
    sources: Annotated[list[Path], typer.Argument(help="Shard stores, e.g. shard-*.db.")],
) -> None:
    """Copy the results of each source store into TARGET.

    Results are keyed by content, so merging a shard twice adds nothing twice; call logs and
    spending are appended, so merge each shard once for true totals. Exit codes: 0 merged;
    2 a source is missing or has another schema version.
    """
    from mastkit.scale.merge import merge_stores

    try:
        added = merge_stores(target, sources)
    except MastkitError as exc:
        err.print(Text("error: ", style="bold red") + Text(str(exc)), soft_wrap=True)
        raise typer.Exit(EXIT_USAGE) from None
    summary = ", ".join(f"{n} {table}" for table, n in added.items() if n) or "nothing new"
    out.print(Text(f"{summary} added to {target}"), soft_wrap=True)
