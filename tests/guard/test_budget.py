"""The budget guard: steps, tokens, wall time, cost; warn at a fraction, stop at the limit."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from mastkit.guard import BudgetGuard
from mastkit.traces import Usage

from ._kit import Clock, call, only


def test_steps_warn_once_at_80_percent_and_block_after_the_limit() -> None:
    g = only(BudgetGuard(max_steps=10))
    actions = [call(g, "read", {"i": i}, f"r{i}") for i in range(12)]
    assert actions[:8] == ["allow"] * 8
    assert actions[8] == "warn" and actions.count("warn") == 1  # the 9th: 8 of 10 done
    assert actions[9] == "allow" and actions[10] == "block" and actions[11] == "block"
    assert g.decisions[-1].mode == "FM-1.5"


def test_the_warn_fraction_is_configurable() -> None:
    g = only(BudgetGuard(max_steps=10, warn_fraction=0.5))
    actions = [call(g, "read", {"i": i}, "r") for i in range(7)]
    assert actions.index("warn") == 5


def test_tokens_and_cost_count_every_event_usage() -> None:
    g = only(BudgetGuard(max_tokens=1000, max_cost_usd=1.0))
    assert g.check_message("x", usage=Usage(input_tokens=500, output_tokens=100)).action == "allow"
    d = g.check_message("x", usage=Usage(total_tokens=250, cost_usd=0.1))
    assert d.action == "warn" and "tokens" in d.evidence
    d = g.check_message("x", usage=Usage(total_tokens=300, cost_usd=0.95))
    assert d.action == "block" and g.state.tokens == 1150


def test_wall_time_uses_the_run_clock() -> None:
    clock = Clock()
    g = only(BudgetGuard(max_seconds=100), clock=clock)
    assert call(g, "a", {}) == "allow"
    clock.now = 85
    assert call(g, "b", {}) == "warn"
    clock.now = 101
    assert call(g, "c", {}) == "block"


def test_warn_only_budgets_never_stop_and_stop_attempts_are_never_refused() -> None:
    g = only(BudgetGuard(max_steps=10, on_limit="warn"))
    actions = [call(g, "a", {"i": i}) for i in range(14)]
    assert "block" not in actions and actions.count("warn") == 2  # the 80% warning, the limit warning
    assert actions[8] == "warn" and actions[10] == "warn"
    g = only(BudgetGuard(max_steps=2))
    for i in range(4):
        call(g, "a", {"i": i})
    assert g.check_stop("done").action == "allow"


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValidationError):
        BudgetGuard(max_steps=0)
    with pytest.raises(ValidationError):
        BudgetGuard(warn_fraction=1.5)
