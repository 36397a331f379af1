"""Entry point of the ``mastkit`` command.

Each verb lives in its own module of :mod:`mastkit.cli` and is imported only when it runs, so a
command that needs no provider SDK, report or statistics stack (``--version``, ``--help``,
``traces ...``, ``taxonomy ...``) starts without loading them. ``COMMANDS`` lists the verbs with
the one line ``mastkit --help`` shows for each (the list imports none of them).
"""

from __future__ import annotations

import importlib
import sys
from typing import Any, NamedTuple

import typer
from typer.core import TyperCommand, TyperGroup

from mastkit import __version__


class Verb(NamedTuple):
    module: str
    """Module under :mod:`mastkit.cli`."""
    attr: str
    """A command function, or a ``typer.Typer`` (a group of sub-commands)."""
    help: str
    """One line for ``mastkit --help``."""


COMMANDS: dict[str, Verb] = {
    "traces": Verb("traces", "app", "Load, inspect and convert agent traces in any supported format."),
    "demo": Verb("demo", "demo_cmd", "Annotate the bundled example traces offline and write a report."),
    "annotate": Verb("annotate", "annotate_cmd", "Annotate traces with failure modes and store the results."),
    "attribute": Verb("attribute", "attribute_cmd", "Blame an agent and a step for each failed trace."),
    "calibrate": Verb(
        "calibrate",
        "calibrate_cmd",
        "Measure a judge's agreement with humans on the shipped calibration set.",
    ),
    "eval": Verb("eval", "eval_cmd", "Agreement of a run with human labels (kappa, F1, accuracy)."),
    "report": Verb("report", "report_cmd", "Write the HTML / Markdown report of a run."),
    "diff": Verb("diff", "diff_cmd", "Compare two runs: modes that appeared, disappeared or changed."),
    "doctor": Verb("doctor", "doctor_cmd", "Check configuration, provider, prices, database and extras."),
    "export": Verb("export", "app", "Send annotations to OTLP/HTTP backends or Langfuse."),
    "feedback": Verb(
        "feedback", "feedback_cmd", "Feedback for the next attempt: pattern A (a tool) or B (a reflection)."
    ),
    "verify": Verb("verify", "verify_cmd", "Pick the best rollout per task; --eval compares scorers."),
    "learn": Verb("learn", "learn_cmd", "Learn a failure taxonomy from traces (ATLAS-style), with gates."),
    "taxonomy": Verb("taxonomy", "app", "Show, validate and compare taxonomies (mapping, Jaccard matrix)."),
    "experiment": Verb("experiment", "experiment_cmd", "Run an agent per task and arm; compare pass rates."),
    "merge": Verb("merge", "merge_cmd", "Merge the stores of a sharded run (--shard i/N) into one."),
}


class _LazyGroup(TyperGroup):
    """A group whose sub-commands are imported when they are looked up, not at start; its own
    help lists them from :data:`COMMANDS` without importing any."""

    _listing = False

    # (typer vendors its own click: its types are left as Any here)
    def list_commands(self, ctx: Any) -> list[str]:
        return [*super().list_commands(ctx), *COMMANDS]

    def format_help(self, ctx: Any, formatter: Any) -> None:
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        verb = COMMANDS.get(cmd_name)
        if verb is None:
            return super().get_command(ctx, cmd_name)
        if self._listing:  # one line of the group's help: no need to import the verb
            return TyperCommand(cmd_name, help=verb.help, short_help=verb.help)
        obj = getattr(importlib.import_module(f"mastkit.cli.{verb.module}"), verb.attr)
        if isinstance(obj, typer.Typer):
            cmd = typer.main.get_command(obj)
        else:
            single = typer.Typer()
            single.command(cmd_name)(obj)
            cmd = typer.main.get_command(single)
        cmd.name = cmd_name
        return cmd


app = typer.Typer(
    name="mastkit",
    cls=_LazyGroup,
    help="Why do LLM agents fail? Load traces from any format, find MAST failure modes, attribute and analyse them.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


@app.command(
    "hook",
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True, "help_option_names": []},
    add_help_option=False,
)
def hook_cmd(ctx: typer.Context) -> None:
    """Claude Code hooks backed by mastkit.guard (pre-tool-use, post-tool-use, stop, install, ...)."""
    from mastkit.integrations.claude_code.cli import main as hook_main

    raise typer.Exit(hook_main(ctx.args))


def _version(value: bool) -> None:
    if value:
        typer.echo(f"mastkit {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    ctx: typer.Context,
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version."
    ),
    config: str | None = typer.Option(
        None,
        "--config",
        envvar="MASTKIT_CONFIG",
        help="Settings file (default: ./mastkit.toml when present).",
    ),
) -> None:
    """mastkit command line. Settings: flags > MASTKIT_* environment variables > mastkit.toml > defaults."""
    from mastkit.cli._settings import load_settings

    ctx.default_map = load_settings(config)


EXIT_STORE = 4
"""The store could not be opened or written (read-only, disk full, locked too long): what was
committed before stays, and a run resumes when started again."""


def main() -> None:
    """Run the command line; a store that cannot be opened or written ends it with one message
    (no traceback) and exit code :data:`EXIT_STORE`."""
    from mastkit.errors import StoreError

    try:
        app()
    except StoreError as exc:
        sys.stdout.flush()
        sys.stderr.write(f"error: {exc}\n")
        sys.exit(EXIT_STORE)


if __name__ == "__main__":
    main()
