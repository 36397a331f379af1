"""Pattern B: a reflection for the next attempt, written from another annotator's failure vector.

A :class:`Reflection` lists the failure modes an annotator (rules, or an LLM judge) found in
a finished run — what went wrong, where (event seqs, agents), the evidence quoted from the
trace, and what to do differently — most severe first (:mod:`mastkit.feedback.modes`).
:meth:`Reflection.render` turns it into text short enough to prepend to the next attempt's
prompt: under a token budget it drops the least severe problems first, then the optional
sentences (evidence, then what went wrong) of the last one kept, and never cuts a sentence.

:func:`reflect` builds a reflection offline from an :class:`~mastkit.annotate.Annotation`
(templated text: the verdict's rationale and evidence, the taxonomy's definition, and the
"what to do instead" hint of each mode). :mod:`mastkit.feedback.llm_reflect` has a model
write the text instead.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from mastkit.annotate.model import Annotation, ModeVerdict
from mastkit.attribute.model import Attribution
from mastkit.feedback.modes import category_weight, do_instead, severity, severity_rank
from mastkit.providers import Redactor, estimate_tokens
from mastkit.taxonomy import Taxonomy

__all__ = ["Reflection", "ReflectionItem", "order_items", "quote_text", "reflect"]

QUOTE_CHARS = 160
"""Longest evidence quote kept in a reflection (longer ones end with an ellipsis)."""
_REDACTOR = Redactor()


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ReflectionItem(_Model):
    """One problem of the previous attempt and what to do about it."""

    code: str
    name: str
    category: str
    severity: Literal["fatal", "high", "medium", "low"]
    steps: list[int] = Field(default_factory=list)
    """Event seqs where the problem shows."""
    agents: list[str] = Field(default_factory=list)
    what_went_wrong: str
    """One or two sentences."""
    evidence: list[str] = Field(default_factory=list)
    """Short quotes from the trace (redacted, on one line)."""
    do_instead: str
    """One instruction for the next attempt (a full sentence)."""
    confidence: float | None = None

    def _head(self, index: int) -> str:
        where = ""
        if self.steps:
            shown = self.steps[:4]
            where = (" at step " if len(shown) == 1 else " at steps ") + ", ".join(map(str, shown))
        if self.agents:
            where += (" (" if where else " by ") + ", ".join(self.agents[:3]) + (")" if where else "")
        return f"{index}. {self.code} {self.name} [{self.severity}]{where}."

    def sentences(self, index: int) -> list[tuple[int, str]]:
        """``(priority, sentence)`` in display order; a higher priority is dropped later."""
        out = [(3, self._head(index)), (1, _sentence("What went wrong: " + self.what_went_wrong))]
        if self.evidence:
            out.append((0, "Evidence: " + "; ".join(f'"{q}"' for q in self.evidence[:2]) + "."))
        out.append((2, _sentence("Instead: " + self.do_instead)))
        return out


class Reflection(_Model):
    """What went wrong in one run, for the next attempt, most severe problem first."""

    trace_id: str
    taxonomy_id: str = "mast"
    source: str = "rules"
    """Who wrote the text: ``rules`` (templated) or ``llm:<provider>:<model>``."""
    annotator: str | None = None
    """The configuration hash of the annotation the findings come from."""
    items: list[ReflectionItem] = Field(default_factory=list)
    decisive_step: int | None = None
    decisive_agent: str | None = None
    summary: str | None = None
    """One or two sentences on the run as a whole (the LLM writer gives one)."""

    def _header(self, shown: int) -> str:
        n = len(self.items)
        head = (
            f"A review of your previous attempt found {n} problem{'s' if n != 1 else ''}"
            + (", most severe first" if n > 1 else "")
            + "."
        )
        if self.decisive_step is not None:
            who = f" by {self.decisive_agent}" if self.decisive_agent else ""
            head += f" The decisive mistake was at step {self.decisive_step}{who}."
        return head

    def render(self, max_tokens: int | None = 400) -> str:
        """The reflection as text to prepend to a prompt, at most ``max_tokens`` (estimated at
        4 characters a token; None: no limit).

        Over the budget, the least severe problems are left out first (a closing line says how
        many), then the evidence and the "what went wrong" sentences of the last problem kept;
        a sentence is never cut. When not even the header fits, the result is empty."""
        if not self.items:
            return "A review of your previous attempt found no failure modes."
        for keep in range(len(self.items), 0, -1):
            text = self._compose(keep, min_priority=0)
            if _fits(text, max_tokens):
                return text
            if keep == 1:
                for floor in (1, 2):
                    text = self._compose(1, min_priority=floor)
                    if _fits(text, max_tokens):
                        return text
        header = self._header(0)
        return header if _fits(header, max_tokens) else ""

    def _compose(self, keep: int, *, min_priority: int) -> str:
        lines = [self._header(keep)]
        if self.summary and min_priority == 0:
            lines.append(_sentence(self.summary))
        for i, item in enumerate(self.items[:keep], start=1):
            floor = min_priority if i == keep else 0
            lines.append(" ".join(s for p, s in item.sentences(i) if p >= floor))
        left = len(self.items) - keep
        if left:
            lines.append(f"({left} less severe problem{'s' if left != 1 else ''} left out.)")
        return "\n".join(lines)


def _fits(text: str, max_tokens: int | None) -> bool:
    return max_tokens is None or estimate_tokens(text) <= max_tokens


def _sentence(text: str) -> str:
    text = " ".join(text.split())
    return text if text.endswith((".", "!", "?", '"')) else text + "."


def quote_text(text: str, limit: int = QUOTE_CHARS) -> str:
    """Trace text fit to be quoted in feedback: redacted, on one line, no double quotes, at most
    ``limit`` characters (an ellipsis marks a cut)."""
    flat = " ".join(_REDACTOR.redact(text)[0].split()).replace('"', "'")
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def order_items(items: Iterable[ReflectionItem], taxonomy: Taxonomy) -> list[ReflectionItem]:
    """``items`` most severe first: severity, then the category's weight, then confidence, then the
    earliest step, then taxonomy order (see :mod:`mastkit.feedback.modes`)."""
    order = {m.code: i for i, m in enumerate(taxonomy.modes)}

    def key(item: ReflectionItem) -> tuple[int, int, float, int, int]:
        try:
            mode = taxonomy.mode(item.code)
            rank, weight = severity_rank(mode, taxonomy), category_weight(mode, taxonomy)
        except KeyError:
            rank, weight = 0, 0
        first = min(item.steps) if item.steps else 1 << 30
        conf = item.confidence if item.confidence is not None else 0.5
        return (-rank, -weight, -conf, first, order.get(item.code, len(order)))

    return sorted(items, key=key)


def _steps_agents(v: ModeVerdict, attribution: Attribution | None) -> tuple[list[int], list[str]]:
    steps: list[int] = []
    agents: list[str] = []
    for e in v.evidence:
        for s in (e.seq_start, e.seq_end):
            if s is not None and s not in steps:
                steps.append(s)
        if e.agent and e.agent not in agents:
            agents.append(e.agent)
    if attribution is not None and attribution.mode == v.code:
        if attribution.step is not None and attribution.step not in steps:
            steps.append(attribution.step)
        if attribution.agent and attribution.agent not in agents:
            agents.append(attribution.agent)
    return sorted(steps), agents


def item_for(v: ModeVerdict, taxonomy: Taxonomy, attribution: Attribution | None = None) -> ReflectionItem:
    """The templated reflection item of one ``present`` verdict."""
    mode = taxonomy.mode(v.code)
    steps, agents = _steps_agents(v, attribution)
    why = v.rationale or next((e.note for e in v.evidence if e.note), None) or mode.definition
    quotes = [quote_text(e.quote) for e in v.evidence if e.quote and e.quote.strip()]
    return ReflectionItem(
        code=mode.code,
        name=mode.name,
        category=mode.category,
        severity=severity(mode, taxonomy),
        steps=steps,
        agents=[quote_text(a, 40) for a in agents],
        what_went_wrong=quote_text(why, 300),
        evidence=quotes[:2],
        do_instead=do_instead(mode, taxonomy),
        confidence=v.confidence,
    )


def reflect(
    annotation: Annotation, taxonomy: Taxonomy, *, attribution: Attribution | None = None
) -> Reflection:
    """The templated reflection of ``annotation`` (no model): one item per mode judged present,
    most severe first. ``attribution`` (the responsible agent and step) defaults to the
    annotation's own."""
    attribution = attribution or annotation.attribution
    items = [
        item_for(v, taxonomy, attribution)
        for v in annotation.verdicts
        if v.verdict == "present" and _known(v.code, taxonomy)
    ]
    return Reflection(
        trace_id=annotation.trace_id,
        taxonomy_id=taxonomy.id,
        source="rules",
        annotator=annotation.config_hash,
        items=order_items(items, taxonomy),
        decisive_step=attribution.step if attribution else None,
        decisive_agent=quote_text(attribution.agent, 40) if attribution and attribution.agent else None,
    )


def _known(code: str, taxonomy: Taxonomy) -> bool:
    try:
        taxonomy.mode(code)
    except KeyError:
        return False
    return True
