"""Attribution benchmark: the ``rules`` method beside random, naive and single-heuristic baselines.

Label sets (from ../shared/data, read-only, unless said otherwise):

* Who&When Algorithm-Generated (126) — tuning set;
* Who&When Hand-Crafted (58, Magentic-One) — split half/half once (``split`` with seed 19,
  stratified by the labelled mistake agent, committed before any HC rule was written):
  ``W&W HC dev`` (tuning) and ``W&W HC held`` (held out: only its aggregate row is read);
* tau-bench airline, 36 failed runs labelled by hand (bench/attribution_labels/), split
  half/half with a fixed seed, stratified by the blamed agent: ``tau dev`` (tuning) and
  ``tau held`` (held out); then 30 and 42 more failed runs of the same file labelled blind
  (``tau fresh``, ``tau fresh2``);
* tau2-bench airline, 39 failed runs of three Grok models written by another runner, shipped
  gzipped in bench/attribution_labels/tau2_airline_grok/ and labelled blind after the rules were
  frozen (``tau2 grok``, read since, so tuning now), 32 more labelled blind after the change
  it prompted (``tau2 grok2``), 43 more labelled blind after the user signals that followed
  (``tau2 grok3``) and 53 more with the rules unchanged (``tau2 grok4``): read from the
  repository, so they need no shared data.

Methods: ``random`` (exact expectation), ``first step`` / ``last step`` (of any agent), each
single heuristic of ``mastkit.attribute.heuristics`` on its own (falling back to the first agent
step when it does not fire, so every method answers every trace), the rules before issue #19
(``old rules``: the rule attributor at commit 34bdaa3, read with ``git show``) and the current
``rules``. Without the ground truth (the default setting of ``mastkit attribute``).

Reproduce:

    PYTHONPATH=src .venv/bin/python bench/attribution.py            # table, ~5 s
    PYTHONPATH=src .venv/bin/python bench/attribution.py --json     # the same figures as JSON
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from mastkit import load_traces
from mastkit.analyze.attribution_eval import (
    Gold,
    Prediction,
    Scores,
    golds_from_traces,
    load_labels,
    random_scores,
    split,
)
from mastkit.analyze.attribution_eval import score as score_preds
from mastkit.attribute import heuristics as h
from mastkit.attribute.rule_attributor import attribute_by_rules
from mastkit.traces.model import Event, Trace

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("MASTKIT_SHARED_DATA", ROOT.parent / "shared" / "data"))
LABELS = ROOT / "bench" / "attribution_labels" / "tau_bench_airline.jsonl"
FRESH_LABELS = ROOT / "bench" / "attribution_labels" / "tau_bench_airline_fresh.jsonl"
"""30 more failed runs labelled blind after the rules were final (FRESH.md): evaluation only."""
FRESH2_LABELS = ROOT / "bench" / "attribution_labels" / "tau_bench_airline_fresh2.jsonl"
"""42 more, labelled blind by two helpers while the user signals were written (FRESH2_a/b.md)."""
SHIPPED = ROOT / "bench" / "attribution_labels"
TAU2_SETS: dict[str, str] = {
    # 44 failed airline runs of three Grok models, labelled blind with the rules frozen at
    # 8696385 (TAU2_a/b/c.md); read since to write the greeting fix and user_quit
    "tau2 grok (tune)": "tau2_airline_grok",
    # 37 more (four Grok models), chosen before that change; labelled blind (TAU2x_a/b/c.md)
    "tau2 grok2 (blind)": "tau2_airline_grok2",
    # 44 more (three airline policy variants), chosen before user_withholds and user_ends_on_yes,
    # labelled blind, merged after they were committed (TAU2y_a..d.md)
    "tau2 grok3 (blind)": "tau2_airline_grok3",
    # 53 more, chosen with the rules unchanged; labelled blind (TAU2z_a..f.md)
    "tau2 grok4 (blind)": "tau2_airline_grok4",
    # the 9 failed telecom runs of the same source: a third domain (TAU2t_a/b/c.md)
    "tau2 telecom (blind)": "tau2_telecom_grok",
}
"""tau2-bench sets shipped in ``SHIPPED`` (third-party, MIT): set name -> the folder of gzipped
results; its labels are ``<folder>.jsonl`` beside it."""
OLD_COMMIT = "34bdaa3"
HC_SEED = 19
"""Seed of the fixed Hand-Crafted dev/held split (chosen before looking at either half)."""
Method = Callable[[Trace], Prediction]


def label_sets(shared: Path) -> dict[str, list[Gold]]:
    """The label sets, in table order (a set whose data is absent is left out)."""
    sets: dict[str, list[Gold]] = {}
    who = shared / "who_and_when"
    if (who / "Algorithm-Generated").exists():
        sets["W&W AG (tune)"] = golds_from_traces(load_traces(who / "Algorithm-Generated"))
    if (who / "Hand-Crafted").exists():
        hc_dev, hc_held = split(golds_from_traces(load_traces(who / "Hand-Crafted")), seed=HC_SEED)
        sets["W&W HC dev (tune)"] = hc_dev
        sets["W&W HC held"] = hc_held
    tau_file = shared / "multi_rollout" / "tau_bench_airline_gpt4o"
    if tau_file.exists():
        dev, held = split(load_labels(LABELS, shared, lambda p: load_traces(p)))
        sets["tau dev (tune)"] = dev
        sets["tau held"] = held
        if FRESH_LABELS.exists():
            sets["tau fresh (blind)"] = load_labels(FRESH_LABELS, shared, lambda p: load_traces(p))
        if FRESH2_LABELS.exists():
            sets["tau fresh2 (blind)"] = load_labels(FRESH2_LABELS, shared, lambda p: load_traces(p))
    for name, folder_name in TAU2_SETS.items():
        labels = SHIPPED / f"{folder_name}.jsonl"
        if labels.exists():
            with unpacked(SHIPPED / folder_name) as folder:
                sets[name] = load_labels(labels, folder.parent, lambda p: load_traces(p))
    return sets


@contextmanager
def unpacked(folder: Path) -> Iterator[Path]:
    """A temporary copy of ``folder`` with each ``*.json.gz`` decompressed (same name, no ``.gz``)."""
    with tempfile.TemporaryDirectory(prefix="mastkit-bench-") as tmp:
        out = Path(tmp) / folder.name
        out.mkdir()
        for packed in sorted(folder.glob("*.json.gz")):
            with gzip.open(packed, "rb") as src, (out / packed.name[: -len(".gz")]).open("wb") as dst:
                shutil.copyfileobj(src, dst)
        yield out


def _alone(fn: Callable[[Trace, list[Event]], h.Finding | None]) -> Method:
    """A single heuristic as a method: its step, else the first agent step."""

    def run(trace: Trace) -> Prediction:
        events = h.live_events(trace)
        found = fn(trace, events) or h.first_agent_step(events)
        return (found.agent, found.step.seq) if found is not None else (None, None)

    return run


def _old_rules() -> Method | None:
    """The rule attributor as it was before issue #19 (None when git or the commit is missing)."""
    try:
        source = subprocess.run(
            ["git", "show", f"{OLD_COMMIT}:src/mastkit/attribute/rule_attributor.py"],
            cwd=ROOT, capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        return None
    module = types.ModuleType("old_rule_attributor")
    exec(compile(source, "old_rule_attributor.py", "exec"), module.__dict__)
    old = module.attribute_by_rules

    def run(trace: Trace) -> Prediction:
        a = old(trace)
        return (a.agent, a.step)

    return run


def _rules(trace: Trace) -> Prediction:
    a = attribute_by_rules(trace)
    return (a.agent, a.step)


def _first_write_action(trace: Trace, events: list[Event]) -> h.Finding | None:
    write = h.first_write_attempt(events)
    return h.Finding("first_write", write, "first write attempted") if write is not None else None


def _ended_by(trace: Trace) -> str | None:
    return trace.termination.by if trace.termination is not None else None


def methods() -> dict[str, Method | None]:
    """Every method of the table, in order (None: random, scored by its exact expectation)."""
    out: dict[str, Method | None] = {
        "random (expected)": None,
        "first agent step": _alone(lambda t, ev: h.first_agent_step(ev)),
        "last agent step": _alone(lambda t, ev: h.last_agent_step(ev)),
        "first write attempted": _alone(_first_write_action),
        "first write that took effect": _alone(lambda t, ev: h.first_write(ev)),
        "first unresolved error": _alone(lambda t, ev: h.first_unresolved_error(ev)),
        "first error": _alone(lambda t, ev: h.first_error(ev)),
        "first error or silent run": _alone(lambda t, ev: h.first_bad_result(ev)),
        "unverified write": _alone(lambda t, ev: h.unverified_action(ev)),
        "user pivot": _alone(lambda t, ev: h.user_pivot(ev)),
        "user dispute": _alone(lambda t, ev: h.user_dispute(ev)),
        "user quit": _alone(lambda t, ev: h.user_quit(ev)),
        "user withholds": _alone(lambda t, ev: h.user_withholds(ev, t.task)),
        "user ends on yes": _alone(lambda t, ev: h.user_ends_on_yes(ev, ended_by=_ended_by(t))),
        "stall report": _alone(lambda t, ev: h.stall_report(ev)),
        "accepted report": _alone(lambda t, ev: h.accepted_report(ev)),
        "first report (supervised)": _alone(lambda t, ev: h.first_report(ev)),
        "first acting step": _alone(lambda t, ev: h.first_action(ev)),
        "detector": _alone(lambda t, ev: (h.detector_finding(t, ev) or (None, ""))[0]),
    }
    old = _old_rules()
    if old is not None:
        out["old rules (34bdaa3)"] = old
    out["rules"] = _rules
    return out


def measure(shared: Path) -> dict[str, dict[str, Scores]]:
    """{label set: {method: scores}}."""
    sets = label_sets(shared)
    result: dict[str, dict[str, Scores]] = {}
    for set_name, golds in sets.items():
        row: dict[str, Scores] = {}
        for name, method in methods().items():
            if method is None:
                row[name] = random_scores(golds)
            else:
                row[name] = score_preds({i: method(g.trace) for i, g in enumerate(golds)}, golds)
        result[set_name] = row
    return result


def _cell(s: Scores, which: str) -> str:
    r = s.agent if which == "agent" else s.step if which == "step" else s.within[int(which)]
    if r.value is None:
        return "-"
    ci = r.ci
    return f"{r.value:6.1%}" + (
        f" [{ci[0]:.0%}-{ci[1]:.0%}]" if ci is not None and which in ("agent", "step") else ""
    )


def print_table(result: dict[str, dict[str, Scores]]) -> None:
    for set_name, row in result.items():
        n = next(iter(row.values())).agent.n
        print(f"\n{set_name} (n={n})")
        print(f"  {'method':30} {'agent [95% CI]':>20} {'step [95% CI]':>20} {'step ±1':>8} {'step ±3':>8}")
        for name, s in row.items():
            print(
                f"  {name:30} {_cell(s, 'agent'):>20} {_cell(s, 'step'):>20} {_cell(s, '1'):>8} {_cell(s, '3'):>8}"
            )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shared", type=Path, default=SHARED, help="the shared data folder")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args(argv)
    result = measure(args.shared)
    if not result:
        print(f"no label set found under {args.shared}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps({k: {m: s.as_dict() for m, s in v.items()} for k, v in result.items()}, indent=1))
    else:
        print_table(result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
