"""``--shard i/N``: every trace in exactly one shard, chosen by content, in the library and the CLI."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.annotate._judgekit import simple_trace
from typer.testing import CliRunner

from mastkit.errors import MastkitError
from mastkit.scale import Shard, in_shard, parse_shard, shard_of
from mastkit.store import Store
from mastkit.store.db import trace_hash
from mastkit.traces.ops import to_json


def _traces(n: int) -> list:
    return [simple_trace(f"t{i}", [f"task {i}", f"answer {i}", "ok"]) for i in range(n)]


@pytest.mark.parametrize("count", [1, 2, 3, 7])
def test_shards_cover_every_trace_exactly_once(count: int) -> None:
    traces = _traces(120)
    seen: dict[str, int] = {}
    for i in range(count):
        for t in in_shard(traces, Shard(i, count)):
            assert t.trace_id not in seen, f"{t.trace_id} in shards {seen[t.trace_id]} and {i}"
            seen[t.trace_id] = i
    assert sorted(seen) == sorted(t.trace_id for t in traces)
    sizes = [list(seen.values()).count(i) for i in range(count)]
    assert min(sizes) >= 120 / count / 2, sizes  # no shard starved: the hash spreads them


def test_the_shard_is_chosen_by_content_not_by_id_or_path() -> None:
    t = simple_trace("same", ["a", "b"])
    moved = t.model_copy(update={"source_paths": ["/elsewhere/run.json"]})
    for count in (2, 5, 11):
        assert Shard(shard_of(trace_hash(t), count), count).holds(moved)
    # versions of one trace id (edited content) spread over the shards like any other traces
    versions = [simple_trace("same", [f"version {i}", "b"]) for i in range(40)]
    assert {shard_of(trace_hash(v), 2) for v in versions} == {0, 1}
    assert sum(Shard(0, 2).holds(v) for v in versions) not in (0, 40)


def test_shard_numbers_are_fixed() -> None:
    # job arrays rely on the same trace going to the same shard on every machine and release
    h = "t2:0123456789abcdef0123456789abcdef"
    assert [shard_of(h, n) for n in (2, 3, 10, 1000)] == [1, 2, 9, 479]


@pytest.mark.parametrize("text", ["0/1", "2/4", " 3 / 4 "])
def test_parse_shard(text: str) -> None:
    s = parse_shard(text)
    assert 0 <= s.index < s.count
    assert str(s) == text.replace(" ", "")


@pytest.mark.parametrize("text", ["4/4", "1", "a/b", "-1/3", "0/0", "1/2/3"])
def test_bad_shards_are_refused(text: str) -> None:
    with pytest.raises(MastkitError, match="i/N"):
        parse_shard(text)


def test_annotate_shards_on_the_cli_cover_the_input_once(tmp_path: Path) -> None:
    from mastkit.cli.main import app

    src = tmp_path / "traces"
    src.mkdir()
    traces = _traces(24)
    for t in traces:
        (src / f"{t.trace_id}.json").write_bytes(to_json(t))
    annotated: list[str] = []
    for i in range(3):
        db = tmp_path / f"shard-{i}.db"
        result = CliRunner().invoke(app, ["annotate", str(src), "--db", str(db), "--shard", f"{i}/3"])
        assert result.exit_code == 0, result.output
        with Store(db) as store:
            annotated += [a.trace_id for a in store.annotations()]
    assert sorted(annotated) == sorted(t.trace_id for t in traces)

    bad = CliRunner().invoke(app, ["annotate", str(src), "--db", str(tmp_path / "x.db"), "--shard", "3/3"])
    assert bad.exit_code == 2
    assert "i/N" in bad.output


def test_ray_is_imported_only_by_the_ray_engine() -> None:
    """``annotate``/``attribute`` and :mod:`mastkit.scale` start without Ray (it takes seconds)."""
    import subprocess
    import sys

    code = (
        "import sys, mastkit.cli.main, mastkit.cli.annotate, mastkit.cli.attribute, mastkit.scale;"
        "print('ray' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_shard_stores_merge_into_the_store_of_one_run(tmp_path: Path) -> None:
    from mastkit.cli.main import app
    from mastkit.scale.merge import main as merge_main
    from mastkit.scale.merge import merge_stores

    src = tmp_path / "traces"
    src.mkdir()
    for t in _traces(20):
        (src / f"{t.trace_id}.json").write_bytes(to_json(t))

    def run(db: Path, *extra: str) -> None:
        for verb in ("annotate", "attribute"):
            result = CliRunner().invoke(app, [verb, str(src), "--db", str(db), *extra])
            assert result.exit_code == 0, result.output

    run(tmp_path / "whole.db")
    shards = [tmp_path / f"shard-{i}.db" for i in range(3)]
    for i, db in enumerate(shards):
        run(db, "--shard", f"{i}/3")
    merged = tmp_path / "merged.db"
    added = merge_stores(merged, shards)
    assert added["annotations"] == 20 and added["trace_bodies"] == 20
    assert merge_stores(merged, shards[:1])["annotations"] == 0  # no result twice

    def content(path: Path) -> tuple[Any, ...]:
        with Store(path) as s:
            anns = sorted((a.trace_id, a.model_dump_json(exclude={"created_at"})) for a in s.annotations())
            return (
                anns,
                s.attributions(),
                sorted(t["trace_id"] for t in s.traces()),
                s.runs()[0]["config_hash"],
            )

    assert content(merged) == content(tmp_path / "whole.db")
    assert merge_main([str(tmp_path / "x.db"), str(tmp_path / "absent.db")]) == 2


def test_merge_knows_every_table_of_the_store(tmp_path: Path) -> None:
    """A table the store gains in a migration must be merged too, or shard merges lose it."""
    import sqlite3

    from mastkit.scale.merge import TABLES
    from mastkit.store import Store

    Store(tmp_path / "s.db").close()
    with sqlite3.connect(tmp_path / "s.db") as db:
        names = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert names - {"sqlite_sequence"} == set(TABLES)


def test_merge_keeps_verify_evaluations(tmp_path: Path) -> None:
    from mastkit.scale.merge import merge_stores
    from mastkit.store import Store

    with Store(tmp_path / "a.db") as a:
        a.put_verify_eval('{"results": [1]}', label="runs-a")
    merge_stores(tmp_path / "all.db", [tmp_path / "a.db"])
    with Store(tmp_path / "all.db") as merged:
        latest = merged.latest_verify_eval()
    assert latest is not None and latest["label"] == "runs-a" and latest["result_json"] == '{"results": [1]}'


def test_merge_verb_merges_and_refuses_a_missing_source(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from mastkit.cli.main import app
    from mastkit.store import Store

    with Store(tmp_path / "a.db") as a:
        a.put_verify_eval("{}", label="x")
    runner = CliRunner()
    ok = runner.invoke(app, ["merge", str(tmp_path / "all.db"), str(tmp_path / "a.db")])
    assert ok.exit_code == 0, ok.output
    assert "1 verify_evals added" in ok.output
    bad = runner.invoke(app, ["merge", str(tmp_path / "all.db"), str(tmp_path / "nope.db")])
    assert bad.exit_code == 2 and "no store at" in bad.output
