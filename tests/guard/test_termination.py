"""The termination state machine: stop when the stop condition is met, not before."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from mastkit.guard import TerminationConfig, TerminationGuard

from ._kit import call, only

MACHINE = {
    "states": ["investigating", "fixed", "resolved"],
    "transitions": [
        {"from": "investigating", "to": "fixed", "when": {"tool": "apply_fix"}},
        {
            "from": "fixed",
            "to": "resolved",
            "when": {"tool": "health_check", "result": {"output_regex": "healthy"}},
        },
    ],
    "stop_states": ["resolved"],
}


def guard() -> TerminationGuard:
    return TerminationGuard(TerminationConfig.model_validate(MACHINE))


def test_a_stop_before_the_stop_condition_is_redirected_with_the_reason() -> None:
    t = guard()
    g = only(t)
    call(g, "apply_fix", {})
    d = g.check_stop("All done.")
    assert d.action == "redirect" and d.mode == "FM-3.1"
    assert "'fixed'" in d.message and "'resolved'" in d.message
    assert t.current(g.state) == "fixed"


def test_transitions_on_a_result_need_the_result_to_pass() -> None:
    t = guard()
    g = only(t)
    call(g, "apply_fix", {})
    call(g, "health_check", {}, "degraded")
    assert t.current(g.state) == "fixed"
    call(g, "health_check", {"again": 1}, "all healthy")
    assert t.current(g.state) == "resolved"
    assert g.check_stop("Resolved.").action == "allow"
    assert g.state.stopped


def test_a_step_after_the_stop_condition_is_told_to_stop_now() -> None:
    g = only(guard())
    call(g, "apply_fix", {})
    call(g, "health_check", {}, "healthy")
    d = g.check_tool_call("get_metrics", {})
    assert d.action == "redirect" and d.message.startswith("Stop now: the stop condition 'resolved' is met")
    assert d.mode == "FM-1.5"
    assert g.check_message("checking once more").action == "redirect"
    assert g.check_tool_call("done", {}).action == "allow"


def test_a_transition_from_another_state_does_not_fire() -> None:
    t = guard()
    g = only(t)
    call(g, "health_check", {}, "healthy")  # from investigating: no transition on it
    assert t.current(g.state) == "investigating"
    assert g.check_stop().action == "redirect"


def test_text_triggers_and_any_state() -> None:
    cfg = TerminationConfig.model_validate(
        {"states": ["a", "b"], "transitions": [{"to": "b", "when": {"text_regex": "root cause: \\w+"}}],
         "stop_states": ["b"]}
    )  # fmt: skip
    g = only(TerminationGuard(cfg))
    g.check_message("still looking")
    assert g.check_stop().action == "redirect"
    g.check_message("Root cause: pool")
    assert g.check_stop().action == "allow"


def test_unknown_states_are_refused() -> None:
    with pytest.raises(ValidationError, match="unknown state 'done'"):
        TerminationConfig.model_validate({**MACHINE, "stop_states": ["done"]})
    with pytest.raises(ValidationError, match=r"transitions\[0\].to"):
        TerminationConfig.model_validate({**MACHINE, "transitions": [{"to": "x", "when": {"tool": "a"}}]})
