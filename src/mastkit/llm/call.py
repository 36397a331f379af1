"""One model call with the response cache, the budget and the call log around it.

The judge (:mod:`mastkit.annotate.judge.judge`) and the LLM attributor
(:mod:`mastkit.attribute.llm`) both send their requests through :func:`cached_call`, so
both answer a repeated request from the cache, reserve its cost before sending it and write
the same rows to the call log.
"""

from __future__ import annotations

import functools
import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from mastkit.providers import Budget, ChatRequest, Provider, prompt_hash


class ResponseCache(Protocol):
    """Response cache and call log (``mastkit.store.Store`` implements it)."""

    def cached_response(self, r_hash: str) -> Any: ...
    def put_response(
        self,
        r_hash: str,
        text: str,
        *,
        model: str | None,
        input_tokens: int,
        output_tokens: int,
        cost_usd: float | None,
    ) -> None: ...
    def log_call(
        self,
        *,
        trace_id: str | None,
        config_hash: str | None,
        provider: str | None,
        model: str | None,
        request_hash: str | None,
        input_tokens: int = 0,
        output_tokens: int = 0,
        cost_usd: float | None = None,
        latency_s: float | None = None,
        attempts: int = 1,
        status: str = "ok",
        error: str | None = None,
        cached: bool = False,
    ) -> None: ...


@dataclass
class CallUsage:
    """What the calls made for one piece of work used, added up by :func:`cached_call`."""

    calls: int = 0
    """Requests the provider answered (cache hits are not counted)."""
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0


def request_key(provider: Provider, req: ChatRequest, version: str = "") -> str:
    """The response-cache key of ``req`` sent to ``provider`` under the prompt ``version``."""
    r_hash = prompt_hash(provider.name, provider.model, req.messages, req)
    if version:
        # the prompt version is part of the key: replies to an older prompt are never reused
        r_hash = "p1:" + hashlib.sha256(f"{version}\n{r_hash}".encode()).hexdigest()[:40]
    return r_hash


async def cached_call(
    provider: Provider,
    req: ChatRequest,
    *,
    cache: ResponseCache | None,
    budget: Budget | None,
    trace_id: str,
    config_hash: str,
    usage: CallUsage | None = None,
    version: str = "",
    accept: Callable[[str], bool] | None = None,
) -> str:
    """Send ``req`` to ``provider`` and return the reply text, or the cached text of the same request.

    The cache key is the hash of the request as the caller built it, before the provider
    removes any secrets from it. With a ``cache``, a stored reply is returned without a
    request (and logged as a cached call); otherwise the reply is stored and the call
    logged. With a ``budget``, the estimated cost (the prompt plus a quarter of the
    request's output token cap, none when it has no cap) is reserved before sending and
    replaced by the real cost afterwards. ``usage``, when given, gets the tokens and cost of
    every answered request. ``trace_id`` and ``config_hash`` only label the call log rows.
    ``version`` (the caller's prompt version) is mixed into the cache key, so a reply cached
    for another prompt version is never returned.
    ``accept``, when given, says whether a reply is usable: an unusable reply is returned but
    not cached, and an unusable cached reply is ignored (the request is sent again), so a rerun
    asks the model again instead of replaying a reply that failed the trace.

    Raises:
        BudgetExceeded: the reservation would pass the budget; nothing is sent or logged.
        Exception: whatever the provider raised, after the reservation is released and the
            failure is logged with its latency, attempts and ``"<exception class>: <message>"``
            (cut to 500 characters).
    """
    r_hash = request_key(provider, req, version)
    # writes one call log row labelled with this request (None: no cache, nothing is logged)
    log: functools.partial[None] | None = None
    if cache is not None:
        log = functools.partial(
            cache.log_call,
            trace_id=trace_id,
            config_hash=config_hash,
            provider=provider.name,
            request_hash=r_hash,
        )
        hit = cache.cached_response(r_hash)
        if hit is not None and (accept is None or accept(str(hit.text))):
            log(model=provider.model, cached=True)
            return str(hit.text)
    reservation = None
    if budget is not None:
        prompt_tokens = sum(provider.estimate_tokens(m.content) for m in req.messages)
        estimate = provider.estimate_cost(prompt_tokens, (req.max_tokens or 0) // 4)
        reservation = budget.reserve(estimate)
    t0 = time.monotonic()
    try:
        resp = await provider.complete(req)
    except BaseException as exc:  # cancelled calls too: their reservation is released
        if budget is not None and reservation is not None:
            budget.release(reservation)
        if log is not None:
            log(
                model=provider.model,
                latency_s=time.monotonic() - t0,
                attempts=getattr(exc, "attempts", 1),
                status="error",
                error=f"{type(exc).__name__}: {exc}"[:500],
            )
        raise
    if budget is not None and reservation is not None:
        budget.settle(
            reservation, resp.cost_usd, input_tokens=resp.input_tokens, output_tokens=resp.output_tokens
        )
    if usage is not None:
        usage.calls += 1
        usage.input_tokens += resp.input_tokens or 0
        usage.output_tokens += resp.output_tokens or 0
        usage.cost_usd += resp.cost_usd or 0.0
    if cache is not None and (accept is None or accept(resp.text)):
        cache.put_response(
            r_hash,
            resp.text,
            model=resp.model,
            input_tokens=resp.input_tokens or 0,
            output_tokens=resp.output_tokens or 0,
            cost_usd=resp.cost_usd,
        )
    if log is not None:
        log(
            model=resp.model or provider.model,
            input_tokens=resp.input_tokens or 0,
            output_tokens=resp.output_tokens or 0,
            cost_usd=resp.cost_usd,
            latency_s=resp.latency_s,
            attempts=resp.attempts,
        )
    return resp.text
