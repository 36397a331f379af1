"""The labelled sample, the label-file format and the fixed dev/held split."""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, field_validator

from mastkit.traces.model import Trace

MAST_CODES: tuple[str, ...] = (
    "FM-1.1", "FM-1.2", "FM-1.3", "FM-1.4", "FM-1.5",
    "FM-2.1", "FM-2.2", "FM-2.3", "FM-2.4", "FM-2.5", "FM-2.6",
    "FM-3.1", "FM-3.2", "FM-3.3",
)  # fmt: skip
"""The 14 MAST modes every sample is labelled for."""

Split = Literal["dev", "held"]
HELD_SHARE = 0.4
SPLIT_SEED = "mastkit-detector-corpus-1"

LabelValue = bool | None
"""True present, False absent, None skipped (the labeller could not judge the mode)."""


@dataclass
class Sample:
    """One labelled trace of the corpus."""

    trace: Trace
    labels: dict[str, LabelValue]
    """Every MAST code: present / absent / skipped (None)."""
    source: str
    """The stratum the split is drawn in: ``synthetic:coding``, ``guard_sim``, ``real:tau_bench``..."""
    split: Split = "dev"
    note: str = ""
    """What was injected or why (not shown to annotators)."""
    tags: list[str] = field(default_factory=list)
    """Hard negatives and variants present in the trace."""

    @property
    def trace_id(self) -> str:
        return self.trace.trace_id


class RealLabel(BaseModel):
    """One line of ``real_labels.jsonl``: a shared-data trace and its hand labels."""

    model_config = ConfigDict(extra="forbid")

    path: str
    """File or folder under ``../shared/data`` (relative to it) the trace is loaded from."""
    trace_id: str
    source: str
    split: Split
    labels: dict[str, bool | None]
    rationale: str
    """One line: why these labels."""

    @field_validator("labels")
    @classmethod
    def _all_codes(cls, value: dict[str, bool | None]) -> dict[str, bool | None]:
        missing = [c for c in MAST_CODES if c not in value]
        extra = [c for c in value if c not in MAST_CODES]
        if missing or extra:
            raise ValueError(f"labels must name the 14 MAST codes; missing {missing}, unknown {extra}")
        return {c: value[c] for c in MAST_CODES}


def read_real_labels(path: Path) -> list[RealLabel]:
    """The hand labels, one :class:`RealLabel` per non-empty line; errors name the line."""
    out = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if line.strip():
            try:
                out.append(RealLabel.model_validate_json(line))
            except ValueError as exc:
                raise ValueError(f"{path}:{n}: {exc}") from exc
    return out


def full_labels(present: Iterable[str] = (), skip: Iterable[str] = ()) -> dict[str, LabelValue]:
    """All 14 codes: ``present`` True, ``skip`` None, the rest False."""
    yes, maybe = set(present), set(skip)
    unknown = (yes | maybe) - set(MAST_CODES)
    if unknown:
        raise ValueError(f"not MAST codes: {sorted(unknown)}")
    return {c: True if c in yes else None if c in maybe else False for c in MAST_CODES}


def assign_splits(keys: Sequence[tuple[str, str]], held_share: float = HELD_SHARE) -> dict[str, Split]:
    """A fixed split of ``(source, trace_id)`` keys, stratified by source: within each source the
    ids are ordered by a seeded hash and the first ``round(held_share * n)`` are held out. The
    result depends only on the keys, so adding a source does not move another's traces."""
    by_source: dict[str, list[str]] = defaultdict(list)
    for source, tid in keys:
        by_source[source].append(tid)
    out: dict[str, Split] = {}
    for source, ids in by_source.items():
        ordered = sorted(
            set(ids), key=lambda t: hashlib.sha256(f"{SPLIT_SEED}|{source}|{t}".encode()).hexdigest()
        )
        k = round(held_share * len(ordered))
        for i, tid in enumerate(ordered):
            out[tid] = "held" if i < k else "dev"
    return out
