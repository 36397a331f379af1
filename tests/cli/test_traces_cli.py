from __future__ import annotations

import json
from pathlib import Path

import orjson
from typer.testing import CliRunner

from mastkit import load_traces
from mastkit.cli.main import app

runner = CliRunner()

RUN = {
    "id": "run-7",
    "task": "list files",
    "success": False,
    "messages": [
        {"role": "user", "content": "list the files"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "shell", "arguments": "{\"cmd\": \"ls\"}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "[bold red]a.py[/] b.py"},
        {"role": "assistant", "content": "Done."},
    ],
}  # fmt: skip


def write_run(tmp_path: Path, name: str = "run.json", **kw: object) -> Path:
    p = tmp_path / name
    p.write_bytes(orjson.dumps({**RUN, **kw}))
    return p


def test_help_for_every_command() -> None:
    for args in (
        ["--help"],
        ["traces", "--help"],
        ["traces", "ls", "--help"],
        ["traces", "show", "--help"],
        ["traces", "stats", "--help"],
        ["traces", "convert", "--help"],
        ["traces", "formats", "--help"],
        ["demo", "--help"],
    ):
        result = runner.invoke(app, args)
        assert result.exit_code == 0, (args, result.output)


def test_ls_json(tmp_path: Path) -> None:
    write_run(tmp_path)
    result = runner.invoke(app, ["traces", "ls", str(tmp_path), "--json"])
    assert result.exit_code == 0
    (row,) = json.loads(result.stdout)
    assert row["trace_id"] == "run-7" and row["tool_calls"] == 1 and row["success"] is False


def test_stats_json_counts(tmp_path: Path) -> None:
    write_run(tmp_path, "a.json")
    write_run(tmp_path, "b.json", id="run-8", success=True)
    result = runner.invoke(app, ["traces", "stats", str(tmp_path), "--json"])
    assert result.exit_code == 0
    s = json.loads(result.stdout)
    assert s["traces"] == 2 and s["events"] == 8
    assert s["by_kind"] == {"message": 4, "tool_call": 2, "tool_result": 2}
    assert s["tool_calls"] == {"shell": 2}
    assert s["outcomes"] == {"failure": 1, "success": 1}


def test_show_filters_and_does_not_interpret_markup(tmp_path: Path) -> None:
    p = write_run(tmp_path)
    result = runner.invoke(app, ["traces", "show", str(p), "--kind", "tool_result"])
    assert result.exit_code == 0
    assert "[bold red]a.py[/]" in result.stdout  # printed literally, not styled
    assert "list the files" not in result.stdout


def test_convert_round_trip(tmp_path: Path) -> None:
    p = write_run(tmp_path)
    out = tmp_path / "out.jsonl"
    result = runner.invoke(app, ["traces", "convert", str(p), "-o", str(out)])
    assert result.exit_code == 0, result.output
    lines = out.read_bytes().splitlines()
    assert len(lines) == 1
    rec = json.loads(lines[0])
    assert [e["kind"] for e in rec["events"]] == ["message", "tool_call", "tool_result", "message"]
    (original,) = load_traces(p)
    (back,) = load_traces(out)
    assert back == original


def test_convert_to_stdout(tmp_path: Path) -> None:
    p = write_run(tmp_path)
    result = runner.invoke(app, ["traces", "convert", str(p)])
    assert result.exit_code == 0
    assert json.loads(result.stdout.splitlines()[0])["trace_id"] == "run-7"


def test_exit_codes(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_bytes(b"\x00\x01")
    result = runner.invoke(app, ["traces", "ls", str(bad)])
    assert result.exit_code == 3
    assert "bad.json" in result.stderr and "binary" in result.stderr
    write_run(tmp_path)
    result = runner.invoke(app, ["traces", "ls", str(tmp_path)])
    assert result.exit_code == 1  # partial: one good, one bad


def test_formats_lists_importers() -> None:
    result = runner.invoke(app, ["traces", "formats", "--json"])
    names = {r["name"] for r in json.loads(result.stdout)}
    assert {"chat_messages", "who_and_when", "canonical", "plain_text"} <= names
