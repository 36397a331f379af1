"""``get_provider("provider:model")``: a ready provider from a spec string.

==============  ====================  =================================  =============================
provider        protocol              default base URL                   API key (first set)
==============  ====================  =================================  =============================
openai          OpenAI                ``OPENAI_BASE_URL`` or             ``OPENAI_API_KEY``,
                                      https://api.openai.com/v1          ``MASTKIT_API_KEY``
anthropic       Anthropic             ``ANTHROPIC_BASE_URL`` or          ``ANTHROPIC_API_KEY``,
                                      https://api.anthropic.com          ``MASTKIT_API_KEY``
openrouter      OpenAI                https://openrouter.ai/api/v1       ``OPENROUTER_API_KEY``,
                                                                         ``MASTKIT_API_KEY``
ollama          OpenAI                http://localhost:11434/v1          none needed
                                      (``OLLAMA_HOST`` respected)        (``MASTKIT_API_KEY``)
vllm            OpenAI                http://localhost:8000/v1           ``VLLM_API_KEY``, ``MASTKIT_API_KEY``
lmstudio        OpenAI                http://localhost:1234/v1           none needed
llamacpp        OpenAI                http://localhost:8080/v1           none needed
==============  ====================  =================================  =============================

Local servers (ollama, vllm, lmstudio, llamacpp) never read ``OPENAI_API_KEY`` (your
OpenAI key is not sent to them) and are treated as free: calls cost $0 unless the price
table names the model. ``base_url=`` overrides every default.
"""

from __future__ import annotations

import inspect
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from mastkit.providers.base import BaseProvider, context_window_for
from mastkit.providers.errors import ProviderConfigError
from mastkit.providers.openai_compat import OpenAIProvider
from mastkit.providers.prices import PriceTable, load_prices

__all__ = ["PROVIDERS", "get_provider"]


@dataclass(frozen=True)
class _Preset:
    protocol: str
    base_url: str | None
    key_env: tuple[str, ...]
    free: bool = False
    context_window: int | None = None


def _ollama_url() -> str:
    host = os.environ.get("OLLAMA_HOST", "").strip()
    if not host:
        return "http://localhost:11434/v1"
    parts = urlsplit(host if "://" in host else "http://" + host)
    hostname = parts.hostname or "localhost"
    if hostname == "0.0.0.0":  # a listen address: connect to loopback
        hostname = "127.0.0.1"
    return f"{parts.scheme}://{hostname}:{parts.port or 11434}/v1"


PROVIDERS: dict[str, _Preset] = {
    "openai": _Preset("openai", None, ("OPENAI_API_KEY", "MASTKIT_API_KEY")),
    "anthropic": _Preset("anthropic", None, ("ANTHROPIC_API_KEY", "MASTKIT_API_KEY")),
    "openrouter": _Preset(
        "openai", "https://openrouter.ai/api/v1", ("OPENROUTER_API_KEY", "MASTKIT_API_KEY")
    ),
    "ollama": _Preset("openai", "ollama", ("MASTKIT_API_KEY",), free=True, context_window=8_192),
    "vllm": _Preset("openai", "http://localhost:8000/v1", ("VLLM_API_KEY", "MASTKIT_API_KEY"), True, 8_192),
    "lmstudio": _Preset("openai", "http://localhost:1234/v1", ("MASTKIT_API_KEY",), True, 8_192),
    "llamacpp": _Preset("openai", "http://localhost:8080/v1", ("MASTKIT_API_KEY",), True, 8_192),
}
"""Known provider names and their defaults."""

_ALIASES = {"llama.cpp": "llamacpp", "llama-cpp": "llamacpp", "lm-studio": "lmstudio", "claude": "anthropic"}


def _options_of(cls: type[BaseProvider]) -> set[str]:
    names: set[str] = set()
    for klass in (cls, BaseProvider):
        names |= {
            p.name
            for p in inspect.signature(klass.__init__).parameters.values()
            if p.kind is inspect.Parameter.KEYWORD_ONLY
        }
    return names


def get_provider(
    spec: str,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    **opts: Any,
) -> BaseProvider:
    """A provider for ``spec`` = ``"provider:model"``.

    Examples: ``openai:gpt-4o-mini``, ``anthropic:claude-sonnet-4-5``, ``ollama:llama3``,
    ``ollama:qwen2.5:7b`` (everything after the first ``:`` is the model),
    ``vllm:meta-llama/Llama-3.1-8B-Instruct``, ``openrouter:openai/gpt-4o-mini``,
    ``lmstudio:qwen2.5-7b-instruct``.

    Args:
        spec: ``provider:model``; providers are listed in :data:`PROVIDERS`.
        base_url: endpoint override (self-hosted servers, proxies, the fake test server).
        api_key: the key; default from the environment (module docstring). Never logged.
        **opts: provider options — ``timeout``, ``retry``, ``max_attempts``,
            ``concurrency``, ``redact``, ``redactor``, ``prices`` (a :class:`PriceTable`
            or a path for :func:`load_prices`), ``context_window``, ``on_call``,
            ``json_mode``, ``extra_headers``, ``extra_body``...

    Raises:
        ProviderConfigError: malformed spec, unknown provider or unknown option.
        ProviderAuthError: an official API and no key in the arguments or environment.
        MissingDependencyError: ``anthropic`` without the ``mastkit[anthropic]`` extra.
    """
    known = ", ".join(PROVIDERS)
    if ":" not in spec:
        raise ProviderConfigError(
            f"model spec {spec!r} must be provider:model (e.g. openai:gpt-4o-mini); providers: {known}"
        )
    name, model = spec.split(":", 1)
    name = _ALIASES.get(name.strip().lower(), name.strip().lower())
    model = model.strip()
    preset = PROVIDERS.get(name)
    if preset is None:
        raise ProviderConfigError(
            f"unknown provider {name!r} in {spec!r}; known providers: {known}", provider=name
        )
    if not model:
        raise ProviderConfigError(f"no model name in {spec!r} (e.g. {name}:<model>)", provider=name)

    prices = opts.get("prices")
    if isinstance(prices, str | Path):
        opts["prices"] = load_prices(prices)
    elif prices is not None and not isinstance(prices, PriceTable):
        raise ProviderConfigError(f"prices must be a PriceTable or a file path, got {type(prices).__name__}")

    cls: type[BaseProvider]
    if preset.protocol == "anthropic":
        from mastkit.providers.anthropic_native import AnthropicProvider

        cls = AnthropicProvider
    else:
        cls = OpenAIProvider
    allowed = _options_of(cls) - {"name", "model"}
    unknown = sorted(set(opts) - allowed)
    if unknown:
        raise ProviderConfigError(
            f"unknown option(s) {', '.join(unknown)} for {name}; allowed: {', '.join(sorted(allowed))}",
            provider=name,
        )
    kwargs: dict[str, Any] = {"name": name, "key_env": preset.key_env}
    if preset.protocol == "openai" and name != "openai":
        default_url = _ollama_url() if preset.base_url == "ollama" else preset.base_url
        kwargs["base_url"] = base_url or default_url
        # only the provider's own hosted API requires a key
        kwargs["key_required"] = name == "openrouter" and "openrouter.ai" in str(kwargs["base_url"])
    else:
        kwargs["base_url"] = base_url
    if preset.free:
        kwargs["free"] = True
    if preset.context_window is not None and opts.get("context_window") is None:
        # unknown local models get a conservative window; known ones their real size
        kwargs["context_window"] = context_window_for(model, preset.context_window)
    kwargs.update({k: v for k, v in opts.items() if not (k == "context_window" and v is None)})
    return cls(model, api_key=api_key, **kwargs)
