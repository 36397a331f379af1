"""The detector extension point and the helpers detectors share.

A detector looks at one trace for one failure mode and returns a :class:`ModeVerdict`:

* ``present`` — with evidence (event seq range, agent, quote) and a confidence;
* ``absent`` — only when the trace has what the detector needs to judge (e.g. structured
  tool calls) and the pattern is not there;
* ``unknown`` — when it cannot judge (no structured events, text-only logs, ...), with why.

Detectors favour precision: a false ``present`` costs a user's trust more than a miss,
which the LLM judge can still catch.

A detector binds to a mode *of a taxonomy*: the registry is keyed by (taxonomy id, code), so a
custom taxonomy that reuses ``FM-1.3`` for something else gets no MAST detector. The confidence
of a verdict is not set by hand: :func:`present` and :func:`absent` read the detector's measured
precision from the shipped table (:mod:`mastkit.annotate.detectors._precision`).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from mastkit.annotate.detectors._precision import confidence_for
from mastkit.annotate.model import Evidence, ModeVerdict
from mastkit.taxonomy import Taxonomy
from mastkit.traces.model import Event, Trace

DetectorFn = Callable[[Trace], ModeVerdict]

MAST_TAXONOMY_ID = "mast"
"""Id of the built-in MAST taxonomy (``src/mastkit/taxonomy/data/mast.yaml``)."""


@dataclass(frozen=True)
class Detector:
    code: str
    """Code of the mode the detector judges (``FM-1.3``), within :attr:`taxonomy`."""
    name: str
    """Short id used in verdict sources (``rule:step_repetition``)."""
    fn: DetectorFn
    description: str
    taxonomy: str = MAST_TAXONOMY_ID
    """Id of the taxonomy whose mode ``code`` names."""

    @property
    def key(self) -> tuple[str, str]:
        return (self.taxonomy, self.code)

    def __call__(self, trace: Trace) -> ModeVerdict:
        return self.fn(trace)


_DETECTORS: dict[tuple[str, str], Detector] = {}
_DISCOVERED = False


def detector(code: str, name: str, taxonomy: str = MAST_TAXONOMY_ID) -> Callable[[DetectorFn], DetectorFn]:
    """Register ``fn`` as the rule detector for mode ``code`` of the taxonomy with id ``taxonomy``."""

    def wrap(fn: DetectorFn) -> DetectorFn:
        det = Detector(code=code, name=name, fn=fn, description=(fn.__doc__ or "").strip(), taxonomy=taxonomy)
        _DETECTORS[det.key] = det
        return fn

    return wrap


def detectors(taxonomy: Taxonomy | str | None = None) -> list[Detector]:
    """Registered detectors, by taxonomy and code; only those of ``taxonomy`` (an id or a
    :class:`Taxonomy`) when given."""
    global _DISCOVERED
    if not _DISCOVERED:
        _DISCOVERED = True
        package = importlib.import_module("mastkit.annotate.detectors")
        for mod in pkgutil.iter_modules(package.__path__):
            if not mod.name.startswith("_"):
                importlib.import_module(f"{package.__name__}.{mod.name}")
    tax_id = taxonomy.id if isinstance(taxonomy, Taxonomy) else taxonomy
    return [_DETECTORS[k] for k in sorted(_DETECTORS) if tax_id is None or k[0] == tax_id]


def detector_for(taxonomy: Taxonomy | str, code: str) -> Detector | None:
    """The detector for mode ``code`` of ``taxonomy``, or None when that taxonomy's mode has none."""
    tax_id = taxonomy.id if isinstance(taxonomy, Taxonomy) else taxonomy
    detectors()
    return _DETECTORS.get((tax_id, code))


# -- verdict helpers ------------------------------------------------------------------


def present(code: str, name: str, evidence: Iterable[Evidence], rationale: str) -> ModeVerdict:
    """A ``present`` verdict; its confidence is the detector's measured precision."""
    conf = confidence_for(name, "present")
    return ModeVerdict(
        code=code,
        verdict="present",
        confidence=conf.value,
        evidence=list(evidence),
        rationale=rationale,
        source=f"rule:{name}",
        extra={"confidence_from": conf.origin},
    )


def absent(code: str, name: str, rationale: str) -> ModeVerdict:
    """An ``absent`` verdict; its confidence is the detector's measured negative predictive value."""
    conf = confidence_for(name, "absent")
    return ModeVerdict(
        code=code,
        verdict="absent",
        confidence=conf.value,
        rationale=rationale,
        source=f"rule:{name}",
        extra={"confidence_from": conf.origin},
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
