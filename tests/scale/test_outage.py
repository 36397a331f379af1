"""A provider outage mid-run (503 through every retry, or connections dropped) trips the breaker:
one message, exit code 1, the traces finished before it are kept; when the server is back a
rerun finishes the rest and asks nothing about the traces already done."""

from __future__ import annotations

import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from mastkit.testing import FakeLLMServer, Reply

from ._faultkit import integrity, judge_args, query, run_mastkit, verdict_json, write_traces

N = 30
K = 8
"""Requests answered before the outage starts."""


class Outage:
    """Answers the first ``K`` requests, then fails every request until ``back`` is set."""

    def __init__(self, failure: Reply) -> None:
        self.failure = failure
        self.back = False
        self.lock = threading.Lock()
        self.answered = 0
        self.asked: Counter[str] = Counter()

    def __call__(self, payload: Any) -> Reply:
        text = "\n".join(
            m.get("content", "") for m in payload["messages"] if isinstance(m.get("content"), str)
        )
        tid = text.split("trace id: ", 1)[1].split(";", 1)[0].split()[0] if "trace id: " in text else "?"
        with self.lock:
            self.asked[tid] += 1
            if self.back or self.answered < K:
                self.answered += 1
                return Reply(verdict_json(None))
        return self.failure


@pytest.mark.parametrize(
    ("failure", "attempts", "says"),
    [
        (Reply.unavailable(retry_after=0.01), "3", "is unavailable (HTTP 503"),
        (Reply.dropped(), "1", "cannot reach"),
    ],
    ids=["503", "dropped"],
)
def test_outage_stops_the_run_and_a_rerun_finishes(
    tmp_path: Path, failure: Reply, attempts: str, says: str
) -> None:
    src = tmp_path / "traces.jsonl"
    ids = write_traces(src, N)
    db = tmp_path / "m.db"
    outage = Outage(failure)
    with FakeLLMServer(handler=outage) as srv:
        args = judge_args(src, db, srv.openai_base_url, "--concurrency", "2", "--max-attempts", attempts)
        first = run_mastkit(*args)
        assert first.returncode == 1, first.stderr
        assert "Traceback" not in first.stderr
        stops = [x for x in first.stderr.splitlines() if x.startswith("stopped: ")]
        assert len(stops) == 1 and says in stops[0], first.stderr
        done = {r[0] for r in query(db, "SELECT trace_id FROM annotations")}
        assert len(done) == K  # the traces answered before the outage are kept
        # the breaker stopped early: most traces were never sent
        assert len(outage.asked) < K + 8, outage.asked
        stop_rows = query(db, "SELECT reason FROM errors WHERE trace_id IS NULL AND stage = 'annotate'")
        assert len(stop_rows) == 1 and says in stop_rows[0][0]

        outage.back = True
        outage.asked.clear()
        second = run_mastkit(*args)
        assert second.returncode == 0, second.stderr
        assert f"{N - K} annotated, {K} from cache, 0 failed" in second.stdout
    assert not set(outage.asked) & done  # nothing asked again about a trace already done
    assert set(outage.asked) == set(ids) - done and set(outage.asked.values()) == {1}
    rows = query(db, "SELECT trace_id FROM annotations")
    assert sorted(r[0] for r in rows) == ids and integrity(db) == "ok"
