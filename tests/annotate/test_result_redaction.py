"""Result redaction shares what it does not change and uses the redactor it is given."""

from __future__ import annotations

from mastkit.annotate.model import Annotation, AnnotatorConfig, Evidence, ModeVerdict
from mastkit.annotate.redact import ResultScrubber, redact_annotation, redact_attribution
from mastkit.attribute.model import Attribution
from mastkit.providers.redact import Redactor

CONFIG = AnnotatorConfig(kind="rules", prompt_version="r", taxonomy_id="mast", taxonomy_version="1")
EMAIL = "alice@acme-corp.io"


def test_clean_parts_are_returned_as_they_are() -> None:
    s = ResultScrubber()
    a = Attribution(agent="Coder", step=1, reason="adds wrong", method="rules")
    assert s.attribution(a) is a
    ev = Evidence(seq_start=1, quote="plain words", note="a note", agent="Coder")
    assert s.evidence(ev) is ev
    assert redact_attribution(a) is a


def test_the_given_redactor_is_used() -> None:
    verdict = ModeVerdict(code="FM-1.1", verdict="present", rationale=f"mail {EMAIL}")
    annotation = Annotation(
        trace_id="t",
        config=CONFIG,
        config_hash=CONFIG.config_hash(),
        verdicts=[verdict],
        summary=f"by {EMAIL}",
    )
    kept, counts = redact_annotation(annotation, Redactor(pii=False))
    assert kept.summary == f"by {EMAIL}" and not counts
    scrubbed, counts = redact_annotation(annotation)
    assert EMAIL not in (scrubbed.summary or "") and counts["email"] == 2
    assert redact_attribution(Attribution(reason=EMAIL, method="m"), Redactor(pii=False)).reason == EMAIL
