"""Send annotations where users already look: OpenTelemetry backends (OTLP/HTTP) and Langfuse.

:func:`export_otlp` and :func:`export_langfuse` take annotations; :func:`export_run_otlp` and
:func:`export_run_langfuse` take a store and a run reference and add what the store knows about
each trace (its source format, recorded success, native span ids).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mastkit.export.langfuse import export_langfuse, langfuse_scores
from mastkit.export.otel import ExportError, annotation_spans, export_otlp, export_request, otel_trace_id
from mastkit.store import Store

__all__ = [
    "ExportError",
    "annotation_spans",
    "export_langfuse",
    "export_otlp",
    "export_request",
    "export_run_langfuse",
    "export_run_otlp",
    "langfuse_scores",
    "otel_trace_id",
    "root_span_ids",
    "span_ids",
]

OTLP_FORMATS = ("otlp",)
"""Source formats whose trace ids and event ids are OpenTelemetry trace and span ids."""


def _is_span_id(s: str) -> bool:
    return len(s) == 16 and all(c in "0123456789abcdef" for c in s)


def span_ids(store: Store, trace_ids: list[str] | None = None) -> dict[str, dict[int, str]]:
    """``{trace_id: {event seq: span id}}`` for the stored traces that came from OTLP."""
    return {tid: by_seq for tid, (by_seq, _root) in _otlp_spans(store, trace_ids).items()}


def root_span_ids(store: Store, trace_ids: list[str] | None = None) -> dict[str, str]:
    """``{trace_id: root span id}`` for the stored traces that came from OTLP (the first span
    without a parent)."""
    return {tid: root for tid, (_by_seq, root) in _otlp_spans(store, trace_ids).items() if root}


def _otlp_spans(store: Store, trace_ids: list[str] | None) -> dict[str, tuple[dict[int, str], str | None]]:
    wanted = set(trace_ids) if trace_ids is not None else None
    out: dict[str, tuple[dict[int, str], str | None]] = {}
    for row in store.traces():
        if row["source_format"] not in OTLP_FORMATS or (wanted is not None and row["trace_id"] not in wanted):
            continue
        trace = store.get_trace(trace_hash=row["trace_hash"])
        if trace is None:
            continue
        # The first event of a span carries its id; later events of the same span have it as parent.
        ids = {e.seq: e.id or e.parent_id for e in trace.events}
        by_seq = {seq: sid for seq, sid in ids.items() if sid and _is_span_id(sid)}
        root = next((e.id for e in trace.events if e.id and e.parent_id is None and _is_span_id(e.id)), None)
        out[trace.trace_id] = (by_seq, root)
    return out


def export_run_otlp(store: Store, endpoint: str, run: str | None = None, **options: Any) -> tuple[str, int]:
    """Send one run's annotations (default: the latest run) to ``endpoint``; returns (run, spans sent).

    A trace that came from OTLP gets the annotation span under its root span, and each failure
    mode's evidence names the span it points at. ``options`` go to :func:`export_otlp`
    (``headers``, ``batch_size``, ``timeout``, ``redact``)."""
    config = store.resolve_run(run)
    rows = store.traces()
    formats: Mapping[str, str | None] = {r["trace_id"]: r["source_format"] for r in rows}
    outcomes = {r["trace_id"]: None if r["success"] is None else bool(r["success"]) for r in rows}
    anns = list(store.annotations(config))
    spans = _otlp_spans(store, [a.trace_id for a in anns])
    n = export_otlp(
        anns,
        endpoint,
        formats=formats,
        outcomes=outcomes,
        span_ids={tid: by_seq for tid, (by_seq, _root) in spans.items()},
        root_spans={tid: root for tid, (_by_seq, root) in spans.items() if root},
        **options,
    )
    return config, n


def export_run_langfuse(
    store: Store,
    out: str | Path | None = None,
    host: str | None = None,
    run: str | None = None,
    **options: Any,
) -> tuple[str, int]:
    """Write and/or post one run's annotations as Langfuse scores; returns (run, scores)."""
    config = store.resolve_run(run)
    anns = list(store.annotations(config))
    obs = span_ids(store, [a.trace_id for a in anns])
    return config, export_langfuse(anns, out, host=host, observation_ids=obs, **options)
