"""Guard benchmark: catch rate per injected behaviour, false stops on healthy runs, and the
overhead per step.

  (a) catch     every behaviour of the scripted simulator (mastkit.guard.sim), N seeds each,
                played through one Guardian built from sim.SIM_SPEC (all six guards on).
                caught = a step at or after the injection was stopped (block or redirect);
                right mode = the stopping decision names the injected MAST mode;
                false stop = a step before the injection (any step of a healthy run) was stopped.
  (b) overhead  Guardian.check per event, all guards on, over the events of the simulated runs
                (each run fed to a fresh Guardian): median and p95 in microseconds, timed with
                time.perf_counter_ns around each call. Also the default Guardian (loop + budget).

Targets (issue 17): >= 95% caught, <= 1% healthy runs stopped, <= 50 us median per step.
Reproduce:

    .venv/bin/python bench/guard.py                 # 200 seeds per behaviour, ~10 s
    .venv/bin/python bench/guard.py --seeds 20 --json figures.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections import Counter
from pathlib import Path
from typing import Any

from mastkit.guard import GUARD_SUBTYPE, Guardian
from mastkit.guard.sim import BEHAVIOURS, MODES, SIM_SPEC, make_scenario, run_guarded
from mastkit.traces import Event


def catch_table(seeds: int) -> dict[str, dict[str, Any]]:
    guardian = Guardian.from_spec(SIM_SPEC)
    rows: dict[str, dict[str, Any]] = {}
    for behaviour in BEHAVIOURS:
        caught = right = false = 0
        by: Counter[str] = Counter()
        for seed in range(seeds):
            run = run_guarded(make_scenario(behaviour, seed), guardian)
            caught += run.caught
            false += run.false_stop
            if run.decision is not None:
                by[run.decision.guard or "?"] += 1
                right += run.caught and any(p.mode in MODES[behaviour] for p in run.decision.parts)
        rows[behaviour] = {
            "runs": seeds,
            "caught_pct": None if behaviour == "healthy" else 100 * caught / seeds,
            "right_mode_pct": None if behaviour == "healthy" else 100 * right / seeds,
            "false_stop_pct": 100 * false / seeds,
            "stopped_by": dict(by.most_common()),
        }
    return rows


def _events(seeds: int) -> list[list[Event]]:
    runs = []
    for behaviour in BEHAVIOURS:
        for seed in range(seeds):
            trace = make_scenario(behaviour, seed).trace()
            runs.append([e for e in trace.events if e.subtype != GUARD_SUBTYPE])
    return runs


def overhead(seeds: int, rounds: int) -> dict[str, dict[str, float]]:
    runs = _events(seeds)
    out: dict[str, dict[str, float]] = {}
    for name, make in (
        ("all six guards (SIM_SPEC)", lambda: Guardian.from_spec(SIM_SPEC, stamp_times=False)),
        ("default (loop + budget)", lambda: Guardian.default(stamp_times=False)),
        ("no guards (recording only)", lambda: Guardian([], stamp_times=False)),
    ):
        template = make()
        times: list[int] = []
        for _ in range(rounds):
            for events in runs:
                g = template.new_run()
                for e in events:
                    t0 = time.perf_counter_ns()
                    g.check(e)
                    times.append(time.perf_counter_ns() - t0)
        times.sort()
        out[name] = {
            "steps": len(times),
            "median_us": statistics.median(times) / 1e3,
            "p95_us": times[int(0.95 * (len(times) - 1))] / 1e3,
            "mean_us": statistics.fmean(times) / 1e3,
        }
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=200, help="seeds per behaviour (catch table)")
    ap.add_argument("--overhead-seeds", type=int, default=50, help="seeds per behaviour (overhead)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds over the overhead events")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    args = ap.parse_args()

    rows = catch_table(args.seeds)
    print(f"(a) catch rate, {args.seeds} seeds per behaviour, all guards on (sim.SIM_SPEC)\n")
    print(f"{'behaviour':<16} {'mode':<8} {'caught':>8} {'right mode':>11} {'false stop':>11}  stopped by")
    for behaviour, r in rows.items():
        mode = ",".join(MODES[behaviour]) or "-"
        caught = "-" if r["caught_pct"] is None else f"{r['caught_pct']:.1f}%"
        right = "-" if r["right_mode_pct"] is None else f"{r['right_mode_pct']:.1f}%"
        by = ", ".join(f"{k} {v}" for k, v in r["stopped_by"].items()) or "-"
        print(f"{behaviour:<16} {mode:<8} {caught:>8} {right:>11} {r['false_stop_pct']:>10.1f}%  {by}")

    cost = overhead(args.overhead_seeds, args.rounds)
    print(f"\n(b) overhead per step (Guardian.check), {args.overhead_seeds} seeds x {len(BEHAVIOURS)} behaviours,"
          f" {args.rounds} rounds\n")  # fmt: skip
    print(f"{'guardian':<28} {'steps':>8} {'median µs':>10} {'p95 µs':>8} {'mean µs':>8}")
    for name, c in cost.items():
        print(f"{name:<28} {c['steps']:>8} {c['median_us']:>10.1f} {c['p95_us']:>8.1f} {c['mean_us']:>8.1f}")
    if args.json:
        args.json.write_text(json.dumps({"catch": rows, "overhead": cost}, indent=2))


if __name__ == "__main__":
    main()
