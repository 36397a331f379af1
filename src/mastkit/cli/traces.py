"""``mastkit traces ls|show|stats|convert|formats``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from mastkit.cli._common import EXIT_NOTHING, err, error_printer, exit_code, out, write_bytes
from mastkit.traces import ops
from mastkit.traces.load import load_traces
from mastkit.traces.model import Event
from mastkit.traces.registry import importers

app = typer.Typer(
    help="Load, inspect and convert agent traces in any supported format.", no_args_is_help=True
)

Paths = Annotated[list[Path], typer.Argument(help="Trace files or folders (folders are walked recursively).")]
FormatOpt = Annotated[
    str | None,
    typer.Option("--format", "-f", help="Force an importer instead of sniffing (see `traces formats`)."),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")]

_KIND_STYLE = {
    "message": "white", "reasoning": "magenta", "tool_call": "cyan", "tool_result": "green", "llm_call": "blue",
    "handoff": "yellow", "plan": "yellow", "system": "dim", "error": "bold red", "termination": "bold",
    "artifact": "bright_blue",
}  # fmt: skip


@app.command("ls")
def ls_cmd(paths: Paths, format: FormatOpt = None, json: JsonOpt = False) -> None:
    """List the traces found in PATHS, one line each."""
    rows = []
    failed = 0
    for item in ops.ls(paths, format=format):
        if isinstance(item, ops.TraceSummary):
            rows.append(item)
        else:
            failed += 1
            err.print(Text("error: ", style="bold red") + Text(str(item)))
    if json:
        write_bytes(ops.to_json([r.model_dump() for r in rows]) + b"\n")
    else:
        table = Table("trace", "format", "framework", "events", "tools", "agents", "outcome", "end", box=None)
        for r in rows:
            outcome = "-" if r.success is None else ("success" if r.success else "failure")
            agents = ", ".join(r.agents[:4]) + (f" +{len(r.agents) - 4}" if len(r.agents) > 4 else "")
            table.add_row(
                Text(r.trace_id),
                r.source_format,
                Text(r.framework or "-"),
                str(r.events),
                str(r.tool_calls),
                Text(agents),
                outcome,
                Text(r.termination or "-"),
            )
        out.print(table)
        out.print(f"{len(rows)} trace(s), {failed} error(s)")
    raise typer.Exit(exit_code(len(rows), failed))


def _clip(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _event_text(e: Event, width: int) -> Text:
    body = e.text()
    if e.kind == "tool_result" and e.tool_result is not None:
        flags = []
        if e.tool_result.is_error:
            flags.append("ERROR")
        if e.tool_result.exit_code not in (None, 0):
            flags.append(f"exit {e.tool_result.exit_code}")
        if flags:
            body = f"[{' '.join(flags)}] {body}"
    if e.recipients:
        body = f"→ {', '.join(e.recipients)}: {body}"
    if e.subtype:
        body = f"({e.subtype}) {body}"
    return Text(_clip(body, width))  # Text, not markup: trace content can't inject rich markup


@app.command("show")
def show_cmd(
    paths: Paths,
    trace: Annotated[str | None, typer.Option("--trace", "-t", help="Only the trace with this id.")] = None,
    agent: Annotated[
        list[str] | None, typer.Option("--agent", "-a", help="Only events of this agent (repeat).")
    ] = None,
    kind: Annotated[
        list[str] | None, typer.Option("--kind", "-k", help="Only events of this kind (repeat).")
    ] = None,
    width: Annotated[int, typer.Option(help="Characters of content per event.")] = 160,
    format: FormatOpt = None,
) -> None:
    """Print a readable timeline of each trace in PATHS."""
    errors, on_error = error_printer()
    shown = 0
    for t in load_traces(paths, format=format, on_error=on_error):
        if trace is not None and t.trace_id != trace:
            continue
        shown += 1
        head = Text(f"{t.trace_id}", style="bold") + Text(f"  [{t.source_format}]", style="dim")
        if t.framework:
            head += Text(f"  {t.framework}")
        if t.outcome is not None and t.outcome.success is not None:
            head += Text(
                "  success" if t.outcome.success else "  failure",
                style="green" if t.outcome.success else "red",
            )
        out.print(head)
        if t.task:
            out.print(Text("task: ", style="bold") + Text(_clip(t.task, width)))
        table = Table("seq", "actor", "kind", "content", box=None, show_header=True)
        for e in ops.show(t, agents=agent, kinds=kind):
            style = _KIND_STYLE.get(e.kind, "white")
            table.add_row(
                str(e.seq),
                Text(e.actor or "-"),
                Text(e.kind, style=style),
                _event_text(e, width),
                style="dim" if e.is_copied_context else None,
            )
        out.print(table)
        if t.termination is not None:
            out.print(Text(f"ended: {t.termination.reason or '-'} (by {t.termination.by})", style="dim"))
        out.print()
    if trace is not None and shown == 0:
        err.print(f"no trace with id {trace!r}")
        raise typer.Exit(EXIT_NOTHING)
    raise typer.Exit(exit_code(shown, len(errors)))


def _counter_table(title: str, data: dict[str, int], limit: int = 15) -> Table:
    table = Table(title=title, box=None, title_justify="left", title_style="bold")
    table.add_column("name")
    table.add_column("count", justify="right")
    for k, v in list(data.items())[:limit]:
        table.add_row(Text(k), str(v))
    if len(data) > limit:
        table.add_row(f"... {len(data) - limit} more", "")
    return table


@app.command("stats")
def stats_cmd(paths: Paths, format: FormatOpt = None, json: JsonOpt = False) -> None:
    """Counts by format, framework, agent, event kind, tool, tokens and outcome."""
    _errors, on_error = error_printer()
    s = ops.stats(paths, format=format, on_error=on_error)
    if json:
        write_bytes(ops.to_json(s) + b"\n")
    else:
        out.print(
            f"[bold]{s.traces}[/] traces, [bold]{s.events}[/] events, {s.errors} error(s); "
            f"tokens in {s.input_tokens:,} / out {s.output_tokens:,}; cost ${s.cost_usd:.4f}; "
            f"tool errors {s.tool_errors}"
        )
        for title, data in (
            ("format", s.by_format),
            ("framework", s.by_framework),
            ("outcome", s.outcomes),
            ("event kind", s.by_kind),
            ("agent (events)", s.by_agent),
            ("tool calls", s.tool_calls),
        ):
            if data:
                out.print(_counter_table(title, data))
    raise typer.Exit(exit_code(s.traces, s.errors))


@app.command("convert")
def convert_cmd(
    paths: Paths,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write here instead of stdout.")
    ] = None,
    drop_raw: Annotated[
        bool, typer.Option("--drop-raw", help="Leave out native records (smaller, not lossless).")
    ] = False,
    format: FormatOpt = None,
) -> None:
    """Write canonical JSONL (one trace per line, with its events) to stdout or -o FILE."""
    import sys

    errors, on_error = error_printer()
    target = output if output is not None else sys.stdout.buffer
    report = ops.convert(paths, target, format=format, drop_raw=drop_raw, on_error=on_error)
    if output is not None:
        err.print(
            f"wrote {report.traces} trace(s), {report.events} events, {report.bytes:,} bytes to {output}"
        )
    raise typer.Exit(exit_code(report.traces, len(errors)))


@app.command("formats")
def formats_cmd(json: JsonOpt = False) -> None:
    """List the supported trace formats (importers)."""
    rows = [{"name": i.name, "folder": i.handles_dirs, "description": i.description} for i in importers()]
    if json:
        write_bytes(ops.to_json(rows) + b"\n")
        return
    table = Table("format", "kind", "description", box=None)
    for r in rows:
        table.add_row(str(r["name"]), "folder" if r["folder"] else "file", Text(str(r["description"])))
    out.print(table)
