"""How fast the ``mastkit`` command starts, next to a bare Python interpreter started the same way.

Each command runs ``--runs`` times as a fresh process (interleaved with the baseline, so a busy
spell hits both); the median and the fastest wall time of each are printed, with the median's
difference from the baseline (what mastkit's imports cost). On a busy machine the fastest run
is the closer to what an idle one gives. Reproduce:

    .venv/bin/python bench/cli_start.py --runs 15

Measure with bytecode caches, as installed packages have them: with PYTHONDONTWRITEBYTECODE set
and no ``__pycache__`` next to the sources, every module is compiled again on every start
(~0.3 s more for ``traces formats``); ``PYTHONPYCACHEPREFIX=/tmp/pyc`` keeps them out of the tree.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

MASTKIT = [sys.executable, "-m", "mastkit.cli.entry"]
"""The ``mastkit`` executable's entry point (``mastkit hook`` goes straight to the hook CLI)."""

COMMANDS = {
    "python -c pass (baseline)": [sys.executable, "-c", "pass"],
    "mastkit --version": [*MASTKIT, "--version"],
    "mastkit --help": [*MASTKIT, "--help"],
    "mastkit traces formats": [*MASTKIT, "traces", "formats"],
    "mastkit taxonomy show": [*MASTKIT, "taxonomy", "show"],
    "mastkit hook --help": [*MASTKIT, "hook", "--help"],
    "mastkit annotate --help": [*MASTKIT, "annotate", "--help"],
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=11)
    args = ap.parse_args()
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        print("note: PYTHONDONTWRITEBYTECODE is set: uncached modules are compiled on every start")
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(args.runs):
        for name, cmd in COMMANDS.items():
            t0 = time.perf_counter()
            subprocess.run(cmd, capture_output=True, check=True)
            times[name].append(time.perf_counter() - t0)
    base = statistics.median(times["python -c pass (baseline)"])
    print(f"{'command':30} {'median ms':>10} {'min ms':>7} {'minus baseline ms':>18}")
    for name, ts in times.items():
        med = statistics.median(ts)
        print(f"{name:30} {med * 1000:10.0f} {min(ts) * 1000:7.0f} {(med - base) * 1000:18.0f}")


if __name__ == "__main__":
    main()
