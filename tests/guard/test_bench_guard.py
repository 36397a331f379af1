"""bench/guard.py runs (few seeds): its figures are not checked here, only that it works."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "guard.py"


def test_guard_bench_runs_and_writes_figures(tmp_path: Path) -> None:
    out = tmp_path / "figures.json"
    done = subprocess.run(
        [sys.executable, str(BENCH), "--seeds", "3", "--overhead-seeds", "1", "--rounds", "1", "--json", str(out)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    figures = json.loads(out.read_text())
    assert figures["catch"]["healthy"]["runs"] == 3 and figures["catch"]["loop"]["caught_pct"] is not None
    assert figures["overhead"]["all six guards (SIM_SPEC)"]["steps"] > 0
    assert "catch rate" in done.stdout and "median" in done.stdout
