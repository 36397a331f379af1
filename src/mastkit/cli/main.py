"""Entry point of the ``mastkit`` command."""

from __future__ import annotations

import typer

from mastkit import __version__
from mastkit.cli import annotate, attribute, demo, diff, doctor, eval, export, report, traces, verify
from mastkit.cli._settings import load_settings

app = typer.Typer(
    name="mastkit",
    help="Why do LLM agents fail? Load traces from any format, find MAST failure modes, attribute and analyse them.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.add_typer(traces.app, name="traces")
app.command("demo")(demo.demo_cmd)
app.command("annotate")(annotate.annotate_cmd)
app.command("attribute")(attribute.attribute_cmd)
app.command("eval")(eval.eval_cmd)
app.command("report")(report.report_cmd)
app.command("diff")(diff.diff_cmd)
app.command("doctor")(doctor.doctor_cmd)
app.command("verify")(verify.verify_cmd)
app.add_typer(export.app, name="export")


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
    ctx.default_map = load_settings(config)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
