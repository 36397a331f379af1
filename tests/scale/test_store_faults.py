"""A store that cannot be written — read-only, full, locked — ends a run with one clear message
and exit code 4, no traceback; nothing committed is lost or damaged, and the run completes once
the cause is gone."""

from __future__ import annotations

import contextlib
import sqlite3
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from mastkit.annotate import annotate
from mastkit.annotate.factory import make_annotator
from mastkit.store import Store, StoreError

from ._faultkit import assert_clean_error, integrity, make_trace, query, read_only, run_mastkit, write_traces

N = 40


def _annotated(db: Path) -> list[str]:
    return sorted(r[0] for r in query(db, "SELECT trace_id FROM annotations"))


def _no_duplicates(db: Path) -> None:
    """Every annotation has its 14 verdicts; no trace is stored twice."""
    rows = query(db, "SELECT trace_id, COUNT(*) FROM annotations GROUP BY trace_hash, config_hash")
    assert all(c == 1 for _, c in rows)
    ids = [r[0] for r in rows]
    assert len(ids) == len(set(ids))
    verdicts = query(db, "SELECT COUNT(*) FROM verdicts")[0][0]
    assert verdicts == 14 * len(ids)


# -- read-only ------------------------------------------------------------------------------------


def test_store_in_a_read_only_folder(tmp_path: Path) -> None:
    src = tmp_path / "traces.jsonl"
    write_traces(src, 3)
    folder = tmp_path / "ro"
    folder.mkdir()
    with read_only(folder):
        proc = run_mastkit("annotate", str(src), "--db", str(folder / "m.db"))
    assert_clean_error(proc, "cannot open the store", str(folder / "m.db"), "folder")
    assert not (folder / "m.db").exists()


def test_read_only_store_file_then_writable_again(tmp_path: Path) -> None:
    src = tmp_path / "traces.jsonl"
    ids = write_traces(src, N)
    first = tmp_path / "first.jsonl"
    write_traces(first, 10)
    db = tmp_path / "m.db"
    assert run_mastkit("annotate", str(first), "--db", str(db)).returncode == 0
    before = _annotated(db)
    with read_only(db):
        proc = run_mastkit("annotate", str(src), "--db", str(db))
    assert_clean_error(proc, "read-only", str(db), "m.db-wal")
    assert _annotated(db) == before and integrity(db) == "ok"
    again = run_mastkit("annotate", str(src), "--db", str(db))
    assert again.returncode == 0, again.stderr
    assert "10 from cache" in again.stdout
    assert _annotated(db) == ids
    _no_duplicates(db)


# -- full disk ------------------------------------------------------------------------------------


def test_full_store_stops_the_run_and_a_rerun_completes(tmp_path: Path) -> None:
    # SQLite's own "database or disk is full", from a page limit on the store's connection
    db = tmp_path / "m.db"
    traces = [make_trace(i) for i in range(300)]
    ann = make_annotator("rules")
    store = Store(db)
    pages = int(store._db.execute("PRAGMA page_count").fetchone()[0])
    store._db.execute(f"PRAGMA max_page_count = {pages + 40}")
    with pytest.raises(StoreError, match="the disk is full") as info:
        annotate(traces, ann, store=store)
    assert "database or disk is full" in str(info.value) and "Free some space" in str(info.value)
    store.close()
    assert integrity(db) == "ok"
    kept = _annotated(db)
    assert 0 < len(kept) < len(traces)  # what was committed before the disk filled up stays
    _no_duplicates(db)
    # the run stopped at the first failed write: it did not go on reading traces
    assert len(query(db, "SELECT trace_hash FROM trace_bodies")) < len(traces)

    with Store(db) as roomy:
        report = annotate(traces, make_annotator("rules"), store=roomy)
    assert report.complete and report.progress.cached == len(kept)
    assert report.progress.done == len(traces) - len(kept)
    assert _annotated(db) == sorted(t.trace_id for t in traces)
    _no_duplicates(db)


@contextlib.contextmanager
def _tiny_fs(path: Path, size: str) -> Iterator[None]:
    path.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True, check=False
    )
    if done.returncode != 0:
        pytest.skip("cannot mount a small tmpfs here (needs root): the page-limit test covers the store")
    try:
        yield
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def test_cli_on_a_full_file_system(tmp_path: Path) -> None:
    src = tmp_path / "traces.jsonl"
    ids = write_traces(src, 400)
    disk = tmp_path / "disk"
    with _tiny_fs(disk, "320k"):
        db = disk / "m.db"
        proc = run_mastkit("annotate", str(src), "--db", str(db))
        assert_clean_error(proc, "the disk is full", str(db))
        assert integrity(db) == "ok"
        kept = _annotated(db)
        assert 0 < len(kept) < len(ids)
        _no_duplicates(db)
        subprocess.run(["mount", "-o", "remount,size=64m", str(disk)], check=True)  # space freed
        again = run_mastkit("annotate", str(src), "--db", str(db))
        assert again.returncode == 0, again.stderr
        assert f"{len(ids) - len(kept)} annotated, {len(kept)} from cache" in again.stdout
        assert _annotated(db) == ids and integrity(db) == "ok"
        _no_duplicates(db)


# -- locked ---------------------------------------------------------------------------------------


@contextlib.contextmanager
def _exclusive(db: Path, hold_s: float | None) -> Iterator[threading.Event]:
    """Another connection holds the write lock of ``db`` (BEGIN EXCLUSIVE) for ``hold_s`` seconds
    (None: until the block ends). The event is set when it lets go."""
    con = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    con.execute("BEGIN EXCLUSIVE")
    released = threading.Event()
    lock = threading.Lock()

    def release() -> None:
        with lock:
            if not released.is_set():
                con.execute("ROLLBACK")
                con.close()
                released.set()

    timer = threading.Timer(hold_s, release) if hold_s is not None else None
    if timer is not None:
        timer.start()
    try:
        yield released
    finally:
        if timer is not None:
            timer.cancel()
        release()


def test_locked_store_waits_then_completes(tmp_path: Path) -> None:
    src = tmp_path / "traces.jsonl"
    ids = write_traces(src, N)
    db = tmp_path / "m.db"
    Store(db).close()
    with _exclusive(db, hold_s=2.5) as released:
        t0 = time.monotonic()
        proc = run_mastkit("annotate", str(src), "--db", str(db), MASTKIT_DB_TIMEOUT="30")
        assert released.is_set()  # the run could not finish while the lock was held
    assert proc.returncode == 0, proc.stderr
    assert time.monotonic() - t0 >= 2.5
    assert _annotated(db) == ids
    _no_duplicates(db)


def test_locked_store_past_the_timeout_fails_clearly(tmp_path: Path) -> None:
    src = tmp_path / "traces.jsonl"
    ids = write_traces(src, N)
    db = tmp_path / "m.db"
    Store(db).close()
    with _exclusive(db, hold_s=None):
        proc = run_mastkit("annotate", str(src), "--db", str(db), MASTKIT_DB_TIMEOUT="0.5")
        assert_clean_error(proc, "locked by another process", "0.5 s", "MASTKIT_DB_TIMEOUT")
    assert _annotated(db) == [] and integrity(db) == "ok"
    again = run_mastkit("annotate", str(src), "--db", str(db), MASTKIT_DB_TIMEOUT="0.5")
    assert again.returncode == 0, again.stderr
    assert _annotated(db) == ids


def test_lock_timeout_setting() -> None:
    assert Store(":memory:", timeout=1.5).timeout == 1.5
    assert Store(":memory:").timeout == 30.0


def test_bad_lock_timeout_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MASTKIT_DB_TIMEOUT", "soon")
    with pytest.raises(StoreError, match="MASTKIT_DB_TIMEOUT='soon'"):
        Store(":memory:")
    monkeypatch.setenv("MASTKIT_DB_TIMEOUT", "2")
    assert Store(":memory:").timeout == 2.0
