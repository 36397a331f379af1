"""The rule annotator on the bundled examples: each deliberate failure a detector covers is found,
nothing else a detector covers is reported, and the controls come out clean."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import mastkit
from mastkit import load_traces
from mastkit.annotate.detectors._base import detectors
from mastkit.annotate.rule_annotator import annotate_rules
from mastkit.taxonomy import load_taxonomy

EXAMPLES = Path(mastkit.__file__).resolve().parent / "examples"
MANIFEST = json.loads((EXAMPLES / "manifest.json").read_text(encoding="utf-8"))
COVERED = {d.code for d in detectors()}


def _trace(entry: dict[str, object]) -> mastkit.Trace | None:
    traces = list(load_traces(EXAMPLES / str(entry["file"]), on_error=lambda e: None))
    tid = entry.get("trace_id")
    if tid:
        return next((t for t in traces if t.trace_id == tid), None)
    return traces[0] if len(traces) == 1 else None


@pytest.mark.parametrize("entry", MANIFEST, ids=lambda e: e.get("trace_id") or e["file"])
def test_rules_find_the_deliberate_failures(entry: dict[str, object]) -> None:
    trace = _trace(entry)
    if trace is None:
        pytest.skip(f"{entry['file']}: not loaded (importer for {entry['format']!r} missing)")
    tid = trace.trace_id
    ann = annotate_rules(trace, load_taxonomy("mast"))
    expected = set(entry["expected_modes"]) & COVERED  # type: ignore[arg-type]
    found = set(ann.present()) & COVERED
    assert found == expected, f"{tid}: expected {sorted(expected)}, rules found {sorted(found)}"
    for code in found:
        v = ann.verdict(code)
        assert v is not None and v.evidence, f"{code} has no evidence"
        seqs = (entry.get("evidence_seqs") or {}).get(code)  # type: ignore[attr-defined]
        if seqs:
            cited = {
                s
                for ev in v.evidence
                for s in range(ev.seq_start or 0, (ev.seq_end or ev.seq_start or 0) + 1)
            }
            assert cited & set(seqs), f"{code}: evidence {sorted(cited)} misses the documented events {seqs}"
