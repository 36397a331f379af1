"""Measured precision of the rule detectors: where a verdict's confidence comes from.

``precision.json`` (next to this module) is written by ``bench/detectors.py --split dev
--write-precision``: for each detector, on the labelled development corpus, the precision of
its ``present`` verdicts and the negative predictive value of its ``absent`` verdicts, each with
the number of verdicts it rests on, and the date and command that produced it.

A verdict's confidence is that measured value, add-one smoothed — (right + 1) / (n + 2), so
that 17 right out of 17 reads 0.95, not a certainty the corpus cannot give — when it rests on at
least :data:`MIN_N` verdicts. Otherwise (a detector that never fired on the corpus, or a table
that is missing) the confidence is the conservative prior :data:`PRIOR` = 0.5 — "no better than
a coin until measured" — and the verdict says so in ``extra["confidence_from"]``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Literal

PRIOR = 0.5
"""Confidence of a verdict whose detector has no measurement (or too few verdicts measured)."""
MIN_N = 5
"""Fewest measured verdicts for a measured value to be used."""

TABLE_NAME = "precision.json"

Side = Literal["present", "absent"]


@dataclass(frozen=True)
class Confidence:
    value: float
    origin: str
    """``measured: precision 0.93 over 41 verdicts (dev, 2026-11-27)`` or ``prior: ...``."""


@cache
def precision_table() -> dict[str, Any]:
    """The shipped table (``{}`` when it is missing or unreadable)."""
    try:
        text = (resources.files("mastkit.annotate.detectors") / TABLE_NAME).read_text(encoding="utf-8")
        data = json.loads(text)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def confidence_for(name: str, side: Side) -> Confidence:
    """The confidence of a ``side`` verdict of detector ``name``: measured, or the prior."""
    table = precision_table()
    entry = (table.get("detectors") or {}).get(name) or {}
    stat = entry.get(side) or {}
    right, n = stat.get("right"), stat.get("n")
    if isinstance(right, int) and isinstance(n, int) and n >= MIN_N:
        label = "precision" if side == "present" else "negative predictive value"
        where = f"{table.get('split', '?')}, {table.get('generated', '?')}"
        value = (right + 1) / (n + 2)
        return Confidence(
            round(value, 3), f"measured: {label} {right}/{n} right, {value:.2f} smoothed ({where})"
        )
    reason = "never measured" if not stat else f"only {n} verdicts measured"
    return Confidence(PRIOR, f"prior {PRIOR} ({reason})")
