"""The :class:`Provider` protocol and :class:`BaseProvider`, the machinery every HTTP
provider shares: API-key handling, redaction, bounded concurrency, the retry loop,
usage/cost accounting and the call record.

A concrete provider implements two methods: ``_make_client()`` (the SDK client, made
once per event loop) and ``_attempt(messages, req)`` (one HTTP attempt, mapping SDK
errors to :class:`AttemptFailure`). Everything else — and so the behaviour users see —
is here.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import logging
import os
import random
import re
import time
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, runtime_checkable

from mastkit.providers.budget import Limiter
from mastkit.providers.errors import (
    ProviderAuthError,
    ProviderError,
    ProviderRequestError,
    ProviderResponseError,
    ProviderUnavailableError,
)
from mastkit.providers.prices import DEFAULT_PRICES, PriceTable, model_names
from mastkit.providers.redact import Redactor
from mastkit.providers.retry import RetryPolicy
from mastkit.providers.sync import run_sync
from mastkit.providers.types import CallRecord, ChatMessage, ChatRequest, ChatResponse

__all__ = [
    "CHARS_PER_TOKEN",
    "CONTEXT_WINDOWS",
    "AttemptFailure",
    "AttemptReply",
    "BaseProvider",
    "Provider",
    "context_window_for",
    "estimate_tokens",
    "prompt_hash",
]

log = logging.getLogger("mastkit.providers")

CHARS_PER_TOKEN = 4
"""Token estimate used before a call: one token per 4 characters (close for English and
code with GPT/Claude tokenizers; over-estimates CJK text less well). Only budgeting and
windowing use it: actual usage comes from the server."""

CONTEXT_WINDOWS: dict[str, int] = {
    "gpt-4o": 128_000,
    "gpt-4o-mini": 128_000,
    "gpt-4.1": 1_047_576,
    "gpt-4.1-mini": 1_047_576,
    "gpt-4.1-nano": 1_047_576,
    "o3": 200_000,
    "o4-mini": 200_000,
    "gpt-5": 400_000,
    "gpt-5-mini": 400_000,
    "gpt-5-nano": 400_000,
    "claude": 200_000,
    "llama3": 8_192,
    "llama3.1": 131_072,
    "llama3.2": 131_072,
    "llama3.3": 131_072,
    "qwen2.5": 32_768,
    "qwen3": 40_960,
    "mistral": 32_768,
    "gemma3": 131_072,
    "phi4": 16_384,
}
"""Context windows (tokens) by model name or family; override per provider with ``context_window=``."""

_NO_KEY = "not-needed"
"""Sent to servers that need no key (local servers): the SDKs refuse an empty key."""


def estimate_tokens(text: str) -> int:
    """Rough token count: ``len(text) // 4 + 1`` (see :data:`CHARS_PER_TOKEN`)."""
    return len(text) // CHARS_PER_TOKEN + 1


def context_window_for(model: str, default: int) -> int:
    """The context window of ``model`` from :data:`CONTEXT_WINDOWS`, else ``default``."""
    for name in model_names(model):
        if name in CONTEXT_WINDOWS:
            return CONTEXT_WINDOWS[name]
    for name in model_names(model):  # family prefixes: "claude-...", "qwen2.5-coder"
        for family, window in CONTEXT_WINDOWS.items():
            if name.startswith(family + "-") or name == family:
                return window
    return default


def prompt_hash(provider: str, model: str, messages: Sequence[ChatMessage], req: ChatRequest) -> str:
    """Versioned hash (``p1:``) of what is sent: provider, model, messages and parameters."""
    payload = {
        "provider": provider,
        "model": model,
        "messages": [[m.role, m.content] for m in messages],
        "temperature": req.temperature,
        "max_tokens": req.max_tokens,
        "json_schema": req.json_schema,
        "schema_name": req.schema_name,
        "seed": req.seed,
    }
    data = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode()
    return "p1:" + hashlib.sha256(data).hexdigest()[:40]


def schema_instruction(schema: dict[str, Any]) -> str:
    """The prompt text asking for JSON matching ``schema`` (for servers without schema support)."""
    return (
        "Reply with only a JSON object that matches this JSON schema — no prose, no code fences:\n"
        + json.dumps(schema, ensure_ascii=False)
    )


def with_system_note(messages: Sequence[ChatMessage], note: str) -> list[ChatMessage]:
    """``messages`` with ``note`` appended to the first system message (or a new one first)."""
    out = list(messages)
    for i, m in enumerate(out):
        if m.role == "system":
            out[i] = ChatMessage(role="system", content=f"{m.content}\n\n{note}")
            return out
    return [ChatMessage(role="system", content=note), *out]


@runtime_checkable
class Provider(Protocol):
    """A chat model mastkit can call. Implement this to plug in another backend."""

    name: str
    """Provider name (``openai``, ``anthropic``, ``ollama``...)."""
    model: str
    """Model name as the server knows it."""
    context_window: int
    """Context window in tokens."""

    def estimate_tokens(self, text: str) -> int:
        """Rough token count of ``text`` before a call."""
        ...

    def estimate_cost(self, input_tokens: int, output_tokens: int) -> float | None:
        """Estimated USD for a call of this size; None when the price is unknown."""
        ...

    async def complete(self, req: ChatRequest) -> ChatResponse:
        """Send ``req`` and return the reply (raises :class:`ProviderError`)."""
        ...


class _Secret:
    """A string that never shows itself in ``repr``/``str``/logs."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def get(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "'***'"

    __str__ = __repr__


@dataclass
class AttemptReply:
    """What one successful HTTP attempt produced (internal to providers)."""

    text: str
    model: str
    input_tokens: int | None
    output_tokens: int | None
    cached_input_tokens: int = 0
    cache_write_tokens: int = 0
    finish_reason: str | None = None
    request_id: str | None = None
    raw: dict[str, Any] = field(default_factory=dict)


class AttemptFailure(Exception):
    """One failed HTTP attempt, classified (internal to providers)."""

    def __init__(
        self,
        kind: str,
        message: str,
        *,
        retryable: bool,
        status: int | None = None,
        retry_after: float | None = None,
        request_id: str | None = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.retryable = retryable
        self.status = status
        self.retry_after = retry_after
        self.request_id = request_id

    def summary(self) -> str:
        status = f"HTTP {self.status} " if self.status is not None else ""
        return f"{status}{self.kind}: {self.message}"[:300]


def status_failure(
    status: int, message: str, *, retry_after: float | None = None, request_id: str | None = None
) -> AttemptFailure:
    """Classify an HTTP error status."""
    if status in (401, 403):
        kind, retryable = "auth", False
    elif status == 404:
        kind, retryable = "not_found", False
    elif status == 429:
        kind, retryable = "rate_limit", True
    elif status == 408:
        kind, retryable = "timeout", True
    elif RetryPolicy.retryable_status(status):
        kind, retryable = "server", True
    else:
        kind, retryable = "bad_request", False
    return AttemptFailure(
        kind, message, retryable=retryable, status=status, retry_after=retry_after, request_id=request_id
    )


def error_message_from_body(body: object, fallback: str) -> str:
    """The human message inside an OpenAI/Anthropic error body."""
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            return str(err["message"])
        if isinstance(err, str):
            return err
        if isinstance(body.get("message"), str):
            return str(body["message"])
    return fallback


_URL_CREDENTIALS = re.compile(r"(://[^/@\s:]+):[^/@\s]+@")

SleepFn = Callable[[float], Awaitable[None]]


class BaseProvider(ABC):
    """Shared machinery of HTTP providers (see the module docstring).

    Args:
        model: model name as the server knows it.
        name: provider name reported in responses and records.
        base_url: endpoint (``None``: the provider's default).
        api_key: the key; when None it is read from the first of ``key_env`` that is set.
        key_env: environment variables to read the key from, in order.
        key_required: raise :class:`ProviderAuthError` at construction when no key is
            found (official APIs); otherwise a dummy key is sent (local servers).
        timeout: seconds per HTTP attempt.
        retry: the :class:`RetryPolicy` (default: 5 attempts, 1 s backoff doubling, retry-after honoured).
        max_attempts: shortcut to change only ``retry.max_attempts``.
        concurrency: calls in flight at once through this provider.
        redact: redact secrets in outgoing messages (default True).
        redactor: the :class:`Redactor` to use (default: built-in patterns).
        prices: price table (default :data:`~mastkit.providers.prices.DEFAULT_PRICES`).
        free: the server charges nothing (local servers): unpriced models cost $0, not "unknown".
        context_window: override the context window (tokens).
        on_call: called with a :class:`CallRecord` after every call, success or failure.
        sleep, clock, rng: injectable ``asyncio.sleep``, ``time.monotonic`` and
            ``random.random`` (tests).
    """

    default_base_url: ClassVar[str | None] = None
    default_context_window: ClassVar[int] = 8_192

    def __init__(
        self,
        model: str,
        *,
        name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        key_env: Sequence[str] = ("MASTKIT_API_KEY",),
        key_required: bool = False,
        timeout: float = 120.0,
        retry: RetryPolicy | None = None,
        max_attempts: int | None = None,
        concurrency: int = 8,
        redact: bool = True,
        redactor: Redactor | None = None,
        prices: PriceTable | None = None,
        free: bool = False,
        context_window: int | None = None,
        on_call: Callable[[CallRecord], None] | None = None,
        sleep: SleepFn | None = None,
        clock: Callable[[], float] | None = None,
        rng: Callable[[], float] | None = None,
    ) -> None:
        if not model:
            from mastkit.providers.errors import ProviderConfigError

            raise ProviderConfigError(f"{name}: no model name given (e.g. {name}:<model>)", provider=name)
        self.name = name
        self.model = model
        self.base_url = base_url or self.default_base_url
        self.timeout = float(timeout)
        policy = retry or RetryPolicy()
        if max_attempts is not None:
            policy = dataclasses.replace(policy, max_attempts=max_attempts)
        self.retry = policy
        self.key_env = tuple(key_env)
        key = api_key
        if not key:
            key = next((os.environ[v] for v in self.key_env if os.environ.get(v)), None)
        if not key and key_required:
            raise ProviderAuthError(
                f"{name}:{model}: no API key. Set {self._key_hint()}, or pass api_key=...",
                provider=name,
                model=model,
                kind="auth",
            )
        self._api_key = _Secret(key or _NO_KEY)
        self._has_key = bool(key)
        self.redact = redact
        base_redactor = redactor or Redactor()
        self._redactor = base_redactor.with_literals([key]) if key else base_redactor
        self.prices = prices if prices is not None else DEFAULT_PRICES
        self.free = free
        self.context_window = context_window or context_window_for(model, self.default_context_window)
        self.on_call = on_call
        self._limiter = Limiter(concurrency)
        self._sleep: SleepFn = sleep or asyncio.sleep
        self._clock = clock or time.monotonic
        self._rng = rng or random.random
        self._client_obj: Any = None
        self._client_loop: asyncio.AbstractEventLoop | None = None

    # -- description ---------------------------------------------------------------------------

    def __repr__(self) -> str:
        url = _URL_CREDENTIALS.sub(r"\1:***@", self.base_url or "")
        return f"{type(self).__name__}(name={self.name!r}, model={self.model!r}, base_url={url!r})"

    @property
    def spec(self) -> str:
        """``name:model``."""
        return f"{self.name}:{self.model}"

    @property
    def concurrency(self) -> int:
        return self._limiter.concurrency

    @property
    def limiter(self) -> Limiter:
        """The provider's concurrency limiter (``in_flight``, ``peak``)."""
        return self._limiter

    @property
    def redactor(self) -> Redactor | None:
        """The redactor outgoing messages pass through (it also removes the API key in use);
        None when redaction is off. Callers redact whole traces with it before rendering them."""
        return self._redactor if self.redact else None

    def _key_hint(self) -> str:
        names = list(self.key_env)
        if not names:
            return "an API key"
        if len(names) == 1:
            return names[0]
        return f"{names[0]} (or {', '.join(names[1:])})"

    # -- estimates -------------------------------------------------------------------------------

    def estimate_tokens(self, text: str) -> int:
        """Rough token count (4 characters per token), for budgeting before a call."""
        return estimate_tokens(text)

    def estimate_cost(self, input_tokens: int, output_tokens: int) -> float | None:
        """USD for a call of this size at this model's price; None when unpriced."""
        cost = self.prices.cost(self.model, input_tokens, output_tokens)
        if not cost.known:
            return 0.0 if self.free else None
        return cost.usd

    # -- client per event loop -----------------------------------------------------------------

    @abstractmethod
    def _make_client(self) -> Any:
        """A new SDK client (``max_retries=0``: retries are ours)."""

    def _client(self) -> Any:
        loop = asyncio.get_running_loop()
        if self._client_obj is None or self._client_loop is not loop:
            # A client's connection pool belongs to one event loop: make one per loop.
            self._client_obj = self._make_client()
            self._client_loop = loop
        return self._client_obj

    async def aclose(self) -> None:
        """Close the SDK client of the running loop (idle connections)."""
        client, self._client_obj, self._client_loop = self._client_obj, None, None
        if client is not None and hasattr(client, "close"):
            await client.close()

    async def __aenter__(self) -> BaseProvider:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- one attempt -----------------------------------------------------------------------------

    @abstractmethod
    async def _attempt(self, messages: list[ChatMessage], req: ChatRequest) -> AttemptReply:
        """One HTTP attempt; raises :class:`AttemptFailure` on any failure."""

    def _clean(self, text: str) -> str:
        """Server-provided text made safe to keep (the key and other secrets removed)."""
        return self._redactor.redact(text).text[:500]

    # -- the call -------------------------------------------------------------------------------

    def redact_messages(self, messages: Sequence[ChatMessage]) -> tuple[list[ChatMessage], Counter[str]]:
        """Messages as they will be sent, and what redaction removed."""
        counts: Counter[str] = Counter()
        if not self.redact:
            return list(messages), counts
        out = []
        for m in messages:
            text, found = self._redactor.redact(m.content)
            counts.update(found)
            out.append(m if not found else ChatMessage(role=m.role, content=text))
        return out, counts

    async def complete(self, req: ChatRequest) -> ChatResponse:
        """Send ``req`` (redacted), retrying transient failures; see :mod:`mastkit.providers.retry`.

        Raises:
            ProviderAuthError: 401/403.
            ProviderRequestError: other non-retryable 4xx (bad request, unknown model).
            ProviderUnavailableError: rate limits/5xx/timeouts/connection errors on every attempt.
            ProviderResponseError: the reply body was unusable on every attempt.
        """
        messages, counts = self.redact_messages(req.messages)
        p_hash = prompt_hash(self.name, self.model, messages, req)
        errors: list[str] = []
        waited = 0.0
        attempts = 0
        async with self._limiter:
            t0 = self._clock()
            while True:
                attempts += 1
                try:
                    reply = await self._attempt(messages, req)
                    break
                except AttemptFailure as failure:
                    errors.append(failure.summary())
                    give_up = (
                        not failure.retryable
                        or attempts >= self.retry.max_attempts
                        or (failure.kind == "malformed" and not self.retry.retry_malformed)
                    )
                    if give_up:
                        latency = self._clock() - t0
                        exc = self._final_error(failure, attempts)
                        record = CallRecord(
                            provider=self.name,
                            model=self.model,
                            prompt_hash=p_hash,
                            latency_s=latency,
                            attempts=attempts,
                            retry_wait_s=waited,
                            attempt_errors=errors,
                            status="error",
                            error=exc.message,
                            error_kind=failure.kind,
                            request_id=failure.request_id,
                            redactions=dict(counts),
                            metadata=dict(req.metadata),
                        )
                        exc.record = record
                        log.warning("%s", exc.message)
                        self._notify(record)
                        raise exc from None
                    wait = self.retry.delay(attempts, failure.retry_after, self._rng())
                    log.info(
                        "%s: attempt %d/%d failed (%s); retrying in %.2fs",
                        self.spec,
                        attempts,
                        self.retry.max_attempts,
                        failure.summary(),
                        wait,
                    )
                    await self._sleep(wait)
                    waited += wait
            latency = self._clock() - t0
        cost = self.prices.cost(
            self.model,
            reply.input_tokens,
            reply.output_tokens,
            cached_input_tokens=reply.cached_input_tokens,
            cache_write_tokens=reply.cache_write_tokens,
        )
        if not cost.known and reply.model and reply.model != self.model:
            cost = self.prices.cost(
                reply.model,
                reply.input_tokens,
                reply.output_tokens,
                cached_input_tokens=reply.cached_input_tokens,
                cache_write_tokens=reply.cache_write_tokens,
            )
        usd, known = cost
        if not known and self.free:
            usd, known = (0.0 if reply.input_tokens is not None else None), True
        resp = ChatResponse(
            text=reply.text,
            model=reply.model or self.model,
            provider=self.name,
            input_tokens=reply.input_tokens,
            output_tokens=reply.output_tokens,
            cached_input_tokens=reply.cached_input_tokens,
            cost_usd=usd,
            price_known=known,
            latency_s=latency,
            attempts=attempts,
            finish_reason=reply.finish_reason,
            request_id=reply.request_id,
            prompt_hash=p_hash,
            redactions=dict(counts),
            raw=reply.raw,
        )
        log.debug(
            "%s: ok in %.2fs, %d attempt(s), %s in / %s out tokens, cost %s",
            self.spec,
            latency,
            attempts,
            reply.input_tokens,
            reply.output_tokens,
            usd,
        )
        if self.on_call is not None:
            record = resp.to_record(req.metadata)
            record.retry_wait_s = waited
            record.attempt_errors = errors
            self._notify(record)
        return resp

    def complete_sync(self, req: ChatRequest) -> ChatResponse:
        """:meth:`complete` from synchronous code (see :func:`mastkit.providers.run_sync`)."""
        return run_sync(self.complete(req))

    def _notify(self, record: CallRecord) -> None:
        if self.on_call is None:
            return
        try:
            self.on_call(record)
        except Exception:  # a logging hook must not lose a paid-for reply
            log.exception("%s: on_call hook failed", self.spec)

    def _final_error(self, failure: AttemptFailure, attempts: int) -> ProviderError:
        where = f"{self.spec}"
        detail = failure.summary()
        rid = f" (request id {failure.request_id})" if failure.request_id else ""
        common: dict[str, Any] = {
            "provider": self.name,
            "model": self.model,
            "kind": failure.kind,
            "status": failure.status,
            "attempts": attempts,
            "request_id": failure.request_id,
        }
        if failure.kind == "auth":
            verb = "access denied" if failure.status == 403 else "authentication failed"
            return ProviderAuthError(
                f"{where}: {verb} ({detail}){rid}. Set {self._key_hint()} to a valid key for "
                f"{self.base_url or self.name}, or pass api_key=...",
                **common,
            )
        if failure.kind == "not_found":
            return ProviderRequestError(
                f"{where}: not found ({detail}){rid}. Check the model name and the base URL "
                f"({self.base_url}); OpenAI-compatible servers list their models at GET /v1/models",
                **common,
            )
        if failure.kind in ("bad_request", "unexpected"):
            hint = ""
            if failure.status == 400:
                hint = (
                    ". If the server does not support structured output, use json_mode='json_object' or "
                    "'none' (CLI: --no-structured-output)"
                )
            return ProviderRequestError(f"{where}: request rejected ({detail}){rid}{hint}", **common)
        tries = f"after {attempts} attempt{'s' if attempts != 1 else ''}"
        if failure.kind == "malformed":
            return ProviderResponseError(f"{where}: unusable response {tries} ({detail}){rid}", **common)
        hints = {
            "rate_limit": "; lower the concurrency or raise the provider's rate limit",
            "timeout": f"; the server did not answer within {self.timeout:g}s: raise the timeout",
            "connection": f"; is the server running and reachable at {self.base_url}?",
        }
        return ProviderUnavailableError(
            f"{where}: gave up {tries} ({detail}){rid}{hints.get(failure.kind, '')}", **common
        )
