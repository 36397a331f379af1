"""Annotations as Langfuse scores.

One ``BOOLEAN`` score per mode judged present or absent (name = mode code, value 1/0, comment =
rationale and evidence), plus a ``NUMERIC`` score ``mastkit.modes_present`` per trace. ``unknown``
verdicts are not scores: they are skipped (a score of 0 would read as "absent").

Written as JSONL of score objects (``traceId``, ``name``, ``value``, ``dataType``, ``comment``,
``id``) — the body of Langfuse's score-create — or posted to ``{host}/api/public/ingestion`` as a
batch of ``score-create`` events with basic auth (``LANGFUSE_PUBLIC_KEY``/``LANGFUSE_SECRET_KEY``).
Comments (rationale, evidence quote) are redacted, secrets and e-mail addresses, unless
``redact=False``. The score id is stable (trace, run, mode), so re-sending updates in place
(each send uses fresh event ids: Langfuse deduplicates on the event id, updates on the body id).
For traces that came from OTLP (ingested into Langfuse through its OpenTelemetry endpoint, where
the trace id is the OTel trace id and an observation id is a span id), a present verdict's score is
attached to the observation where its evidence starts (``observationId``).
"""

from __future__ import annotations

import hashlib
import os
import uuid
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from mastkit.annotate.model import Annotation
from mastkit.annotate.redact import ResultScrubber as Scrubber
from mastkit.export.otel import ExportError, basic_auth, post_json
from mastkit.providers.redact import Redactor


def _sid(*parts: str) -> str:
    return str(uuid.UUID(hashlib.sha256("|".join(parts).encode()).hexdigest()[:32]))


def langfuse_scores(
    annotations: Iterable[Annotation],
    *,
    redactor: Redactor | None = None,
    observation_ids: Mapping[str, Mapping[int, str]] | None = None,
    redact: bool = True,
) -> list[dict[str, Any]]:
    """Score objects for the annotations (see the module doc).

    ``observation_ids`` maps a trace id to ``{event seq: native span id}`` for traces that came
    from OTLP (Langfuse uses the span id as the observation id): a present verdict's score is
    then attached to the observation where its evidence starts."""
    scrub = Scrubber(redactor) if redact else None
    scores: list[dict[str, Any]] = []
    for a in annotations:
        if scrub is not None:  # rationales, quotes, agent names
            a = scrub.annotation(a)
        spans = (observation_ids or {}).get(a.trace_id, {})
        for v in a.verdicts:
            if v.verdict == "unknown":
                continue
            comment = v.rationale or ""
            if v.evidence and v.evidence[0].quote:
                ev = v.evidence[0]
                comment += f" [events {ev.seq_start}-{ev.seq_end}] {ev.quote}"
            score: dict[str, Any] = {
                "id": _sid(a.trace_id, a.config_hash, v.code),
                "traceId": a.trace_id,
                "name": v.code,
                "value": 1 if v.verdict == "present" else 0,
                "dataType": "BOOLEAN",
                "comment": (scrub.text(comment.strip()) if scrub is not None else comment.strip())[:1000]
                or None,
                "metadata": {
                    "run": a.config_hash,
                    "annotator": a.config.kind,
                    "confidence": v.confidence,
                },
            }
            first = v.evidence[0].seq_start if v.evidence else None
            if v.verdict == "present" and first is not None and first in spans:
                score["observationId"] = spans[first]
            scores.append(score)
        scores.append(
            {
                "id": _sid(a.trace_id, a.config_hash, "count"),
                "traceId": a.trace_id,
                "name": "mastkit.modes_present",
                "value": len(a.present()),
                "dataType": "NUMERIC",
                "comment": ", ".join(a.present()) or None,
                "metadata": {"run": a.config_hash, "annotator": a.config.kind},
            }
        )
    return scores


def export_langfuse(
    annotations: Iterable[Annotation],
    out: str | Path | None = None,
    *,
    host: str | None = None,
    public_key: str | None = None,
    secret_key: str | None = None,
    batch_size: int = 100,
    timeout: float = 10.0,
    observation_ids: Mapping[str, Mapping[int, str]] | None = None,
    redact: bool = True,
) -> int:
    """Write the scores to ``out`` (JSONL) and/or post them to a Langfuse ``host``. Returns the count.

    Raises :class:`ExportError` when the host refuses the request or rejects some of the scores."""
    scores = langfuse_scores(annotations, observation_ids=observation_ids, redact=redact)
    if out is not None:
        Path(out).write_bytes(b"".join(orjson.dumps(s) + b"\n" for s in scores))
    if host is not None:
        pk = public_key or os.environ.get("LANGFUSE_PUBLIC_KEY")
        sk = secret_key or os.environ.get("LANGFUSE_SECRET_KEY")
        if not pk or not sk:
            raise ExportError("Langfuse needs LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY (environment)")
        url = host.rstrip("/") + "/api/public/ingestion"
        now = datetime.now(UTC).isoformat()
        failed: list[str] = []
        for i in range(0, len(scores), max(1, batch_size)):
            batch = [
                {"id": _sid(s["id"], "event", now), "type": "score-create", "timestamp": now, "body": s}
                for s in scores[i : i + batch_size]
            ]
            reply = post_json(url, {"batch": batch}, headers=basic_auth(pk, sk), timeout=timeout)
            # The ingestion API answers 207 with per-event errors rather than failing the request.
            for e in (reply.get("errors") or []) if isinstance(reply, dict) else []:
                if isinstance(e, dict):
                    failed.append(f"{e.get('status')} {e.get('message') or e.get('error') or ''}".strip())
        if failed:
            raise ExportError(
                f"{url}: Langfuse rejected {len(failed)} of {len(scores)} scores: " + "; ".join(failed[:3])
            )
    return len(scores)
