"""The budget of a model-backed run: this run's cap, the cap over all runs on a store, and
the price check that makes either mean something.

Both the judge's factory (:func:`mastkit.annotate.factory.make_annotator`) and the LLM
attributor (:meth:`mastkit.attribute.llm.LLMAttributor.from_spec`) build their budget here.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from mastkit.errors import MastkitError
from mastkit.providers import Budget, Provider
from mastkit.providers.pricing import require_price

__all__ = ["CallLog", "make_budget", "store_spent"]


@runtime_checkable
class CallLog(Protocol):
    """Anything that sums its call log (``mastkit.store.Store`` does)."""

    def call_stats(self, config_hash: str | None = None) -> dict[str, Any]: ...


def store_spent(store: CallLog) -> float:
    """USD spent by every model call the store has logged (all runs; cached replies cost nothing)."""
    return float(store.call_stats().get("cost_usd") or 0.0)


def make_budget(
    provider: Provider,
    *,
    budget_usd: float | None = None,
    budget_total_usd: float | None = None,
    store: object = None,
) -> Budget | None:
    """The :class:`~mastkit.providers.Budget` for a run, or None when neither cap is set.

    ``budget_usd`` caps this run; ``budget_total_usd`` caps all runs on ``store`` together
    (what the store's call log already holds counts against it).

    Raises:
        UnknownPriceError: a cap is set but the model has no known price.
        MastkitError: ``budget_total_usd`` without a store to count earlier spending in.
    """
    if budget_usd is None and budget_total_usd is None:
        return None
    require_price(provider)
    spent_before = 0.0
    if budget_total_usd is not None:
        if not isinstance(store, CallLog):
            raise MastkitError(
                "a total budget counts what earlier runs spent on the store: pass the store (cache=...)"
            )
        spent_before = store_spent(store)
    return Budget(budget_usd, total_usd=budget_total_usd, spent_before=spent_before)
