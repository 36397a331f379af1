"""Everything a report shows, gathered from the store once: :func:`build_report_data`.

The renderers (:mod:`mastkit.report.html`, :mod:`mastkit.report.text`) only format a
:class:`ReportData`; all statistics come from :mod:`mastkit.analyze.profile`.

Trace text is untrusted. It is kept verbatim here (truncated, never interpreted) and
escaped by the renderers. Anchors are derived from trace ids through :func:`safe_anchor`,
never used raw.

Size control: per-trace detail is capped so that a report of ~1,000 traces stays mailable.
Each trace shows at most ``max_events`` events, lowered so that the report holds about
``event_budget`` events in all (but never below 12 per trace): the head, the tail, and every
event cited as evidence or blamed by the attribution, with neighbours. Event text is cut to
a per-event character allowance derived from ``char_budget`` (spread over all shown events),
clamped to ``[min_event_chars, max_event_chars]``; cited and blamed events get twice as
much. Cut text ("… [+N chars]") and hidden events are marked.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, Field

from mastkit.analyze.profile import (
    ISOLATED_MAX,
    Row,
    cascade_chains,
    category_profile,
    cooccurrence,
    failure_profile,
    fatal_vs_benign,
    first_modes,
    modes_per_failed_trace,
    overlap,
    rows,
)
from mastkit.annotate.model import Annotation, ModeVerdict
from mastkit.annotate.redact import ResultScrubber as Scrubber
from mastkit.attribute.model import Attribution
from mastkit.calibration import run_agreement_line
from mastkit.errors import MastkitError
from mastkit.providers.redact import Redactor
from mastkit.store import Store
from mastkit.taxonomy import Taxonomy, load_taxonomy
from mastkit.traces.model import Event, Trace

REPORT_SCHEMA_VERSION = "1.0"

META_FIELDS = ("source_format", "framework", "model", "benchmark")
"""Trace metadata fields the report can group by."""

TRUNCATION_MARKER = "… [+{n} chars]"
"""Appended to cut text: how many characters were left out."""


class _Model(BaseModel):
    pass


class RunInfo(_Model):
    config_hash: str
    kind: str | None = None
    model: str | None = None
    taxonomy_id: str | None = None
    taxonomy_version: str | None = None
    created_at: float | None = None
    annotations: int = 0
    config: dict[str, Any] = Field(default_factory=dict)


class CategoryInfo(_Model):
    code: str
    name: str
    description: str = ""


class ModeInfo(_Model):
    code: str
    name: str
    category: str
    definition: str = ""


class TaxonomyInfo(_Model):
    id: str
    name: str
    version: str
    categories: list[CategoryInfo]
    modes: list[ModeInfo]

    def category_of(self) -> dict[str, str]:
        return {m.code: m.category for m in self.modes}

    def mode_name(self, code: str) -> str:
        return next((m.name for m in self.modes if m.code == code), code)

    def category_name(self, code: str) -> str:
        return next((c.name for c in self.categories if c.code == code), code)


class AttributionView(_Model):
    agent: str | None = None
    step: int | None = None
    mode: str | None = None
    confidence: float | None = None
    reason: str | None = None
    method: str | None = None


class TraceSummary(_Model):
    """One row of the trace table."""

    trace_id: str
    """The trace's id, or ``id (short hash)`` when several traces of the run share that id."""
    trace_hash: str = ""
    """Content hash of the judged trace version (its identity in the store)."""
    anchor: str
    """HTML id of the trace's section (``trace-<safe id>``)."""
    source_format: str | None = None
    framework: str | None = None
    model: str | None = None
    benchmark: str | None = None
    task_id: str | None = None
    success: bool | None = None
    outcome: str = "unknown"
    """``failed``, ``success`` or ``unknown``."""
    n_events: int | None = None
    present: list[str] = Field(default_factory=list)
    unknown: list[str] = Field(default_factory=list)
    attribution: AttributionView | None = None
    summary: str | None = None
    errors: int = 0


class EventView(_Model):
    seq: int
    kind: str
    actor: str | None = None
    role: str | None = None
    subtype: str | None = None
    tool: str | None = None
    is_error: bool | None = None
    copied: bool = False
    text: str = ""
    truncated: int = 0
    """Characters cut from ``text`` (0: complete)."""
    hidden_before: int = 0
    """Events not shown between the previous shown event and this one."""
    cited_by: list[str] = Field(default_factory=list)
    """Mode codes whose evidence covers this event."""
    blamed: bool = False
    """The attribution's decisive step."""
    anchor: str | None = None
    """HTML id, set on cited and blamed events (link targets)."""


class EvidenceView(_Model):
    seq_start: int | None = None
    seq_end: int | None = None
    quote: str | None = None
    note: str | None = None
    agent: str | None = None
    target: str | None = None
    """Anchor of the first cited event when it is shown in the report."""


class VerdictView(_Model):
    code: str
    name: str
    verdict: str
    confidence: float | None = None
    rationale: str | None = None
    source: str = ""
    evidence: list[EvidenceView] = Field(default_factory=list)


class TraceDetail(_Model):
    """The in-page "page" of one trace: timeline, verdicts, attribution."""

    trace_id: str
    """As in :class:`TraceSummary`."""
    trace_hash: str = ""
    """Content hash of the judged version: the body shown is that version's."""
    anchor: str
    available: bool = True
    """False when the store holds no trace body (only the annotation)."""
    task: str | None = None
    termination: str | None = None
    final_output: str | None = None
    events_total: int = 0
    events_hidden: int = 0
    hidden_after: int = 0
    events: list[EventView] = Field(default_factory=list)
    verdicts: list[VerdictView] = Field(default_factory=list)
    """Present and unknown verdicts (absent ones are only counted)."""
    absent: int = 0
    attribution: AttributionView | None = None
    attribution_target: str | None = None
    summary: str | None = None
    errors: list[str] = Field(default_factory=list)
    seen: str | None = None
    """How much of the trace the LLM judge saw (windows, elided text, events no window showed) and
    what was redacted before it was sent; None for annotators that read the whole trace."""
    partial: bool = False
    """True when the judge did not see every event of the trace (window cap)."""


def judge_coverage(ann: Annotation) -> tuple[str | None, bool]:
    """A one-line account of what the judge saw of a trace, from ``extra["coverage"]``, and whether
    some events were shown to no window."""
    cov = ann.extra.get("coverage")
    if not isinstance(cov, dict):
        return None, False
    windows = int(cov.get("windows") or 0)
    requests = int(ann.extra.get("requests") or windows)
    bits = [
        f"{windows} window{'s' if windows != 1 else ''} ({requests} request{'s' if requests != 1 else ''})"
    ]
    omitted = int(cov.get("events_omitted_by_window_cap") or 0)
    if omitted:
        bits.append(f"{omitted} event(s) in the middle shown to no window (window cap)")
    if cov.get("chars_elided"):
        bits.append(
            f"{int(cov['chars_elided']):,} of {int(cov.get('chars') or 0):,} characters elided from "
            f"{int(cov.get('events_elided') or 0)} long event(s)"
        )
    if cov.get("replayed_omitted"):
        bits.append(f"{int(cov['replayed_omitted'])} replayed-context event(s) left out")
    redactions = ann.extra.get("redactions")
    if isinstance(redactions, dict) and redactions:
        bits.append(
            "redacted before sending: " + ", ".join(f"{k} {v}" for k, v in sorted(redactions.items()))
        )
    return "The judge saw " + "; ".join(bits) + ".", omitted > 0


class Counts(_Model):
    traces: int = 0
    """Annotated traces in the run."""
    failed: int = 0
    succeeded: int = 0
    outcome_unknown: int = 0
    with_modes: int = 0
    store_traces: int = 0
    """Traces in the store (annotated or not)."""
    not_annotated: int = 0
    errors: int = 0
    judge_partial: int = 0
    """Traces the LLM judge did not see whole (events shown to no window)."""


class Tables(_Model):
    """Analysis tables, exactly as :mod:`mastkit.analyze.profile` returns them."""

    profile: list[dict[str, Any]] = Field(default_factory=list)
    profile_by: dict[str, list[dict[str, Any]]] = Field(default_factory=dict)
    category_profile: list[dict[str, Any]] = Field(default_factory=list)
    category_profile_by: dict[str, list[dict[str, Any]]] = Field(default_factory=dict)
    modes_per_failed: list[dict[str, Any]] = Field(default_factory=list)
    modes_per_failed_by: dict[str, list[dict[str, Any]]] = Field(default_factory=dict)
    fatal_vs_benign: list[dict[str, Any]] = Field(default_factory=list)
    cooccurrence: dict[str, Any] = Field(default_factory=dict)
    first_modes: list[dict[str, Any]] = Field(default_factory=list)
    cascade_chains: list[dict[str, Any]] = Field(default_factory=list)
    overlap_by: dict[str, list[dict[str, Any]]] = Field(default_factory=dict)


class Limits(_Model):
    max_events: int
    """Events shown per trace (after spreading ``event_budget`` over the traces)."""
    event_budget: int
    max_event_chars: int
    min_event_chars: int
    char_budget: int
    event_chars: int
    """The per-event allowance actually used (cited events get twice as much)."""


class IntervalView(_Model):
    value: float
    lo: float
    hi: float


class VerifyRow(_Model):
    """One scorer's row of a stored verifier evaluation."""

    scorer: str
    protocol: str
    pass_at_1: IntervalView
    selected: IntervalView
    oracle: IntervalView
    gain: IntervalView
    failed: int = 0


class VerifyComparison(_Model):
    """Selected of ``scorer`` minus selected of ``versus``, paired over tasks."""

    scorer: str
    versus: str
    difference: IntervalView


class VerifyView(_Model):
    """The latest ``mastkit verify --eval`` kept in the store (pass@1 / selected / oracle per
    scorer, 95 % bootstrap intervals over tasks)."""

    label: str
    created_at: str
    tasks: int
    rollouts: int
    skipped: int = 0
    n_boot: int
    seed: int
    results: list[VerifyRow]
    comparisons: list[VerifyComparison] = Field(default_factory=list)


def verify_view(store: Store) -> VerifyView | None:
    """The latest verifier evaluation of ``store`` for the report, or None (none stored, or one
    this version cannot read)."""
    row = store.latest_verify_eval()
    if row is None:
        return None
    try:
        doc = json.loads(row["result_json"])
        when = datetime.fromtimestamp(float(row["created_at"]), UTC).isoformat(timespec="seconds")
        return VerifyView.model_validate({**doc, "label": row["label"], "created_at": when})
    except (ValueError, TypeError):
        return None


class ReportData(_Model):
    """Everything the report shows. ``render_json`` dumps it as is."""

    report_schema: str = REPORT_SCHEMA_VERSION
    generated_at: str
    mastkit_version: str
    store_path: str
    run: RunInfo
    runs: list[RunInfo] = Field(default_factory=list)
    calibration: str = ""
    """How far to trust the run's annotator: its measured agreement on the calibration set, or
    that it is uncalibrated (:func:`mastkit.calibration.run_agreement_line`)."""
    taxonomy: TaxonomyInfo
    by: list[str] = Field(default_factory=list)
    isolated_max: int = ISOLATED_MAX
    """Failed traces with 1..isolated_max modes are *isolated*; more is *cascading*; 0 is *none*."""
    counts: Counts
    tables: Tables
    traces: list[TraceSummary] = Field(default_factory=list)
    details: list[TraceDetail] = Field(default_factory=list)
    errors: list[dict[str, Any]] = Field(default_factory=list)
    """Store errors of the run (load/annotate failures), capped."""
    limits: Limits
    redacted: bool = False
    """True when trace and annotation text was redacted before it was put in the report."""
    redactions: dict[str, int] = Field(default_factory=dict)
    """What redaction removed, by kind (each distinct string counted once)."""
    verify: VerifyView | None = None
    """The latest best-of-N verifier evaluation in the store (``mastkit verify --eval``)."""


# -- helpers -----------------------------------------------------------------------------------

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")


def safe_anchor(trace_id: str, prefix: str = "trace-") -> str:
    """An HTML id for a trace: ``[A-Za-z0-9_-]`` only; a hash suffix when the id had to change."""
    cleaned = _UNSAFE.sub("-", trace_id).strip("-")[:60]
    if cleaned != trace_id or not cleaned:
        digest = hashlib.sha1(trace_id.encode("utf-8", "surrogatepass")).hexdigest()[:8]
        cleaned = f"{cleaned}-{digest}" if cleaned else digest
    return prefix + cleaned


def truncate(text: str | None, limit: int) -> tuple[str, int]:
    """``text`` cut to ``limit`` characters (plus a visible marker); returns (text, chars cut)."""
    if not text:
        return "", 0
    if len(text) <= limit:
        return text, 0
    cut = len(text) - limit
    return text[:limit] + TRUNCATION_MARKER.format(n=cut), cut


def _clip(text: str | None, limit: int) -> str | None:
    return None if text is None else truncate(text, limit)[0]


def _taxonomy_info(ref: str | None, codes: Iterable[str]) -> TaxonomyInfo:
    tax: Taxonomy | None
    try:
        tax = load_taxonomy(ref or "mast")
    except (MastkitError, OSError, ValueError):
        tax = None
    if tax is not None:
        info = TaxonomyInfo(
            id=tax.id,
            name=tax.name,
            version=tax.version,
            categories=[
                CategoryInfo(code=c.code, name=c.name, description=c.description) for c in tax.categories
            ],
            modes=[
                ModeInfo(code=m.code, name=m.name, category=m.category, definition=m.definition)
                for m in tax.modes
            ],
        )
    else:
        info = TaxonomyInfo(
            id=str(ref or "unknown"), name=str(ref or "unknown"), version="", categories=[], modes=[]
        )
    # Codes the annotations use that the taxonomy does not know (a custom file not found, an alias).
    known = {m.code for m in info.modes}
    extra = sorted({c for c in codes if c not in known})
    if extra:
        if not any(c.code == "?" for c in info.categories):
            info.categories.append(CategoryInfo(code="?", name="Not in taxonomy"))
        info.modes.extend(ModeInfo(code=c, name=c, category="?") for c in extra)
    return info


def _run_info(r: Mapping[str, Any]) -> RunInfo:
    try:
        config = json.loads(r.get("config_json") or "{}")
    except ValueError:
        config = {}
    return RunInfo(
        config_hash=str(r["config_hash"]),
        kind=r.get("kind"),
        model=r.get("model"),
        taxonomy_id=r.get("taxonomy_id"),
        taxonomy_version=r.get("taxonomy_version"),
        created_at=r.get("created_at"),
        annotations=int(r.get("annotations") or 0),
        config=config if isinstance(config, dict) else {},
    )


def _outcome(success: bool | None) -> str:
    return "unknown" if success is None else ("success" if success else "failed")


def _attr_view(a: Attribution | None) -> AttributionView | None:
    if a is None:
        return None
    return AttributionView(
        agent=a.agent,
        step=a.step,
        mode=a.mode,
        confidence=a.confidence,
        reason=_clip(a.reason, 400),
        method=a.method,
    )


def _select_events(n: int, must: set[int], max_events: int) -> list[int]:
    """Which event seqs to show: all when few; else head, tail, ``must`` and their neighbours."""
    if n <= max_events:
        return list(range(n))
    chosen = {s for s in must if 0 <= s < n}
    quarter = max(1, max_events // 4)
    chosen |= set(range(min(quarter, n)))
    chosen |= set(range(max(0, n - quarter), n))
    for s in sorted(must):
        for t in (s - 1, s + 1):
            if len(chosen) >= max_events:
                break
            if 0 <= t < n:
                chosen.add(t)
    i, j = quarter, n - quarter - 1
    while len(chosen) < max_events and i <= j:  # fill from both ends towards the middle
        chosen.add(i)
        if len(chosen) < max_events:
            chosen.add(j)
        i, j = i + 1, j - 1
    return sorted(chosen)


def _event_text(e: Event, limit: int, quote: str | None) -> tuple[str, int]:
    text = e.text()
    if len(text) <= limit or not quote:
        return truncate(text, limit)
    # Keep the quoted evidence visible when it lies beyond the cut.
    idx = text.find(quote[:60])
    if idx < 0 or idx + min(len(quote), 60) <= limit:
        return truncate(text, limit)
    start = max(0, idx - limit // 4)
    window = text[start : start + limit]
    cut = len(text) - len(window)
    tail = "" if start + limit >= len(text) else " …"
    return f"[… {start} chars] " + window + tail + TRUNCATION_MARKER.format(n=cut), cut


def _detail(
    trace_id: str,
    t_hash: str,
    anchor: str,
    trace: Trace | None,
    ann: Annotation,
    attribution: Attribution | None,
    tax: TaxonomyInfo,
    *,
    max_events: int,
    event_chars: int,
) -> TraceDetail:
    present: list[ModeVerdict] = [v for v in ann.verdicts if v.verdict == "present"]
    unknown = [v for v in ann.verdicts if v.verdict == "unknown"]
    n = len(trace.events) if trace else 0

    cited: dict[int, list[str]] = {}
    must: set[int] = set()
    quotes: dict[int, str] = {}
    for v in present:
        for ev in v.evidence:
            if ev.seq_start is None:
                continue
            lo = ev.seq_start
            hi = ev.seq_end if ev.seq_end is not None and ev.seq_end >= lo else lo
            must.update(s for s in (lo, hi) if 0 <= s < n)
            if ev.quote and 0 <= lo < n:
                quotes.setdefault(lo, ev.quote)
            for s in range(max(lo, 0), min(hi, n - 1) + 1):
                codes = cited.setdefault(s, [])
                if v.code not in codes:
                    codes.append(v.code)
    blamed = attribution.step if attribution is not None else None
    if blamed is not None and 0 <= blamed < n:
        must.add(blamed)
    if trace and trace.termination and trace.termination.at_seq is not None:
        must.add(trace.termination.at_seq)

    shown = _select_events(n, must, max_events) if trace else []
    shown_set = set(shown)
    events: list[EventView] = []
    prev = -1
    for s in shown:
        assert trace is not None
        e = trace.events[s]
        limit = event_chars * 2 if (s in cited or s == blamed) else event_chars
        text, cut = _event_text(e, limit, quotes.get(s))
        is_target = s in cited or s == blamed
        events.append(
            EventView(
                seq=s,
                kind=e.kind,
                actor=_clip(e.actor, 80),
                role=e.role,
                subtype=_clip(e.subtype, 80),
                tool=_clip(
                    e.tool_call.name if e.tool_call else (e.tool_result.name if e.tool_result else None), 80
                ),
                is_error=e.tool_result.is_error if e.tool_result else (True if e.kind == "error" else None),
                copied=e.is_copied_context,
                text=text,
                truncated=cut,
                hidden_before=s - prev - 1,
                cited_by=cited.get(s, []),
                blamed=s == blamed,
                anchor=f"{anchor}-e{s}" if is_target else None,
            )
        )
        prev = s

    verdicts = []
    for v in [*present, *unknown]:
        evidence = []
        for ev in v.evidence[:20]:
            target = (
                f"{anchor}-e{ev.seq_start}" if ev.seq_start in shown_set and ev.seq_start in cited else None
            )
            evidence.append(
                EvidenceView(
                    seq_start=ev.seq_start,
                    seq_end=ev.seq_end,
                    quote=_clip(ev.quote, 300),
                    note=_clip(ev.note, 300),
                    agent=_clip(ev.agent, 80),
                    target=target,
                )
            )
        verdicts.append(
            VerdictView(
                code=v.code,
                name=tax.mode_name(v.code),
                verdict=v.verdict,
                confidence=v.confidence,
                rationale=_clip(v.rationale, 300),
                source=_clip(v.source, 120) or "",
                evidence=evidence,
            )
        )
    seen, partial = judge_coverage(ann)
    return TraceDetail(
        trace_id=trace_id,
        trace_hash=t_hash,
        anchor=anchor,
        seen=seen,
        partial=partial,
        available=trace is not None,
        task=_clip(trace.task, 400) if trace else None,
        termination=(
            " / ".join(x for x in (trace.termination.reason, trace.termination.by) if x)
            if trace and trace.termination
            else None
        ),
        final_output=_clip(trace.outcome.final_output, 400) if trace and trace.outcome else None,
        events_total=n,
        events_hidden=n - len(shown),
        hidden_after=(n - 1 - shown[-1]) if shown else 0,
        events=events,
        verdicts=verdicts,
        absent=sum(1 for v in ann.verdicts if v.verdict == "absent"),
        attribution=_attr_view(attribution),
        attribution_target=f"{anchor}-e{blamed}" if blamed is not None and blamed in shown_set else None,
        summary=_clip(ann.summary, 500),
        errors=[truncate(e, 300)[0] for e in ann.errors[:10]],
    )


def _labels(traces: Sequence[tuple[str, str]]) -> list[str]:
    """A unique display label per (trace_id, content hash): the id, or ``id (short hash)`` for
    the traces whose id another trace of the list shares (longer hashes if the short ones clash)."""
    shared = Counter(tid for tid, _h in traces)
    out: list[str] = []
    for tid, h in traces:
        if shared[tid] == 1:
            out.append(tid)
            continue
        digest = h.split(":", 1)[-1]
        n = 8
        while (
            n < len(digest)
            and sum(1 for t, o in traces if t == tid and o.split(":", 1)[-1][:n] == digest[:n]) > 1
        ):
            n += 4
        out.append(f"{tid} ({digest[:n]})")
    return out


def _grouped(
    fn: Any, data: Sequence[Row], by: Sequence[str], *args: Any, **kwargs: Any
) -> dict[str, list[dict[str, Any]]]:
    return {field: fn(data, *args, by=field, **kwargs) for field in by}


# -- the builder -------------------------------------------------------------------------------


def build_report_data(
    store: Store,
    run: str | None = None,
    *,
    by: Sequence[str] = ("model", "framework", "benchmark"),
    details: bool = True,
    max_events: int = 30,
    max_event_chars: int = 1200,
    min_event_chars: int = 100,
    char_budget: int = 2_400_000,
    event_budget: int = 24_000,
    attribution_method: str | None = None,
    max_errors: int = 200,
    redact: bool | Redactor = True,
) -> ReportData:
    """Gather one run's annotations, trace metadata and analyses from ``store``.

    ``run`` is a config-hash prefix, a kind (``rules``/``llm``/``hybrid``) or a model; None
    takes the latest run. ``by`` lists trace fields (``model``, ``framework``, ``benchmark``,
    ``source_format``) to break the profile down by. ``details=False`` leaves out per-trace
    timelines (the trace table and all tables stay).

    ``redact`` (default True, or a :class:`~mastkit.providers.Redactor`) redacts secrets and
    e-mail addresses in every text taken from traces and annotations (events, task, evidence
    quotes, rationales, summaries, attribution reasons, errors) before anything is cut to size,
    so a report can be shared; ``False`` keeps the text as stored.
    """
    from mastkit import __version__

    unknown_fields = [f for f in by if f not in META_FIELDS]
    if unknown_fields:
        raise ValueError(f"cannot group by {unknown_fields}: use {', '.join(META_FIELDS)}")
    config_hash = store.resolve_run(run)
    all_runs = [_run_info(r) for r in store.runs()]
    run_info = next(r for r in all_runs if r.config_hash == config_hash)

    # One entry per stored trace the run annotated (its latest annotated version); a trace is its
    # content hash, so two traces sharing an id are both here, labelled apart.
    scrub = None if redact is False else Scrubber(redact if isinstance(redact, Redactor) else None)
    records = store.annotation_records(config_hash)
    trace_rows = {r["trace_hash"]: r for r in store.traces(all_versions=True)}
    live = {r["trace_hash"] for r in store.traces()}
    attributions = store.attributions_by_hash(attribution_method)
    labels = _labels([(r.trace_id, r.trace_hash) for r in records])
    annotations = [
        r.annotation.model_copy(update={"trace_id": label}) for r, label in zip(records, labels, strict=True)
    ]
    hashes = {label: r.trace_hash for r, label in zip(records, labels, strict=True)}
    if scrub is not None:  # before any text is cut to size, so no cut splits a secret
        annotations = [scrub.annotation(a) for a in annotations]
        attributions = {k: scrub.attribution(a) for k, a in attributions.items()}

    meta: dict[str, dict[str, Any]] = {}
    for a in annotations:
        t = trace_rows.get(hashes[a.trace_id], {})
        m: dict[str, Any] = {f: (t.get(f) if t.get(f) is not None else "unknown") for f in META_FIELDS}
        m["success"] = None if t.get("success") is None else bool(t["success"])
        meta[a.trace_id] = m
    data = rows(annotations, meta)

    codes_used = {v.code for a in annotations for v in a.verdicts}
    tax = _taxonomy_info(run_info.taxonomy_id, codes_used)
    codes = [m.code for m in tax.modes]
    categories = tax.category_of()

    tables = Tables(
        profile=failure_profile(data, codes, categories=categories),
        profile_by=_grouped(failure_profile, data, by, codes, categories=categories),
        category_profile=category_profile(data, categories),
        category_profile_by=_grouped(category_profile, data, by, categories),
        modes_per_failed=modes_per_failed_trace(data),
        modes_per_failed_by={f: modes_per_failed_trace(data, by=f) for f in by},
        fatal_vs_benign=fatal_vs_benign(data, codes),
        cooccurrence=cooccurrence(data, codes),
        first_modes=first_modes(data),
        cascade_chains=cascade_chains(data),
        overlap_by={f: overlap(data, by=f) for f in by},
    )

    anchors: dict[str, str] = {}
    used: set[str] = set()
    for a in annotations:
        anchor = safe_anchor(a.trace_id)
        base, k = anchor, 2
        while anchor in used:  # distinct ids that sanitise alike
            anchor, k = f"{base}-{k}", k + 1
        used.add(anchor)
        anchors[a.trace_id] = anchor

    summaries = []
    for a, r in zip(annotations, data, strict=True):
        t = trace_rows.get(hashes[a.trace_id], {})
        attr = attributions.get(hashes[a.trace_id]) or a.attribution
        summaries.append(
            TraceSummary(
                trace_id=a.trace_id,
                trace_hash=hashes[a.trace_id],
                anchor=anchors[a.trace_id],
                source_format=t.get("source_format"),
                framework=t.get("framework"),
                model=t.get("model"),
                benchmark=t.get("benchmark"),
                task_id=t.get("task_id"),
                success=r.success,
                outcome=_outcome(r.success),
                n_events=t.get("n_events"),
                present=[c for c in codes if c in r.present],
                unknown=[v.code for v in a.verdicts if v.verdict == "unknown"],
                attribution=_attr_view(attr),
                summary=_clip(a.summary, 300),
                errors=len(a.errors),
            )
        )

    # Caps for the whole report: events per trace from ``event_budget`` (never below 12), and one
    # per-event text allowance from ``char_budget``, both spread over the traces.
    max_events = max(min(max_events, 12), min(max_events, event_budget // max(1, len(annotations))))
    n_shown = sum(
        min(int(trace_rows.get(hashes[a.trace_id], {}).get("n_events") or 0), max_events) for a in annotations
    )
    event_chars = max(min_event_chars, min(max_event_chars, char_budget // max(1, n_shown)))

    detail_list: list[TraceDetail] = []
    if details:
        for a in annotations:
            t_hash = hashes[a.trace_id]
            trace = store.get_trace(trace_hash=t_hash)  # the version judged, not a later one
            if trace is not None and scrub is not None:
                trace = scrub.trace(trace)
            detail_list.append(
                _detail(
                    a.trace_id,
                    t_hash,
                    anchors[a.trace_id],
                    trace,
                    a,
                    attributions.get(t_hash) or a.attribution,
                    tax,
                    max_events=max_events,
                    event_chars=event_chars,
                )
            )

    errors = store.errors(config_hash)
    if scrub is not None:
        errors = [scrub.value(e) for e in errors[:max_errors]] + errors[max_errors:]
    counts = Counts(
        traces=len(data),
        failed=sum(1 for r in data if r.success is False),
        succeeded=sum(1 for r in data if r.success is True),
        outcome_unknown=sum(1 for r in data if r.success is None),
        with_modes=sum(1 for r in data if r.present),
        store_traces=len(live),
        not_annotated=len(live - set(hashes.values())),
        errors=len(errors),
        judge_partial=sum(1 for a in annotations if judge_coverage(a)[1]),
    )
    return ReportData(
        generated_at=datetime.now(UTC).isoformat(timespec="seconds"),
        mastkit_version=__version__,
        store_path=store.path,
        run=run_info,
        runs=all_runs,
        calibration=run_agreement_line(store, config_hash),
        taxonomy=tax,
        by=list(by),
        counts=counts,
        tables=tables,
        traces=summaries,
        details=detail_list,
        errors=[
            {k: (truncate(v, 300)[0] if isinstance(v, str) else v) for k, v in e.items()}
            for e in errors[:max_errors]
        ],
        limits=Limits(
            max_events=max_events,
            event_budget=event_budget,
            max_event_chars=max_event_chars,
            min_event_chars=min_event_chars,
            char_budget=char_budget,
            event_chars=event_chars,
        ),
        redacted=scrub is not None,
        redactions=dict(sorted(scrub.counts.items())) if scrub is not None else {},
        verify=verify_view(store),
    )
