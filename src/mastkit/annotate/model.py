"""The failure vector: what an annotator says about one trace under one taxonomy.

For each mode of the taxonomy a :class:`ModeVerdict` says ``present``, ``absent`` or
``unknown`` — and ``unknown`` is never turned into ``absent`` silently: a judge reply
that could not be parsed, a detector that cannot judge, a mode the annotator does not
cover, all stay ``unknown`` with the reason.

An :class:`AnnotatorConfig` (kind, model, prompt version, taxonomy version, options) has
a stable hash that identifies the run; the store caches and resumes by it.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field

from mastkit.attribute.model import Attribution

ANNOTATION_SCHEMA_VERSION = "1.0"

VerdictValue = Literal["present", "absent", "unknown"]
AnnotatorKind = Literal["rules", "llm", "hybrid"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Evidence(_Model):
    """Where a verdict is seen in the trace."""

    quote: str | None = None
    """Short verbatim excerpt from the trace."""
    seq_start: int | None = None
    """First event seq of the evidence."""
    seq_end: int | None = None
    """Last event seq (inclusive); equals seq_start for one event."""
    agent: str | None = None
    """Agent the evidence belongs to."""
    note: str | None = None
    """What this piece of evidence shows."""


class ModeVerdict(_Model):
    """The verdict on one failure mode."""

    code: str
    """Mode code in the taxonomy (``FM-1.3``)."""
    verdict: VerdictValue
    """present / absent / unknown."""
    confidence: float | None = None
    """0..1, when the annotator gives one."""
    evidence: list[Evidence] = Field(default_factory=list)
    """Where it shows (required for ``present`` from the judge; rule detectors always give it)."""
    rationale: str | None = None
    """Short reason; for ``unknown``, why the annotator could not judge."""
    source: str = ""
    """Who decided: ``rule:<detector>``, ``judge:<provider>:<model>``, ``merge``."""
    extra: dict[str, Any] = Field(default_factory=dict)
    """Per-window verdicts, votes, detector details."""


class AnnotatorConfig(_Model):
    """What produced an annotation. Its hash identifies a run for caching and resume."""

    kind: AnnotatorKind = "rules"
    model: str | None = None
    """``provider:model`` for llm/hybrid."""
    prompt_version: str | None = None
    taxonomy_id: str = "mast"
    taxonomy_version: str = ""
    options: dict[str, Any] = Field(default_factory=dict)
    """Annotator options that change results (self-consistency k, window size, detector set...)."""

    def config_hash(self) -> str:
        """A stable, versioned hash of the configuration (``a1:`` + sha256 of canonical JSON)."""
        data = orjson.dumps(self.model_dump(mode="json"), option=orjson.OPT_SORT_KEYS)
        return "a1:" + hashlib.sha256(data).hexdigest()[:32]


class Annotation(_Model):
    """One trace's failure vector from one annotator configuration."""

    schema_version: str = ANNOTATION_SCHEMA_VERSION
    trace_id: str
    config: AnnotatorConfig
    config_hash: str
    verdicts: list[ModeVerdict]
    """One per taxonomy mode, in taxonomy order."""
    summary: str | None = None
    """Trace-level summary of what went wrong."""
    predicted_success: bool | None = None
    """The annotator's guess whether the task succeeded."""
    attribution: Attribution | None = None
    """Responsible agent and step, when the annotator can tell."""
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    model_calls: int = 0
    errors: list[str] = Field(default_factory=list)
    """Problems met while annotating (unparseable replies, windows that failed...)."""
    created_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    extra: dict[str, Any] = Field(default_factory=dict)

    def verdict(self, code: str) -> ModeVerdict | None:
        return next((v for v in self.verdicts if v.code == code), None)

    def present(self) -> list[str]:
        """Codes judged present."""
        return [v.code for v in self.verdicts if v.verdict == "present"]

    def vector(self) -> dict[str, VerdictValue]:
        """``{code: verdict}`` for every mode."""
        return {v.code: v.verdict for v in self.verdicts}
