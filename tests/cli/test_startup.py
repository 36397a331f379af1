"""Commands that need no provider, report or statistics stack start without importing it.

Checked by what is imported (deterministic), not by timing, in a fresh process running the
``mastkit`` executable's entry point; ``bench/cli_start.py`` measures the start time against a
bare interpreter (figures in docs/performance.md).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

HEAVY_PACKAGES = ("openai", "anthropic", "jinja2", "httpx", "numpy", "scipy", "sklearn", "pyarrow", "ray",
                  "keyring", "duckdb", "pandas")  # fmt: skip
HEAVY_MASTKIT = ("mastkit.report", "mastkit.annotate", "mastkit.attribute", "mastkit.store", "mastkit.analyze",
                 "mastkit.llm", "mastkit.providers", "mastkit.learn", "mastkit.verify", "mastkit.feedback",
                 "mastkit.export", "mastkit.calibration", "mastkit.doctor")  # fmt: skip
VERBS = ("mastkit.cli.annotate", "mastkit.cli.attribute", "mastkit.cli.traces", "mastkit.cli.taxonomy",
         "mastkit.cli.doctor", "mastkit.cli.report", "mastkit.cli.learn", "mastkit.cli._common")  # fmt: skip

PROBE = """
import json, sys
from mastkit.cli.entry import main
sys.argv = ["mastkit", *json.loads(sys.argv[1])]
try:
    main()
except SystemExit:
    pass
print("MODULES " + json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


def imported(args: list[str]) -> set[str]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(args)], capture_output=True, text=True, timeout=120
    )
    line = next(x for x in proc.stderr.splitlines() if x.startswith("MODULES "))
    return set(json.loads(line.removeprefix("MODULES ")))


def loaded(mods: set[str], names: tuple[str, ...]) -> list[str]:
    """The modules of ``mods`` that are one of ``names`` or inside one of them."""
    return sorted(m for m in mods if any(m == n or m.startswith(n + ".") for n in names))


def heavy(mods: set[str]) -> list[str]:
    return sorted(m for m in mods if m.split(".")[0] in HEAVY_PACKAGES) + loaded(mods, HEAVY_MASTKIT)


# What each light command must not import on top of the heavy stack.
LIGHT: dict[tuple[str, ...], tuple[str, ...]] = {
    ("--version",): ("pydantic", "rich", "orjson", "yaml", "mastkit.traces", "mastkit.taxonomy", *VERBS),
    ("--help",): ("pydantic", "orjson", "yaml", "mastkit.traces", "mastkit.taxonomy", *VERBS),
    ("traces", "formats"): ("mastkit.taxonomy",),
    ("traces", "--help"): ("mastkit.taxonomy",),
    ("taxonomy", "show"): ("mastkit.traces",),
    ("taxonomy", "--help"): ("mastkit.traces",),
    ("hook", "--help"): ("typer", "rich", "mastkit.cli.main", *VERBS),
}


@pytest.mark.parametrize("args", list(LIGHT), ids=" ".join)
def test_light_commands_import_no_heavy_stack(args: tuple[str, ...]) -> None:
    mods = imported(list(args))
    assert heavy(mods) == []
    assert loaded(mods, LIGHT[args]) == []


def test_probe_sees_what_a_command_imports() -> None:
    # the check above is only as good as its probe: a verb that needs the stack does import it
    mods = imported(["doctor", "--help"])
    assert "openai" in mods and "mastkit.providers" in mods and "pydantic" in mods


def test_a_verb_is_imported_when_it_runs() -> None:
    mods = imported(["doctor", "--help"])
    assert "mastkit.cli.doctor" in mods and "mastkit.cli.annotate" not in mods


def test_help_lists_every_verb_without_importing_it() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "mastkit.cli.entry", "--help"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "200", "NO_COLOR": "1", "TERM": "dumb"},
    )
    from mastkit.cli.main import COMMANDS

    assert proc.returncode == 0, proc.stderr
    for name, verb in COMMANDS.items():
        assert f" {name} " in proc.stdout and verb.help in proc.stdout, name
    assert " hook " in proc.stdout


def test_every_verb_resolves() -> None:
    from typer.main import get_command

    from mastkit.cli.main import COMMANDS, app

    group = get_command(app)
    for name in COMMANDS:
        cmd = group.get_command(None, name)  # type: ignore[arg-type]
        assert cmd is not None and cmd.name == name
