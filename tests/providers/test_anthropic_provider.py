"""AnthropicProvider: the real anthropic SDK against the real loopback FakeLLMServer."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import pytest

from mastkit.errors import MissingDependencyError
from mastkit.providers import (
    AnthropicProvider,
    ChatMessage,
    ChatRequest,
    ProviderAuthError,
    ProviderUnavailableError,
    get_provider,
)
from mastkit.testing import FakeLLMServer, Reply, Usage

from ._helpers import KEY, Sleeps

SCHEMA = {"type": "object", "properties": {"verdict": {"type": "string"}}, "required": ["verdict"]}


def make(server: FakeLLMServer, sleeps: Sleeps | None = None, **kw: Any) -> AnthropicProvider:
    kw.setdefault("api_key", KEY)
    kw.setdefault("timeout", 5.0)
    provider = get_provider(
        "anthropic:claude-haiku-4-5", base_url=server.anthropic_base_url, sleep=sleeps, **kw
    )
    assert isinstance(provider, AnthropicProvider)
    return provider


def req(*messages: tuple[str, str], **kw: Any) -> ChatRequest:
    msgs = messages or (("system", "You are a judge."), ("user", "hello"))
    return ChatRequest(messages=[ChatMessage(role=r, content=c) for r, c in msgs], **kw)


def sent_key(headers: dict[str, str]) -> str | None:
    """The key as the SDK sent it (``x-api-key``, or ``Authorization: Bearer`` in SDK 2.x)."""
    if "x-api-key" in headers:
        return headers["x-api-key"]
    auth = headers.get("authorization", "")
    return auth.removeprefix("Bearer ") if auth.startswith("Bearer ") else None


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def test_success_text_usage_cost(server: FakeLLMServer) -> None:
    server.push(Reply("bonjour", usage=Usage(input_tokens=2000, output_tokens=100, cached_input_tokens=500)))
    resp = run(make(server).complete(req(max_tokens=64)))
    assert resp.text == "bonjour" and resp.provider == "anthropic"
    # input tokens are normalised to include cache reads
    assert (resp.input_tokens, resp.output_tokens, resp.cached_input_tokens) == (2000, 100, 500)
    # claude-haiku-4-5: 1.00 in, 0.10 cache read, 5.00 out per million
    assert resp.cost_usd == pytest.approx((1500 * 1.0 + 500 * 0.10 + 100 * 5.0) / 1e6)
    assert resp.finish_reason == "stop" and resp.request_id == "req_fake_1"
    assert resp.raw["type"] == "message"
    sent = server.chat_requests[0]
    assert sent.path == "/v1/messages"
    assert sent_key(sent.headers) == KEY
    assert sent.json["system"] == "You are a judge."
    assert sent.json["messages"] == [{"role": "user", "content": "hello"}]
    assert sent.json["max_tokens"] == 64
    assert "temperature" not in sent.json and "seed" not in sent.json


def test_default_max_tokens_and_message_mapping(server: FakeLLMServer) -> None:
    run(
        make(server).complete(
            req(("system", "a"), ("system", "b"), ("assistant", "earlier"), ("user", "u1"), ("user", "u2"))
        )
    )
    body = server.chat_requests[0].json
    assert body["max_tokens"] == 4096
    assert body["system"] == "a\n\nb"
    # a conversation must start with a user turn; consecutive turns of one role are joined
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    assert body["messages"][2]["content"] == "u1\n\nu2"


def test_send_temperature_opt_in(server: FakeLLMServer) -> None:
    run(make(server, send_temperature=True).complete(req(temperature=1.7)))
    assert server.chat_requests[0].json["temperature"] == 1.0


def test_structured_output_forced_tool(server: FakeLLMServer) -> None:
    server.push(Reply('{"verdict": "absent"}'))
    resp = run(make(server).complete(req(json_schema=SCHEMA, schema_name="failure vector")))
    assert json.loads(resp.text) == {"verdict": "absent"}
    assert resp.finish_reason == "stop"
    body = server.chat_requests[0].json
    assert body["tools"][0]["name"] == "failure_vector"
    assert body["tools"][0]["input_schema"] == SCHEMA
    assert body["tool_choice"] == {"type": "tool", "name": "failure_vector"}
    assert resp.raw["content"][0]["type"] == "tool_use"


def test_forced_tool_with_text_reply_passes_text_through(server: FakeLLMServer) -> None:
    server.push(Reply("not json at all"))
    resp = run(make(server).complete(req(json_schema=SCHEMA)))
    assert resp.text == "not json at all"


def test_structured_output_native_json_schema(server: FakeLLMServer) -> None:
    server.push(Reply('{"verdict": "present"}'))
    resp = run(make(server, json_mode="json_schema").complete(req(json_schema=SCHEMA)))
    assert json.loads(resp.text) == {"verdict": "present"}
    body = server.chat_requests[0].json
    assert body["output_config"] == {"format": {"type": "json_schema", "schema": SCHEMA}}
    assert "tools" not in body


def test_structured_output_prompt_mode(server: FakeLLMServer) -> None:
    run(make(server, json_mode="prompt").complete(req(json_schema=SCHEMA)))
    body = server.chat_requests[0].json
    assert "tools" not in body and "output_config" not in body
    assert body["system"].startswith("You are a judge.") and json.dumps(SCHEMA) in body["system"]


def test_429_and_529_are_retried(server: FakeLLMServer, sleeps: Sleeps) -> None:
    server.push(Reply.rate_limited(retry_after=2), Reply.error(529, "Overloaded"), Reply("ok"))
    resp = run(make(server, sleeps).complete(req()))
    assert resp.text == "ok" and resp.attempts == 3
    assert sleeps.waits[0] == 2.0 and len(sleeps.waits) == 2


def test_persistent_overload_gives_up(server: FakeLLMServer, sleeps: Sleeps) -> None:
    server.default = Reply.error(529, "Overloaded")
    with pytest.raises(ProviderUnavailableError) as info:
        run(make(server, sleeps, max_attempts=3).complete(req()))
    assert info.value.attempts == 3 and info.value.status == 529
    assert len(server.chat_requests) == 3


def test_401_names_the_env_var(server: FakeLLMServer, sleeps: Sleeps) -> None:
    server.push(Reply.error(401, "invalid x-api-key"))
    with pytest.raises(ProviderAuthError) as info:
        run(make(server, sleeps).complete(req()))
    assert "ANTHROPIC_API_KEY" in str(info.value) and info.value.attempts == 1
    assert KEY not in str(info.value)


def test_timeout_then_success(server: FakeLLMServer, sleeps: Sleeps) -> None:
    server.push(Reply.timeout(3.0), Reply("late but fine"))
    resp = run(make(server, sleeps, timeout=0.3).complete(req()))
    assert resp.text == "late but fine" and resp.attempts == 2


def test_official_api_requires_a_key() -> None:
    with pytest.raises(ProviderAuthError, match="ANTHROPIC_API_KEY"):
        get_provider("anthropic:claude-sonnet-4-5")


def test_key_from_environment(server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "env-key-abcdef123456")
    run(get_provider("anthropic:claude-haiku-4-5", base_url=server.anthropic_base_url).complete(req()))
    assert sent_key(server.chat_requests[0].headers) == "env-key-abcdef123456"


def test_missing_sdk_raises_missing_dependency(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "anthropic", None)  # makes `import anthropic` fail
    with pytest.raises(MissingDependencyError, match=r"mastkit\[anthropic\]"):
        get_provider("anthropic:claude-haiku-4-5", api_key="x")
