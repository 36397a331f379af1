"""Ask a model for a JSON reply that a pydantic model validates, with one repair request.

The verifier, the feedback reflector and taxonomy learning each ask this way: the reply's
schema comes from the model (:func:`mastkit.llm.reply.strict_schema`), it is sent as a
structured-output request, the reply is validated by the same model, an unusable reply gets
one repair request, and neither unusable reply is cached (:func:`mastkit.llm.call.cached_call`
with ``accept``), so a rerun asks again. The judge and the LLM attributor read their replies
more leniently (other key names, verdict words) and keep their own loop around
:func:`~mastkit.llm.call.cached_call`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from mastkit.llm.call import CallUsage, ResponseCache, cached_call
from mastkit.llm.reply import ReplyError, json_object, strict_schema
from mastkit.providers import Budget, ChatMessage, ChatRequest, Provider

__all__ = ["ask_json", "json_request", "parse_json"]

M = TypeVar("M", bound=BaseModel)


def parse_json(text: str, model: type[M]) -> M:
    """The JSON object in ``text`` validated by ``model``.

    Raises:
        ReplyError: no JSON object, or one that ``model`` rejects (the first problems named).
    """
    try:
        return model.model_validate(json_object(text))
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(x) for x in e['loc']) or 'reply'}: {e['msg']}" for e in exc.errors()[:3]
        )
        raise ReplyError(f"the reply does not match the schema ({problems})") from None


def json_request(
    messages: Sequence[ChatMessage],
    model: type[BaseModel],
    max_tokens: int | None,
    *,
    temperature: float = 0.0,
    seed: int | None = None,
    structured_output: bool = True,
) -> ChatRequest:
    """The request :func:`ask_json` sends first (its cache key: :func:`mastkit.llm.call.request_key`)."""
    return ChatRequest(
        messages=list(messages),
        temperature=temperature,
        max_tokens=max_tokens,
        json_schema=strict_schema(model) if structured_output else None,
        schema_name=model.__name__.lower(),
        seed=seed,
    )


async def ask_json(
    provider: Provider,
    messages: Sequence[ChatMessage],
    model: type[M],
    *,
    cache: ResponseCache | None,
    budget: Budget | None,
    trace_id: str,
    config_hash: str,
    version: str,
    usage: CallUsage | None = None,
    max_tokens: int | None = None,
    temperature: float = 0.0,
    seed: int | None = None,
    structured_output: bool = True,
    error: type[ReplyError] = ReplyError,
) -> M:
    """Send ``messages`` and return the reply validated by ``model``.

    An unusable reply gets one repair request (the reply and what was wrong with it, then a
    request for the JSON object alone). ``version`` (the caller's prompt version) is part of the
    cache key; ``trace_id`` and ``config_hash`` label the call log.

    Raises:
        error: (a :class:`ReplyError` subclass of the caller's) no usable reply after the repair.
        Whatever the provider raises (budget, HTTP errors).
    """

    def usable(text: str) -> bool:
        try:
            parse_json(text, model)
        except ReplyError:
            return False
        return True

    async def call(msgs: list[ChatMessage]) -> str:
        return await cached_call(
            provider,
            json_request(
                msgs,
                model,
                max_tokens,
                temperature=temperature,
                seed=seed,
                structured_output=structured_output,
            ),
            cache=cache,
            budget=budget,
            trace_id=trace_id,
            config_hash=config_hash,
            usage=usage,
            version=version,
            accept=usable,
        )

    first_messages = list(messages)
    text = await call(first_messages)
    try:
        return parse_json(text, model)
    except ReplyError as first:
        repair = [
            *first_messages,
            ChatMessage(role="assistant", content=text[:8000]),
            ChatMessage(
                role="user",
                content=f"Your reply could not be used: {first}. Reply again with only the JSON object "
                "described in the instructions.",
            ),
        ]
        text2 = await call(repair)
        try:
            return parse_json(text2, model)
        except ReplyError as second:
            raise error(f"unusable reply after one repair ({first}; then {second})") from None
