from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import orjson
import pytest

import mastkit
from mastkit.errors import FormatError, NotThisFormat, TraceLoadError, UnknownFormatError
from mastkit.traces import iter_load, load_traces
from mastkit.traces.model import Trace
from mastkit.traces.registry import Importer, candidates, register, unregister
from mastkit.traces.source import Source

CHAT = {
    "id": "run-1",
    "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}],
}


@contextmanager
def _registered(cls: type[Importer]) -> Iterator[None]:
    """A throwaway importer, registered for the ``with`` block only."""
    register(cls)
    try:
        yield
    finally:
        unregister(cls.name)


def write(path: Path, data: bytes | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def errors_of(paths: object) -> list[TraceLoadError]:
    return [x for x in iter_load(paths) if isinstance(x, TraceLoadError)]  # type: ignore[arg-type]


def test_public_api_loads_a_file(tmp_path: Path) -> None:
    p = write(tmp_path / "run.json", orjson.dumps(CHAT))
    (trace,) = mastkit.load_traces(p)
    assert trace.trace_id == "run-1"
    assert [e.content for e in trace.events] == ["hi", "hello"]


def test_jsonl_with_a_bom_then_a_blank_line_loads(tmp_path: Path) -> None:
    """A UTF-8 BOM alone on the first line: the file is sniffed as JSONL past it, and its lines load
    (the BOM line was a bad record, so no importer recognised the file)."""
    lines = orjson.dumps(CHAT) + b"\n" + orjson.dumps({**CHAT, "id": "run-2"}) + b"\n"
    p = write(tmp_path / "runs.jsonl", b"\xef\xbb\xbf\n" + lines)
    assert [t.trace_id for t in load_traces(p)] == ["run-1", "run-2"]


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"", "empty file"),
        (b" \n\t\n", "empty file (only whitespace)"),
        (b"\x00\x01\x02\x03binary", "binary file"),
        (b'{"history": [1, 2', "invalid JSON"),
        (b'{"some": "thing"}', "no importer recognises"),
        (b"[1, 2, 3]", "no importer recognises"),
    ],
)
def test_bad_files_give_one_clear_error(tmp_path: Path, data: bytes, reason: str) -> None:
    p = write(tmp_path / "bad.json", data)
    (err,) = errors_of(p)
    assert str(p) in str(err)
    assert reason in err.reason
    assert not err.internal


def test_truncated_json_error_has_position(tmp_path: Path) -> None:
    p = write(tmp_path / "t.json", orjson.dumps(CHAT)[:-10])
    (err,) = errors_of(p)
    assert err.line == 1 and err.offset is not None


def test_wrong_encoding_is_reported_with_offset(tmp_path: Path) -> None:
    p = write(tmp_path / "latin.log", "User: caf\xe9\nAssistant: ok\n".encode("latin-1"))
    (err,) = errors_of(p)
    assert "not valid UTF-8" in err.reason and err.offset == 9
    assert err.tried == ["plain_text"]


def test_missing_path(tmp_path: Path) -> None:
    (err,) = errors_of(tmp_path / "nope.json")
    assert "no such file" in err.reason


def test_load_traces_raises_without_on_error(tmp_path: Path) -> None:
    p = write(tmp_path / "bad.json", b"\x00\x00")
    with pytest.raises(TraceLoadError):
        list(load_traces(p))


def test_folder_reports_errors_per_file_and_loads_the_rest(tmp_path: Path) -> None:
    write(tmp_path / "a" / "good1.json", orjson.dumps(CHAT))
    write(tmp_path / "a" / "bad.json", b'{"messages": [')
    write(tmp_path / "b" / "good2.json", orjson.dumps({**CHAT, "id": "run-2"}))
    write(tmp_path / "b" / "empty.json", b"")
    write(tmp_path / "LICENSE", "MIT License ...")
    write(tmp_path / "README.md", "# not a trace")
    errors: list[TraceLoadError] = []
    traces = list(load_traces(tmp_path, on_error=errors.append))
    assert sorted(t.trace_id for t in traces) == ["run-1", "run-2"]
    assert sorted(Path(e.path).name for e in errors) == ["bad.json", "empty.json"]


def test_jsonl_bad_line_does_not_stop_the_file(tmp_path: Path) -> None:
    lines = [orjson.dumps({**CHAT, "id": f"r{i}"}) for i in range(3)]
    p = write(tmp_path / "runs.jsonl", lines[0] + b"\n{not json\n" + lines[1] + b"\n" + lines[2][:-5] + b"\n")
    items = list(iter_load(p))
    assert [t.trace_id for t in items if not isinstance(t, TraceLoadError)] == ["r0", "r1"]
    errs = [e for e in items if isinstance(e, TraceLoadError)]
    assert [e.line for e in errs] == [2, 4]


def test_forced_format(tmp_path: Path) -> None:
    p = write(tmp_path / "x.txt", "Alice: hi\nBob: hello\nAlice: bye\n")
    (t,) = load_traces(p, format="plain_text")
    assert t.actors() == ["Alice", "Bob"] and t.segmentation == "heuristic"
    with pytest.raises(KeyError, match="unknown format"):
        list(load_traces(p, format="nope"))


def test_unexpected_importer_crash_is_flagged_internal(tmp_path: Path) -> None:
    class Crashing(Importer):
        name = "zz_crashing_test"

        def sniff(self, src: Source) -> float:
            return 0.99 if src.name == "crash.json" else 0.0

        def load(self, src: Source) -> Iterator[mastkit.Trace | TraceLoadError]:
            raise RecursionError("boom")

    with _registered(Crashing):
        p = write(tmp_path / "crash.json", orjson.dumps(CHAT))
        (err,) = errors_of(p)
        assert err.internal and "RecursionError" in err.reason


def test_format_error_falls_through_to_next_importer(tmp_path: Path) -> None:
    class Picky(Importer):
        name = "zz_picky_test"

        def sniff(self, src: Source) -> float:
            return 0.99 if src.name == "picky.json" else 0.0

        def load(self, src: Source) -> Iterator[mastkit.Trace | TraceLoadError]:
            raise FormatError("not mine after all")

    with _registered(Picky):
        p = write(tmp_path / "picky.json", orjson.dumps(CHAT))
        (t,) = load_traces(p)
        assert t.source_format == "chat_messages"


def _failing(name: str, score: float, exc: FormatError) -> type[Importer]:
    """A throwaway importer that claims ``*.zzfail`` files at ``score`` and then raises ``exc``."""

    class _Failing(Importer):
        def sniff(self, src: Source) -> float:
            return score if src.path.suffix == ".zzfail" else 0.0

        def load(self, src: Source) -> Iterator[mastkit.Trace | TraceLoadError]:
            raise exc

    _Failing.name = name
    return _Failing


def test_when_every_claim_fails_the_most_confident_reason_is_reported(tmp_path: Path) -> None:
    """The reason of the importer that claimed the file best, not of the last one tried; an
    importer that found the file to be another format's gives its reason only when nobody else did."""
    p = write(tmp_path / "x.zzfail", "zz\n")
    sure = _failing("zz_sure_test", 0.85, FormatError("no widgets in the file", line=3))
    unsure = _failing("zz_unsure_test", 0.2, FormatError("no gadgets found"))
    handing_on = _failing("zz_handing_on_test", 0.9, NotThisFormat("gadgets further down: not mine"))
    with _registered(sure), _registered(unsure):
        (err,) = errors_of(p)
        assert (err.reason, err.line, err.tried) == (
            "no widgets in the file",
            3,
            ["zz_sure_test", "zz_unsure_test"],
        )
        assert err.importer == "zz_sure_test"
        assert str(err).endswith(
            "no widgets in the file [tried: zz_sure_test, zz_unsure_test; reason from zz_sure_test]"
        )
        with _registered(handing_on):
            (err,) = errors_of(p)
            assert err.reason == "no widgets in the file"
            assert err.tried == ["zz_handing_on_test", "zz_sure_test", "zz_unsure_test"]
    with _registered(handing_on):
        (err,) = errors_of(p)
        assert err.reason == "gadgets further down: not mine" and err.tried == ["zz_handing_on_test"]


def test_a_bad_record_names_the_importer_that_read_the_file(tmp_path: Path) -> None:
    """Per-record errors come from the importer; the loader adds its name, and the message says it."""
    p = write(tmp_path / "runs.jsonl", orjson.dumps(CHAT) + b"\n{not json\n")
    (err,) = errors_of(p)
    assert err.tried == ["chat_messages"] and err.importer == "chat_messages"
    assert str(err).startswith(f"{p}:2: invalid JSON") and str(err).endswith("[tried: chat_messages]")


def test_unknown_format_error_type(tmp_path: Path) -> None:
    p = write(tmp_path / "x.json", b'{"weird": true}')
    (err,) = errors_of(p)
    assert isinstance(err, UnknownFormatError)
    assert "first record keys: weird" in err.reason


def test_gc_is_paused_only_while_a_trace_is_built(tmp_path: Path) -> None:
    import gc

    during: list[bool] = []

    class _Recorder(Importer):
        name = "zz_gc_recorder_test"

        def sniff(self, src: Source) -> float:
            return 1.0 if src.path.suffix == ".zzgc" else 0.0

        def load(self, src: Source) -> Iterator[Trace | TraceLoadError]:
            during.append(gc.isenabled())  # while the loader builds this trace
            yield Trace(trace_id=src.path.stem, source_format=self.name)

    for i in range(3):
        (tmp_path / f"run{i}.zzgc").write_text("x")
    with _registered(_Recorder):
        assert gc.isenabled()
        between = []
        for _trace in load_traces(tmp_path):
            between.append(gc.isenabled())  # the caller's code runs with the collector on
        assert during == [False, False, False] and between == [True, True, True] and gc.isenabled()
        gc.disable()  # a caller that turned it off keeps it off
        try:
            assert len(list(load_traces(tmp_path))) == 3
            assert not gc.isenabled()
        finally:
            gc.enable()


def test_unregistered_importer_is_no_longer_offered(tmp_path: Path) -> None:
    path = tmp_path / "x.zzfmt"
    path.write_text("zz format\n")

    class _Claimer(Importer):
        name = "zz_claimer_test"

        def sniff(self, src: Source) -> float:
            return 1.0 if src.path.suffix == ".zzfmt" else 0.0

        def load(self, src: Source) -> Iterator[Trace | TraceLoadError]:
            yield Trace(trace_id="zz", source_format=self.name)

    with _registered(_Claimer):
        assert [t.source_format for t in load_traces(path)] == ["zz_claimer_test"]
    assert all(imp.name != "zz_claimer_test" for _score, imp in candidates(Source(path)))


def test_a_claimed_folder_is_sniffed_once(tmp_path: Path) -> None:
    """The walker asks the importers whether a folder is a trace, then the loader needs the same
    answer: sniffing (which may read files inside) runs once per folder."""
    sniffs: list[str] = []

    class _FolderFormat(Importer):
        name = "zz_folder_test"
        handles_dirs = True

        def sniff(self, src: Source) -> float:
            if src.is_dir:
                sniffs.append(src.path.name)
            return 1.0 if src.is_dir and src.path.name.endswith(".zzrun") else 0.0

        def load(self, src: Source) -> Iterator[Trace | TraceLoadError]:
            yield Trace(trace_id=src.path.name, source_format=self.name)

    (tmp_path / "a.zzrun").mkdir()
    (tmp_path / "a.zzrun" / "part.txt").write_text("x")
    with _registered(_FolderFormat):
        assert [t.trace_id for t in load_traces(tmp_path)] == ["a.zzrun"]
    assert sniffs.count("a.zzrun") == 1
