"""A/B: how long loading PATH takes with mastkit at two git revisions, measured the same way.

Each revision is checked out in a temporary git worktree; child processes load PATH with one
revision or the other, taking turns (so a slow spell of a shared machine hits both alike), and
the best time of all rounds is kept for each. Use it to check a speed-up before claiming it.

    python bench/ab.py HEAD~1 HEAD ../shared/data/trace_samples/chatdev_log
    python bench/ab.py HEAD~1 HEAD ../shared/data/who_and_when --walk-only
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_CHILD = r"""
import sys, time
sys.path.insert(0, sys.argv[1] + "/src")
from mastkit import load_traces
from mastkit.traces.load import walk
path, walk_only, repeats = sys.argv[2], sys.argv[3] == "1", int(sys.argv[4])
def run():
    if walk_only:
        return sum(1 for _ in walk([path]))
    return sum(1 for _ in load_traces(path, on_error=lambda e: None))
best = float("inf")
for _ in range(repeats):
    t0 = time.perf_counter(); run(); best = min(best, time.perf_counter() - t0)
print(best)
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("before", help="git revision A")
    ap.add_argument("after", help="git revision B")
    ap.add_argument("path", type=Path, help="file or folder to load")
    ap.add_argument("--rounds", type=int, default=5, help="child processes per revision (alternating)")
    ap.add_argument("--repeats", type=int, default=20, help="loads per child process")
    ap.add_argument("--walk-only", action="store_true", help="time only walking the folder")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        trees = []
        for i, rev in enumerate((args.before, args.after)):
            tree = Path(tmp) / f"rev{i}"
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(tree), rev], check=True
            )
            trees.append(tree)
        try:
            best = [float("inf"), float("inf")]
            for _ in range(args.rounds):
                for i, tree in enumerate(trees):
                    out = subprocess.run(
                        [sys.executable, "-c", _CHILD, str(tree), str(args.path.resolve()),
                         "1" if args.walk_only else "0", str(args.repeats)],
                        capture_output=True, text=True, check=True,
                    )  # fmt: skip
                    best[i] = min(best[i], float(out.stdout))
        finally:
            for tree in trees:
                subprocess.run(
                    ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=False
                )
    a, b = best[0] * 1e3, best[1] * 1e3
    print(f"{args.before}: {a:.2f} ms   {args.after}: {b:.2f} ms   after/before x{b / a:.2f}")


if __name__ == "__main__":
    main()
