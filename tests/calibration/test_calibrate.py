"""``calibrate`` end to end against the loopback server: a perfect judge, a useless one, the store."""

from __future__ import annotations

import pytest
from tests.annotate._judgekit import make_judge
from tests.calibration._calkit import WHOLE, absent_handler, gold_handler

from mastkit.calibration import (
    CALL_LOG_PREFIX,
    RULES_LINE,
    agreement_line,
    calibrate,
    calibration_for,
    load_calibration_set,
    run_agreement_line,
)
from mastkit.store import Store
from mastkit.testing import FakeLLMServer

N_TRACES = 19 + 24


def test_a_judge_answering_the_gold_labels_scores_one() -> None:
    with Store.memory() as store, FakeLLMServer(handler=gold_handler()) as srv:
        judge = make_judge(srv, cache=store, **WHOLE)
        r = calibrate(judge, store=store, n_boot=200)
        assert srv.request_count == N_TRACES
    assert r.traces == 19 and r.failed == []
    assert r.macro_f1 == 1.0 and r.micro_f1 == 1.0 and r.kappa == 1.0
    assert r.micro_f1_ci == (1.0, 1.0) and r.kappa_ci == (1.0, 1.0) and r.macro_f1_ci == (1.0, 1.0)
    assert r.coverage == 1.0 and r.unknown == 0
    assert sum(m.tp for m in r.modes) == 54 and sum(m.n for m in r.modes) == 266
    scored = [m for m in r.modes if m.tp]
    assert scored and all(m.f1 == 1.0 and m.f1_ci is not None for m in scored)
    assert r.baseline_random["f1"] == pytest.approx(54 / 266)
    assert r.attribution is not None and r.attribution.n == 24
    assert r.attribution.agent_accuracy == 1.0 and r.attribution.step_accuracy == 1.0
    assert r.model_calls == N_TRACES and r.input_tokens > 0


def test_attribution_scores_agent_and_step_apart() -> None:
    with FakeLLMServer(handler=gold_handler(with_step=False)) as srv:
        r = calibrate(make_judge(srv, **WHOLE), n_boot=50)
    assert r.attribution is not None and r.attribution.missing == 0
    assert r.attribution.agent_accuracy == 1.0 and r.attribution.step_accuracy == 0.0
    assert r.attribution.random_agent is not None and 0 < r.attribution.random_agent < 1


def test_a_judge_answering_absent_scores_zero_and_kappa_zero() -> None:
    with Store.memory() as store, FakeLLMServer(handler=absent_handler()) as srv:
        r = calibrate(make_judge(srv, cache=store, **WHOLE), store=store, attribution=False, n_boot=200)
        assert srv.request_count == 19  # without attribution the Who&When traces are not sent
    assert r.micro_f1 == 0.0 and r.macro_f1 == 0.0
    assert r.kappa == 0.0  # one rater constant, the other not: p_o = p_e
    assert r.kappa_ci is not None and r.micro_f1_ci == (0.0, 0.0)
    assert r.attribution is None
    # the always-absent baseline is exactly this judge
    assert r.baseline_always_absent["f1"] == 0.0 and r.baseline_always_absent["kappa"] == 0.0


def test_the_result_round_trips_through_the_store_and_reruns_are_free() -> None:
    with Store.memory() as store, FakeLLMServer(handler=gold_handler()) as srv:
        judge = make_judge(srv, cache=store, **WHOLE)
        first = calibrate(judge, store=store, attribution=False, n_boot=100)
        found = calibration_for(store, judge.config)
        assert found is not None
        assert found == (first, True)
        second = calibrate(make_judge(srv, cache=store, **WHOLE), store=store, attribution=False, n_boot=100)
        assert srv.request_count == 19  # replies came from the response cache
        assert second.macro_f1 == 1.0
        # the calls are logged apart from any run of this configuration
        assert store.call_stats(judge.config.config_hash())["calls"] == 0
        assert store.call_stats(CALL_LOG_PREFIX + judge.config.config_hash())["calls"] >= 19
        # annotations are not stored as a run: the user's run of this judge is not polluted
        assert list(store.annotations()) == [] and store.runs() == []


def test_a_calibration_of_other_options_is_found_and_said_to_differ() -> None:
    with Store.memory() as store, FakeLLMServer(handler=gold_handler()) as srv:
        calibrated = make_judge(srv, cache=store, **WHOLE)
        r = calibrate(calibrated, store=store, attribution=False, n_boot=100)
        other = make_judge(srv, cache=store, samples=3)
        found = calibration_for(store, other.config)
        assert found is not None and found[1] is False and found[0] == r
        assert "other options" in agreement_line(other.config, found)
        exact = agreement_line(calibrated.config, calibration_for(store, calibrated.config))
        assert exact.startswith("measured agreement on the calibration set: macro-F1 1.00 [1.00, 1.00]")
        assert "kappa 1.00 [1.00, 1.00] (19 traces, " in exact and "other options" not in exact
        another_model = make_judge(srv, cache=store, model="openai:y")
        assert calibration_for(store, another_model.config) is None
        assert agreement_line(another_model.config, None) == (
            "uncalibrated: run `mastkit calibrate --model openai:y`"
        )


def test_rule_runs_point_to_the_detector_table() -> None:
    from mastkit.annotate.factory import make_annotator

    rules = make_annotator("rules")
    with Store.memory() as store:
        store.register_run(rules.config)
        assert run_agreement_line(store, rules.config.config_hash()) == RULES_LINE
        r = calibrate(rules, store=store, n_boot=50)  # rules calibrate offline too
    assert r.model_calls == 0 and r.traces == 19
    assert 0 < (r.coverage or 0) < 1  # rules leave many modes unknown: counted, not scored


def test_the_set_has_its_counts_and_licenses() -> None:
    cs = load_calibration_set()
    assert len(cs.mode_traces) == 19 and len(cs.attribution_traces) == 24
    sources = [t.trace_id.split("/")[1] for t in cs.attribution_traces]
    assert sources.count("Algorithm-Generated") == 12 and sources.count("Hand-Crafted") == 12
    assert len(cs.gold.labels) == 19
    assert sum(len(v) for v in cs.gold.labels.values()) == 266
    assert sum(sum(v.values()) for v in cs.gold.labels.values()) == 54
    assert all(t.extra["calibration"]["purpose"] == "attribution" for t in cs.attribution_traces)
    assert len({t.trace_id for t in cs.traces}) == N_TRACES
    assert len(cs.version) == 12
