"""Soak: thousands of traces through the judge while 30% of the requests fault (500s, garbage,
timeouts), with retries. Every trace ends annotated or with an error row; a rerun clears them;
memory stays flat. The harness is ``bench/soak.py`` (run it there for the big figures).

``MASTKIT_SOAK_N`` sets the number of traces (default 1000, which fits the suite's time).
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

import pytest

from mastkit.store import Store

from ._faultkit import soak

N = int(os.environ.get("MASTKIT_SOAK_N", "1000"))
BLOCKS_LIMIT = 20_000
"""Growth of the blocks Python's allocator holds over the second half of the run. The run itself
stays within a few thousand either way; keeping every annotation (``keep=True``) adds ~150 blocks
per trace (~75,000 over the second half of 1000 traces)."""
RSS_LIMIT_MB = 8.0
"""Resident memory growth allowed over the second half (coarser: ~1 MB measured; with
``keep=True``, ~20 KB per trace, ~10 MB over the second half of 1000 traces)."""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads resident memory from /proc")
def test_soak_at_30_percent_faults(tmp_path: Path) -> None:
    logging.getLogger("mastkit").setLevel(logging.ERROR)  # one warning per failed call otherwise
    try:
        r = soak.soak(N, tmp_path / "soak.db", fault_rate=0.3)
    finally:
        logging.getLogger("mastkit").setLevel(logging.NOTSET)
    assert sum(r.faults.values()) >= 0.25 * r.requests  # the faults were there
    assert all(r.faults.get(k, 0) > 0 for k in ("server_error", "garbage", "timeout"))
    # every trace ended annotated or with a recorded error, not both, none lost
    assert r.done + r.failed == N
    assert r.annotated == r.done and r.error_rows == r.failed
    assert r.failed < 0.1 * N  # the retries got most traces through
    # the rerun (faults gone) did exactly the failed traces and asked only about them
    assert r.rerun_failed == 0 and r.rerun_done == r.failed and r.rerun_cached == r.done
    assert r.rerun_asked_only_failed and r.rerun_requests == r.failed
    with Store(tmp_path / "soak.db") as store:
        (run,) = store.runs()
        assert run["annotations"] == N and store.failed_traces(run["config_hash"]) == []
    # memory stays flat: the second half of the run adds (almost) nothing
    assert len(r.rss_mb) == 10 and len(r.blocks) == 10
    assert r.blocks_growth_second_half < BLOCKS_LIMIT, r.blocks
    assert r.rss_growth_second_half_mb < RSS_LIMIT_MB, r.rss_mb
