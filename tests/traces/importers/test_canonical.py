"""mastkit's canonical JSONL: what `traces convert` writes loads back identical, from any format."""

from __future__ import annotations

from pathlib import Path

import orjson

from conftest import FIXTURES
from mastkit.errors import TraceLoadError
from mastkit.traces import Trace, iter_load, load_traces


def _convert(traces: list[Trace], path: Path) -> Path:
    path.write_bytes(b"".join(orjson.dumps(t.model_dump(mode="json")) + b"\n" for t in traces))
    return path


def test_every_fixture_format_round_trips(tmp_path: Path) -> None:
    originals = list(
        load_traces(sorted(p for p in FIXTURES.iterdir() if p.is_dir()), on_error=lambda e: None)
    )
    formats = {t.source_format for t in originals}
    assert len(formats) >= 10
    back = list(load_traces(_convert(originals, tmp_path / "all.jsonl")))
    assert [t.source_format for t in back] == [t.source_format for t in originals]
    assert back == originals  # every field, every event, raw records included


def test_single_trace_object_file(tmp_path: Path) -> None:
    (t,) = list(load_traces(FIXTURES / "who_and_when" / "hc_small.json"))
    path = tmp_path / "one.json"
    path.write_text(t.model_dump_json(indent=2))
    assert list(load_traces(path)) == [t]


def test_bad_line_and_future_version_are_reported_per_line(tmp_path: Path) -> None:
    (t,) = list(load_traces(FIXTURES / "who_and_when" / "hc_small.json"))
    good = t.model_dump(mode="json")
    future = {**good, "schema_version": "9.0"}
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(
        b"\n".join([orjson.dumps(good), orjson.dumps(future), orjson.dumps({**good, "events": "x"})]) + b"\n"
    )
    items = list(iter_load(path))
    assert items[0] == t
    errors = [i for i in items if isinstance(i, TraceLoadError)]
    assert [e.line for e in errors] == [2, 3]
    assert "schema_version '9.0'" in errors[0].reason and "upgrade mastkit" in errors[0].reason
