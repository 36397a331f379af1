"""Redacting results: the free text of annotations and attributions (summaries, rationales,
evidence quotes and notes, attribution reasons, errors, extra), for shareable reports and
exports. Traces themselves are redacted by :func:`mastkit.llm.redact.redact_trace`; this
module adds the result types on top of the same :class:`~mastkit.llm.redact.Scrubber`.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from mastkit.annotate.model import Annotation, Evidence, ModeVerdict
from mastkit.attribute.model import Attribution
from mastkit.llm.redact import Scrubber, set_changed
from mastkit.providers.redact import Redactor

__all__ = ["ResultScrubber", "redact_annotation", "redact_attribution"]


class ResultScrubber(Scrubber):
    """A :class:`Scrubber` that also redacts annotations and attributions."""

    def attribution(self, a: Attribution) -> Attribution:
        changes: dict[str, Any] = {}
        set_changed(changes, "agent", a.agent, self.opt)
        set_changed(changes, "reason", a.reason, self.opt)
        return a.model_copy(update=changes) if changes else a

    def evidence(self, ev: Evidence) -> Evidence:
        changes: dict[str, Any] = {}
        for name in ("quote", "note", "agent"):
            set_changed(changes, name, getattr(ev, name), self.opt)
        return ev.model_copy(update=changes) if changes else ev

    def verdict(self, v: ModeVerdict) -> ModeVerdict:
        changes: dict[str, Any] = {}
        set_changed(changes, "rationale", v.rationale, self.opt)
        evidence = [self.evidence(ev) for ev in v.evidence]
        if any(a is not b for a, b in zip(evidence, v.evidence, strict=True)):
            changes["evidence"] = evidence
        set_changed(changes, "extra", v.extra, self.value)
        return v.model_copy(update=changes) if changes else v

    def annotation(self, a: Annotation) -> Annotation:
        changes: dict[str, Any] = {}
        verdicts = [self.verdict(v) for v in a.verdicts]
        if any(x is not y for x, y in zip(verdicts, a.verdicts, strict=True)):
            changes["verdicts"] = verdicts
        set_changed(changes, "summary", a.summary, self.opt)
        if a.attribution is not None:
            set_changed(changes, "attribution", a.attribution, self.attribution)
        set_changed(changes, "errors", a.errors, self.strings)
        set_changed(changes, "extra", a.extra, self.value)
        return a.model_copy(update=changes) if changes else a


def redact_annotation(
    annotation: Annotation, redactor: Redactor | None = None
) -> tuple[Annotation, Counter[str]]:
    """A copy of ``annotation`` with its free text (summary, rationales, evidence quotes and
    notes, attribution reason, errors, extra) redacted, and the counts."""
    s = ResultScrubber(redactor)
    return s.annotation(annotation), s.counts


def redact_attribution(attribution: Attribution, redactor: Redactor | None = None) -> Attribution:
    """A copy of ``attribution`` with its reason and agent redacted."""
    return ResultScrubber(redactor).attribution(attribution)
