"""The rule annotator's configuration and its handling of a failing detector (docs/mutation.md)."""

from __future__ import annotations

import pytest

from mastkit.annotate.detectors import _base
from mastkit.annotate.detectors._base import Detector, detectors
from mastkit.annotate.model import ModeVerdict
from mastkit.annotate.rule_annotator import RULE_ANNOTATOR_VERSION, annotate_rules, rule_annotator_config
from mastkit.taxonomy import load_taxonomy
from mastkit.traces.model import Event, Trace

MAST = load_taxonomy("mast")


def test_config_names_kind_version_taxonomy_and_detectors() -> None:
    config = rule_annotator_config(MAST)
    assert (config.kind, config.prompt_version, config.taxonomy_id, config.taxonomy_version) == (
        "rules",
        RULE_ANNOTATOR_VERSION,
        MAST.id,
        MAST.version,
    )
    assert RULE_ANNOTATOR_VERSION == "rules-3"
    assert config.options == {"detectors": [d.name for d in detectors()]}
    assert "step_repetition" in config.options["detectors"]


def test_a_failing_detector_becomes_an_unknown_verdict_and_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(trace: Trace) -> ModeVerdict:
        raise RuntimeError("boom")

    detectors()  # discover the real ones first, then swap one for a broken one
    monkeypatch.setitem(_base._DETECTORS, ("mast", "FM-1.1"), Detector("FM-1.1", "broken", broken, "raises"))
    trace = Trace(
        trace_id="t", source_format="test", events=[Event(seq=0, kind="message", actor="a", content="hi")]
    )
    a = annotate_rules(trace, MAST)
    assert a.errors == ["FM-1.1: detector error: RuntimeError: boom"]
    (v,) = [v for v in a.verdicts if v.code == "FM-1.1"]
    assert (v.verdict, v.source, v.rationale) == (
        "unknown",
        "rule:broken",
        "detector error: RuntimeError: boom",
    )
    assert [v.code for v in a.verdicts] == [m.code for m in MAST.modes]
    assert a.config_hash == rule_annotator_config(MAST).config_hash()
