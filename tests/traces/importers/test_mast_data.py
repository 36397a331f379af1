from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

import mastkit
from conftest import shared_path
from mastkit._util.mast_legacy import MAST14_NAMES
from mastkit.errors import TraceLoadError
from mastkit.traces.importers.mast_data import segment
from mastkit.traces.model import Trace


def _human() -> list[Trace]:
    return list(mastkit.load_traces(shared_path("mast_mad_human", "MAD_human_labelled_dataset.json")))


def test_human_file_loads_19_traces_with_three_annotators_each() -> None:
    traces = _human()
    assert len(traces) == 19
    assert {t.source_format for t in traces} == {"mast_data"}
    assert Counter(t.framework for t in traces) == Counter(
        {
            "ChatDev": 4,
            "MetaGPT": 4,
            "AG2": 3,
            "AppWorld": 3,
            "HyperAgent": 3,
            "Magentic-One": 1,
            "OpenManus": 1,
        }
    )
    # the two GAIA rows have MAS and benchmark swapped in the release: fixed, originals kept in raw
    gaia = [t for t in traces if t.benchmark == "GAIA"]
    assert len(gaia) == 2 and all(t.raw["mas_name"] == "GAIA" for t in gaia)
    rounds = Counter(str(t.raw.get("round")) for t in traces)
    assert rounds["Round 1"] == 5 and rounds["Generlazability"] == 4
    for t in traces:
        annotators = {lab.annotator for lab in t.labels}
        assert annotators == {"annotator_1", "annotator_2", "annotator_3"}
        assert all(lab.source == "human" and lab.taxonomy == "mast" for lab in t.labels)
        mapped = {lab.code for lab in t.labels if lab.code}
        assert mapped <= set(MAST14_NAMES)
        # 14 final modes are reachable from every round
        assert len(mapped) == 14, (t.trace_id, sorted(mapped))


def test_legacy_codes_are_remapped_by_round() -> None:
    traces = _human()
    r1 = next(t for t in traces if t.raw.get("round") == "Round 1")
    by_native = {lab.native_code: lab.code for lab in r1.labels}
    assert by_native["2.2"] == "FM-1.3"  # round 1 "Step repetition"
    assert by_native["4.3"] == "FM-3.2"
    assert by_native["1.3"] is None  # dropped mode
    final = next(t for t in traces if t.raw.get("round") == "Generlazability")
    assert all(lab.code == f"FM-{lab.native_code}" for lab in final.labels)


def test_text_segmenters_keep_every_character() -> None:
    for t in _human():
        text = t.raw["trace"]
        assert isinstance(text, str)
        if not text.lstrip().startswith("{"):
            assert "".join(e.content or "" for e in t.events) == text, t.trace_id
        assert t.events, t.trace_id
    chatdev = next(t for t in _human() if t.framework == "ChatDev")
    assert chatdev.segmentation == "heuristic"
    assert {"Programmer", "Code Reviewer"} <= {e.actor for e in chatdev.events}


def test_round_trip() -> None:
    for t in _human():
        assert Trace.model_validate_json(t.model_dump_json()) == t


FULL = [
    {
        "mas_name": "AG2", "llm_name": "GPT-4o", "benchmark_name": "GSMPlus", "trace_id": 1,
        "trace": {"key": "AG2_GSMPlus_GPT4o", "index": 1, "trajectory": json.dumps({
            "problem_statement": ["What is 2+3?"], "other_data": {"correct": False},
            "trajectory": [{"content": ["What is 2+3?"], "role": "user", "name": "mathproxyagent"},
                           {"content": ["6"], "role": "assistant", "name": "assistant"},
                           {"content": ["Continue."], "role": "user", "name": "mathproxyagent"}]})},
        "mast_annotation": {"1.1": 0, "1.3": 1, "1.5": 1, "3.2": None},
    },
    {"mas_name": "ChatDev", "llm_name": "Claude", "benchmark_name": "ProgramDev", "trace_id": 2},  # no trace: bad
    {
        "mas_name": "Magentic", "llm_name": "GPT-4o", "benchmark_name": "GAIA", "trace_id": 3,
        "trace": {"key": "Magentic_GAIA_GPT4o", "index": 3, "trajectory":
                  "intro\n---------- user ----------\nFind X.\n---------- Orchestrator ----------\nPlan.\n"
                  "---------- WebSurfer ----------\nSearched.\n"},
        "mast_annotation": {"2.3": 1},
    },
]  # fmt: skip


def test_full_file_records_bad_record_reported_rest_loaded(tmp_path: Path) -> None:
    path = tmp_path / "MAD_full_dataset.json"
    path.write_text(json.dumps(FULL))
    errors: list[TraceLoadError] = []
    traces = list(mastkit.load_traces(path, on_error=errors.append))
    assert [t.trace_id for t in traces] == ["mast/AG2_GSMPlus_GPT4o/1", "mast/Magentic_GAIA_GPT4o/3"]
    assert len(errors) == 1 and "record 1" in str(errors[0])
    ag2 = traces[0]
    assert ag2.model == "GPT-4o" and ag2.outcome is not None and ag2.outcome.success is False
    assert [e.actor for e in ag2.events] == ["mathproxyagent", "assistant", "mathproxyagent"]
    labels = {lab.code: lab.present for lab in ag2.labels}
    assert labels == {"FM-1.1": False, "FM-1.3": True, "FM-1.5": True, "FM-3.2": None}
    assert all(lab.source == "llm" for lab in ag2.labels)
    mag = traces[1]
    assert mag.framework == "Magentic-One"
    assert [e.actor for e in mag.events] == [None, "user", "Orchestrator", "WebSurfer"]


def test_big_array_streams(tmp_path: Path) -> None:
    """A large array is read element by element: the first trace comes before the file is parsed."""
    path = tmp_path / "MAD_full_dataset.json"
    rec = FULL[2]
    with path.open("w") as fh:
        fh.write("[")
        for i in range(400):
            fh.write(
                ("," if i else "")
                + json.dumps({**rec, "trace_id": i, "trace": {**rec["trace"], "trajectory": "x" * 50_000}})
            )  # type: ignore[dict-item]
        fh.write("]")
    assert path.stat().st_size > 19_000_000
    it = mastkit.load_traces(path)
    first = next(it)
    assert first.trace_id.endswith("/0")
    assert sum(1 for _ in it) == 399


@pytest.mark.parametrize("text", ["", "plain words only", "{not json"])
def test_segment_fallback_keeps_text(text: str) -> None:
    segs, how, _doc = segment(text)
    assert "".join(s[1] for s in segs) == text
    assert how == "raw_unsegmented"
