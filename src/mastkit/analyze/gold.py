"""Gold failure-mode labels for ``mastkit eval``.

Two sources:

* labels carried by traces (e.g. the MAST human file loaded with the ``mast_data`` importer:
  one label per annotator per mode, legacy codes already mapped) — combined by majority vote,
  with the per-annotator labels kept for inter-annotator agreement (Fleiss' kappa);
* a gold JSONL file, one object per line::

      {"trace_id": "run-17", "labels": {"FM-1.3": true, "FM-3.2": false}}
      {"trace_id": "run-18", "labels": {"FM-1.3": [true, false, true]}}   # several annotators

  A list is a set of annotators' labels (majority vote; ties count as absent, and are reported).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from mastkit.errors import MastkitError
from mastkit.traces.model import Trace


class GoldError(MastkitError):
    """A gold label file is malformed."""


@dataclass
class Gold:
    """Majority labels and the individual annotators' labels."""

    labels: dict[str, dict[str, bool]] = field(default_factory=dict)
    """``{trace_id: {code: majority}}``."""
    raters: dict[str, dict[str, list[bool]]] = field(default_factory=dict)
    """``{trace_id: {code: [annotator labels]}}``."""
    ties: int = 0
    """(trace, mode) pairs with a tied vote (counted absent)."""

    def add(self, trace_id: str, code: str, votes: list[bool]) -> None:
        if not votes:
            return
        yes = sum(votes)
        if yes * 2 == len(votes):
            self.ties += 1
        self.labels.setdefault(trace_id, {})[code] = yes * 2 > len(votes)
        self.raters.setdefault(trace_id, {})[code] = list(votes)


def gold_from_traces(traces: Iterable[Trace], *, taxonomy: str = "mast", source: str = "human") -> Gold:
    """Majority-vote gold from failure-mode labels carried by traces (``source`` human by default)."""
    gold = Gold()
    for t in traces:
        votes: dict[str, list[bool]] = defaultdict(list)
        for lab in t.labels:
            if (
                lab.kind == "failure_mode"
                and lab.code
                and lab.present is not None
                and lab.source == source
                and (lab.taxonomy in (None, taxonomy))
            ):
                votes[lab.code].append(lab.present)
        for code, v in votes.items():
            gold.add(t.trace_id, code, v)
    return gold


def gold_from_jsonl(path: str | Path) -> Gold:
    """Gold labels from a JSONL file (see module doc). Errors name the line."""
    gold = Gold()
    p = Path(path)
    try:
        lines = p.read_bytes().splitlines()
    except OSError as exc:
        raise GoldError(f"cannot read gold file {p}: {exc.strerror}") from None
    for no, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            rec = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise GoldError(f"{p}:{no}: invalid JSON: {exc}") from None
        if (
            not isinstance(rec, dict)
            or not isinstance(rec.get("trace_id"), str)
            or not isinstance(rec.get("labels"), dict)
        ):
            raise GoldError(f'{p}:{no}: expected {{"trace_id": str, "labels": {{code: bool | [bool, ...]}}}}')
        for code, value in rec["labels"].items():
            votes = value if isinstance(value, list) else [value]
            if not all(isinstance(v, bool) for v in votes):
                raise GoldError(f"{p}:{no}: label {code!r} must be true/false or a list of them")
            gold.add(rec["trace_id"], str(code), votes)
    return gold
