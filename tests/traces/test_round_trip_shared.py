"""Lossless: every trace loaded from the shared data converts to canonical JSONL and loads back identical."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from conftest import shared_path
from mastkit.errors import TraceLoadError
from mastkit.traces import iter_load, load_traces
from mastkit.traces.ops import convert


@pytest.mark.parametrize("folder", ["trace_samples", "who_and_when", "mast_mad_human"])
def test_shared_data_round_trips(folder: str, tmp_path: Path) -> None:
    path = shared_path(folder)
    originals = [t for t in iter_load(path) if not isinstance(t, TraceLoadError)]
    assert originals
    buf = io.BytesIO()
    report = convert(path, buf)
    assert report.traces == len(originals)
    out = tmp_path / "canonical.jsonl"
    out.write_bytes(buf.getvalue())
    back = list(load_traces(out))
    assert [t.trace_id for t in back] == [t.trace_id for t in originals]
    for a, b in zip(originals, back, strict=True):
        # Identical serialisation (plain == would fail on NaN values some data sets contain).
        assert a.model_dump_json() == b.model_dump_json()
