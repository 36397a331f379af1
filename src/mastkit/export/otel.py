"""Annotations as OpenTelemetry spans, sent to any OTLP/HTTP endpoint (JSON encoding).

One span per annotated trace (``mastkit.annotation``) with the run and the failure vector as
attributes, and one span event per mode judged present (``mastkit.failure_mode``: code, name,
category, confidence, evidence quote, event seq range, agent). When the trace itself came from
OTLP and its id is a 128-bit hex trace id, the span is put in that same trace, so the failure
modes show up next to the agent's own spans in the user's backend; otherwise the trace id is
derived from the mastkit trace id (stable across exports).

Evidence quotes, rationales and agent names are redacted (secrets and e-mail addresses,
:class:`mastkit.providers.Redactor`) unless ``redact=False`` and the endpoint is on the loopback
interface.
"""

from __future__ import annotations

import base64
import hashlib
import time
import urllib.error
import urllib.request
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

import orjson

from mastkit import __version__
from mastkit.annotate.model import Annotation
from mastkit.annotate.redact import ResultScrubber as Scrubber
from mastkit.errors import MastkitError
from mastkit.providers.redact import Redactor
from mastkit.taxonomy import Taxonomy, builtin_taxonomies, load_taxonomy


class ExportError(MastkitError):
    """The endpoint refused the export or could not be reached."""


def _attr(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        v: dict[str, Any] = {"boolValue": value}
    elif isinstance(value, int):
        v = {"intValue": str(value)}
    elif isinstance(value, float):
        v = {"doubleValue": value}
    elif isinstance(value, list):
        v = {"arrayValue": {"values": [{"stringValue": str(x)} for x in value]}}
    else:
        v = {"stringValue": str(value)}
    return {"key": key, "value": v}


def _is_hex(s: str, n: int) -> bool:
    return len(s) == n and all(c in "0123456789abcdef" for c in s.lower())


def otel_trace_id(trace_id: str, source_format: str | None = None) -> str:
    """The OTLP trace id for a mastkit trace: its own when it came from OTLP, else a stable hash."""
    if source_format in ("otlp", "openinference") and _is_hex(trace_id, 32):
        return trace_id.lower()
    return hashlib.sha256(trace_id.encode()).hexdigest()[:32]


def _is_loopback(endpoint: str) -> bool:
    host = urlsplit(endpoint).hostname or ""
    return host in ("localhost", "::1") or host.startswith("127.")


def annotation_spans(
    annotations: Iterable[Annotation],
    *,
    formats: Mapping[str, str | None] | None = None,
    outcomes: Mapping[str, bool | None] | None = None,
    taxonomy: Taxonomy | None = None,
    redactor: Redactor | None = None,
    span_ids: Mapping[str, Mapping[int, str]] | None = None,
    root_spans: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """OTLP/JSON span objects for the annotations (see the module doc).

    ``formats`` maps trace ids to their source format (to reuse OTLP trace ids), ``outcomes`` to
    the recorded task success (``mastkit.success``); both come from the store's trace rows. For a
    trace whose OTLP id is reused, ``root_spans`` gives the span the annotation span is a child
    of, and ``span_ids`` (event seq -> span id) the span each failure mode's evidence starts in
    (``mastkit.evidence.span_id``)."""
    taxonomies: dict[str, Taxonomy | None] = {taxonomy.id: taxonomy} if taxonomy is not None else {}
    scrub = Scrubber(redactor) if redactor is not None else None
    spans = []
    for a in annotations:
        if scrub is not None:  # quotes, rationales, agent names: every free text of the annotation
            a = scrub.annotation(a)
        tid_ = a.config.taxonomy_id
        if tid_ not in taxonomies:  # built-in taxonomies only: a custom one is not stored with the run
            taxonomies[tid_] = load_taxonomy(tid_) if tid_ in builtin_taxonomies() else None
        tax = taxonomies[tid_]
        at = str(int(a.created_at.timestamp() * 1e9))
        present = a.present()
        tid = otel_trace_id(a.trace_id, (formats or {}).get(a.trace_id))
        sid = hashlib.sha256(f"{a.trace_id}|{a.config_hash}".encode()).hexdigest()[:16]
        in_own_trace = tid == a.trace_id.lower()  # the agent's spans are in this trace too
        seq_spans = (span_ids or {}).get(a.trace_id, {}) if in_own_trace else {}
        events = []
        for v in a.verdicts:
            if v.verdict != "present":
                continue
            attrs = [_attr("mastkit.mode.code", v.code)]
            if tax is not None:
                try:
                    mode = tax.mode(v.code)
                    attrs += [
                        _attr("mastkit.mode.name", mode.name),
                        _attr("mastkit.mode.category", mode.category),
                    ]
                except KeyError:
                    pass
            if v.confidence is not None:
                attrs.append(_attr("mastkit.mode.confidence", float(v.confidence)))
            if v.evidence:
                ev = v.evidence[0]
                if ev.quote:
                    attrs.append(_attr("mastkit.evidence.quote", ev.quote[:500]))
                if ev.seq_start is not None:
                    attrs.append(_attr("mastkit.evidence.seq_start", ev.seq_start))
                    if (evidence_span := seq_spans.get(ev.seq_start)) is not None:
                        attrs.append(_attr("mastkit.evidence.span_id", evidence_span))
                    attrs.append(
                        _attr(
                            "mastkit.evidence.seq_end", ev.seq_end if ev.seq_end is not None else ev.seq_start
                        )
                    )
                if ev.agent:
                    attrs.append(_attr("mastkit.evidence.agent", ev.agent))
            if v.rationale:
                attrs.append(_attr("mastkit.mode.rationale", v.rationale[:500]))
            events.append({"timeUnixNano": at, "name": "mastkit.failure_mode", "attributes": attrs})
        attrs = [
            _attr("mastkit.trace_id", a.trace_id),
            _attr("mastkit.run", a.config_hash),
            _attr("mastkit.annotator", a.config.kind + (f":{a.config.model}" if a.config.model else "")),
            _attr("mastkit.taxonomy", f"{a.config.taxonomy_id}@{a.config.taxonomy_version}"),
            _attr("mastkit.modes.present", present),
            _attr("mastkit.modes.count", len(present)),
            _attr("mastkit.modes.unknown", sum(1 for v in a.verdicts if v.verdict == "unknown")),
        ]
        success = (outcomes or {}).get(a.trace_id)
        if success is not None:
            attrs.append(_attr("mastkit.success", bool(success)))
        if a.predicted_success is not None:
            attrs.append(_attr("mastkit.predicted_success", a.predicted_success))
        if a.attribution is not None and a.attribution.agent:
            attrs.append(_attr("mastkit.attribution.agent", a.attribution.agent))
        if a.attribution is not None and a.attribution.step is not None:
            attrs.append(_attr("mastkit.attribution.step", a.attribution.step))
        span: dict[str, Any] = {
            "traceId": tid,
            "spanId": sid,
            "name": "mastkit.annotation",
            "kind": 1,
            "startTimeUnixNano": at,
            "endTimeUnixNano": at,
            "attributes": attrs,
            "events": events,
            # UNSET: a failure mode in the agent run is not an error of this span (error-rate views stay honest)
            "status": {"code": 0},
        }
        if in_own_trace and (root := (root_spans or {}).get(a.trace_id)):
            span["parentSpanId"] = root  # shown under the agent run it judges
        spans.append(span)
    return spans


def export_request(spans: list[dict[str, Any]]) -> dict[str, Any]:
    """An ``ExportTraceServiceRequest`` (OTLP/JSON) holding ``spans``."""
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": [_attr("service.name", "mastkit")]},
                "scopeSpans": [{"scope": {"name": "mastkit", "version": __version__}, "spans": spans}],
            }
        ]
    }


def post_json(
    url: str,
    payload: dict[str, Any],
    *,
    headers: Mapping[str, str] | None = None,
    timeout: float = 10.0,
    attempts: int = 3,
    sleep: Any = time.sleep,
) -> Any:
    """POST JSON (stdlib HTTP; payloads are small) with retries on 429/5xx and connection errors,
    honouring ``retry-after``. Returns the parsed JSON reply (None when empty or not JSON).
    Raises :class:`ExportError` with what happened on the last attempt."""
    body = orjson.dumps(payload)
    last = ""
    for attempt in range(1, attempts + 1):
        req = urllib.request.Request(
            url, data=body, method="POST", headers={"Content-Type": "application/json", **dict(headers or {})}
        )
        retry_after: str | None = None
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                reply = resp.read()
            try:
                return orjson.loads(reply) if reply.strip() else None
            except orjson.JSONDecodeError:
                return None
        except urllib.error.HTTPError as exc:
            last = f"HTTP {exc.code}: {exc.read()[:200].decode(errors='replace')}"
            if exc.code != 429 and exc.code < 500:
                raise ExportError(f"{url}: {last}") from None
            retry_after = exc.headers.get("retry-after")
        except (urllib.error.URLError, OSError) as exc:
            last = f"{type(exc).__name__}: {exc}"
        if attempt < attempts:
            if retry_after and retry_after.replace(".", "", 1).isdigit():
                sleep(min(float(retry_after), 30.0))
            else:
                sleep(0.5 * 2 ** (attempt - 1))
    raise ExportError(f"{url}: gave up after {attempts} attempts ({last})")


def basic_auth(user: str, password: str) -> dict[str, str]:
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


def export_otlp(
    annotations: Iterable[Annotation],
    endpoint: str,
    *,
    formats: Mapping[str, str | None] | None = None,
    outcomes: Mapping[str, bool | None] | None = None,
    headers: Mapping[str, str] | None = None,
    batch_size: int = 100,
    timeout: float = 10.0,
    redact: bool = True,
    span_ids: Mapping[str, Mapping[int, str]] | None = None,
    root_spans: Mapping[str, str] | None = None,
) -> int:
    """Send the annotations to ``{endpoint}/v1/traces``; returns the number of spans sent.
    ``span_ids`` and ``root_spans``: see :func:`annotation_spans`."""
    url = endpoint.rstrip("/")
    if not url.endswith("/v1/traces"):
        url += "/v1/traces"
    redactor = Redactor() if (redact or not _is_loopback(endpoint)) else None
    spans = annotation_spans(
        annotations,
        formats=formats,
        outcomes=outcomes,
        redactor=redactor,
        span_ids=span_ids,
        root_spans=root_spans,
    )
    rejected, messages = 0, []
    for i in range(0, len(spans), max(1, batch_size)):
        reply = post_json(url, export_request(spans[i : i + batch_size]), headers=headers, timeout=timeout)
        # OTLP partial success: the receiver accepted the request but dropped some spans (not retryable).
        partial = reply.get("partialSuccess") if isinstance(reply, dict) else None
        if isinstance(partial, dict) and int(partial.get("rejectedSpans") or 0) > 0:
            rejected += int(partial["rejectedSpans"])
            if partial.get("errorMessage"):
                messages.append(str(partial["errorMessage"]))
    if rejected:
        raise ExportError(
            f"{url}: the receiver rejected {rejected} of {len(spans)} spans"
            + (f": {'; '.join(messages[:3])}" if messages else "")
        )
    return len(spans)
