"""The judge's reply, as pydantic models: the one source of its JSON schema and its validation.

Field order is part of the design. With structured output a model writes the fields in the
order the schema gives them, so each mode's ``evidence`` and ``reasoning`` come before its
``verdict``: the judge quotes and reasons first, then decides, instead of justifying a
verdict it already committed to. For the same reason the trace-level ``summary`` (what
happened) comes before the per-mode findings, and ``task_success`` and the responsible
agent/step come last.

The mode ``code`` is an enum of the taxonomy's codes, so the models are built per taxonomy
(:func:`reply_model`). :func:`mastkit.llm.reply.strict_schema` turns a model into the schema
sent as a structured-output request (every property required, no extra properties).
"""

from __future__ import annotations

import functools
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from mastkit.taxonomy import Taxonomy

__all__ = [
    "CONFIDENCE_ANCHORS",
    "EvidenceItem",
    "finding_model",
    "reply_model",
]

Verdict = Literal["present", "absent", "unknown"]

CONFIDENCE_ANCHORS = (
    "confidence is your probability (0 to 1) that this verdict is correct: 0.95 = the quoted "
    "evidence settles it; 0.75 = the evidence points this way but another reading is possible; "
    "0.5 = a coin flip. Use unknown, not a low confidence, when the trace you can see does not "
    "let you decide."
)
"""The one meaning of ``confidence`` everywhere in the judge (prompt, merge, stored verdicts)."""


class _Wire(BaseModel):
    model_config = ConfigDict(extra="forbid")


class EvidenceItem(_Wire):
    """One piece of evidence: where in the trace, and a verbatim quote from there."""

    seq_start: int = Field(description="First event seq the quote comes from.")
    seq_end: int = Field(description="Last event seq (equal to seq_start for one event).")
    agent: str | None = Field(description="The agent whose event this is, or null.")
    quote: str = Field(description="A short verbatim excerpt of the cited events (under 200 characters).")


@functools.lru_cache(maxsize=32)
def _reply_model(codes: tuple[str, ...]) -> type[BaseModel]:
    code_type: Any = Literal[codes]
    finding = create_model(
        "ModeFinding",
        __base__=_Wire,
        code=(code_type, Field(description="The mode code.")),
        evidence=(
            list[EvidenceItem],
            Field(description="Evidence for or against the mode; empty only when there is none."),
        ),
        reasoning=(str, Field(description="One or two sentences weighing the evidence.")),
        verdict=(Verdict, Field(description="present, absent or unknown; decided after the reasoning.")),
        confidence=(float, Field(ge=0.0, le=1.0, description=CONFIDENCE_ANCHORS)),
    )
    return create_model(
        "JudgeReply",
        __base__=_Wire,
        summary=(str, Field(description="What happened in the run, and what went wrong if anything.")),
        modes=(list[finding], Field(description="One entry per mode code, each exactly once.")),
        task_success=(bool | None, Field(description="Did the run achieve its task? null if unclear.")),
        responsible_agent=(str | None, Field(description="Agent of the decisive mistake, or null.")),
        responsible_step=(int | None, Field(description="Event seq of the decisive mistake, or null.")),
    )


def reply_model(taxonomy: Taxonomy) -> type[BaseModel]:
    """The reply model for ``taxonomy`` (cached per set of codes)."""
    return _reply_model(tuple(m.code for m in taxonomy.modes))


def finding_model(taxonomy: Taxonomy) -> type[BaseModel]:
    """The per-mode finding model of :func:`reply_model`."""
    field = reply_model(taxonomy).model_fields["modes"]
    annotation: Any = field.annotation
    return annotation.__args__[0]  # type: ignore[no-any-return]
