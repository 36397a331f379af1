"""Real traces from ``../shared/data``: hand labels (``real_labels.jsonl``) and the MAST human file.

Label lines reference a trace by its path under the shared data folder and its trace id; the
data files are never copied. The MAST human file's 19 traces carry three annotators' labels per
mode: their majority vote is used as it is (a mode the file's taxonomy round cannot be mapped to
is skipped). Those 19 are also the judge's calibration set, so a score on them is not unseen data
for anything tuned there.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import cache
from pathlib import Path

import orjson

from detector_corpus.labels import MAST_CODES, Sample, read_real_labels
from mastkit import load_traces
from mastkit.analyze.gold import gold_from_traces
from mastkit.traces.model import Trace

HERE = Path(__file__).resolve().parent
REAL_LABELS = HERE / "real_labels.jsonl"
FRESH_LABELS = HERE / "real_labels_fresh.jsonl"
"""A second, blind-labelled batch of real traces kept out of all tuning (FRESH.md): all held."""
MAST_HUMAN_SPLIT = HERE / "mast_human_split.jsonl"
MAST_HUMAN_PATH = "mast_mad_human/MAD_human_labelled_dataset.json"


def shared_data() -> Path:
    """The shared data folder: ``$MASTKIT_SHARED_DATA`` or ``shared/data`` beside the repository."""
    return Path(os.environ.get("MASTKIT_SHARED_DATA", HERE.parents[2] / "shared" / "data"))


@cache
def _load(path: str, root: str) -> dict[str, Trace]:
    return {t.trace_id: t for t in load_traces([Path(root) / path])}


def load_trace(path: str, trace_id: str, root: Path | None = None) -> Trace:
    """The trace ``trace_id`` of the file or folder ``path`` under the shared data folder."""
    traces = _load(path, str(root or shared_data()))
    if trace_id not in traces:
        raise KeyError(f"{path}: no trace {trace_id!r} (has {len(traces)})")
    return traces[trace_id]


def _unlabelled(trace: Trace) -> Trace:
    """The trace without the labels its source carried (and the native envelope that holds them):
    they are the answer, not something an annotator under test may read."""
    return trace.model_copy(update={"labels": [], "raw": None})


def real_samples(
    root: Path | None = None,
    labels_file: Path = REAL_LABELS,
    on_skip: Callable[[str], None] | None = None,
    prefix: str = "",
) -> list[Sample]:
    """The hand-labelled real traces; empty when the shared data is absent. ``prefix`` is put
    before each row's source (``fresh:`` keeps the blind batch apart in the by-source figures)."""
    base = root or shared_data()
    if not base.exists() or not labels_file.exists():
        if on_skip:
            on_skip(f"real traces skipped: {base if not base.exists() else labels_file} not found")
        return []
    out = []
    for row in read_real_labels(labels_file):
        trace = load_trace(row.path, row.trace_id, base)
        out.append(
            Sample(
                trace=_unlabelled(trace),
                labels=dict(row.labels),
                source=prefix + row.source,
                split=row.split,
                note=row.rationale,
            )
        )
    return out


def mast_human_samples(root: Path | None = None, split_file: Path = MAST_HUMAN_SPLIT) -> list[Sample]:
    """The MAST human file's traces with their human majority labels (not relabelled here)."""
    base = root or shared_data()
    if not (base / MAST_HUMAN_PATH).exists():
        return []
    splits = {d["trace_id"]: d["split"] for d in map(orjson.loads, split_file.read_text().splitlines()) if d}
    traces = list(_load(MAST_HUMAN_PATH, str(base)).values())
    gold = gold_from_traces(traces)
    out = []
    for t in traces:
        votes = gold.labels.get(t.trace_id, {})
        labels: dict[str, bool | None] = {c: votes.get(c) for c in MAST_CODES}
        bare = _unlabelled(t)
        out.append(
            Sample(trace=bare, labels=labels, source="mast_human", split=splits[t.trace_id],
                   note="MAST human labels (majority of 3); also the calibration set")
        )  # fmt: skip
    return out
