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
    "span_ids",
]

OTLP_FORMATS = ("otlp",)
"""Source formats whose trace ids and event ids are OpenTelemetry trace and span ids."""


def _is_span_id(s: str) -> bool:
    return len(s) == 16 and all(c in "0123456789abcdef" for c in s)


def span_ids(store: Store, trace_ids: list[str] | None = None) -> dict[str, dict[int, str]]:
    """``{trace_id: {event seq: span id}}`` for the stored traces that came from OTLP."""
    wanted = set(trace_ids) if trace_ids is not None else None
    out: dict[str, dict[int, str]] = {}
    for row in store.traces():
        if row["source_format"] not in OTLP_FORMATS or (wanted is not None and row["trace_id"] not in wanted):
            continue
        trace = store.get_trace(row["trace_id"])
        if trace is None:
            continue
        # The first event of a span carries its id; later events of the same span have it as parent.
        ids = {e.seq: e.id or e.parent_id for e in trace.events}
        out[trace.trace_id] = {seq: sid for seq, sid in ids.items() if sid and _is_span_id(sid)}
    return out


def export_run_otlp(store: Store, endpoint: str, run: str | None = None, **options: Any) -> tuple[str, int]:
    """Send one run's annotations (default: the latest run) to ``endpoint``; returns (run, spans sent).

    ``options`` go to :func:`export_otlp` (``headers``, ``batch_size``, ``timeout``, ``redact``)."""
    config = store.resolve_run(run)
    rows = store.traces()
    formats: Mapping[str, str | None] = {r["trace_id"]: r["source_format"] for r in rows}
    outcomes = {r["trace_id"]: None if r["success"] is None else bool(r["success"]) for r in rows}
    n = export_otlp(store.annotations(config), endpoint, formats=formats, outcomes=outcomes, **options)
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
