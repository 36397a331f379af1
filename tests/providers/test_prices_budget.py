"""Price table, cost, load_prices; Budget and Limiter; a budget stopping real calls."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from mastkit.providers import (
    DEFAULT_PRICES,
    PRICES_AS_OF,
    Budget,
    BudgetExceeded,
    ChatMessage,
    ChatRequest,
    Limiter,
    Price,
    PriceTable,
    ProviderConfigError,
    get_provider,
    load_prices,
)
from mastkit.testing import FakeLLMServer, Reply, Usage

from ._helpers import KEY


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("gpt-4o-mini", "gpt-4o-mini"),
        ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),
        ("GPT-4o-Mini", "gpt-4o-mini"),
        ("openai/gpt-4o-mini", "gpt-4o-mini"),
        ("gpt-4o", "gpt-4o"),
        ("gpt-4o-2024-08-06", "gpt-4o"),
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
        ("anthropic/claude-sonnet-4.5", "claude-sonnet-4-5"),
        ("claude-3-5-haiku-latest", "claude-3-5-haiku"),
    ],
)
def test_lookup_normalises_names(name: str, expected: str) -> None:
    assert DEFAULT_PRICES.lookup(name) == DEFAULT_PRICES.lookup(expected) is not None


def test_unknown_model_is_unknown_not_free() -> None:
    assert DEFAULT_PRICES.lookup("llama3:8b") is None
    cost = DEFAULT_PRICES.cost("llama3:8b", 1000, 100)
    assert cost.usd is None and cost.known is False
    assert "gpt-4o" in DEFAULT_PRICES and "my-model" not in DEFAULT_PRICES


def test_cost_formula_with_cache() -> None:
    table = PriceTable({"m": Price(input=2.0, output=10.0, cached_input=0.5, cache_write=2.5)})
    cost = table.cost("m", 1_000_000, 100_000, cached_input_tokens=400_000, cache_write_tokens=100_000)
    assert cost.known
    assert cost.usd == pytest.approx(500_000 * 2e-6 + 400_000 * 0.5e-6 + 100_000 * 2.5e-6 + 100_000 * 10e-6)
    # cached price defaults to the input price; missing usage gives an unknown amount
    assert PriceTable({"m": Price(1.0, 1.0)}).cost("m", 10, 0, cached_input_tokens=5).usd == pytest.approx(
        1e-5
    )
    assert table.cost("m", None, 10) == (None, True)


def test_defaults_are_dated() -> None:
    assert DEFAULT_PRICES.as_of == PRICES_AS_OF
    assert len(PRICES_AS_OF) == 10


def test_load_prices_toml_merges_over_defaults(tmp_path: Path) -> None:
    f = tmp_path / "prices.toml"
    f.write_text(
        'as_of = "2026-01-15"\n'
        '[models."gpt-4o-mini"]\ninput = 0.1\noutput = 0.2\n'
        '[models."llama3:8b"]\ninput = 0.01\noutput = 0.02\ncached_input = 0.0\n'
    )
    table = load_prices(f)
    assert table.as_of == "2026-01-15"
    assert table.lookup("gpt-4o-mini") == Price(0.1, 0.2)
    assert table.lookup("llama3:8b") == Price(0.01, 0.02, cached_input=0.0)
    assert table.lookup("gpt-4o") == DEFAULT_PRICES.lookup("gpt-4o")  # kept
    only = load_prices(f, merge=False)
    assert only.lookup("gpt-4o") is None and len(only) == 2


def test_load_prices_json_flat(tmp_path: Path) -> None:
    f = tmp_path / "p.json"
    f.write_text(json.dumps({"my-model": {"input": 1, "output": 2}}))
    assert load_prices(f).lookup("my-model") == Price(1.0, 2.0)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('[models."m"]\ninput = 1\n', "needs 'output'"),
        ('[models."m"]\ninput = -1\noutput = 1\n', "must be a number >= 0"),
        ('[models."m"]\ninput = 1\noutput = 1\nprompt = 2\n', "unknown keys"),
        ("not = [valid", "not valid"),
    ],
)
def test_load_prices_errors(tmp_path: Path, content: str, message: str) -> None:
    f = tmp_path / "p.toml"
    f.write_text(content)
    with pytest.raises(ProviderConfigError, match=message):
        load_prices(f)


def test_load_prices_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ProviderConfigError, match="cannot read price table"):
        load_prices(tmp_path / "nope.toml")


def test_provider_uses_price_override(tmp_path: Path) -> None:
    f = tmp_path / "p.toml"
    f.write_text('[models."llama3"]\ninput = 1.0\noutput = 1.0\n')
    with FakeLLMServer([Reply("x", usage=Usage(1_000_000, 0))]) as srv:
        provider = get_provider("ollama:llama3", base_url=srv.openai_base_url, prices=str(f))
        resp = asyncio.run(provider.complete(ChatRequest(messages=[ChatMessage(role="user", content="hi")])))
    assert resp.cost_usd == pytest.approx(1.0) and resp.price_known


# -- Budget -----------------------------------------------------------------------------------


def test_budget_reserve_settle() -> None:
    b = Budget(1.0)
    r1 = b.reserve(0.4)
    r2 = b.reserve(0.5)
    assert b.reserved_usd == pytest.approx(0.9) and b.remaining_usd == pytest.approx(0.1)
    with pytest.raises(BudgetExceeded) as info:
        b.reserve(0.2)
    assert info.value.max_usd == 1.0 and info.value.estimate_usd == 0.2
    assert "raise the budget" in str(info.value)
    b.settle(r1, 0.1, input_tokens=100, output_tokens=10)
    b.settle(r1, 5.0)  # second settle of the same reservation: ignored
    assert b.spent_usd == pytest.approx(0.1)
    b.reserve(0.3)  # fits now that r1 settled below its estimate
    b.release(r2)
    s = b.snapshot()
    assert (s.calls, s.input_tokens, s.output_tokens, s.refused) == (1, 100, 10, 1)
    assert s.reserved_usd == pytest.approx(0.3)


def test_budget_unpriced_calls_are_counted() -> None:
    b = Budget(0.0)
    r = b.reserve(None)
    b.settle(r, None, input_tokens=5)
    s = b.snapshot()
    assert s.unpriced_calls == 1 and s.spent_usd == 0.0 and s.input_tokens == 5
    with pytest.raises(BudgetExceeded):
        b.reserve(0.01)


def test_budget_is_safe_under_concurrent_tasks() -> None:
    b = Budget(1.0)

    async def worker() -> int:
        done = 0
        while True:
            try:
                r = b.reserve(0.01)
            except BudgetExceeded:
                return done
            await asyncio.sleep(0)
            b.settle(r, 0.01)
            done += 1

    async def main() -> list[int]:
        return await asyncio.gather(*(worker() for _ in range(20)))

    assert sum(asyncio.run(main())) == 100
    assert b.spent_usd == pytest.approx(1.0)


def test_budget_cap_stops_further_calls() -> None:
    """The caller's loop stops cleanly when the next call would pass the cap; nothing more is sent."""
    usage = Usage(input_tokens=100_000, output_tokens=10_000)  # gpt-4o-mini: $0.021 per call
    with FakeLLMServer(default=Reply("ok", usage=usage)) as srv:
        provider = get_provider("openai:gpt-4o-mini", base_url=srv.openai_base_url, api_key=KEY)
        budget = Budget(0.05)
        prompt = "x" * 400_000  # ~100k tokens by the 4-chars heuristic

        async def run_all() -> tuple[int, list[int]]:
            done, left = 0, []
            for i in range(10):
                estimate = provider.estimate_cost(provider.estimate_tokens(prompt), 10_000)
                try:
                    r = budget.reserve(estimate)
                except BudgetExceeded:
                    left.append(i)
                    continue
                resp = await provider.complete(
                    ChatRequest(messages=[ChatMessage(role="user", content=prompt)])
                )
                budget.settle(
                    r, resp.cost_usd, input_tokens=resp.input_tokens, output_tokens=resp.output_tokens
                )
                done += 1
            return done, left

        done, left = asyncio.run(run_all())
        assert done == 2 and left == list(range(2, 10))
        assert len(srv.chat_requests) == 2
        assert budget.spent_usd == pytest.approx(2 * (100_000 * 0.15 + 10_000 * 0.60) / 1e6)
        assert budget.spent_usd <= 0.05


# -- Limiter ----------------------------------------------------------------------------------


def test_limiter_bounds_concurrency() -> None:
    limiter = Limiter(3)

    async def job() -> None:
        async with limiter:
            assert limiter.in_flight <= 3
            await asyncio.sleep(0.01)

    async def main() -> None:
        await asyncio.gather(*(job() for _ in range(12)))

    asyncio.run(main())
    asyncio.run(main())  # a second event loop works too
    assert limiter.peak == 3 and limiter.in_flight == 0
    with pytest.raises(ValueError):
        Limiter(0)
