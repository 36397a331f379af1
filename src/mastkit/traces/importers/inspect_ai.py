"""Inspect AI (UK AISI ``inspect_ai``) evaluation logs: ``.json`` and zipped ``.eval``; one trace per sample.

Files read:

* **``.json`` logs** (``EvalLog``): ``{version, status, eval{task, model, packages, scorers, ...}, plan,
  results, stats, error?, samples: [EvalSample], reductions}``. Log format versions 1 and 2.
* **``.eval`` logs** (a zip archive, the default since inspect 0.3.46): ``header.json`` (the log without
  samples; absent while a run is in progress, then ``_journal/start.json`` is used), one
  ``samples/<id>_epoch_<n>.json`` per sample (read and converted one at a time), ``summaries.json``,
  ``reductions.json``, ``_journal/``. Entries may be zstd-compressed (zip method 93, newer inspect);
  a sample may be chunked (a ``samples/<id>_epoch_<n>/`` folder of sequence chunks, joined back).

Each ``EvalSample`` (``id, epoch, input, target, messages, output, scores, metadata, store, events,
model_usage, started_at, completed_at, uuid, error, limit, attachments, events_data``) becomes one
trace. **Primary source: the sample's ``events``** (the timeline); the final ``messages`` list stays in
``Trace.raw["sample"]`` and every message is linked to the event that produced it
(``Event.extra["message_index"]``). Mapping:

* ``model`` -> first the input messages this call sees for the first time (system prompt, the
  harness's "continue" prompts: ``message`` events), then an ``llm_call`` (usage from
  ``output.usage``, raw = the model event), then the output message: ``reasoning`` / ``message`` /
  one ``tool_call`` per tool call, sharing the ``llm_call_id``. Re-sent history is not repeated.
* ``tool`` -> ``tool_result`` (``call_id``, output, ``is_error`` from ``error``); a ``tool_call`` is
  emitted first when no model output issued that call (tools run directly by a solver).
* ``sample_init`` -> ``system`` + the sample's input messages; ``sample_limit`` -> ``termination``;
  ``error`` -> ``error``; ``input`` -> user ``message``; ``compaction`` -> ``system``
  ``context_compaction`` (the summary that follows is flagged ``is_copied_context``); ``span_begin``
  of type ``agent`` -> ``handoff``; everything else (``state``, ``store``, ``sandbox``, ``step``,
  ``span_*``, ``score``, ``info``, ``logger``, ``approval``, ``subtask``, ...) -> ``system`` with the
  event name in ``subtype``. Nested ``events`` (old tool/subtask events) are walked in order.
* Messages with no event behind them (logs without events) are emitted from ``messages``.

``actor`` is the innermost ``agent`` span's name, the scorer's name for scorer model calls, else
``assistant``; ``phase`` is the enclosing solver/scorer (span or step). ``attachment://<hash>``
references are resolved for ``content`` (``raw`` keeps them; the attachments are in
``Trace.raw["sample"]``); pooled inputs (``input_refs`` into ``events_data.messages``) are expanded.

Outcome: the first scorer of ``eval.scorers`` found in ``scores`` (else the first score): value
``C`` -> success True, ``I``/``N`` -> False, ``P`` -> None (score 0.5), booleans as is, numbers as
``score`` only; every score is kept in ``Outcome.metrics``. Termination: sample ``error`` /
``limit`` / ``sample_limit`` event, else the output's ``stop_reason``.
"""

from __future__ import annotations

import importlib
import io
import struct
import sys
import zipfile
import zlib
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import orjson

from mastkit._util.jsonstream import loads
from mastkit.errors import FormatError, TraceLoadError
from mastkit.traces._build import (
    TraceBuilder,
    dumps_text,
    parse_arguments,
    parse_ts,
    source_ref,
    validation_reason,
)
from mastkit.traces.model import (
    AgentInfo,
    Outcome,
    SourceRef,
    Termination,
    ToolCall,
    ToolResult,
    Trace,
    Usage,
)
from mastkit.traces.registry import Importer, register
from mastkit.traces.source import Source

_ATTACHMENT = "attachment://"
_SCORE_SUCCESS = {"C": True, "I": False, "N": False}
_SCORE_VALUE = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}
_ROLES = ("system", "user", "assistant", "tool")
_LIMIT_STOP = {"max_tokens": "max_tokens", "model_length": "context_limit"}
# What reading a damaged or unsupported zip entry can raise.
_ZIP_ERRORS = (
    zipfile.BadZipFile,
    zlib.error,
    OSError,
    EOFError,
    NotImplementedError,
    RuntimeError,
    ValueError,
)


# Zip compression method 93 (Zstandard): the default of newer inspect_ai ``.eval`` writers, which
# Python's ``zipfile`` reads only from 3.14 on.
_ZIP_ZSTD = 93
_ZIP_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")


class _ZstdUnavailable(NotImplementedError):
    """A zstd-compressed entry and no zstd decoder on this machine."""


@cache
def _zstandard() -> Any:
    """The ``zstandard`` module (a dependency below Python 3.14), or None; looked up once."""
    try:
        return importlib.import_module("zstandard")
    except ImportError:
        return None


def _zstd_decompress(data: bytes, size: int) -> bytes:
    """Decompress a (possibly multi-frame) zstd stream that the zip directory says holds ``size``
    bytes. More output than that is an error, found after at most ``size + 1`` bytes, so a hostile
    entry cannot expand without bound."""
    zstandard = _zstandard()
    if zstandard is None:
        raise _ZstdUnavailable(
            "zstd-compressed entry (the default of newer inspect_ai .eval logs) and no zstd "
            "decoder: install the `zstandard` package (a dependency of mastkit below Python 3.14)"
        )
    reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data), read_across_frames=True)
    parts: list[bytes] = []
    got = 0
    try:
        while got <= size and (chunk := reader.read(size + 1 - got)):
            parts.append(chunk)
            got += len(chunk)
    except zstandard.ZstdError as exc:  # a damaged stream
        raise zipfile.BadZipFile(f"zstd: {exc}") from None
    out = b"".join(parts)
    if len(out) != size:
        raise zipfile.BadZipFile(
            f"zstd entry holds {'more' if len(out) > size else len(out)} bytes, not {size}"
        )
    return out


def _read_entry(zf: zipfile.ZipFile, name: str) -> bytes:
    """The bytes of one zip entry. Below Python 3.14 ``zipfile`` refuses zstd entries: they are
    decompressed here (from 3.14 ``zipfile`` reads them itself, with the same checks)."""
    info = zf.getinfo(name)
    if info.compress_type != _ZIP_ZSTD or sys.version_info >= (3, 14):
        return zf.read(name)
    if info.flag_bits & 0x1:
        raise NotImplementedError("encrypted zip entry")
    fp = zf.fp
    if fp is None:
        raise ValueError("zip file is closed")
    fp.seek(info.header_offset)
    head = fp.read(_ZIP_LOCAL_HEADER.size)
    if len(head) != _ZIP_LOCAL_HEADER.size or head[:4] != b"PK\x03\x04":
        raise zipfile.BadZipFile(f"{name}: bad local file header")
    fields = _ZIP_LOCAL_HEADER.unpack(head)
    fp.seek(fields[-2] + fields[-1], io.SEEK_CUR)  # file name + extra field
    data = fp.read(info.compress_size)
    if len(data) != info.compress_size:
        raise EOFError(f"{name}: truncated entry")
    out = _zstd_decompress(data, info.file_size)
    if zlib.crc32(out) != info.CRC:
        raise zipfile.BadZipFile(f"{name}: CRC check failed")
    return out


def _d(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _l(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _s(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def inspect_usage(u: Any) -> Usage | None:
    """Usage from an inspect ``ModelUsage`` dict (``input_tokens_cache_read`` etc.)."""
    if not isinstance(u, dict):
        return None
    usage = Usage(
        input_tokens=_int(u.get("input_tokens")),
        output_tokens=_int(u.get("output_tokens")),
        cached_input_tokens=_int(u.get("input_tokens_cache_read")),
        cache_write_tokens=_int(u.get("input_tokens_cache_write")),
        reasoning_tokens=_int(u.get("reasoning_tokens")),
        total_tokens=_int(u.get("total_tokens")),
        cost_usd=_num(u.get("total_cost")),
    )
    return None if usage.is_empty() else usage


def _is_log_header(rec: Any) -> bool:
    return (
        isinstance(rec, dict)
        and isinstance(rec.get("eval"), dict)
        and "version" in rec
        and ("task" in rec["eval"] or "model" in rec["eval"])
    )


def _zip_layout(names: list[str]) -> bool:
    has_header = "header.json" in names or "_journal/start.json" in names
    return has_header and (any(n.startswith("samples/") for n in names) or "header.json" in names)


@dataclass
class _Ctx:
    """Per-sample conversion state."""

    b: TraceBuilder
    attachments: dict[str, Any]
    pool: list[Any]
    seen: Counter[tuple[Any, ...]] = field(default_factory=Counter)
    units: dict[tuple[Any, ...], list[int]] = field(default_factory=lambda: defaultdict(list))
    call_ids: set[str] = field(default_factory=set)
    spans: dict[str, tuple[str, str, str | None]] = field(default_factory=dict)
    steps: list[tuple[str, str]] = field(default_factory=list)
    after_compaction: bool = False
    limit_event: dict[str, Any] | None = None
    limit_seq: int | None = None
    error_seq: int | None = None
    first_ts: Any = None
    last_ts: Any = None

    def resolve(self, value: Any) -> Any:
        if isinstance(value, str) and value.startswith(_ATTACHMENT):
            return self.attachments.get(value[len(_ATTACHMENT) :], value)
        return value

    def resolve_deep(self, value: Any, depth: int = 0) -> Any:
        """``value`` with every ``attachment://`` string inside it resolved (tool-call arguments);
        ``value`` itself when the sample has no attachments."""
        if not self.attachments:
            return value
        if isinstance(value, str):
            return self.resolve(value)
        if depth > 50:
            return value
        if isinstance(value, dict):
            return {k: self.resolve_deep(v, depth + 1) for k, v in value.items()}
        if isinstance(value, list):
            return [self.resolve_deep(v, depth + 1) for v in value]
        return value


def _parts(content: Any, ctx: _Ctx) -> tuple[str | None, list[str]]:
    """(text, reasoning texts) of an inspect message ``content`` (str or list of Content parts)."""
    content = ctx.resolve(content)
    if content is None:
        return None, []
    if isinstance(content, str):
        return content, []
    if not isinstance(content, list):
        return dumps_text(content), []
    texts: list[str] = []
    reasoning: list[str] = []
    for part in content:
        if isinstance(part, str):
            texts.append(part)
            continue
        if not isinstance(part, dict):
            continue
        ptype = part.get("type")
        if ptype == "text":
            texts.append(str(ctx.resolve(part.get("text")) or ""))
        elif ptype == "reasoning":
            r = ctx.resolve(part.get("reasoning")) or ctx.resolve(part.get("summary"))
            summary = ctx.resolve(part.get("summary"))
            if isinstance(r, str) and r and not part.get("redacted"):
                reasoning.append(r)
            elif part.get("redacted"):  # encrypted reasoning: its plain-text summary, when there is one
                has_summary = isinstance(summary, str) and summary.strip()
                reasoning.append(summary if has_summary else "[redacted reasoning]")
        elif ptype in ("image", "audio", "video", "document", "data"):
            texts.append(f"[{ptype}]")
        else:
            val = part.get("text")
            texts.append(str(ctx.resolve(val)) if isinstance(val, str) else f"[{ptype}]")
    return "\n".join(texts), reasoning


def _fingerprint(msg: dict[str, Any], ctx: _Ctx) -> tuple[Any, ...]:
    """Identity of a message across re-sends (model inputs, final messages), ignoring its ``id``."""
    role = msg.get("role")
    if role == "tool" and msg.get("tool_call_id"):
        return ("tool", str(msg["tool_call_id"]))
    calls = tuple(str(c.get("id")) for c in _l(msg.get("tool_calls")) if isinstance(c, dict) and c.get("id"))
    if role == "assistant" and calls:
        return ("assistant", calls)
    text, reasoning = _parts(msg.get("content"), ctx)
    return (str(role), text or "", tuple(reasoning))


def _tool_output(result: Any, ctx: _Ctx) -> str | None:
    result = ctx.resolve(result)
    if result is None:
        return None
    if isinstance(result, str):
        return result
    if isinstance(result, list) and all(isinstance(p, dict) and "type" in p for p in result):
        return _parts(result, ctx)[0]
    return dumps_text(result)


def _read_json(zf: zipfile.ZipFile, name: str) -> Any:
    try:
        data = _read_entry(zf, name)
    except _ZIP_ERRORS as exc:
        raise FormatError(f"{name}: cannot read ({exc})") from None
    try:
        return loads(data)
    except orjson.JSONDecodeError as exc:
        raise FormatError(f"{name}: not readable JSON ({exc})") from None


def _no_samples(header: dict[str, Any], what: str) -> str:
    """Why a log yields no trace: written without samples (header only, a cancelled or failed run)."""
    results = _d(header.get("results"))
    counts = ", ".join(
        f"{k}={results[k]}" for k in ("total_samples", "completed_samples") if isinstance(results.get(k), int)
    )
    status = header.get("status")
    return (
        f"Inspect {what} without samples (header only"
        + (f"; status {status!r}" if isinstance(status, str) else "")
        + (f"; {counts}" if counts else "")
        + "): no trace to load"
    )


@dataclass
class _Entries:
    """The sample entries of an ``.eval`` zip, indexed once per file.

    A monolith sample is one ``samples/<id>_epoch_<n>.json`` entry; a chunked sample (inspect_ai
    ``log convert --chunked``, 0.3.2xx) is a ``samples/<id>_epoch_<n>/`` folder holding
    ``sample.json`` (the shell) and the ``messages/``, ``events/``, ``calls/``, ``attachments/``
    sequences, each cut into ``<start>.json`` chunks.
    """

    samples: list[tuple[str, bool]]  # (entry or folder, chunked), in entry order
    chunks: dict[str, list[int]]  # "samples/<sample>/<sequence>/" -> the chunks' starts, sorted
    names: frozenset[str]

    @classmethod
    def of(cls, names: list[str]) -> _Entries:
        samples: list[tuple[str, bool]] = []
        chunks: defaultdict[str, list[int]] = defaultdict(list)
        for n in names:
            if not n.startswith("samples/") or not n.endswith(".json"):
                continue
            parts = n.split("/")
            if len(parts) == 2:
                samples.append((n, False))
            elif len(parts) == 3 and parts[2] == "sample.json":
                samples.append((n[: -len("/sample.json")], True))
            elif len(parts) == 4 and parts[3][:-5].isascii() and parts[3][:-5].isdigit():
                chunks[f"samples/{parts[1]}/{parts[2]}/"].append(int(parts[3][:-5]))
        for starts in chunks.values():
            starts.sort()
        return cls(samples, dict(chunks), frozenset(names))


def _sequence(zf: zipfile.ZipFile, prefix: str, entries: _Entries) -> list[Any]:
    """A chunked sample's sequence: its ``<prefix><start>.json`` chunks, concatenated in order."""
    items: list[Any] = []
    for start in entries.chunks.get(prefix, ()):
        name = f"{prefix}{start}.json"
        if start != len(items):
            raise FormatError(f"{name}: chunk starts at {start} but {len(items)} items precede it")
        chunk = _read_json(zf, name)
        if not isinstance(chunk, list):
            raise FormatError(f"{name}: chunk is not a list")
        items.extend(chunk)
    return items


def _chunked_sample(zf: zipfile.ZipFile, prefix: str, entries: _Entries) -> dict[str, Any]:
    """Rebuild an ``EvalSample`` from a chunked sample folder.

    The ``messages`` sequence is the sample's message pool (``events_data.messages``, which
    ``input_refs`` point into); the shell's ``message_refs`` (``[start, end)`` ranges into it) give
    the final conversation. Attachments are a sequence too, referenced as ``attachment://<index>``.
    """
    shell = _read_json(zf, f"{prefix}/sample.json")
    if not isinstance(shell, dict):
        raise FormatError(f"{prefix}/sample.json: sample is not an object")
    pool = _sequence(zf, f"{prefix}/messages/", entries)
    sample = dict(shell)
    if f"{prefix}/metadata.json" in entries.names:
        sample["metadata"] = _read_json(zf, f"{prefix}/metadata.json")
    sample["events"] = _sequence(zf, f"{prefix}/events/", entries)
    sample["events_data"] = {"messages": pool, "calls": _sequence(zf, f"{prefix}/calls/", entries)}
    attachments = _sequence(zf, f"{prefix}/attachments/", entries)
    sample["attachments"] = {str(i): a for i, a in enumerate(attachments)}
    messages: list[Any] = []
    for rng in _l(shell.get("message_refs")):
        if isinstance(rng, list) and len(rng) == 2 and all(isinstance(x, int) for x in rng):
            messages.extend(pool[rng[0] : rng[1]])
    sample["messages"] = messages
    return sample


@register
class InspectAIImporter(Importer):
    name = "inspect_ai"
    description = "Inspect AI eval logs (.json EvalLog and zipped .eval): one trace per sample"

    def sniff(self, src: Source) -> float:
        if src.is_zip:
            try:
                with zipfile.ZipFile(src.path) as zf:
                    names = zf.namelist()
            except _ZIP_ERRORS:
                return 0.0
            return 0.95 if _zip_layout(names) else 0.0
        if src.json_shape != "object":
            return 0.0
        rec = src.first_record
        if _is_log_header(rec) and ("samples" in rec or "plan" in rec or "status" in rec):
            return 0.95
        return 0.0

    def load(self, src: Source) -> Iterator[Trace | TraceLoadError]:
        if src.is_zip:
            yield from self._load_eval(src)
            return
        doc = src.json
        if not _is_log_header(doc):
            raise FormatError("not an Inspect AI eval log: no 'eval' header with task/model")
        header = {k: v for k, v in doc.items() if k not in ("samples", "reductions")}
        samples = doc.get("samples")
        if samples is None or samples == []:
            raise FormatError(_no_samples(header, "log"))
        if not isinstance(samples, list):
            raise FormatError("'samples' is not a list")
        for i, sample in enumerate(samples):
            yield self._safe_trace(src, header, sample, pointer=f"/samples/{i}", index=i)

    # -- .eval (zip) ------------------------------------------------------------------

    def _load_eval(self, src: Source) -> Iterator[Trace | TraceLoadError]:
        try:
            zf = zipfile.ZipFile(src.path)
        except _ZIP_ERRORS as exc:
            raise FormatError(f"broken .eval zip: {exc}") from None
        with zf:
            names = zf.namelist()
            if not _zip_layout(names):
                raise FormatError(".eval zip has no header.json or _journal/start.json")
            header_name = "header.json" if "header.json" in names else "_journal/start.json"
            header = _read_json(zf, header_name)
            if not _is_log_header(header):
                raise FormatError(f"{header_name}: no 'eval' header with task/model")
            header = {k: v for k, v in header.items() if k not in ("samples", "reductions")}
            entries = _Entries.of(names)
            if not entries.samples:
                raise FormatError(_no_samples(header, ".eval log"))
            for i, (name, chunked) in enumerate(entries.samples):
                try:
                    sample = _chunked_sample(zf, name, entries) if chunked else _read_json(zf, name)
                except FormatError as exc:
                    yield TraceLoadError(src.path, exc.reason)
                    continue
                yield self._safe_trace(src, header, sample, pointer=name, index=i, entry=name)

    # -- one sample ------------------------------------------------------------------

    def _safe_trace(
        self,
        src: Source,
        header: dict[str, Any],
        sample: Any,
        *,
        pointer: str,
        index: int,
        entry: str | None = None,
    ) -> Trace | TraceLoadError:
        where = entry or pointer
        if not isinstance(sample, dict):
            return TraceLoadError(src.path, f"{where}: sample is not an object")
        try:
            return self._trace(src, header, sample, index=index, entry=entry)
        except FormatError as exc:
            return TraceLoadError(src.path, f"{where}: {exc.reason}")
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            return TraceLoadError(src.path, f"{where}: bad sample: {validation_reason(exc)}")

    def _trace(
        self, src: Source, header: dict[str, Any], sample: dict[str, Any], *, index: int, entry: str | None
    ) -> Trace:
        ev_header = _d(header.get("eval"))
        sid = sample.get("id")
        epoch = sample.get("epoch")
        native = _s(sample.get("uuid"))
        if native is None and sid is not None:
            run = _s(ev_header.get("eval_id")) or _s(ev_header.get("run_id")) or _s(ev_header.get("task_id"))
            native = f"{run or 'inspect'}:{sid}:{epoch if epoch is not None else 1}"
        b = TraceBuilder(self.name, src.path, trace_id=native, index=index)
        transcript = _d(sample.get("transcript"))  # log format < 0.3.40: events under "transcript"
        attachments = _d(sample.get("attachments")) or _d(transcript.get("content"))
        pool = _l(_d(sample.get("events_data")).get("messages"))
        ctx = _Ctx(b=b, attachments=attachments, pool=pool)
        path = entry  # events of a zipped sample point into its entry
        events = sample.get("events")
        if events is None:
            events = transcript.get("events")
        if events is not None and not isinstance(events, list):
            raise FormatError("'events' is not a list")
        for i, ev in enumerate(events or []):
            self._event(ctx, ev, f"/events/{i}", path)
        messages = sample.get("messages")
        if messages is not None and not isinstance(messages, list):
            raise FormatError("'messages' is not a list")
        self._link_messages(ctx, messages or [], path)

        fields: dict[str, Any] = {
            "framework": "inspect_ai",
            "framework_version": _s(_d(ev_header.get("packages")).get("inspect_ai")),
            "model": _s(ev_header.get("model")),
            "benchmark": _s(ev_header.get("task")),
            "task_id": None if sid is None else str(sid),
            "task": self._task_text(sample.get("input"), ctx),
            "started_at": parse_ts(sample.get("started_at")) or parse_ts(ctx.first_ts),
            "ended_at": parse_ts(sample.get("completed_at")) or parse_ts(ctx.last_ts),
            "usage": self._total_usage(sample.get("model_usage")),
            "termination": self._termination(ctx, sample),
            "outcome": self._outcome(sample, ev_header, ctx),
            "raw": {"log": header, "sample": {k: v for k, v in sample.items() if k not in ("events",)}},
            "extra": {
                k: v
                for k, v in {
                    "epoch": epoch,
                    "log_status": header.get("status"),
                    "log_version": header.get("version"),
                    "zip_entry": entry,
                }.items()
                if v is not None
            },
        }
        fields["agents"] = self._agents(ctx, fields["model"])
        return b.build(**fields)

    def _agents(self, ctx: _Ctx, model: str | None) -> list[AgentInfo]:
        """Agents = actors that called a model (the solver agent, sub-agents, model-graded scorers)."""
        agents: dict[str, AgentInfo] = {}
        for e in ctx.b.events:
            if e.kind == "llm_call" and e.actor and e.actor not in agents:
                agents[e.actor] = AgentInfo(name=e.actor, model=e.model or model)
        return list(agents.values())

    # -- events ----------------------------------------------------------------------

    def _context(
        self, ctx: _Ctx, ev: dict[str, Any], default: str = "assistant"
    ) -> tuple[str, str | None, bool]:
        """(actor, phase, in_scorer) for an event, from its enclosing spans (or the step stack)."""
        agent: str | None = None
        phase: str | None = None
        scorer = False
        span_id = ev.get("parent_id") if ev.get("event") == "span_begin" else ev.get("span_id")
        hops = 0
        while isinstance(span_id, str) and span_id in ctx.spans and hops < 1000:
            stype, sname, parent = ctx.spans[span_id]
            if stype == "agent" and agent is None:
                agent = sname
            if stype in ("solver", "scorer") and phase is None:
                phase = sname
                scorer = stype == "scorer"
            if stype == "scorers":
                scorer = True
            span_id = parent
            hops += 1
        if phase is None and ctx.steps:
            stype, phase = ctx.steps[-1]
            scorer = stype == "scorer"
        if scorer and agent is None:
            agent = phase or "scorer"
        return agent or default, phase, scorer

    def _event(self, ctx: _Ctx, ev: Any, pointer: str, path: str | None) -> None:
        b = ctx.b
        ref = source_ref(pointer=pointer, path=path)
        if not isinstance(ev, dict):
            b.add("system", subtype="unrecognised", content=dumps_text(ev), source=ref, raw=ev)
            return
        name = str(ev.get("event") or "unknown")
        ts = ev.get("timestamp")
        if ts is not None:
            ctx.first_ts = ctx.first_ts or ts
            ctx.last_ts = ts
        actor, phase, _scorer = self._context(ctx, ev)
        started = parse_ts(ts)
        common: dict[str, Any] = {"source": ref, "started_at": started, "phase": phase}
        eid = _s(ev.get("uuid")) or _s(ev.get("id"))

        if name == "model":
            self._model_event(ctx, ev, pointer, path, actor, phase, started)
        elif name == "tool":
            for j, sub in enumerate(_l(ev.get("events"))):
                self._event(ctx, sub, f"{pointer}/events/{j}", path)
            self._tool_event(ctx, ev, ref, actor, phase, started)
        elif name == "sample_init":
            b.add("system", subtype="sample_init", actor="system", raw=ev, **common)
            state = _d(ev.get("state"))
            for j, m in enumerate(_l(state.get("messages"))):
                self._new_message(ctx, m, f"{pointer}/state/messages/{j}", path, actor, phase, started)
        elif name == "sample_limit":
            ctx.limit_event = ev
            ctx.limit_seq = len(b.events)
            b.add(
                "termination",
                subtype=f"{ev.get('type')}_limit",
                actor="harness",
                content=_s(ev.get("message")),
                raw=ev,
                extra={"limit": ev.get("limit")},
                **common,
            )
        elif name == "error":
            err = _d(ev.get("error"))
            ctx.error_seq = len(b.events)
            b.add(
                "error",
                actor="harness",
                content=_s(err.get("message")) or dumps_text(ev.get("error")),
                raw=ev,
                **common,
            )
        elif name == "input":
            fp = _fingerprint({"role": "user", "content": ev.get("input")}, ctx)
            ctx.seen[fp] += 1
            ctx.units[fp].append(len(b.events))
            b.add("message", actor="user", role="user", content=_s(ev.get("input")), raw=ev, **common)
        elif name == "compaction":
            ctx.after_compaction = True
            before, after = ev.get("tokens_before"), ev.get("tokens_after")
            b.add(
                "system",
                subtype="context_compaction",
                actor=actor,
                content=f"compaction: {before} -> {after} tokens",
                raw=ev,
                **common,
            )
        elif name == "span_begin":
            sid = _s(ev.get("id")) or _s(ev.get("span_id"))
            stype, sname = str(ev.get("type") or ""), str(ev.get("name") or "")
            if sid:
                ctx.spans[sid] = (stype, sname, _s(ev.get("parent_id")))
            if stype == "agent":
                b.add(
                    "handoff",
                    subtype="agent_start",
                    actor=self._context(ctx, ev, default="system")[0],
                    recipients=[sname],
                    id=sid,
                    raw=ev,
                    **common,
                )
            else:
                b.add("system", subtype="span_begin", content=f"{stype}: {sname}", id=sid, raw=ev, **common)
        elif name == "span_end":
            b.add("system", subtype="span_end", id=_s(ev.get("id")), raw=ev, **common)
        elif name == "step":
            action, stype, sname = ev.get("action"), str(ev.get("type") or ""), str(ev.get("name") or "")
            if action == "begin":
                ctx.steps.append((stype, sname))
            b.add("system", subtype=f"step_{action}", content=f"{stype}: {sname}", raw=ev, **common)
            if action == "end" and ctx.steps:
                ctx.steps.pop()
        elif name == "logger":
            msg = _d(ev.get("message"))
            level = str(msg.get("level") or "")
            kind = "error" if level in ("error", "critical") else "system"
            b.add(
                kind,
                subtype=f"log_{level}" if level else "log",
                content=_s(msg.get("message")),
                raw=ev,
                **common,
            )
        elif name == "subtask":
            b.add("system", subtype="subtask", content=_s(ev.get("name")), raw=ev, **common)
            for j, sub in enumerate(_l(ev.get("events"))):
                self._event(ctx, sub, f"{pointer}/events/{j}", path)
        elif name == "sandbox":
            detail = ev.get("cmd") if ev.get("action") == "exec" else ev.get("file")
            b.add(
                "system",
                subtype=f"sandbox_{ev.get('action')}",
                actor="environment",
                content=_s(detail),
                raw=ev,
                **common,
            )
        elif name == "score":
            score = _d(ev.get("score"))
            b.add(
                "system",
                subtype="score",
                actor="scorer",
                content=dumps_text(score.get("value")),
                raw=ev,
                extra={"intermediate": ev.get("intermediate")},
                **common,
            )
        else:
            # state, store, info, approval, score_edit, branch, anchor, checkpoint, interrupt, ...
            content = None
            if name in ("state", "store"):
                changes = [c for c in _l(ev.get("changes")) if isinstance(c, dict)]
                content = ", ".join(f"{c.get('op')} {c.get('path')}" for c in changes) or None
            elif name == "approval":
                content = f"{ev.get('decision')}: {ev.get('explanation') or ''}".strip()
            elif name == "info":
                content = dumps_text(ev.get("data"))
            elif name == "interrupt":
                content = f"{ev.get('source')}: {ev.get('interrupted')}"
            elif name == "score_edit":
                edit = _d(ev.get("edit"))
                content = (
                    f"{ev.get('score_name')}: {dumps_text(edit.get('value'))}" if "value" in edit else None
                )
            elif name == "branch":
                content = f"from {ev.get('from_span')} at {ev.get('from_anchor')}"
            b.add("system", subtype=name, content=content, id=eid, raw=ev, **common)

    def _model_event(
        self,
        ctx: _Ctx,
        ev: dict[str, Any],
        pointer: str,
        path: str | None,
        actor: str,
        phase: str | None,
        started: Any,
    ) -> None:
        b = ctx.b
        inputs = _l(ev.get("input"))
        if not inputs and isinstance(ev.get("input_refs"), list) and ctx.pool:
            for rng in ev["input_refs"]:
                if isinstance(rng, list) and len(rng) == 2 and all(isinstance(x, int) for x in rng):
                    inputs = [*inputs, *ctx.pool[rng[0] : rng[1]]]
        copied = ctx.after_compaction
        in_counts: Counter[tuple[Any, ...]] = Counter()
        for j, m in enumerate(inputs):
            if not isinstance(m, dict):
                continue
            fp = _fingerprint(m, ctx)
            in_counts[fp] += 1
            if in_counts[fp] > ctx.seen[fp]:
                self._new_message(
                    ctx, m, f"{pointer}/input/{j}", path, actor, phase, started, copied=copied, fp=fp
                )
        ctx.after_compaction = False
        output = _d(ev.get("output"))
        call_id = _s(ev.get("uuid")) or f"model{pointer.replace('/', '-')}"
        choices = _l(output.get("choices"))
        choice = _d(choices[0]) if choices else {}
        extra = {
            k: v
            for k, v in {
                "model_role": ev.get("role"),
                "stop_reason": choice.get("stop_reason"),
                "time": output.get("time"),
                "working_time": ev.get("working_time"),
                "retries": ev.get("retries"),
                "cache": ev.get("cache"),
                "config": ev.get("config") or None,
                "tool_choice": ev.get("tool_choice"),
            }.items()
            if v is not None
        }
        model = _s(output.get("model")) or _s(ev.get("model"))
        b.add(
            "llm_call",
            actor=actor,
            role="assistant",
            model=model,
            usage=inspect_usage(output.get("usage")),
            llm_call_id=call_id,
            id=_s(ev.get("uuid")),
            started_at=started,
            ended_at=parse_ts(ev.get("completed")),
            phase=phase,
            source=source_ref(pointer=pointer, path=path),
            raw=ev,
            extra=extra,
        )
        err = ev.get("error") or output.get("error")
        if err:
            b.add(
                "error",
                subtype="model_error",
                actor=actor,
                content=_s(err) or dumps_text(err),
                llm_call_id=call_id,
                started_at=started,
                phase=phase,
                source=source_ref(pointer=f"{pointer}/error", path=path),
            )
        msg = choice.get("message")
        if isinstance(msg, dict):
            self._new_message(
                ctx,
                msg,
                f"{pointer}/output/choices/0/message",
                path,
                actor,
                phase,
                started,
                raw=False,
                llm_call_id=call_id,
                model=model,
            )

    def _tool_event(
        self, ctx: _Ctx, ev: dict[str, Any], ref: SourceRef, actor: str, phase: str | None, started: Any
    ) -> None:
        b = ctx.b
        call_id = _s(ev.get("id"))
        fname = str(ev.get("function") or "unknown")
        raw_used = False
        if call_id is None or call_id not in ctx.call_ids:
            args, args_raw = parse_arguments(ctx.resolve_deep(ev.get("arguments")))
            b.add(
                "tool_call",
                actor=actor,
                role="assistant",
                tool_call=ToolCall(name=fname, call_id=call_id, arguments=args, arguments_raw=args_raw),
                started_at=started,
                phase=phase,
                source=ref,
                raw=ev,
                extra={"issued_by": "tool_event"},
            )
            raw_used = True
            if call_id:
                ctx.call_ids.add(call_id)
        err = _d(ev.get("error"))
        output = _tool_output(ev.get("result"), ctx)
        if err and not output:
            output = _s(err.get("message"))
        wt = _num(ev.get("working_time"))
        fp = ("tool", call_id) if call_id else ("tool", output or "", ())
        extra = {k: v for k, v in {"truncated": ev.get("truncated"), "agent": ev.get("agent")}.items() if v}
        if err:
            extra["error"] = err
        ctx.units[fp].append(len(b.events))
        ctx.seen[fp] += 1
        b.add(
            "tool_result",
            actor="environment",
            role="tool",
            id=_s(ev.get("message_id")),
            tool_result=ToolResult(
                call_id=call_id,
                name=fname,
                output=output,
                is_error=bool(err) or bool(ev.get("failed")),
                status=_s(err.get("type")) if err else None,
                duration_ms=wt * 1000 if wt is not None else None,
            ),
            started_at=started,
            ended_at=parse_ts(ev.get("completed")),
            phase=phase,
            source=ref,
            raw=None if raw_used else ev,
            extra=extra,
        )

    def _new_message(
        self,
        ctx: _Ctx,
        m: Any,
        pointer: str,
        path: str | None,
        actor: str,
        phase: str | None,
        started: Any,
        *,
        copied: bool = False,
        fp: tuple[Any, ...] | None = None,
        raw: bool = True,
        llm_call_id: str | None = None,
        model: str | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        """Emit the events of one chat message and record it as seen."""
        if not isinstance(m, dict):
            return
        b = ctx.b
        fp = fp or _fingerprint(m, ctx)
        ctx.seen[fp] += 1
        ctx.units[fp].append(len(b.events))
        role = m.get("role") if m.get("role") in _ROLES else "user"
        text, reasoning = _parts(m.get("content"), ctx)
        ref = source_ref(pointer=pointer, path=path)
        raw_value: Any = m if raw else None
        mid = _s(m.get("id"))
        base: dict[str, Any] = {
            "source": ref,
            "started_at": started,
            "phase": phase,
            "llm_call_id": llm_call_id,
            "is_copied_context": copied,
        }
        if model is not None:
            base["model"] = model
        more = dict(extra or {})
        if m.get("source"):
            more["message_source"] = m["source"]

        def add(kind: str, **fields: Any) -> None:
            nonlocal raw_value, more
            b.add(kind, raw=raw_value, id=mid, extra=more, **base, **fields)
            raw_value = None
            more = {}

        if role == "tool":
            err = _d(m.get("error"))
            add(
                "tool_result",
                actor="environment",
                role="tool",
                tool_result=ToolResult(
                    call_id=_s(m.get("tool_call_id")),
                    name=_s(m.get("function")),
                    output=text,
                    is_error=bool(err),
                    status=_s(err.get("type")) if err else None,
                ),
            )
            return
        who = actor if role == "assistant" else ("system" if role == "system" else "user")
        for r in reasoning:
            add("reasoning", actor=who, role=role, content=r)
        calls = [c for c in _l(m.get("tool_calls")) if isinstance(c, dict)]
        if text or not calls:
            subtype = "system_prompt" if role == "system" else None
            if copied:
                subtype = "compaction_summary"
            add("message", actor=who, role=role, content=text, subtype=subtype)
        for c in calls:
            args, args_raw = parse_arguments(ctx.resolve_deep(c.get("arguments")))
            cid = _s(c.get("id"))
            if cid:
                ctx.call_ids.add(cid)
            add(
                "tool_call",
                actor=who,
                role="assistant",
                tool_call=ToolCall(
                    name=str(c.get("function") or "unknown"),
                    call_id=cid,
                    arguments=args,
                    arguments_raw=args_raw,
                ),
            )

    def _link_messages(self, ctx: _Ctx, messages: list[Any], path: str | None) -> None:
        """Tag the event that produced each final message; emit messages no event produced."""
        b = ctx.b
        taken: Counter[tuple[Any, ...]] = Counter()
        for j, m in enumerate(messages):
            if not isinstance(m, dict):
                continue
            fp = _fingerprint(m, ctx)
            seqs = ctx.units.get(fp, [])
            if taken[fp] < len(seqs):
                seq = seqs[taken[fp]]
                taken[fp] += 1
                b.events[seq].extra["message_index"] = j
                continue
            self._new_message(
                ctx, m, f"/messages/{j}", path, "assistant", None, None, extra={"message_index": j}
            )
            taken[fp] += 1

    # -- trace-level fields ---------------------------------------------------------------

    def _task_text(self, value: Any, ctx: _Ctx) -> str | None:
        value = ctx.resolve(value)
        if isinstance(value, str):
            return value
        texts = [
            _parts(m.get("content"), ctx)[0] or ""
            for m in _l(value)
            if isinstance(m, dict) and m.get("role") == "user"
        ]
        return "\n".join(texts) or None

    def _total_usage(self, model_usage: Any) -> Usage | None:
        total: Usage | None = None
        for u in _d(model_usage).values():
            usage = inspect_usage(u)
            if usage is not None:
                total = usage if total is None else total + usage
        return total

    def _termination(self, ctx: _Ctx, sample: dict[str, Any]) -> Termination | None:
        err = sample.get("error")
        if err:
            native = _s(_d(err).get("message")) or dumps_text(err)
            return Termination(reason="error", by="error", native=native, at_seq=ctx.error_seq)
        limit = _d(sample.get("limit")) or _d(ctx.limit_event)
        if limit:
            ltype = limit.get("type")
            reason = {"message": "max_steps", "token": "token_limit", "time": "timeout", "working": "timeout"}
            return Termination(
                reason=reason.get(str(ltype), f"{ltype}_limit"),
                by="user" if ltype == "operator" else "limit",
                native=f"{ltype} limit {limit.get('limit')}",
                at_seq=ctx.limit_seq,
            )
        choices = _l(_d(sample.get("output")).get("choices"))
        stop = _s(_d(choices[0]).get("stop_reason")) if choices else None
        if stop is None:
            return None
        if stop in _LIMIT_STOP:
            return Termination(reason=_LIMIT_STOP[stop], by="limit", native=stop)
        if stop == "content_filter":
            return Termination(reason="content_filter", by="harness", native=stop)
        calls = [e.tool_call.name for e in ctx.b.events if e.tool_call is not None]
        if calls and calls[-1] == "submit":
            return Termination(reason="submitted", by="agent", native=stop)
        return Termination(reason="completed", by="agent", native=stop)

    def _outcome(self, sample: dict[str, Any], ev_header: dict[str, Any], ctx: _Ctx) -> Outcome | None:
        scores = _d(sample.get("scores"))
        target = sample.get("target")
        ground = (
            target
            if isinstance(target, str)
            else ("\n".join(map(str, target)) if isinstance(target, list) else None)
        )
        choices = _l(_d(sample.get("output")).get("choices"))
        final = _s(_d(sample.get("output")).get("completion"))
        if final is None and choices:
            final = _parts(_d(_d(choices[0]).get("message")).get("content"), ctx)[0]
        if not scores:
            return None if final is None else Outcome(final_output=final, ground_truth=ground or None)
        order = [str(s.get("name")) for s in _l(ev_header.get("scorers")) if isinstance(s, dict)]
        primary = next((n for n in order if n in scores), next(iter(scores)))
        value = _d(scores[primary]).get("value")
        success: bool | None = None
        score: float | None = None
        if isinstance(value, bool):
            success, score = value, float(value)
        elif isinstance(value, str):
            success = _SCORE_SUCCESS.get(value)
            score = _SCORE_VALUE.get(value)
            if score is None:
                try:
                    score = float(value)
                except ValueError:
                    score = None
        elif isinstance(value, (int, float)):
            score = float(value)
        answer = _s(_d(scores[primary]).get("answer"))
        return Outcome(
            success=success,
            score=score,
            metrics={"primary_scorer": primary, "scores": scores},
            final_output=final if final is not None else answer,
            ground_truth=ground or None,
        )
