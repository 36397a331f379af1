"""Concurrent calls overlap (they are not serialised), and the provider's limit holds."""

from __future__ import annotations

import asyncio
import time

from mastkit.providers import ChatMessage, ChatRequest, get_provider
from mastkit.testing import FakeLLMServer, Reply

LATENCY = 0.3


def _many(n: int, concurrency: int, srv: FakeLLMServer, protocol: str = "openai") -> tuple[float, list[str]]:
    if protocol == "openai":
        provider = get_provider(
            "vllm:m", base_url=srv.openai_base_url, concurrency=concurrency, timeout=10, max_attempts=1
        )
    else:
        provider = get_provider(
            "anthropic:claude-haiku-4-5",
            base_url=srv.anthropic_base_url,
            api_key="k" * 20,
            concurrency=concurrency,
            timeout=10,
            max_attempts=1,
        )

    async def main() -> list[str]:
        reqs = [ChatRequest(messages=[ChatMessage(role="user", content=f"q{i}")]) for i in range(n)]
        resps = await asyncio.gather(*(provider.complete(r) for r in reqs))
        return [r.text for r in resps]

    t0 = time.monotonic()
    texts = asyncio.run(main())
    return time.monotonic() - t0, texts


def test_64_requests_at_concurrency_32_overlap() -> None:
    with FakeLLMServer(
        default=None, handler=lambda req: Reply(req["messages"][0]["content"], delay_s=LATENCY)
    ) as srv:
        _elapsed, texts = _many(64, 32, srv)
        assert texts == [f"q{i}" for i in range(64)]
        # Overlap is shown by the server's in-flight count; wall time is for bench/annotate.py.
        assert 16 <= srv.max_in_flight <= 32


def test_anthropic_calls_overlap_too() -> None:
    with FakeLLMServer(default=Reply("ok", delay_s=LATENCY)) as srv:
        _elapsed, texts = _many(32, 32, srv, protocol="anthropic")
        assert texts == ["ok"] * 32
        assert srv.max_in_flight >= 16


def test_concurrency_limit_is_respected() -> None:
    with FakeLLMServer(default=Reply("ok", delay_s=0.05)) as srv:
        _many(20, 4, srv)
        assert srv.max_in_flight <= 4
