"""Fixtures for provider tests: a clean environment (no real keys or base URLs leak in)
and a recording, instant ``sleep`` for the retry loop."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from mastkit.testing import FakeLLMServer, Reply

from ._helpers import Sleeps

_ENV = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "OPENROUTER_API_KEY",
    "VLLM_API_KEY",
    "MASTKIT_API_KEY",
    "OLLAMA_HOST",
    "OPENAI_ORG_ID",
    "OPENAI_PROJECT_ID",
)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in _ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    """A running fake server: scripted replies first, then "OK"."""
    with FakeLLMServer(default=Reply("OK")) as srv:
        yield srv
