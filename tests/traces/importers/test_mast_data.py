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


SAMPLE = Path(__file__).resolve().parents[2] / "fixtures" / "mast_data" / "MAD_full_sample.json"


def test_full_sample_fixture_every_mas_style() -> None:
    errors: list[TraceLoadError] = []
    traces = {t.framework: t for t in mastkit.load_traces(SAMPLE, on_error=errors.append) if t.task_id != "8"}
    assert len(errors) == 1 and "record 4" in str(errors[0]) and "not a string" in str(errors[0])
    assert set(traces) == {"AG2", "ChatDev", "MetaGPT", "HyperAgent", "AppWorld", "OpenManus", "Magentic-One"}
    for t in traces.values():
        assert t.source_format == "mast_data" and t.segmentation == "heuristic"
        assert len({lab.native_code for lab in t.labels}) == 14
        assert all(lab.source == "llm" and lab.code and lab.code.startswith("FM-") for lab in t.labels)
        assert Trace.model_validate_json(t.model_dump_json()) == t
    chatdev = traces["ChatDev"]
    assert chatdev.task == "build a tip calculator" and chatdev.benchmark == "ProgramDev"
    assert [e.actor for e in chatdev.events if e.subtype == "chat_turn"] == [
        "Chief Product Officer",
        "Programmer",
    ]
    (call,) = [e for e in chatdev.events if e.kind == "llm_call"]
    assert call.usage is not None and (call.usage.input_tokens, call.usage.output_tokens) == (512, 40)
    assert chatdev.termination is not None and chatdev.termination.reason == "completed"
    assert {lab.code for lab in chatdev.labels if lab.present} == {"FM-1.3", "FM-3.2"}
    metagpt = traces["MetaGPT"]
    assert metagpt.task == "write a tip calculator" and metagpt.model == "Claude-3.7-Sonnet"
    assert [(e.kind, e.actor) for e in metagpt.events] == [
        ("message", "Alice"),
        ("llm_call", "Alice"),
        ("message", "Bob"),
    ]
    assert metagpt.total_usage().cost_usd == pytest.approx(0.002)
    assert {lab.code: lab.present for lab in metagpt.labels}["FM-3.3"] is None  # null = unavailable
    hyper = traces["HyperAgent"]
    assert [e.actor for e in hyper.events] == ["HyperAgent", "Planner", "Inner-Navigator-Assistant"]
    assert "Subgoal: locate parse()" in (hyper.events[1].content or "")  # continuation lines kept
    assert hyper.task == "Fix the crash in parse()." and hyper.outcome is None
    appworld = traces["AppWorld"]
    assert "Supervisor Agent" in {e.actor for e in appworld.events}
    assert "".join(e.content or "" for e in appworld.events) == appworld.raw["trace"]["trajectory"]
    manus = traces["OpenManus"]
    assert [e.kind for e in manus.events].count("llm_call") == 1 and manus.total_usage().input_tokens == 392
    assert "Manus" in {e.actor for e in manus.events}
    magentic = traces["Magentic-One"]
    assert magentic.outcome is not None and magentic.outcome.final_output == "525"
    assert magentic.outcome.success is None
    ag2 = traces["AG2"]
    assert ag2.outcome is not None and ag2.outcome.success is True
    (crashed,) = [t for t in mastkit.load_traces(SAMPLE, on_error=errors.append) if t.task_id == "8"]
    assert crashed.segmentation == "raw_unsegmented"
    assert crashed.events[0].content == "the run crashed before writing a log"


def test_big_array_memory_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """~20 MB of records: the first trace comes after reading a few chunks, and peak memory follows
    the reader's chunks and one record (a constant), not the file (~200 MB for the real one)."""
    import io
    import tracemalloc

    path = tmp_path / "MAD_full_dataset.json"
    rec = FULL[2]
    with path.open("w") as fh:
        fh.write("[")
        for i in range(200):
            trajectory = "---------- a ----------\n" + "y" * 100_000 + "\n---------- b ----------\nz\n" * 3
            fh.write(
                ("," if i else "")
                + json.dumps({**rec, "trace_id": i, "trace": {"key": "k", "trajectory": trajectory}})
            )
        fh.write("]")
    size = path.stat().st_size
    assert size > 20_000_000

    read = {"bytes": 0}
    real_open = Path.open

    class Counting(io.BufferedReader):
        def read(self, n: int | None = -1, /) -> bytes:
            data = super().read(n)
            read["bytes"] += len(data)
            return data

    def counting_open(self: Path, mode: str = "r", *args: object, **kwargs: object) -> object:
        if self == path and mode == "rb":
            return Counting(io.FileIO(str(self), "rb"))
        return real_open(self, mode, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(Path, "open", counting_open)
    tracemalloc.start()
    try:
        it = mastkit.load_traces(path)
        first = next(it)
        assert first.trace_id.endswith("/0")
        assert read["bytes"] < size / 2, (read["bytes"], size)  # lazy: most of the file is unread
        n = 1 + sum(1 for _ in it)
        _cur, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert n == 200 and read["bytes"] >= size
    assert peak < 40_000_000, peak


@pytest.mark.parametrize("text", ["", "plain words only", "{not json"])
def test_segment_fallback_keeps_text(text: str) -> None:
    segs, how, _doc = segment(text)
    assert "".join(s[1] for s in segs) == text
    assert how == "raw_unsegmented"


def test_line_start_patterns_find_first_and_adjacent_headers() -> None:
    from mastkit.traces.importers.mast_data import _MAGENTIC, segment

    text = "------ A ------\n------ B ------\nbody\n  ------ not a head ------\n------ C ------\nend"
    heads = _MAGENTIC.heads(text)
    assert [(start, groups[0]) for start, groups in heads] == [(0, "A"), (16, "B"), (64, "C")]
    segs, how, _doc = segment(text)
    assert how == "heuristic" and [s[0] for s in segs] == ["A", "B", "C"]
    assert "".join(s[1] for s in segs) == text


_HYPER = [
    "Task: fix parse()",
    "HyperAgent_repo__x-1 - INFO - Planner's Response: Thought: look at parse",
    "Subgoal: locate parse()",
    "HyperAgent_repo__x-1 - INFO - Inner-Navigator-Assistant's Response: found it",
    "HyperAgent_repo__x-1 - WARNING - no agent named here",
    "observation line",
    "x" * 170 + "_y - INFO - the prefix starts too late to count",
]


_ACTORS = [None, "Planner", "Inner-Navigator-Assistant", "HyperAgent"]


@pytest.mark.parametrize(
    ("lines", "actors", "fast"),
    [
        (_HYPER, _ACTORS, True),
        (_HYPER[1:], _ACTORS[1:], True),  # the first line is a head
        ([*_HYPER[:2], "two\nlines", *_HYPER[2:]], _ACTORS, False),  # an item holds a newline
        ([{"role": "user", "content": "q"}, *_HYPER], _ACTORS, False),  # mixed with chat messages
    ],
)
def test_hyperagent_lines_fast_scan_matches_item_by_item(
    lines: list[object], actors: list[str | None], fast: bool
) -> None:
    """Records start at '<run> - LEVEL - ' lines (the agent from "<X>'s Response:", else the run;
    a prefix that starts after column 160 does not count); other lines continue the open record."""
    from mastkit.traces.importers.mast_data import _from_json_doc, _hyper_lines

    segs = _from_json_doc({"trajectory": lines})
    assert segs is not None
    records = [s for s in segs if s[2] == "log_record"]
    assert [s[0] for s in records] == actors
    assert "\n".join(s[1] for s in records) == "\n".join(x for x in lines if isinstance(x, str))
    assert (_hyper_lines(lines) == segs) if fast else (_hyper_lines(lines) is None)
