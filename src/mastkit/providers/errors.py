"""Errors of the providers layer (all subclass :class:`mastkit.errors.MastkitError`).

::

    MastkitError
    ├── ProviderError               a model call failed; .kind, .status, .attempts, .record
    │   ├── ProviderConfigError         bad spec/settings (unknown provider, no model name)
    │   │   └── UnknownPriceError           a budget was asked for a model with no known price
    │   ├── ProviderAuthError           401/403, or no API key: the message names the env var
    │   ├── ProviderRequestError        other 4xx (400, 404, 422...): not retried
    │   ├── ProviderUnavailableError    429/5xx/timeouts/connection errors, after the last attempt
    │   └── ProviderResponseError       the response body was not usable (malformed JSON, no choices)
    └── BudgetExceeded              the next call would pass the budget cap (nothing was sent)

Messages never contain the API key: server error texts are redacted before they are kept.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mastkit.errors import MastkitError

if TYPE_CHECKING:
    from mastkit.providers.types import CallRecord


class ProviderError(MastkitError):
    """A model call failed.

    Attributes:
        provider: provider name (``openai``, ``anthropic``, ``ollama``...).
        model: the model requested.
        kind: ``rate_limit``, ``server``, ``timeout``, ``connection``, ``malformed``,
            ``auth``, ``bad_request``, ``not_found``, ``config`` or ``unexpected``.
        status: the last HTTP status, when there was one.
        attempts: HTTP attempts made before giving up.
        request_id: the provider's request id of the last attempt, when known.
        record: the :class:`~mastkit.providers.CallRecord` of the failed call.
    """

    def __init__(
        self,
        message: str,
        *,
        provider: str = "",
        model: str = "",
        kind: str = "unexpected",
        status: int | None = None,
        attempts: int = 0,
        request_id: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.provider = provider
        self.model = model
        self.kind = kind
        self.status = status
        self.attempts = attempts
        self.request_id = request_id
        self.record: CallRecord | None = None


class ProviderConfigError(ProviderError):
    """The provider could not be set up (unknown provider, malformed spec, bad option)."""

    def __init__(self, message: str, *, provider: str = "", model: str = "") -> None:
        super().__init__(message, provider=provider, model=model, kind="config")


class UnknownPriceError(ProviderConfigError):
    """A budget was asked for, but the model has no known price, so the budget could not bound anything.

    The fix is to give a price (a price table file, or input/output prices per million tokens),
    or to assume an upper-bound price (:func:`mastkit.providers.pricing.set_price`).
    """


class ProviderAuthError(ProviderError):
    """Authentication failed (401/403) or no API key is configured."""


class ProviderRequestError(ProviderError):
    """The server rejected the request (4xx other than 401/403/408/409/429): not retried."""


class ProviderUnavailableError(ProviderError):
    """Rate limits, server errors, timeouts or connection failures persisted through every attempt."""


class ProviderResponseError(ProviderError):
    """The server answered, but the body could not be used (malformed or truncated JSON, no reply)."""


class BudgetExceeded(MastkitError):
    """The next call would take spending past a budget cap; the call was not made.

    Attributes:
        max_usd: the cap that was hit.
        spent_usd: settled spending counted against that cap (for the total cap: earlier runs
            on the store plus this run).
        reserved_usd: spending reserved by calls in flight.
        estimate_usd: the refused call's estimate.
        scope: ``"run"`` (this run's cap, ``--budget``) or ``"total"`` (the cap over all runs on
            the store, ``--budget-total``).
    """

    def __init__(
        self,
        max_usd: float,
        spent_usd: float,
        reserved_usd: float,
        estimate_usd: float,
        scope: str = "run",
    ) -> None:
        self.max_usd = max_usd
        self.spent_usd = spent_usd
        self.reserved_usd = reserved_usd
        self.estimate_usd = estimate_usd
        self.scope = scope
        super().__init__(max_usd, spent_usd, reserved_usd, estimate_usd, scope)  # pickles by default

    def __str__(self) -> str:
        if self.scope == "total":
            what, spent, flag = "total budget", "spent on this store (all runs)", "--budget-total"
        else:
            what, spent, flag = "run budget", "spent in this run", "--budget"
        return (
            f"{what} of ${self.max_usd:.4f} reached: ${self.spent_usd:.4f} {spent}, ${self.reserved_usd:.4f} "
            f"reserved by calls in flight, next call estimated at ${self.estimate_usd:.4f} (raise the budget, "
            f"{flag}, to continue)"
        )
