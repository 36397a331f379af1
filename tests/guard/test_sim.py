"""The scripted simulator: deterministic, labelled, caught by the guards, healthy runs left alone."""

from __future__ import annotations

from pathlib import Path

import pytest

import mastkit
from mastkit.guard import Guardian
from mastkit.guard.sim import BEHAVIOURS, MODES, SIM_SPEC, make_scenario, run_guarded
from mastkit.traces.ops import dump_trace


def test_scenarios_are_deterministic_by_seed() -> None:
    for b in BEHAVIOURS:
        assert make_scenario(b, 7).trace() == make_scenario(b, 7).trace()
    assert make_scenario("healthy", 1).trace() != make_scenario("healthy", 2).trace()


def test_traces_carry_the_injected_modes_as_labels_and_load_back(tmp_path: Path) -> None:
    out = tmp_path / "sim.jsonl"
    with out.open("wb") as fh:
        for b in BEHAVIOURS:
            fh.write(dump_trace(make_scenario(b, 3).trace()))
    traces = {t.extra["sim"]["behaviour"]: t for t in mastkit.load_traces(out)}
    assert set(traces) == set(BEHAVIOURS)
    for b, t in traces.items():
        assert [label.code for label in t.labels] == list(MODES[b])
        assert all(label.present and label.taxonomy == "mast" for label in t.labels)
        if b != "healthy":
            step = t.labels[0].step
            assert step is not None and t.events[step].kind in ("tool_call", "message")
        assert not any(e.subtype == "guard" for e in t.events)  # the raw script: no guards


@pytest.mark.parametrize("behaviour", [b for b in BEHAVIOURS if b != "healthy"])
def test_every_behaviour_is_caught_with_its_mode(behaviour: str) -> None:
    g = Guardian.from_spec(SIM_SPEC)
    for seed in range(15):
        run = run_guarded(make_scenario(behaviour, seed), g)
        assert run.caught and not run.false_stop, (seed, run.decisions)
        assert run.decision is not None and any(p.mode in MODES[behaviour] for p in run.decision.parts)
        assert run.trace.events[-1].subtype == "guard"


def test_healthy_runs_are_not_stopped_but_the_guards_do_fire_on_the_script() -> None:
    g = Guardian.from_spec(SIM_SPEC)
    for seed in range(40):
        run = run_guarded(make_scenario("healthy", seed), g)
        assert run.stopped_at is None and not run.false_stop, (seed, run.decisions)
        assert run.trace.termination is not None and run.trace.termination.by == "agent"


def test_a_run_can_go_on_past_a_stop() -> None:
    s = make_scenario("loop", 0)
    run = run_guarded(s, Guardian.from_spec(SIM_SPEC), stop_on_block=False)
    assert s.inject_at is not None and run.stopped_at == s.inject_at + 4  # the 5th identical call
    assert sum(d.stops for _, d in run.decisions) >= 2


def test_unknown_behaviour() -> None:
    with pytest.raises(ValueError, match="unknown behaviour"):
        make_scenario("nap", 1)
