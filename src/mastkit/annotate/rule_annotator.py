"""The rule annotator: every registered detector over one trace, no LLM."""

from __future__ import annotations

from mastkit.annotate.detectors._base import detector_for, detectors
from mastkit.annotate.model import Annotation, AnnotatorConfig, ModeVerdict
from mastkit.taxonomy import Taxonomy
from mastkit.traces.model import Trace

RULE_ANNOTATOR_VERSION = "rules-3"
"""Bumped when detector behaviour changes (2: parsed signals, taxonomy binding, measured confidences;
3: audited on real traces, reused call ids paired right)."""


def rule_annotator_config(taxonomy: Taxonomy) -> AnnotatorConfig:
    """The configuration (and so the cache key) of the rule annotator for ``taxonomy``."""
    return AnnotatorConfig(
        kind="rules",
        prompt_version=RULE_ANNOTATOR_VERSION,
        taxonomy_id=taxonomy.id,
        taxonomy_version=taxonomy.version,
        options={"detectors": [d.name for d in detectors(taxonomy)]},
    )


def run_detectors(trace: Trace, taxonomy: Taxonomy) -> list[ModeVerdict]:
    """One verdict per taxonomy mode: the detector's when there is one, else ``unknown``.

    Detectors bind to a mode of a taxonomy (its id and code), so a custom taxonomy that reuses
    a MAST code with another meaning gets ``unknown`` there, not MAST's detector."""
    verdicts = []
    for mode in taxonomy.modes:
        det = detector_for(taxonomy, mode.code)
        if det is None:
            verdicts.append(
                ModeVerdict(
                    code=mode.code,
                    verdict="unknown",
                    source="rule",
                    rationale=f"no rule detector for mode {mode.code} of taxonomy {taxonomy.id!r}",
                )
            )
            continue
        try:
            verdicts.append(det(trace))
        except Exception as exc:
            verdicts.append(
                ModeVerdict(
                    code=mode.code,
                    verdict="unknown",
                    source=f"rule:{det.name}",
                    rationale=f"detector error: {type(exc).__name__}: {exc}",
                )
            )
    return verdicts


class RuleAnnotator:
    """The offline default annotator (rule detectors only)."""

    def __init__(self, taxonomy: Taxonomy) -> None:
        self.taxonomy = taxonomy
        self.config = rule_annotator_config(taxonomy)

    async def annotate(self, trace: Trace) -> Annotation:
        return annotate_rules(trace, self.taxonomy)


def annotate_rules(trace: Trace, taxonomy: Taxonomy) -> Annotation:
    """Annotate ``trace`` with the rule detectors."""
    config = rule_annotator_config(taxonomy)
    verdicts = run_detectors(trace, taxonomy)
    errors = [
        f"{v.code}: {v.rationale}" for v in verdicts if (v.rationale or "").startswith("detector error")
    ]
    return Annotation(
        trace_id=trace.trace_id,
        config=config,
        config_hash=config.config_hash(),
        verdicts=verdicts,
        errors=errors,
    )
