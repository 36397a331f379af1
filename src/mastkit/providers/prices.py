"""Model prices and call cost.

The default table holds list prices in USD per million tokens for a handful of common
models, **as of** :data:`PRICES_AS_OF`. Vendors change prices: check them, and override
with :func:`load_prices` (a TOML or JSON file, merged over the defaults)::

    # prices.toml
    as_of = "2026-01-15"
    [models."gpt-4o-mini"]
    input = 0.15          # USD per 1M prompt tokens
    cached_input = 0.075  # USD per 1M prompt tokens served from the prompt cache
    output = 0.60         # USD per 1M completion tokens

A model that is not in the table has an **unknown** cost: :meth:`PriceTable.cost` returns
``usd=None, known=False`` — never a silent 0. Model names are matched exactly, then
case-insensitively, without a ``vendor/`` prefix (OpenRouter style), and without a date or
``-latest`` suffix (``gpt-4o-mini-2024-07-18`` and ``claude-sonnet-4-5-20250929`` use the
prices of ``gpt-4o-mini`` and ``claude-sonnet-4-5``).
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from mastkit.providers.errors import ProviderConfigError

__all__ = ["DEFAULT_PRICES", "PRICES_AS_OF", "Cost", "Price", "PriceTable", "load_prices"]

PRICES_AS_OF = "2025-11-01"
"""Date the default prices were copied from the vendors' price pages."""


@dataclass(frozen=True)
class Price:
    """USD per million tokens."""

    input: float
    """Prompt tokens."""
    output: float
    """Completion tokens."""
    cached_input: float | None = None
    """Prompt tokens read from the provider's prompt cache (None: same as ``input``)."""
    cache_write: float | None = None
    """Prompt tokens written to the cache (Anthropic; None: same as ``input``)."""


class Cost(NamedTuple):
    """The cost of one call."""

    usd: float | None
    """None when the model's price (or the usage) is unknown."""
    known: bool
    """Whether the model was in the price table."""


_SUFFIX = re.compile(r"-(?:\d{4}-\d{2}-\d{2}|\d{8}|\d{4}|latest|preview)$")


def model_names(model: str) -> list[str]:
    """Names to try, most specific first, when looking ``model`` up in a table."""
    names = [model, model.lower()]
    base = model.lower()
    if "/" in base:  # OpenRouter "openai/gpt-4o-mini"
        base = base.rsplit("/", 1)[1]
    names.append(base)
    if ":" in base:  # "openai:gpt-4o" (a spec) or "llama3:8b" (an Ollama tag)
        head, tail = base.split(":", 1)
        names += [tail, head]
    for name in list(names[2:]):
        if "." in name and name.startswith("claude"):  # OpenRouter "claude-sonnet-4.5"
            names.append(name.replace(".", "-"))
    for name in list(names[2:]):
        stripped = name
        while True:
            shorter = _SUFFIX.sub("", stripped)
            if shorter == stripped:
                break
            stripped = shorter
            names.append(stripped)
    seen: set[str] = set()
    return [n for n in names if not (n in seen or seen.add(n))]  # type: ignore[func-returns-value]


class PriceTable:
    """Prices by model name. Immutable; :meth:`merged` returns a new table."""

    def __init__(
        self, prices: Mapping[str, Price], *, as_of: str | None = None, assumed: Iterable[str] = ()
    ) -> None:
        self._prices = dict(prices)
        self.as_of = as_of
        self._assumed = frozenset(assumed) & set(self._prices)

    def __len__(self) -> int:
        return len(self._prices)

    def __contains__(self, model: object) -> bool:
        return isinstance(model, str) and self.lookup(model) is not None

    def __repr__(self) -> str:
        return f"PriceTable({len(self._prices)} models, as_of={self.as_of!r})"

    @property
    def models(self) -> list[str]:
        """The model names in the table."""
        return sorted(self._prices)

    def lookup(self, model: str) -> Price | None:
        """The price of ``model`` (see the module docs for how names are matched), or None."""
        for name in model_names(model):
            price = self._prices.get(name)
            if price is not None:
                return price
        return None

    def merged(self, overrides: PriceTable | Mapping[str, Price]) -> PriceTable:
        """A table with ``overrides`` replacing or adding entries."""
        other = overrides if isinstance(overrides, PriceTable) else PriceTable(overrides)
        as_of = other.as_of or self.as_of
        assumed = (self._assumed - set(other._prices)) | other._assumed
        return PriceTable({**self._prices, **other._prices}, as_of=as_of, assumed=assumed)

    def with_assumed(self, model: str, usd_per_million: float) -> PriceTable:
        """A table where ``model`` costs ``usd_per_million`` for input and output tokens alike,
        marked as an assumption (an upper bound the user chose), not a list price."""
        if usd_per_million < 0:
            raise ProviderConfigError(
                f"an assumed price must be >= 0 USD per million tokens, got {usd_per_million}"
            )
        price = Price(input=float(usd_per_million), output=float(usd_per_million))
        return self.merged(PriceTable({model: price}, assumed=[model]))

    def is_assumed(self, model: str) -> bool:
        """Whether the price :meth:`lookup` finds for ``model`` is an assumed upper bound."""
        for name in model_names(model):
            if name in self._prices:
                return name in self._assumed
        return False

    def cost(
        self,
        model: str,
        input_tokens: int | None,
        output_tokens: int | None,
        *,
        cached_input_tokens: int = 0,
        cache_write_tokens: int = 0,
    ) -> Cost:
        """Cost of a call. ``input_tokens`` includes cached and cache-write tokens."""
        price = self.lookup(model)
        if price is None:
            return Cost(None, False)
        if input_tokens is None or output_tokens is None:
            return Cost(None, True)
        cached = max(0, min(cached_input_tokens, input_tokens))
        written = max(0, min(cache_write_tokens, input_tokens - cached))
        fresh = input_tokens - cached - written
        usd = (
            fresh * price.input
            + cached * (price.cached_input if price.cached_input is not None else price.input)
            + written * (price.cache_write if price.cache_write is not None else price.input)
            + output_tokens * price.output
        ) / 1_000_000
        return Cost(round(usd, 10), True)


def _p(inp: float, cached: float, out: float, write: float | None = None) -> Price:
    return Price(input=inp, output=out, cached_input=cached, cache_write=write)


DEFAULT_PRICES = PriceTable(
    {
        # OpenAI (platform.openai.com/docs/pricing, standard tier)
        "gpt-4o": _p(2.50, 1.25, 10.00),
        "gpt-4o-mini": _p(0.15, 0.075, 0.60),
        "gpt-4.1": _p(2.00, 0.50, 8.00),
        "gpt-4.1-mini": _p(0.40, 0.10, 1.60),
        "gpt-4.1-nano": _p(0.10, 0.025, 0.40),
        "o3": _p(2.00, 0.50, 8.00),
        "o4-mini": _p(1.10, 0.275, 4.40),
        "gpt-5": _p(1.25, 0.125, 10.00),
        "gpt-5-mini": _p(0.25, 0.025, 2.00),
        "gpt-5-nano": _p(0.05, 0.005, 0.40),
        # Anthropic (anthropic.com/pricing; cache writes at the 5-minute rate)
        "claude-opus-4-5": _p(5.00, 0.50, 25.00, 6.25),
        "claude-opus-4-1": _p(15.00, 1.50, 75.00, 18.75),
        "claude-sonnet-4-5": _p(3.00, 0.30, 15.00, 3.75),
        "claude-sonnet-4": _p(3.00, 0.30, 15.00, 3.75),
        "claude-haiku-4-5": _p(1.00, 0.10, 5.00, 1.25),
        "claude-3-5-haiku": _p(0.80, 0.08, 4.00, 1.00),
    },
    as_of=PRICES_AS_OF,
)
"""List prices as of :data:`PRICES_AS_OF`. Override with :func:`load_prices`."""


def _price(model: str, entry: Any, path: Path) -> Price:
    if not isinstance(entry, Mapping):
        raise ProviderConfigError(
            f"{path}: price of {model!r} must be a table with input/output, got {entry!r}"
        )
    unknown = set(entry) - {"input", "output", "cached_input", "cache_write"}
    if unknown:
        raise ProviderConfigError(
            f"{path}: price of {model!r} has unknown keys {sorted(unknown)} "
            "(use input, output, cached_input, cache_write: USD per million tokens)"
        )
    values: dict[str, float | None] = {}
    for key in ("input", "output", "cached_input", "cache_write"):
        value = entry.get(key)
        if value is None:
            if key in ("input", "output"):
                raise ProviderConfigError(
                    f"{path}: price of {model!r} needs '{key}' (USD per million tokens)"
                )
            values[key] = None
            continue
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise ProviderConfigError(f"{path}: {model}.{key} must be a number >= 0, got {value!r}")
        values[key] = float(value)
    inp, out = values["input"], values["output"]
    assert inp is not None and out is not None
    return Price(
        input=inp, output=out, cached_input=values["cached_input"], cache_write=values["cache_write"]
    )


def load_prices(path: str | Path, *, merge: bool = True) -> PriceTable:
    """Read a price table from a TOML or JSON file.

    The file holds ``{"models": {name: {"input", "output", "cached_input"?, "cache_write"?}}}``
    (or the same mapping at the top level), USD per million tokens, and an optional
    ``as_of``. With ``merge`` (the default) the entries replace or extend
    :data:`DEFAULT_PRICES`; otherwise only the file's models are priced.

    Raises:
        ProviderConfigError: the file is missing, unreadable or malformed.
    """
    file = Path(path)
    try:
        raw = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise ProviderConfigError(f"cannot read price table {file}: {exc.strerror or exc}") from None
    data: Any
    try:
        if file.suffix.lower() == ".json" or (
            file.suffix.lower() != ".toml" and raw.lstrip().startswith("{")
        ):
            data = json.loads(raw)
        else:
            data = tomllib.loads(raw)
    except (ValueError, tomllib.TOMLDecodeError) as exc:
        raise ProviderConfigError(
            f"{file}: not valid {file.suffix.lstrip('.') or 'TOML/JSON'}: {exc}"
        ) from None
    if not isinstance(data, dict):
        raise ProviderConfigError(f"{file}: expected a table of models, got {type(data).__name__}")
    as_of = data.get("as_of")
    models = data.get("models", {k: v for k, v in data.items() if k != "as_of"})
    if not isinstance(models, dict):
        raise ProviderConfigError(f"{file}: 'models' must be a table of model -> price")
    table = PriceTable(
        {str(name): _price(str(name), entry, file) for name, entry in models.items()},
        as_of=str(as_of) if as_of is not None else None,
    )
    return DEFAULT_PRICES.merged(table) if merge else table
