"""What a provider's model costs, and the check that a budget can actually bound it.

A budget counts the cost of each call. For a model with no known price that cost is
unknown, and a budget would silently let every call through; :func:`require_price` refuses
that case with :class:`UnknownPriceError`. The user then gives a price
(:func:`set_price` with ``price_in``/``price_out``, or a price table file), or assumes an
upper-bound price (``assume_price``): costs are then upper bounds, and
:meth:`PriceInfo.describe` says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from mastkit.providers.base import BaseProvider, Provider
from mastkit.providers.errors import ProviderConfigError, UnknownPriceError
from mastkit.providers.prices import Price

__all__ = ["PriceInfo", "price_info", "require_price", "set_price"]

PriceSource = Literal["table", "assumed", "free", "unknown"]


@dataclass(frozen=True)
class PriceInfo:
    """The price a provider's calls are charged at."""

    spec: str
    """``provider:model``."""
    source: PriceSource
    """``table`` (a list price or one the user gave), ``assumed`` (an upper bound the user
    chose for an unpriced model), ``free`` (a local server) or ``unknown``."""
    input: float | None = None
    """USD per million prompt tokens."""
    output: float | None = None
    """USD per million completion tokens."""

    @property
    def known(self) -> bool:
        """Whether a cost can be computed (a budget can bound the calls)."""
        return self.source != "unknown"

    @property
    def upper_bound(self) -> bool:
        """Whether costs are upper bounds (the price was assumed)."""
        return self.source == "assumed"

    def describe(self) -> str:
        """One line for users, e.g. ``gpt-4o-mini $0.15/$0.60 per M``."""
        model = self.spec.split(":", 1)[-1]
        if self.source == "table":
            return f"{model} ${self.input:.2f}/${self.output:.2f} per M"
        if self.source == "assumed":
            return (
                f"cost is an upper bound: price of {self.spec} unknown, assumed ${self.input:.2f}/"
                f"${self.output:.2f} per M"
            )
        if self.source == "free":
            return f"{model} free (local server)"
        return f"price of {self.spec} unknown"


def _spec(provider: Provider) -> str:
    return f"{provider.name}:{provider.model}"


def price_info(provider: Provider) -> PriceInfo:
    """The price ``provider`` charges at, and where it comes from."""
    spec = _spec(provider)
    if isinstance(provider, BaseProvider):
        price = provider.prices.lookup(provider.model)
        if price is not None:
            source: PriceSource = "assumed" if provider.prices.is_assumed(provider.model) else "table"
            return PriceInfo(spec, source, price.input, price.output)
        return PriceInfo(spec, "free") if provider.free else PriceInfo(spec, "unknown")
    per_million = provider.estimate_cost(1_000_000, 0)
    if per_million is None:
        return PriceInfo(spec, "unknown")
    return PriceInfo(spec, "table", per_million, provider.estimate_cost(0, 1_000_000))


def set_price(
    provider: Provider,
    *,
    price_in: float | None = None,
    price_out: float | None = None,
    assume_price: float | None = None,
) -> PriceInfo:
    """Give ``provider`` a price, then return :func:`price_info`.

    ``price_in`` and ``price_out`` (USD per million tokens, both or neither) set the model's
    price. ``assume_price`` applies only when the model still has no price: it is used for
    input and output tokens alike and marked as an upper bound.

    Raises:
        ProviderConfigError: only one of ``price_in``/``price_out``, a negative price, or a
            provider whose price table cannot be changed (not a :class:`BaseProvider`).
    """
    if (price_in is None) != (price_out is None):
        raise ProviderConfigError("give both the input and the output price (USD per million tokens)")
    if price_in is None and assume_price is None:
        return price_info(provider)
    if not isinstance(provider, BaseProvider):
        raise ProviderConfigError(f"{_spec(provider)}: cannot set a price on {type(provider).__name__}")
    if price_in is not None and price_out is not None:
        if price_in < 0 or price_out < 0:
            raise ProviderConfigError(
                f"prices must be >= 0 USD per million tokens, got {price_in}/{price_out}"
            )
        provider.prices = provider.prices.merged({provider.model: Price(input=price_in, output=price_out)})
    if assume_price is not None and price_info(provider).source == "unknown":
        provider.prices = provider.prices.with_assumed(provider.model, assume_price)
    return price_info(provider)


def require_price(provider: Provider) -> PriceInfo:
    """:func:`price_info`, refusing a model with no known price (a budget could not bound it).

    Raises:
        UnknownPriceError: the price is unknown; the message says how to give one.
    """
    info = price_info(provider)
    if not info.known:
        raise UnknownPriceError(
            f"no known price for {info.spec}, so a budget cannot bound its spending. Give one with "
            "--price-in/--price-out (USD per million tokens) or --prices FILE, or pass --assume-price MAX "
            "to count every token at an upper-bound price (library: price_in=/price_out=, prices= or "
            "assume_price=)",
            provider=provider.name,
            model=provider.model,
        )
    return info
