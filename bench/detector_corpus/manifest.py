"""The generated samples' labels and splits, written to ``generated_labels.jsonl``.

The generator and the simulator source are deterministic, so the file can be rebuilt at any time;
it is kept in the repository so that the labels and the dev/held split of every generated trace
are on record (a change to the generator shows up as a diff here) and a test checks that the
code still produces exactly this file.

    python bench/detector_corpus/manifest.py            # rewrite the file
    python bench/detector_corpus/manifest.py --check    # exit 1 if it is out of date
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from detector_corpus.generator import generate
from detector_corpus.labels import Sample
from detector_corpus.sim_source import sim_samples

MANIFEST = Path(__file__).resolve().parent / "generated_labels.jsonl"
SEED, N = 0, 400
"""The corpus ``bench/detectors.py`` uses by default."""


def generated_samples(seed: int = SEED, n: int = N) -> list[Sample]:
    """The synthetic samples and the simulator's, in a fixed order."""
    return generate(seed, n) + sim_samples()


def manifest_lines(samples: Sequence[Sample]) -> list[str]:
    """One JSON line per sample: id, source, split, present and skipped codes, note, tags."""
    return [
        json.dumps(
            {
                "trace_id": s.trace_id,
                "source": s.source,
                "split": s.split,
                "present": [c for c, v in s.labels.items() if v],
                "skip": [c for c, v in s.labels.items() if v is None],
                "note": s.note,
                "tags": s.tags,
            },
            ensure_ascii=False,
        )
        for s in samples
    ]


def render() -> str:
    return "\n".join(manifest_lines(generated_samples())) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    text = render()
    if "--check" in args:
        if not MANIFEST.exists() or MANIFEST.read_text() != text:
            print(f"{MANIFEST} is out of date; run python {Path(__file__).name}", file=sys.stderr)
            return 1
        return 0
    MANIFEST.write_text(text)
    print(f"wrote {MANIFEST} ({text.count(chr(10))} samples)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
