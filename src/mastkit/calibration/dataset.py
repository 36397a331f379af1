"""The calibration set shipped with mastkit: human-labelled traces to measure a judge against.

``data/calibration.jsonl.gz`` (built by ``scripts/build_calibration_set.py``; sources, authors
and licenses in ``data/README.md``) holds canonical traces, one per line:

* the 19 traces of the MAST human-labelled subset (CC-BY-4.0), with three annotators' label
  per failure mode: they calibrate failure-mode verdicts;
* 24 Who&When traces (MIT), with the responsible agent and decisive step: Who&When labels no
  failure modes, so they calibrate attribution only.
"""

from __future__ import annotations

import gzip
import hashlib
from dataclasses import dataclass, field
from functools import cache
from importlib import resources

from mastkit.analyze.gold import Gold, gold_from_traces
from mastkit.traces.model import Trace

DATA_PACKAGE = "mastkit.calibration"
DATA_FILE = "data/calibration.jsonl.gz"
LICENSE_FILES = ("data/LICENSE-CC-BY-4.0.txt", "data/LICENSE-MIT.txt", "data/README.md")


@dataclass(frozen=True)
class CalibrationSet:
    """The calibration traces, split by what they calibrate, with their gold labels."""

    version: str
    """The first 12 hex digits of the SHA-256 of the shipped file: results name the set they used."""
    mode_traces: list[Trace]
    """Traces with human failure-mode labels (MAST)."""
    attribution_traces: list[Trace]
    """Traces with a human responsible agent and step (Who&When)."""
    gold: Gold = field(default_factory=Gold)
    """Majority-vote failure-mode labels of :attr:`mode_traces`."""

    @property
    def traces(self) -> list[Trace]:
        """Every trace of the set, failure-mode traces first."""
        return [*self.mode_traces, *self.attribution_traces]


def _raw() -> bytes:
    return resources.files(DATA_PACKAGE).joinpath(DATA_FILE).read_bytes()


@cache
def _load() -> CalibrationSet:
    data = _raw()
    traces = [Trace.model_validate_json(line) for line in gzip.decompress(data).split(b"\n") if line.strip()]
    modes = [t for t in traces if any(lab.kind == "failure_mode" and lab.code for lab in t.labels)]
    attribution = [t for t in traces if t not in modes and any(lab.kind == "attribution" for lab in t.labels)]
    return CalibrationSet(
        version=hashlib.sha256(data).hexdigest()[:12],
        mode_traces=modes,
        attribution_traces=attribution,
        gold=gold_from_traces(modes),
    )


def load_calibration_set() -> CalibrationSet:
    """The shipped calibration set (read once per process; the traces are shared, do not mutate them)."""
    return _load()
