"""Where loading the MAST human file goes, step by step, next to json.loads of the same bytes.

The MAST human-labelled file is the data set furthest from the plain-parse floor in
``bench/ingest.py``. This script times, in one process and interleaved rounds (best of N):

  * floor        : json.loads of the file
  * floor+nested : the same, plus what bench/ingest.py's floor does for a log file, applied to the
                   logs inside: json.loads of a trace text that is a JSON document, else splitlines
  * parse        : how mastkit parses it (orjson, which rejects the file's bare NaN, then json)
  * segment      : splitting the 19 trace texts into events (per-framework log patterns)
  * events       : building the 1,931 canonical events and their source references
  * labels       : the per-annotator labels (3 annotators x ~18 modes per trace)
  * convert      : the importer's whole per-record work (segment + events + labels + the rest)
  * load         : load_traces end to end (parse + convert + sniffing + trace checks)

    python bench/ingest_breakdown.py [--runs 30]
"""

from __future__ import annotations

import argparse
import gc
import json
import time
from collections.abc import Callable
from pathlib import Path

from mastkit import load_traces
from mastkit._util.jsonstream import loads
from mastkit.traces._build import TraceBuilder, source_ref
from mastkit.traces.importers import mast_data
from mastkit.traces.source import Source

HUMAN = (
    Path(__file__).resolve().parents[2]
    / "shared"
    / "data"
    / "mast_mad_human"
    / "MAD_human_labelled_dataset.json"
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--file", type=Path, default=HUMAN)
    ap.add_argument("--runs", type=int, default=30)
    args = ap.parse_args()
    if not args.file.exists():
        raise SystemExit(f"skipped: {args.file} not found (the shared data sets sit beside the project)")
    path: Path = args.file
    data = path.read_bytes()
    records = json.loads(data)
    texts = [r["trace"] if isinstance(r["trace"], str) else r["trace"]["trajectory"] for r in records]
    segmented = [mast_data.segment(t)[0] for t in texts]
    importer = mast_data.MastDataImporter()
    src = Source(path)

    def events() -> None:
        for i, segments in enumerate(segmented):
            b = TraceBuilder("mast_data", path, trace_id=str(i))
            for j, (actor, content, subtype) in enumerate(segments):
                b.add(
                    "message",
                    actor=actor,
                    content=content,
                    subtype=subtype,
                    source=source_ref(pointer=f"/{i}/trace#segment-{j}"),
                )

    def nested_floor() -> None:
        for r in json.loads(data):
            text = r["trace"] if isinstance(r["trace"], str) else r["trace"]["trajectory"]
            if text.lstrip().startswith("{"):
                json.loads(text)
            else:
                text.splitlines()

    steps: dict[str, Callable[[], object]] = {
        "floor (json.loads)": lambda: json.loads(data),
        "floor+nested": nested_floor,
        "parse": lambda: loads(data),
        "segment": lambda: [mast_data.segment(t) for t in texts],
        "events": events,
        "labels": lambda: [importer._labels(r) for r in records],
        "convert": lambda: [importer.convert(r, i, src) for i, r in enumerate(records)],
        "load": lambda: list(load_traces(path)),
    }
    best = dict.fromkeys(steps, float("inf"))
    gc.disable()  # as in the loader, which pauses the collector while it builds a trace
    try:
        for _ in range(args.runs):
            for name, fn in steps.items():
                t0 = time.perf_counter()
                fn()
                best[name] = min(best[name], time.perf_counter() - t0)
    finally:
        gc.enable()
    n_events = sum(len(s) for s in segmented)
    print(
        f"{path.name}: {len(data) / 1e6:.1f} MB, {len(records)} traces, {n_events} events (best of {args.runs})"
    )
    load = best["load"]
    for name, t in best.items():
        print(f"  {name:<20} {t * 1e3:7.2f} ms  {t / load:6.1%} of load")
    print(
        f"  load vs floor: x{best['floor (json.loads)'] / load:.2f}; "
        f"vs floor+nested: x{best['floor+nested'] / load:.2f}"
    )


if __name__ == "__main__":
    main()
