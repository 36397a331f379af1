"""The detector extension point and the helpers detectors share.

A detector looks at one trace for one failure mode and returns a :class:`ModeVerdict`:

* ``present`` — with evidence (event seq range, agent, quote) and a confidence;
* ``absent`` — only when the trace has what the detector needs to judge (e.g. structured
  tool calls) and the pattern is not there;
* ``unknown`` — when it cannot judge (no structured events, text-only logs, ...), with why.

Detectors favour precision: a false ``present`` costs a user's trust more than a miss,
which the LLM judge can still catch.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from mastkit.annotate.model import Evidence, ModeVerdict
from mastkit.traces.model import Event, Trace

DetectorFn = Callable[[Trace], ModeVerdict]


@dataclass(frozen=True)
class Detector:
    code: str
    """MAST code the detector judges (``FM-1.3``)."""
    name: str
    """Short id used in verdict sources (``rule:step_repetition``)."""
    fn: DetectorFn
    description: str

    def __call__(self, trace: Trace) -> ModeVerdict:
        return self.fn(trace)


_DETECTORS: dict[str, Detector] = {}
_DISCOVERED = False


def detector(code: str, name: str) -> Callable[[DetectorFn], DetectorFn]:
    """Register ``fn`` as the rule detector for ``code``."""

    def wrap(fn: DetectorFn) -> DetectorFn:
        _DETECTORS[code] = Detector(code=code, name=name, fn=fn, description=(fn.__doc__ or "").strip())
        return fn

    return wrap


def detectors() -> list[Detector]:
    """All registered detectors, by code."""
    global _DISCOVERED
    if not _DISCOVERED:
        _DISCOVERED = True
        package = importlib.import_module("mastkit.annotate.detectors")
        for mod in pkgutil.iter_modules(package.__path__):
            if not mod.name.startswith("_"):
                importlib.import_module(f"{package.__name__}.{mod.name}")
    return [_DETECTORS[k] for k in sorted(_DETECTORS)]


# -- verdict helpers ------------------------------------------------------------------


def present(
    code: str, name: str, evidence: Iterable[Evidence], rationale: str, confidence: float
) -> ModeVerdict:
    return ModeVerdict(
        code=code,
        verdict="present",
        confidence=confidence,
        evidence=list(evidence),
        rationale=rationale,
        source=f"rule:{name}",
    )


def absent(code: str, name: str, rationale: str, confidence: float = 0.6) -> ModeVerdict:
    return ModeVerdict(
        code=code, verdict="absent", confidence=confidence, rationale=rationale, source=f"rule:{name}"
    )


def unknown(code: str, name: str, rationale: str) -> ModeVerdict:
    return ModeVerdict(code=code, verdict="unknown", rationale=rationale, source=f"rule:{name}")


def quote(text: str | None, limit: int = 200) -> str | None:
    """A short single-line excerpt for evidence."""
    if not text:
        return None
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def evidence_at(events: list[Event], note: str | None = None, text: str | None = None) -> Evidence:
    """Evidence spanning ``events`` (first..last seq), quoting the first event unless ``text`` is given."""
    first, last = events[0], events[-1]
    return Evidence(
        quote=quote(text if text is not None else first.text()),
        seq_start=first.seq,
        seq_end=last.seq,
        agent=first.actor,
        note=note,
    )


def live_events(trace: Trace) -> list[Event]:
    """Events that happened in this run (replayed/copied context left out)."""
    return [e for e in trace.events if not e.is_copied_context]
