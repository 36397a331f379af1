"""Shared CLI plumbing: consoles, exit codes, error printing."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import orjson
import typer
from rich.console import Console
from rich.text import Text

from mastkit.errors import TraceLoadError

if TYPE_CHECKING:  # the runner (and the provider errors it imports) only for the verbs that run one
    from mastkit.llm.runner import RunProgress, Stop, TraceOutcome

# Exit codes (documented in README.md: "Load traces from any format" and "Exit codes of annotate
# and attribute").
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


# -- per-trace runs (annotate, attribute): exit code, failure listing, progress ----------------------

MAX_LISTED = 20
"""Failed traces printed to stderr; beyond this the full list goes to a file next to the store."""


def run_exit_code(*, ok: int, failed: int, not_done: int, unreadable: int = 0) -> int:
    """0 when every trace was worked on or answered from the store, 3 when none was, else 1."""
    if ok == 0:
        return EXIT_NOTHING
    return EXIT_PARTIAL if failed or not_done or unreadable else EXIT_OK


def failures_file(db: Path, verb: str) -> Path:
    """Where the full list of failed and not-done traces of the last ``verb`` run is written."""
    return db.with_name(f"{db.name}.{verb}-failures.jsonl")


def list_failures(
    outcomes: Sequence[TraceOutcome[Any]], stop: Stop | None, *, db: Path, verb: str, done_word: str
) -> Path | None:
    """Print the failed traces (all of them up to :data:`MAX_LISTED`) and why the run stopped.

    When some are left out, or traces were not done, every failed and not-done trace is written
    as JSON lines to :func:`failures_file` (they also stay in the store's errors table); returns
    that file then.
    """
    failed = [o for o in outcomes if o.status == "failed"]
    not_done = [o for o in outcomes if o.status == "not_done"]
    for o in failed[:MAX_LISTED]:
        where = f" ({o.path})" if o.path else ""
        err.print(Text(f"failed: {o.trace_id}{where}: {o.reason}", style="red"), soft_wrap=True)
    if len(failed) > MAX_LISTED:
        err.print(Text(f"... and {len(failed) - MAX_LISTED} more failed", style="red"))
    if stop is not None:
        style = "bold red" if stop.kind != "budget" else "yellow"
        err.print(Text(f"stopped: {stop.message}", style=style), soft_wrap=True)
        again = "re-run with a higher --budget" if stop.kind == "budget" else "fix that and run again"
        err.print(
            Text(
                f"{len(not_done)} trace(s) not {done_word} ({again} to finish them; "
                "what is stored is not redone)",
                style="yellow",
            ),
            soft_wrap=True,
        )
    if len(failed) <= MAX_LISTED and not not_done:
        return None
    path = failures_file(db, verb)
    lines = [
        orjson.dumps(
            {
                "trace_id": o.trace_id,
                "trace_hash": o.trace_hash,
                "path": o.path,
                "status": o.status,
                "reason": o.reason,
            }
        )
        for o in (*failed, *not_done)
    ]
    try:
        path.write_bytes(b"".join(line + b"\n" for line in lines))
    except OSError as exc:  # e.g. a read-only folder: the errors table still has them
        err.print(f"could not write the list of failed traces to {path}: {exc}", soft_wrap=True)
        return None
    err.print(
        f"all {len(failed)} failed and {len(not_done)} not-done traces are listed in {path}", soft_wrap=True
    )
    return path


class RunProgressBar:
    """A rich progress display on stderr for a per-trace run: count (of the total when known),
    rate, ETA and counters. Silent when stderr is not a terminal (CI logs)."""

    def __init__(self, label: str, *, total: int | None = None) -> None:
        from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn

        self._progress = Progress(
            SpinnerColumn(),
            TextColumn("[bold]{task.description}"),
            BarColumn(bar_width=20),
            TextColumn("{task.fields[line]}"),
            console=err,
            disable=not err.is_terminal,
            refresh_per_second=8,
        )
        self._task = self._progress.add_task(label, total=total, line="")

    def __enter__(self) -> RunProgressBar:
        self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._progress.stop()

    def update(self, p: RunProgress, extra: str = "") -> None:
        """Show the counters of ``p`` (plus ``extra``, e.g. tokens and cost)."""
        count = f"{p.finished}/{p.total}" if p.total is not None else f"{p.finished}"
        rate = f"  {p.rate:.1f}/s" if p.rate is not None else ""
        eta = f"  ETA {_duration(p.eta_s)}" if p.eta_s is not None else ""
        line = (
            f"{count}{rate}{eta}  done {p.done}  cached {p.cached}  failed {p.failed}"
            + (f"  not done {p.not_done}" if p.not_done else "")
            + (f"  {extra}" if extra else "")
        )
        self._progress.update(self._task, completed=p.finished, total=p.total, line=line)


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    s = round(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"
