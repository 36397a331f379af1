"""Commands that need no provider, report or statistics stack start without importing it.

Checked by what is imported (deterministic), not by timing; ``bench/cli_start.py`` measures
the start time against a bare interpreter.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY_PACKAGES = ("openai", "anthropic", "jinja2", "httpx", "numpy", "scipy", "sklearn", "pyarrow")
HEAVY_MASTKIT = ("mastkit.report", "mastkit.annotate", "mastkit.attribute", "mastkit.store", "mastkit.analyze",
                 "mastkit.providers.openai_compat", "mastkit.providers.anthropic_native")  # fmt: skip

PROBE = """
import json, sys
from mastkit.cli.main import main
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


def heavy(mods: set[str]) -> list[str]:
    return sorted(
        m
        for m in mods
        if m.split(".")[0] in HEAVY_PACKAGES or any(m == h or m.startswith(h + ".") for h in HEAVY_MASTKIT)
    )


@pytest.mark.parametrize("args", [["--version"], ["traces", "formats"], ["traces", "--help"]])
def test_light_commands_import_no_heavy_stack(args: list[str]) -> None:
    assert heavy(imported(args)) == []


def test_a_verb_is_imported_when_it_runs() -> None:
    mods = imported(["doctor", "--help"])
    assert "mastkit.cli.doctor" in mods and "mastkit.cli.annotate" not in mods


def test_every_verb_resolves() -> None:
    from typer.main import get_command

    from mastkit.cli.main import COMMANDS, app

    group = get_command(app)
    for name in COMMANDS:
        cmd = group.get_command(None, name)  # type: ignore[arg-type]
        assert cmd is not None and cmd.name == name
