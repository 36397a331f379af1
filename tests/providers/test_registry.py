"""get_provider specs and presets, API-key resolution, context windows, run_sync."""

from __future__ import annotations

import asyncio

import pytest

from mastkit.providers import (
    PROVIDERS,
    AnthropicProvider,
    ChatMessage,
    ChatRequest,
    OpenAIProvider,
    Provider,
    ProviderAuthError,
    ProviderConfigError,
    context_window_for,
    estimate_tokens,
    get_provider,
    run_sync,
)
from mastkit.testing import FakeLLMServer

from ._helpers import KEY


@pytest.mark.parametrize(
    ("spec", "name", "model", "base_url"),
    [
        ("ollama:llama3", "ollama", "llama3", "http://localhost:11434/v1"),
        ("ollama:qwen2.5:7b", "ollama", "qwen2.5:7b", "http://localhost:11434/v1"),
        (
            "vllm:meta-llama/Llama-3.1-8B-Instruct",
            "vllm",
            "meta-llama/Llama-3.1-8B-Instruct",
            "http://localhost:8000/v1",
        ),
        ("lmstudio:qwen2.5-7b-instruct", "lmstudio", "qwen2.5-7b-instruct", "http://localhost:1234/v1"),
        ("llama.cpp:any", "llamacpp", "any", "http://localhost:8080/v1"),
        ("Ollama: llama3 ", "ollama", "llama3", "http://localhost:11434/v1"),
    ],
)
def test_local_presets(spec: str, name: str, model: str, base_url: str) -> None:
    p = get_provider(spec)
    assert isinstance(p, OpenAIProvider) and isinstance(p, Provider)
    assert (p.name, p.model, p.base_url) == (name, model, base_url)
    assert p.free and p.spec == f"{name}:{model}"


def test_hosted_presets_need_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for spec, var in [
        ("openai:gpt-4o-mini", "OPENAI_API_KEY"),
        ("openrouter:openai/gpt-4o-mini", "OPENROUTER_API_KEY"),
        ("anthropic:claude-haiku-4-5", "ANTHROPIC_API_KEY"),
    ]:
        with pytest.raises(ProviderAuthError, match=var) as info:
            get_provider(spec)
        assert "MASTKIT_API_KEY" in str(info.value)
    monkeypatch.setenv("OPENROUTER_API_KEY", "or-key-0123456789")
    p = get_provider("openrouter:openai/gpt-4o-mini")
    assert p.base_url == "https://openrouter.ai/api/v1" and p.model == "openai/gpt-4o-mini"
    # OpenRouter prices come from the table under the vendor-less name
    assert p.estimate_cost(1_000_000, 0) == pytest.approx(0.15)
    monkeypatch.setenv("MASTKIT_API_KEY", "generic-key-0123456789")
    assert get_provider("openai:gpt-4o").base_url == "https://api.openai.com/v1"


def test_openai_base_url_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://proxy.internal:4000/v1/")
    p = get_provider("openai:gpt-4o-mini")  # a non-official URL: no key required
    assert p.base_url == "http://proxy.internal:4000/v1"


def test_ollama_host_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLLAMA_HOST", "0.0.0.0:11500")
    assert get_provider("ollama:llama3").base_url == "http://127.0.0.1:11500/v1"
    monkeypatch.setenv("OLLAMA_HOST", "https://gpu-box")
    assert get_provider("ollama:llama3").base_url == "https://gpu-box:11434/v1"


def test_local_servers_do_not_get_the_openai_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with FakeLLMServer(default=None, handler=lambda _r: "ok") as srv:
        p = get_provider("ollama:llama3", base_url=srv.openai_base_url)
        asyncio.run(p.complete(ChatRequest(messages=[ChatMessage(role="user", content="hi")])))
        assert srv.chat_requests[0].headers["authorization"] == "Bearer not-needed"
        # the generic variable is used when set
        monkeypatch.setenv("MASTKIT_API_KEY", "local-key-123456789")
        p = get_provider("ollama:llama3", base_url=srv.openai_base_url)
        asyncio.run(p.complete(ChatRequest(messages=[ChatMessage(role="user", content="hi")])))
        assert srv.chat_requests[1].headers["authorization"] == "Bearer local-key-123456789"


def test_anthropic_spec() -> None:
    p = get_provider("anthropic:claude-haiku-4-5", api_key="k" * 20)
    assert isinstance(p, AnthropicProvider)
    assert p.base_url == "https://api.anthropic.com" and p.context_window == 200_000


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("gpt-4o-mini", "must be provider:model"),
        ("azure:gpt-4o", "unknown provider 'azure'"),
        ("openai:", "no model name"),
    ],
)
def test_bad_specs(spec: str, message: str) -> None:
    with pytest.raises(ProviderConfigError, match=message) as info:
        get_provider(spec, api_key="x")
    if "provider" in message:
        for known in PROVIDERS:
            assert known in str(info.value)


def test_unknown_option_is_reported() -> None:
    with pytest.raises(ProviderConfigError, match=r"unknown option.*temprature"):
        get_provider("ollama:llama3", temprature=0.3)
    with pytest.raises(ProviderConfigError, match="json_mode"):
        get_provider("ollama:llama3", json_mode="xml")
    with pytest.raises(ProviderConfigError, match="prices must be"):
        get_provider("ollama:llama3", prices=42)


def test_options_pass_through() -> None:
    p = get_provider(
        "vllm:m", concurrency=3, timeout=9, max_attempts=2, context_window=32_000, json_mode="none"
    )
    assert isinstance(p, OpenAIProvider)
    assert (p.concurrency, p.timeout, p.retry.max_attempts, p.context_window, p.json_mode) == (
        3,
        9.0,
        2,
        32_000,
        "none",
    )


@pytest.mark.parametrize(
    ("model", "default", "expected"),
    [
        ("gpt-4o-mini", 1, 128_000),
        ("gpt-4o-mini-2024-07-18", 1, 128_000),
        ("gpt-4.1", 1, 1_047_576),
        ("claude-haiku-4-5", 1, 200_000),
        ("llama3", 1, 8_192),
        ("llama3.1:8b", 1, 131_072),
        ("qwen2.5-coder:7b", 1, 32_768),
        ("mystery", 4096, 4096),
    ],
)
def test_context_windows(model: str, default: int, expected: int) -> None:
    assert context_window_for(model, default) == expected


def test_context_window_defaults_per_preset() -> None:
    assert get_provider("ollama:mystery").context_window == 8_192
    assert get_provider("openai:mystery", base_url="http://x/v1").context_window == 128_000
    assert get_provider("ollama:llama3.1").context_window == 131_072


def test_estimate_tokens_is_chars_over_four() -> None:
    assert estimate_tokens("") == 1
    assert estimate_tokens("x" * 400) == 101
    assert get_provider("ollama:llama3").estimate_tokens("abcd" * 10) == 11


def test_run_sync_outside_and_inside_a_loop() -> None:
    async def value() -> int:
        await asyncio.sleep(0)
        return 42

    assert run_sync(value()) == 42

    async def inside() -> int:
        return run_sync(value())  # would fail with asyncio.run()

    assert asyncio.run(inside()) == 42

    async def boom() -> None:
        raise KeyError("x")

    with pytest.raises(KeyError):
        run_sync(boom())
