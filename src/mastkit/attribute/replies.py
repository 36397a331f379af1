"""The LLM attributor's replies, as pydantic models: the one source of their JSON schemas and
their validation.

As in the judge's reply (:mod:`mastkit.annotate.judge.schema`), the reasoning comes before the
decision in every reply: the model explains, then names the step, the half or the answer.
The ``mode`` field is an enum of the taxonomy's codes (or null), so the models are built per
taxonomy (:func:`reply_models`).

Replies are read leniently before they are validated (other key names the Who&When prompts
use, ``"yes"``/``"no"`` for booleans, a code written as ``1.3``): :func:`validate` takes the
JSON object of a reply, the model and a normaliser, and raises
:class:`~mastkit.llm.reply.ReplyError` with the first validation problem.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from mastkit.llm.reply import ReplyError, strict_schema
from mastkit.taxonomy import Taxonomy

__all__ = ["REPLY_KINDS", "reply_models", "schemas", "validate"]

REPLY_KINDS = ("attribution", "step_verdict", "half", "counterfactual")


class _Wire(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Alternative(_Wire):
    agent: str
    step: int


Half = Literal["first", "second"]

_P = Field(description="0..1, or null when you cannot say.")


@functools.lru_cache(maxsize=32)
def _models(codes: tuple[str, ...]) -> dict[str, type[BaseModel]]:
    mode: Any = Literal[codes] | None
    mode_field = (mode, Field(description="Failure mode code of the decisive error, or null."))
    return {
        "attribution": create_model(
            "AttributionReply",
            __base__=_Wire,
            reason=(str, Field(description="Why this step is the decisive mistake, 1-3 sentences.")),
            agent=(str, Field(description="The agent, exactly as named in the log.")),
            step=(int, Field(description="The step number N.")),
            mode=mode_field,
            confidence=(float | None, _P),
            alternatives=(list[Alternative], Field(description="Next most likely steps, best first.")),
        ),
        "step_verdict": create_model(
            "StepVerdictReply",
            __base__=_Wire,
            reason=(str, ...),
            mode=mode_field,
            error_probability=(float | None, _P),
            decisive_error=(bool, ...),
        ),
        "half": create_model(
            "HalfReply",
            __base__=_Wire,
            reason=(str, ...),
            mode=mode_field,
            half=(Half, ...),
            confidence=(float | None, _P),
        ),
        "counterfactual": create_model(
            "CounterfactualReply",
            __base__=_Wire,
            reason=(str, ...),
            would_succeed=(bool, ...),
            confidence=(float | None, _P),
        ),
    }


def reply_models(taxonomy: Taxonomy) -> dict[str, type[BaseModel]]:
    """The reply model of each kind of question, for ``taxonomy``."""
    return _models(tuple(m.code for m in taxonomy.modes))


def schemas(taxonomy: Taxonomy) -> dict[str, dict[str, Any]]:
    """The structured-output schema of each kind of question."""
    return {kind: strict_schema(model) for kind, model in reply_models(taxonomy).items()}


def validate(
    obj: dict[str, Any], model: type[BaseModel], normalise: Callable[[dict[str, Any]], dict[str, Any]]
) -> Any:
    """``obj`` read leniently by ``normalise``, then validated by ``model``.

    Raises:
        ReplyError: the reply does not fit the model (the first problem is named).
    """
    try:
        return model.model_validate(normalise(obj))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first["loc"]) or "reply"
        raise ReplyError(f"'{where}': {first['msg']}") from None
