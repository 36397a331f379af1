"""`mastkit annotate` killed with SIGKILL at several random moments (seeded), then run to the end:
every trace is annotated exactly once in "latest", none is lost or duplicated, the file passes
SQLite's integrity check, and no run asks the model about a trace an earlier run stored."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from mastkit.store import Store
from mastkit.testing import FakeLLMServer, Reply

from ._faultkit import env, integrity, judge_args, mastkit_cmd, query, verdict_json, write_traces

KILLS = 3


def _count(db: Path) -> int:
    try:
        return int(query(db, "SELECT COUNT(*) FROM annotations")[0][0])
    except Exception:
        return 0  # not created yet, or the schema is being made


def _kill_at_random(args: list[str], db: Path, rng: random.Random, window_s: float) -> bool:
    """Start a run, wait until it stores something new, let it go on for a random while, SIGKILL it.
    Returns False when the run finished before it could be killed."""
    before = _count(db)
    proc = subprocess.Popen(
        mastkit_cmd(*args),
        env=env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while _count(db) <= before and proc.poll() is None:
            assert time.monotonic() < deadline, "the run made no progress"
            time.sleep(0.01)
        time.sleep(rng.uniform(0.0, window_s))
        if proc.poll() is not None:
            assert proc.returncode == 0, proc.stderr.read().decode() if proc.stderr else ""
            return False
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        assert proc.returncode == -signal.SIGKILL
        return True
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
        if proc.stderr is not None:
            proc.stderr.close()


def _assert_each_trace_once(db: Path, ids: list[str]) -> None:
    assert integrity(db) == "ok"
    rows = query(db, "SELECT trace_id, trace_hash, config_hash FROM annotations")
    assert sorted(r[0] for r in rows) == ids  # none lost, none twice
    assert len({r[1] for r in rows}) == len(ids) and len({r[2] for r in rows}) == 1
    assert query(db, "SELECT COUNT(*) FROM verdicts")[0][0] == 14 * len(ids)
    assert query(db, "SELECT COUNT(*) FROM trace_bodies")[0][0] == len(ids)
    assert query(db, "SELECT COUNT(*) FROM trace_versions")[0][0] == len(ids)
    assert query(db, "SELECT COUNT(*) FROM runs")[0][0] == 1
    with Store(db) as store:
        (config_hash,) = {r[2] for r in rows}
        latest = store.annotation_records(config_hash)
        assert sorted(a.trace_id for a in latest) == ids
        assert store.failed_traces(config_hash) == []


@pytest.mark.parametrize("seed", [21])
def test_judge_run_killed_three_times_then_resumed(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    src = tmp_path / "traces.jsonl"
    ids = write_traces(src, 60)
    db = tmp_path / "m.db"

    def handler(payload: Any) -> Reply:
        return Reply(verdict_json("FM-1.3"), delay_s=0.1)

    with FakeLLMServer(handler=handler) as srv:
        args = judge_args(src, db, srv.openai_base_url, "--concurrency", "4")
        asked_after_stored: set[str] = set()
        kills = 0
        for _ in range(KILLS):
            stored = {r[0] for r in query(db, "SELECT trace_id FROM annotations")} if db.exists() else set()
            srv.reset()
            killed = _kill_at_random(args, db, rng, window_s=0.25)
            # a request the kill cut off mid-body has no JSON: it was never answered
            asked = {_trace_id(r.json) for r in srv.chat_requests if r.json is not None}
            asked_after_stored |= asked & stored
            kills += killed
            if not killed:
                break
        assert kills >= 2, "the runs finished before they could be killed"
        assert _count(db) > 0
        stored = {r[0] for r in query(db, "SELECT trace_id FROM annotations")}
        srv.reset()
        last = subprocess.run(mastkit_cmd(*args), env=env(), capture_output=True, text=True, timeout=120)
        assert last.returncode == 0, last.stderr
        asked = [_trace_id(r.json) for r in srv.chat_requests]
    assert not asked_after_stored and not set(asked) & stored
    assert len(asked) == len(set(asked))  # the last run asked about each remaining trace once
    _assert_each_trace_once(db, ids)


def _trace_id(payload: Any) -> str:
    text = "\n".join(m.get("content", "") for m in payload["messages"] if isinstance(m.get("content"), str))
    return text.split("trace id: ", 1)[1].split(";", 1)[0].split()[0]


@pytest.mark.parametrize("seed", [2121])
def test_rules_run_on_many_traces_killed_at_random_then_resumed(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    src = tmp_path / "traces.jsonl"
    ids = write_traces(src, 2000)
    db = tmp_path / "m.db"
    args = ["annotate", str(src), "--db", str(db)]
    kills = sum(_kill_at_random(args, db, rng, window_s=0.3) for _ in range(KILLS))
    assert kills >= 2, "the runs finished before they could be killed"
    last = subprocess.run(mastkit_cmd(*args), env=env(), capture_output=True, text=True, timeout=120)
    assert last.returncode == 0, last.stderr
    _assert_each_trace_once(db, ids)
