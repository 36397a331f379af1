"""Budgets refuse models with no known price unless a price is given or assumed; run and total caps."""

from __future__ import annotations

import asyncio

import pytest

from mastkit.annotate.factory import make_annotator
from mastkit.attribute.llm import LLMAttributor
from mastkit.providers import (
    Budget,
    BudgetExceeded,
    ChatMessage,
    ChatRequest,
    UnknownPriceError,
    get_provider,
    price_info,
    require_price,
    set_price,
)
from mastkit.store import Store
from mastkit.testing import FakeLLMServer, Reply, Usage

KEY = "test-key"


def test_require_price_refuses_an_unpriced_model() -> None:
    provider = get_provider("openai:mystery-model", api_key=KEY)
    with pytest.raises(UnknownPriceError, match="no known price for openai:mystery-model") as info:
        require_price(provider)
    assert "--assume-price" in str(info.value) and "--price-in" in str(info.value)
    assert require_price(get_provider("openai:gpt-4o-mini", api_key=KEY)).input == 0.15
    assert require_price(get_provider("ollama:mystery")).source == "free"


@pytest.mark.parametrize("caps", [{"budget_usd": 1.0}, {"budget_total_usd": 1.0}])
def test_factories_refuse_a_budget_without_a_price(caps: dict[str, float]) -> None:
    with Store.memory() as store:
        with pytest.raises(UnknownPriceError):
            make_annotator("llm", model="openai:mystery", api_key=KEY, cache=store, **caps)
        with pytest.raises(UnknownPriceError):
            LLMAttributor.from_spec("openai:mystery", api_key=KEY, cache=store, **caps)
        # no budget: no price needed (costs show as unknown)
        make_annotator("llm", model="openai:mystery", api_key=KEY, cache=store)


def test_a_given_price_is_used_and_accepted() -> None:
    ann = make_annotator(
        "llm", model="openai:mystery", api_key=KEY, budget_usd=1.0, price_in=2.0, price_out=8.0
    )
    info = price_info(ann.provider)  # type: ignore[attr-defined]
    assert (info.source, info.input, info.output, info.upper_bound) == ("table", 2.0, 8.0, False)
    attr = LLMAttributor.from_spec("openai:mystery", api_key=KEY, budget_usd=1.0, price_in=2.0, price_out=8.0)
    assert attr.provider.estimate_cost(1_000_000, 1_000_000) == pytest.approx(10.0)


def test_assumed_price_is_an_upper_bound_and_charges_calls() -> None:
    ann = make_annotator("llm", model="openai:mystery", api_key=KEY, budget_usd=1.0, assume_price=5.0)
    provider = ann.provider  # type: ignore[attr-defined]
    info = price_info(provider)
    assert info.upper_bound and info.input == info.output == 5.0
    assert "cost is an upper bound: price of openai:mystery unknown" in info.describe()
    with FakeLLMServer([Reply("ok", usage=Usage(1_000_000, 200_000))]) as srv:
        p = get_provider("openai:mystery", base_url=srv.openai_base_url, api_key=KEY)
        set_price(p, assume_price=5.0)
        resp = asyncio.run(p.complete(ChatRequest(messages=[ChatMessage(role="user", content="hi")])))
    assert resp.cost_usd == pytest.approx(6.0) and resp.price_known


def test_assumed_price_does_not_replace_a_known_price() -> None:
    p = get_provider("openai:gpt-4o-mini", api_key=KEY)
    info = set_price(p, assume_price=99.0)
    assert (info.source, info.input) == ("table", 0.15)


def test_set_price_needs_both_prices() -> None:
    with pytest.raises(Exception, match="both"):
        set_price(get_provider("openai:mystery", api_key=KEY), price_in=1.0)


def test_total_cap_counts_earlier_runs_and_names_itself() -> None:
    b = Budget(1.0, total_usd=0.5, spent_before=0.4)
    r = b.reserve(0.05)
    assert b.remaining_usd == pytest.approx(0.05)
    with pytest.raises(BudgetExceeded) as info:
        b.reserve(0.06)
    assert info.value.scope == "total" and info.value.spent_usd == pytest.approx(0.4)
    assert "total budget of $0.5000" in str(info.value) and "--budget-total" in str(info.value)
    b.settle(r, 0.05)
    run = Budget(0.1, total_usd=10.0)
    run.reserve(0.1)
    with pytest.raises(BudgetExceeded) as info:
        run.reserve(0.01)
    assert info.value.scope == "run" and "run budget" in str(info.value)


def test_total_cap_reads_the_store_call_log() -> None:
    with Store.memory() as store:
        store.log_call(trace_id="t", config_hash="c", provider="openai", model="gpt-4o-mini",
                       request_hash="r", cost_usd=0.75)  # fmt: skip
        store.log_call(trace_id="t", config_hash="c", provider="openai", model="gpt-4o-mini",
                       request_hash="r", cached=True)  # fmt: skip
        ann = make_annotator(
            "llm", model="openai:gpt-4o-mini", api_key=KEY, cache=store, budget_total_usd=1.0
        )
    budget = ann.budget  # type: ignore[attr-defined]
    assert budget.spent_before == pytest.approx(0.75)
    assert budget.remaining_usd == pytest.approx(0.25)


def test_total_cap_needs_a_store() -> None:
    with pytest.raises(Exception, match="total budget"):
        make_annotator("llm", model="openai:gpt-4o-mini", api_key=KEY, budget_total_usd=1.0)
