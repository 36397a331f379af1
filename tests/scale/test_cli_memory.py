"""`mastkit annotate` into a store holds memory flat in the number of traces: results are read
back from the store and the summary is counted in SQL, not kept in lists."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ._faultkit import env, write_traces

PEAK = """
import atexit, resource, sys
atexit.register(lambda: print("MAXRSS_KB", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr))
from mastkit.cli.main import main
sys.argv = ["mastkit", *sys.argv[1:]]
main()
"""


def _peak_mb(src: Path, db: Path) -> float:
    proc = subprocess.run(
        [sys.executable, "-c", PEAK, "annotate", str(src), "--db", str(db)],
        env=env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    line = next(x for x in proc.stderr.splitlines() if x.startswith("MAXRSS_KB "))
    return int(line.split()[1]) / 1024


@pytest.mark.skipif(sys.platform != "linux", reason="ru_maxrss is in kilobytes on Linux")
def test_annotate_peak_memory_does_not_grow_with_the_traces(tmp_path: Path) -> None:
    small, big = tmp_path / "small.jsonl", tmp_path / "big.jsonl"
    write_traces(small, 300)
    write_traces(big, 3000)
    base = _peak_mb(small, tmp_path / "small.db")
    peak = _peak_mb(big, tmp_path / "big.db")
    # kept annotations cost ~20 KB each: 2700 more would add ~50 MB
    assert peak - base < 10, (base, peak)
