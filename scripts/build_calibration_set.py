#!/usr/bin/env python3
"""Build the calibration set shipped in ``src/mastkit/calibration/data/calibration.jsonl.gz``.

It reads two human-labelled data sets from ``../shared/data`` (or ``--shared``):

* every trace of the MAST human-labelled subset (``mast_mad_human``, CC-BY-4.0): three
  annotators' yes/no labels per failure mode, which calibrate failure-mode verdicts;
* a stratified, seeded sample of Who&When (``who_and_when``, MIT): half from
  ``Algorithm-Generated``, half from ``Hand-Crafted``. Who&When labels the responsible agent
  and the decisive step, not failure modes, so these traces calibrate attribution only.

Each trace is loaded with ``mastkit.load_traces`` (labels included), its trace-level ``raw``
copy of the source is dropped (the events keep the text; this halves the size), its source path
is made relative to the shared folder, and ``extra["calibration"]`` records where it came from
and what it calibrates. Output is sorted by trace id and gzip-compressed with a fixed header, so
the same inputs give the same bytes.

Usage: ``python scripts/build_calibration_set.py [--shared ../shared/data] [--out PATH]``
"""

from __future__ import annotations

import argparse
import gzip
import io
import random
import sys
from pathlib import Path

import mastkit
from mastkit.traces.model import Trace

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "src" / "mastkit" / "calibration" / "data" / "calibration.jsonl.gz"
SEED = 19
WHO_WHEN_PER_FOLDER = 12
MAX_BYTES = 1_000_000


def _clean(trace: Trace, shared: Path, source: str, purpose: str) -> Trace:
    paths = []
    for p in trace.source_paths:
        try:
            paths.append(Path(p).resolve().relative_to(shared.resolve()).as_posix())
        except ValueError:
            paths.append(Path(p).name)
    extra = {**trace.extra, "calibration": {"source": source, "purpose": purpose}}
    return trace.model_copy(update={"raw": None, "source_paths": paths, "extra": extra})


def mast_traces(shared: Path) -> list[Trace]:
    """Every trace of the MAST human-labelled file, with its failure-mode labels."""
    path = shared / "mast_mad_human" / "MAD_human_labelled_dataset.json"
    return [_clean(t, shared, "mast_mad_human", "failure_modes") for t in mastkit.load_traces([path])]


def who_when_traces(shared: Path, per_folder: int = WHO_WHEN_PER_FOLDER, seed: int = SEED) -> list[Trace]:
    """A seeded sample of ``per_folder`` Who&When files from each of its two folders."""
    rng = random.Random(seed)
    out: list[Trace] = []
    for folder in ("Algorithm-Generated", "Hand-Crafted"):
        files = sorted((shared / "who_and_when" / folder).glob("*.json"), key=lambda p: int(p.stem))
        for path in sorted(rng.sample(files, per_folder), key=lambda p: int(p.stem)):
            out += [_clean(t, shared, "who_and_when", "attribution") for t in mastkit.load_traces([path])]
    return out


def build(shared: Path) -> bytes:
    """The compressed JSONL bytes of the calibration set."""
    traces = sorted(mast_traces(shared) + who_when_traces(shared), key=lambda t: t.trace_id)
    body = b"".join(t.model_dump_json().encode() + b"\n" for t in traces)
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, compresslevel=9, mtime=0) as gz:
        gz.write(body)
    return buf.getvalue()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    data = build(args.shared)
    if len(data) > MAX_BYTES:
        print(f"error: {len(data):,} bytes is over the {MAX_BYTES:,} byte limit", file=sys.stderr)
        return 1
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(data)
    print(f"wrote {args.out} ({len(data):,} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
