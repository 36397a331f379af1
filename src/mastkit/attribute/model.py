"""The attribution of a failure: the agent and the step held responsible.

Owned by ``attribute`` (the rule attributor and the LLM attributor produce it); the judge's
annotation carries one too (:class:`mastkit.annotate.model.Annotation.attribution`), which is
why this module imports nothing from the rest of mastkit.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["Attribution"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Attribution(_Model):
    """The agent and step held responsible for a failure."""

    agent: str | None = None
    step: int | None = None
    """Event seq of the decisive step."""
    reason: str | None = None
    mode: str | None = None
    """The failure mode the step maps to."""
    confidence: float | None = None
    method: str | None = None
    """rules, all-at-once, step-by-step, binary-search, judge."""
