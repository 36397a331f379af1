"""`mastkit annotate` killed with SIGKILL mid-run resumes: nothing lost, nothing duplicated,
and the second run asks the model only about the traces the first one did not finish."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from mastkit.testing import FakeLLMServer, Reply

from ._judgekit import reply_json, simple_trace, trace_id_of

N_TRACES = 30


def _count(db: Path, sql: str) -> int:
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
        try:
            return int(con.execute(sql).fetchone()[0])
        finally:
            con.close()
    except sqlite3.Error:
        return 0  # not created yet


def _cmd(src: Path, db: Path, base_url: str) -> list[str]:
    return [
        sys.executable, "-c", "from mastkit.cli.main import main; main()",
        "annotate", str(src), "--annotator", "llm", "--model", "openai:x", "--base-url", base_url,
        "--concurrency", "4", "--db", str(db),
    ]  # fmt: skip


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "MASTKIT_"))}
    env["NO_COLOR"] = "1"
    return env


def test_kill_9_midway_then_resume(tmp_path: Path) -> None:
    src = tmp_path / "traces.jsonl"
    src.write_text(
        "\n".join(simple_trace(f"t{i:02d}").model_dump_json() for i in range(N_TRACES)) + "\n",
        encoding="utf-8",
    )
    db = tmp_path / "run.db"

    def handler(payload: Any) -> Reply:
        return Reply(reply_json(("FM-1.3",)), delay_s=0.25)

    with FakeLLMServer(handler=handler) as srv:
        proc = subprocess.Popen(
            _cmd(src, db, srv.openai_base_url),
            env=_env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + 60
            while _count(db, "SELECT COUNT(*) FROM annotations") < 6:
                assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
                assert time.monotonic() < deadline, "the first run made no progress"
                time.sleep(0.02)
            os.kill(proc.pid, signal.SIGKILL)
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait(timeout=30)
            if proc.stderr is not None:
                proc.stderr.close()
        assert proc.returncode == -signal.SIGKILL
        first_requests = srv.chat_requests

        con = sqlite3.connect(db)
        done_before = {r[0] for r in con.execute("SELECT trace_id FROM annotations")}
        con.close()
        n_done = len(done_before)
        assert 6 <= n_done < N_TRACES, n_done  # killed midway
        assert len(first_requests) >= n_done

        srv.reset()
        second = subprocess.run(
            _cmd(src, db, srv.openai_base_url), env=_env(), capture_output=True, text=True, timeout=120
        )
        assert second.returncode == 0, second.stderr
        second_ids = [trace_id_of(r.json) for r in srv.chat_requests]

    con = sqlite3.connect(db)
    try:
        rows = con.execute("SELECT trace_id, config_hash FROM annotations").fetchall()
        n_verdicts = con.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0]
        cached_calls = con.execute("SELECT COUNT(*) FROM calls WHERE cached = 1").fetchone()[0]
        n_runs = con.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    finally:
        con.close()
    # every trace annotated exactly once, under one configuration
    assert len(rows) == N_TRACES
    assert sorted(r[0] for r in rows) == [f"t{i:02d}" for i in range(N_TRACES)]
    assert len({r[1] for r in rows}) == 1 and n_runs == 1
    assert n_verdicts == N_TRACES * 14
    # the second run asked only about traces not finished before the kill, each once
    assert not set(second_ids) & done_before, set(second_ids) & done_before
    assert len(second_ids) == len(set(second_ids))
    # a reply received but not yet stored when the process died comes from the response cache
    assert len(second_ids) + cached_calls == N_TRACES - n_done
    assert len(second_ids) >= N_TRACES - n_done - 4  # at most the 4 calls in flight were cached
