"""Open coding: a trace becomes short, domain-free failure notes with evidence.

A note says what the agent did wrong in words that do not depend on the task ("a tool call
failed: permission denied on <path>"), so that clustering groups notes by failure and not by
subject. The offline note-maker reads only the trace's own signals: tool errors and error
events (their messages normalised: numbers, ids, paths, URLs and quoted values masked), the
rule detectors' findings, repeated calls (retries and loops), how the run ended, and stops
that come right after an unresolved error.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter

from pydantic import BaseModel, ConfigDict, Field

from mastkit.annotate.detectors._signals import FAILURE_OUTPUT, GIVE_UP, canonical_call, result_failed
from mastkit.annotate.rule_annotator import run_detectors
from mastkit.taxonomy import Taxonomy, load_taxonomy
from mastkit.traces.model import Event, Trace

__all__ = ["OFFLINE_NOTES_VERSION", "Note", "is_failed", "normalise_message", "offline_notes"]

OFFLINE_NOTES_VERSION = "notes-offline-1"


class Note(BaseModel):
    """One failure note: what went wrong, where, in task-independent words."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    trace_id: str
    text: str
    """The domain-free note (what clustering reads)."""
    signal: str
    """Which signal produced it: tool_error, error_event, message_error, detector, repetition,
    termination, stop, llm."""
    seqs: list[int] = Field(default_factory=list)
    """Event seqs the note is about."""
    quote: str | None = None
    """A short verbatim excerpt of the trace (evidence; not clustered)."""
    agent: str | None = None
    failed: bool = True
    """Whether the trace the note comes from failed (notes of successful traces are contrast)."""
    mast_code: str | None = None
    """The MAST mode a rule detector found, for notes made from its finding."""

    @property
    def note_id(self) -> str:
        key = f"{self.trace_id}\n{self.signal}\n{self.seqs}\n{self.text}"
        return hashlib.sha1(key.encode()).hexdigest()[:16]


_MASKS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"https?://\S+"), "<url>"),
    (re.compile(r"[\w.+-]+@[\w-]+\.[\w.]+"), "<email>"),
    (re.compile(r"(?:[A-Za-z]:)?(?:[\\/][\w.@-]+){2,}[\\/]?"), "<path>"),
    (re.compile(r"\b[\w-]+\.(?:py|js|ts|json|ya?ml|txt|md|csv|go|rs|java|c|h|cpp|sh|toml|html)\b"), "<file>"),
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I), "<id>"),
    (re.compile(r"\b(?=[0-9a-f]*\d)[0-9a-f]{7,}\b", re.I), "<id>"),
    (re.compile(r"\b[A-Z]{2,}\d[A-Z0-9]*\b"), "<id>"),
    (re.compile(r"\"[^\"\n]{1,80}\"|'[^'\n]{1,80}'|`[^`\n]{1,80}`"), "<value>"),
    (re.compile(r"\b\d+(?:[.,:]\d+)*\b"), "<n>"),
]


def normalise_message(text: str, limit: int = 160) -> str:
    """``text``'s first meaningful line with numbers, ids, paths, URLs and quoted values masked."""
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    # the most informative line of a traceback or log is usually the last error line
    picked = next(
        (ln for ln in reversed(lines) if re.search(r"(?i)error|exception|denied|not found|invalid|fail", ln)),
        lines[0] if lines else "",
    )
    for pat, repl in _MASKS:
        picked = pat.sub(repl, picked)
    picked = " ".join(picked.split())
    return picked[:limit]


def is_failed(trace: Trace) -> bool | None:
    """Whether the run failed, as the source recorded it (None when it did not say)."""
    if trace.outcome is not None and trace.outcome.success is not None:
        return not trace.outcome.success
    return None


def _quote(text: str | None, limit: int = 160) -> str | None:
    if not text:
        return None
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


_LIMIT_REASONS = {
    "max_steps": "the run hit its step limit before the task was done",
    "cost_limit": "the run hit its cost limit before the task was done",
    "context_limit": "the run ran out of context window before the task was done",
    "timeout": "the run timed out before the task was done",
    "error": "the run ended on an unrecovered error",
    "aborted": "the run was aborted before the task was done",
}


def _tool_error_notes(trace: Trace, failed: bool) -> list[Note]:
    notes: list[Note] = []
    for call_ev, result_ev in trace.tool_calls():
        if result_ev is None or not result_failed(result_ev):
            continue
        msg = normalise_message(result_ev.text())
        notes.append(
            Note(
                trace_id=trace.trace_id,
                text=f"tool call failed with error: {msg}" if msg else "tool call failed without a message",
                signal="tool_error",
                seqs=[call_ev.seq, result_ev.seq],
                quote=_quote(result_ev.text()),
                agent=call_ev.actor,
                failed=failed,
            )
        )
    return notes


def _error_event_notes(trace: Trace, failed: bool) -> list[Note]:
    return [
        Note(
            trace_id=trace.trace_id,
            text=f"the run raised an error: {normalise_message(e.text())}",
            signal="error_event",
            seqs=[e.seq],
            quote=_quote(e.text()),
            agent=e.actor,
            failed=failed,
        )
        for e in trace.events
        if e.kind == "error" and e.text().strip()
    ]


def _message_error_notes(trace: Trace, failed: bool) -> list[Note]:
    """Errors reported in messages (code executors and tools that speak in a chat)."""
    notes = []
    for e in trace.events:
        if e.kind != "message" or e.role == "user":
            continue
        text = e.text()
        m = FAILURE_OUTPUT.search(text)
        if m is None:
            continue
        start = text.rfind("\n", 0, m.start()) + 1
        end = text.find("\n", m.end())
        line = text[start : end if end != -1 else len(text)]
        if m.start() - start > 24 or line.lstrip().startswith("#"):
            continue  # prose that talks about an error, not an error report
        notes.append(
            Note(
                trace_id=trace.trace_id,
                text=f"a step reported an error: {normalise_message(line)}",
                signal="message_error",
                seqs=[e.seq],
                quote=_quote(line),
                agent=e.actor,
                failed=failed,
            )
        )
    return notes


def _repetition_notes(trace: Trace, failed: bool) -> list[Note]:
    counts: Counter[str] = Counter()
    where: dict[str, list[Event]] = {}
    after_error: Counter[str] = Counter()
    for call_ev, result_ev in trace.tool_calls():
        if call_ev.tool_call is None:
            continue
        key = canonical_call(call_ev.tool_call)
        if counts[key] and result_ev is not None and result_failed(result_ev):
            after_error[key] += 1
        counts[key] += 1
        where.setdefault(key, []).append(call_ev)
    notes = []
    for key, n in counts.items():
        if n < 3:
            continue
        evs = where[key]
        retried = after_error[key] > 0
        text = (
            "the agent retried the same failing call unchanged several times"
            if retried
            else "the agent repeated the same call several times in a loop without new progress"
        )
        notes.append(
            Note(
                trace_id=trace.trace_id,
                text=text,
                signal="repetition",
                seqs=[e.seq for e in evs[:6]],
                quote=_quote(evs[0].text()),
                agent=evs[0].actor,
                failed=failed,
            )
        )
    # the same long message said again and again (conversational loops, no tools)
    said: Counter[str] = Counter()
    first: dict[str, Event] = {}
    for e in trace.events:
        if e.kind == "message" and e.is_agent_step() and len(e.text()) >= 40:
            k = " ".join(e.text().split())[:300]
            said[k] += 1
            first.setdefault(k, e)
    for k, n in said.items():
        if n >= 3:
            e = first[k]
            notes.append(
                Note(
                    trace_id=trace.trace_id,
                    text="an agent sent the same message over and over, the conversation looped",
                    signal="repetition",
                    seqs=[e.seq],
                    quote=_quote(e.text()),
                    agent=e.actor,
                    failed=failed,
                )
            )
    return notes


def _termination_notes(trace: Trace, failed: bool) -> list[Note]:
    notes: list[Note] = []
    term = trace.termination
    if term is not None and term.reason in _LIMIT_REASONS:
        notes.append(
            Note(
                trace_id=trace.trace_id,
                text=_LIMIT_REASONS[term.reason],
                signal="termination",
                seqs=[term.at_seq] if term.at_seq is not None else [],
                quote=_quote(term.native),
                failed=failed,
            )
        )
    steps = [e for e in trace.events if e.is_agent_step()]
    if not steps:
        return notes
    last = steps[-1]
    if GIVE_UP.search(last.text()):
        notes.append(
            Note(
                trace_id=trace.trace_id,
                text="the agent gave up and stopped without completing the task",
                signal="stop",
                seqs=[last.seq],
                quote=_quote(last.text()),
                agent=last.actor,
                failed=failed,
            )
        )
    # an error left unanswered: the last tool result failed and nothing was tried after it
    pairs = [(c, r) for c, r in trace.tool_calls() if r is not None]
    if pairs and failed:
        c, r = pairs[-1]
        later = [e for e in steps if e.seq > r.seq and e.kind == "tool_call"]
        if result_failed(r) and not later:
            notes.append(
                Note(
                    trace_id=trace.trace_id,
                    text="the run stopped right after a failed step without recovering from the error",
                    signal="stop",
                    seqs=[c.seq, r.seq],
                    quote=_quote(r.text()),
                    agent=c.actor,
                    failed=failed,
                )
            )
    return notes


def _detector_notes(trace: Trace, taxonomy: Taxonomy, failed: bool) -> list[Note]:
    notes = []
    for v in run_detectors(trace, taxonomy):
        if v.verdict != "present":
            continue
        ev = v.evidence[0] if v.evidence else None
        seqs = [s for s in ((ev.seq_start, ev.seq_end) if ev else ()) if s is not None]
        detail = normalise_message((v.rationale or "").split(";")[0], limit=200)
        text = (
            f"{taxonomy.mode(v.code).name.lower()}: {detail}"
            if detail
            else taxonomy.mode(v.code).name.lower()
        )
        notes.append(
            Note(
                trace_id=trace.trace_id,
                text=text,
                signal="detector",
                mast_code=v.code,
                seqs=sorted(set(seqs)),
                quote=ev.quote if ev else None,
                agent=ev.agent if ev else None,
                failed=failed,
            )
        )
    return notes


def offline_notes(trace: Trace, *, failed: bool | None = None) -> list[Note]:
    """Failure notes of ``trace`` from its own signals (no model).

    ``failed`` overrides the outcome the source recorded (unknown outcomes count as failed)."""
    if failed is None:
        failed = is_failed(trace) is not False
    mast = load_taxonomy("mast")
    notes = [
        *_tool_error_notes(trace, failed),
        *_error_event_notes(trace, failed),
        *_message_error_notes(trace, failed),
        *_repetition_notes(trace, failed),
        *_termination_notes(trace, failed),
        *_detector_notes(trace, mast, failed),
    ]
    seen: set[tuple[str, str]] = set()
    unique = []
    for n in notes:
        key = (n.text, n.signal)
        if key not in seen:
            seen.add(key)
            unique.append(n)
    return unique
