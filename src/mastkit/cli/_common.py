"""Shared CLI plumbing: consoles, exit codes, error printing."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.text import Text

from mastkit.errors import TraceLoadError

# Exit codes (documented in README.md, "Load traces from any format").
EXIT_OK = 0
EXIT_PARTIAL = 1
"""Some inputs failed; the rest was processed."""
EXIT_USAGE = 2
"""Bad command-line usage (typer/click default)."""
EXIT_NOTHING = 3
"""Nothing could be processed."""

# Model-call options shared by the verbs that call a judge (annotate, attribute)
ModelTimeoutOpt = Annotated[
    float,
    typer.Option(
        "--timeout",
        min=0.1,
        help="Seconds to wait for each model response attempt.",
        envvar="MASTKIT_TIMEOUT",
    ),
]
MaxAttemptsOpt = Annotated[
    int | None,
    typer.Option(min=1, help="Attempts per model call (retries on 429/5xx/timeouts); default 5."),
]


def provider_options(max_attempts: int | None) -> dict[str, Any] | None:
    """``provider_options`` for the factories from the shared CLI options."""
    return {"max_attempts": max_attempts} if max_attempts is not None else None


out = Console(soft_wrap=False, highlight=False)
err = Console(stderr=True, highlight=False)


def error_printer(quiet: bool = False) -> tuple[list[TraceLoadError], Callable[[TraceLoadError], None]]:
    """A list collecting load errors, and a callback that also prints each to stderr."""
    errors: list[TraceLoadError] = []

    def on_error(e: TraceLoadError) -> None:
        errors.append(e)
        if not quiet:
            err.print(Text("error: ", style="bold red") + Text(str(e)))

    return errors, on_error


def write_bytes(data: bytes) -> None:
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


def exit_code(done: int, failed: int) -> int:
    if done == 0 and failed > 0:
        return EXIT_NOTHING
    return EXIT_PARTIAL if failed else EXIT_OK
