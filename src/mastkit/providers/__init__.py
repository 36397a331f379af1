"""Chat-model providers: one interface over OpenAI-compatible servers and Anthropic, with
retries, timeouts, concurrency limits, prices, a budget and secret redaction.

::

    from mastkit.providers import ChatMessage, ChatRequest, get_provider, run_sync

    provider = get_provider("openai:gpt-4o-mini")          # OPENAI_API_KEY from the environment
    resp = run_sync(provider.complete(ChatRequest(messages=[ChatMessage(role="user", content="hi")])))
    resp.text, resp.input_tokens, resp.cost_usd, resp.attempts, resp.redactions

This layer knows nothing about traces or taxonomies. See docs/providers.md. The provider
classes and ``get_provider`` load the HTTP SDKs, so they are imported on first use: code that
only needs the request types, errors, prices or the redactor starts without them.
"""

import importlib
from typing import TYPE_CHECKING, Any

from mastkit.providers.base import (
    CHARS_PER_TOKEN,
    CONTEXT_WINDOWS,
    BaseProvider,
    Provider,
    context_window_for,
    estimate_tokens,
    prompt_hash,
)
from mastkit.providers.budget import Budget, BudgetSnapshot, Limiter, Reservation
from mastkit.providers.errors import (
    BudgetExceeded,
    ProviderAuthError,
    ProviderConfigError,
    ProviderError,
    ProviderRequestError,
    ProviderResponseError,
    ProviderUnavailableError,
    UnknownPriceError,
)
from mastkit.providers.prices import DEFAULT_PRICES, PRICES_AS_OF, Cost, Price, PriceTable, load_prices
from mastkit.providers.pricing import PriceInfo, price_info, require_price, set_price
from mastkit.providers.redact import Redacted, Redactor, redact
from mastkit.providers.retry import RetryPolicy, parse_retry_after
from mastkit.providers.sync import run_sync
from mastkit.providers.types import CallRecord, ChatMessage, ChatRequest, ChatResponse

if TYPE_CHECKING:
    from mastkit.providers.anthropic_native import AnthropicProvider
    from mastkit.providers.openai_compat import OpenAIProvider
    from mastkit.providers.registry import PROVIDERS, get_provider

__all__ = [
    "CHARS_PER_TOKEN",
    "CONTEXT_WINDOWS",
    "DEFAULT_PRICES",
    "PRICES_AS_OF",
    "PROVIDERS",
    "AnthropicProvider",
    "BaseProvider",
    "Budget",
    "BudgetExceeded",
    "BudgetSnapshot",
    "CallRecord",
    "ChatMessage",
    "ChatRequest",
    "ChatResponse",
    "Cost",
    "Limiter",
    "OpenAIProvider",
    "Price",
    "PriceInfo",
    "PriceTable",
    "Provider",
    "ProviderAuthError",
    "ProviderConfigError",
    "ProviderError",
    "ProviderRequestError",
    "ProviderResponseError",
    "ProviderUnavailableError",
    "Redacted",
    "Redactor",
    "Reservation",
    "RetryPolicy",
    "UnknownPriceError",
    "context_window_for",
    "estimate_tokens",
    "get_provider",
    "load_prices",
    "parse_retry_after",
    "price_info",
    "prompt_hash",
    "redact",
    "require_price",
    "run_sync",
    "set_price",
]

_LAZY = {
    "AnthropicProvider": "anthropic_native",
    "OpenAIProvider": "openai_compat",
    "PROVIDERS": "registry",
    "get_provider": "registry",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f"mastkit.providers.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
