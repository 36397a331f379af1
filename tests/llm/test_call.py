"""One model call through :func:`mastkit.llm.call.cached_call`: the cache key, the cache, the check
of each reply, the budget reservation, the usage and the call log, against FakeLLMServer."""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path
from typing import Any

import pytest

from conftest import call_rows
from mastkit.llm.call import CallUsage, cached_call
from mastkit.providers import Budget, BudgetExceeded, ChatMessage, ChatRequest, get_provider, prompt_hash
from mastkit.providers.pricing import set_price
from mastkit.store import Store
from mastkit.testing import FakeLLMServer, Reply

_REQ = ChatRequest(messages=[ChatMessage(role="user", content="x" * 400)], max_tokens=1003)


def _provider(srv: FakeLLMServer) -> Any:
    provider = get_provider("openai:m", base_url=srv.openai_base_url, api_key="k", max_attempts=1)
    set_price(provider, price_in=1.0, price_out=2.0)  # USD per million tokens
    return provider


def _call(provider: Any, store: Store | None = None, **kw: Any) -> str:
    kw.setdefault("budget", None)
    return asyncio.run(cached_call(provider, _REQ, cache=store, trace_id="t", config_hash="c", **kw))


def _usable(text: str) -> bool:
    return not text.startswith("bad")


def test_the_cache_key_mixes_in_the_prompt_version(tmp_path: Path) -> None:
    with Store(tmp_path / "m.db") as store, FakeLLMServer(["a", "b"]) as srv:
        provider = _provider(srv)
        _call(provider, store, version="v7")
        _call(provider, store)
        plain = prompt_hash("openai", "m", _REQ.messages, _REQ)
        versioned = "p1:" + hashlib.sha256(f"v7\n{plain}".encode()).hexdigest()[:40]
        assert [r["request_hash"] for r in call_rows(store)] == [versioned, plain]


def test_a_cached_reply_is_served_and_logged_without_a_request(tmp_path: Path) -> None:
    with Store(tmp_path / "m.db") as store, FakeLLMServer(["first"]) as srv:
        provider = _provider(srv)
        usage = CallUsage()
        assert _call(provider, store, usage=usage) == "first"
        assert _call(provider, store, usage=usage) == "first"
        assert srv.request_count == 1
        ok, hit = call_rows(store)
    assert (usage.calls, usage.input_tokens, usage.output_tokens) == (
        1,
        ok["input_tokens"],
        ok["output_tokens"],
    )
    assert usage.input_tokens > 0 and usage.output_tokens > 0
    assert usage.cost_usd == pytest.approx((usage.input_tokens * 1.0 + usage.output_tokens * 2.0) / 1e6)
    assert hit == {**hit, "model": "m", "cached": 1, "input_tokens": 0, "status": "ok", "trace_id": "t"}
    assert ok == {**ok, "provider": "openai", "config_hash": "c", "cached": 0, "attempts": 1, "error": None}


def test_an_unusable_reply_is_returned_but_never_stored_or_served(tmp_path: Path) -> None:
    with Store(tmp_path / "m.db") as store, FakeLLMServer(["bad one", "good"]) as srv:
        provider = _provider(srv)
        assert _call(provider, store, accept=_usable) == "bad one"
        assert store._query("SELECT COUNT(*) FROM responses")[0][0] == 0
        assert _call(provider, store, accept=_usable) == "good"
        assert srv.request_count == 2
        # a stored reply the caller cannot use is asked again
        key = call_rows(store)[0]["request_hash"]
        store.put_response(key, "bad cached", model="m", input_tokens=1, output_tokens=1, cost_usd=0.0)
    with Store(tmp_path / "m.db") as store, FakeLLMServer(["fresh"]) as srv:
        assert _call(_provider(srv), store, accept=_usable) == "fresh"
        assert srv.request_count == 1


def test_the_budget_reserves_the_prompt_and_a_quarter_of_the_output_cap() -> None:
    with FakeLLMServer(["ok", "ok"]) as srv:
        provider = _provider(srv)
        # 400 characters: 101 tokens in; a quarter of the 1003 output cap (whole tokens) out
        estimate = provider.estimate_cost(101, 250)
        assert estimate == pytest.approx((101 * 1.0 + 250 * 2.0) / 1e6)
        with pytest.raises(BudgetExceeded):
            _call(provider, budget=Budget(max_usd=estimate * 0.99))
        assert srv.request_count == 0
        budget = Budget(max_usd=estimate * 1.0001)
        _call(provider, budget=budget)
        assert srv.request_count == 1
        assert budget.reserved_usd == 0 and budget.spent_usd > 0
        snap = budget.snapshot()
        assert snap.input_tokens > 0 and snap.output_tokens > 0  # the real counts replace the guess


def test_a_provider_failure_releases_the_reservation_and_is_logged(tmp_path: Path) -> None:
    with Store(tmp_path / "m.db") as store, FakeLLMServer([Reply.error(400, "no such model")]) as srv:
        budget = Budget(max_usd=1.0)
        usage = CallUsage()
        with pytest.raises(Exception) as info:
            _call(_provider(srv), store, budget=budget, usage=usage)
        assert budget.reserved_usd == 0 and budget.spent_usd == 0
        assert usage == CallUsage()
        (row,) = call_rows(store)
    assert row["status"] == "error" and row["cached"] == 0 and row["model"] == "m"
    assert row["error"] == f"{type(info.value).__name__}: {info.value}"[:500]
    assert 0 <= row["latency_s"] < 60


def test_an_exception_that_does_not_count_attempts_is_logged_as_one_attempt(tmp_path: Path) -> None:
    class Broken:
        """A provider whose client fails before any retry logic (no ``attempts`` on the error)."""

        name, model = "broken", "b"

        def estimate_tokens(self, text: str) -> int:
            return 1

        def estimate_cost(self, input_tokens: int, output_tokens: int) -> float | None:
            return None

        async def complete(self, req: ChatRequest) -> Any:
            raise RuntimeError("boom" * 200)

    with Store(tmp_path / "m.db") as store:
        with pytest.raises(RuntimeError):
            _call(Broken(), store)
        (row,) = call_rows(store)
    assert (row["attempts"], row["error"], row["status"]) == (
        1,
        ("RuntimeError: " + "boom" * 200)[:500],
        "error",
    )
