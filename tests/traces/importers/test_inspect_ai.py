"""Inspect AI eval logs: .json EvalLog and zipped .eval, one trace per sample."""

from __future__ import annotations

import json
import sys
import zipfile
from collections import Counter
from pathlib import Path

import pytest

from conftest import shared_path
from mastkit.errors import TraceLoadError
from mastkit.traces import Source, Trace, get_importer, iter_load, load_traces

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "inspect_ai"


def _all(path: Path) -> list[Trace]:
    traces = list(load_traces(path))
    for t in traces:
        assert t.source_format == "inspect_ai"
        assert Trace.model_validate_json(t.model_dump_json()) == t
    return traces


def _native_events(t: Trace) -> int:
    """Inspect events kept as raw on their own canonical event (pointer ``/events/<i>``)."""
    return sum(
        1
        for e in t.events
        if e.raw is not None
        and e.source is not None
        and (e.source.pointer or "").count("/") == 2
        and (e.source.pointer or "").startswith("/events/")
    )


def _message_indexes(t: Trace) -> list[int]:
    """Indexes into the sample's final ``messages`` list, one per message, on the event it produced."""
    return sorted(e.extra["message_index"] for e in t.events if "message_index" in e.extra)


def test_shared_json_sample_counts() -> None:
    [t] = _all(shared_path("trace_samples", "inspect_ai_json", "2025-05-12T20-27-36-04-00_browser.json"))
    # 1 sample; its 10 messages each map to exactly one canonical event chain
    assert len(t.raw["sample"]["messages"]) == 10
    assert _message_indexes(t) == list(range(10))
    roles = Counter(m["role"] for m in t.raw["sample"]["messages"])
    assert roles == {"user": 1, "assistant": 5, "tool": 4}
    # 43 native events, each kept exactly once as raw of a canonical event
    assert _native_events(t) == 43
    kinds = t.kind_counts()
    assert kinds["tool_call"] == 4 and kinds["tool_result"] == 4 and kinds["llm_call"] == 5
    pairs = list(t.tool_calls())
    assert all(
        r is not None and r.tool_result and r.tool_result.call_id == c.tool_call.call_id
        for c, r in pairs
        if c.tool_call
    )
    assert [c.tool_call.name for c, _ in pairs if c.tool_call] == [
        "web_browser_go", "web_browser_click", "web_browser_click", "web_browser_click",
    ]  # fmt: skip
    assert t.raw["log"]["status"] == "success"
    assert t.outcome is not None and t.outcome.success is True and t.outcome.score == 1.0
    assert t.outcome.metrics["scores"]["includes"]["value"] == "C"
    assert (t.benchmark, t.model, t.framework) == ("browser", "openai/gpt-4o-mini", "inspect_ai")
    assert t.trace_id == "ATYFNjyWUz4mZ5Dgj6yd4f" and t.task_id == "1"
    assert t.task is not None and t.task.startswith("Use the web browser tool")
    # per-call usage sums to the sample's model_usage
    assert t.usage is not None and t.usage.input_tokens == 15235 and t.usage.cached_input_tokens == 9088
    assert t.total_usage().input_tokens == 15235 and t.total_usage().output_tokens == 281
    assert t.termination is not None and t.termination.by == "agent" and t.termination.native == "stop"
    assert {r for e in t.events if (r := e.role)} == {"user", "assistant", "tool"}


def test_shared_eval_zip_counts() -> None:
    path = shared_path("trace_samples", "inspect_ai_eval", "log.eval")
    assert get_importer("inspect_ai").sniff(Source(path)) >= 0.9
    traces = _all(path)
    assert len(traces) == 15  # one per samples/<id>_epoch_<n>.json
    # messages = the samples' final message lists (332 in all), each linked to one event
    assert sum(len(t.raw["sample"]["messages"]) for t in traces) == 332
    for t in traces:
        assert _message_indexes(t) == list(range(len(t.raw["sample"]["messages"])))
    assert sum(_native_events(t) for t in traces) == 505
    assert sum(t.kind_counts()["tool_call"] for t in traces) == 121
    assert sum(t.kind_counts()["llm_call"] for t in traces) == 147
    assert Counter(t.outcome.success for t in traces if t.outcome) == {True: 9, False: 6}
    assert {t.benchmark for t in traces} == {"inspect_evals/luce_intercode_ctf"}
    roles = Counter(m["role"] for t in traces for m in t.raw["sample"]["messages"])
    assert set(roles) == {"system", "user", "assistant", "tool"}
    limited = [t for t in traces if t.termination and t.termination.by == "limit"]
    assert len(limited) == 3 and all(t.termination and t.termination.reason == "max_steps" for t in limited)
    assert all(t.extra["zip_entry"].startswith("samples/") for t in traces)
    # the system prompt added by the system_message solver shows up once, before the first model call
    t = traces[0]
    assert [e.subtype for e in t.events if e.role == "system"] == ["system_prompt"]


def test_multi_agent_log_and_bad_sample() -> None:
    items = list(iter_load(FIX / "multi_agent_log.json"))
    assert [type(i).__name__ for i in items] == ["Trace", "TraceLoadError", "Trace"]
    err = items[1]
    assert isinstance(err, TraceLoadError) and "/samples/1" in err.reason
    t = items[0]
    assert isinstance(t, Trace) and t.source_format == "inspect_ai"
    assert Trace.model_validate_json(t.model_dump_json()) == t
    assert t.trace_id == "SmpFixA" and t.task_id == "q-17" and t.extra["epoch"] == 2
    assert t.task == "Which city hosts the 2024 Olympics? Ask the researcher."  # attachment resolved
    assert [a.name for a in t.agents] == ["lead", "researcher", "model_graded_fact"]
    handoffs = [e for e in t.events if e.kind == "handoff"]
    assert [(h.actor, h.recipients) for h in handoffs] == [("system", ["lead"]), ("lead", ["researcher"])]
    # system prompt came from the pooled input (events_data + input_refs)
    sys_msg = next(e for e in t.events if e.subtype == "system_prompt")
    assert sys_msg.content == "You are the lead agent." and sys_msg.extra["message_index"] == 0
    assert _message_indexes(t) == list(range(7))
    reasoning = next(e for e in t.events if e.kind == "reasoning")
    assert reasoning.actor == "lead" and reasoning.content == "I should delegate to the researcher."
    failed = next(e for e in t.events if e.tool_result and e.tool_result.name == "web_search")
    assert failed.tool_result is not None and failed.tool_result.is_error is True
    assert (
        failed.tool_result.status == "timeout" and failed.tool_result.output == "search timed out after 30s"
    )
    comp = next(e for e in t.events if e.subtype == "context_compaction")
    summary = t.events[comp.seq + 1]
    assert summary.is_copied_context and summary.subtype == "compaction_summary"
    # model-graded scorer: its calls are attributed to the scorer, in the scorer phase
    grader = [e for e in t.events if e.kind == "llm_call" and e.actor == "model_graded_fact"]
    assert (
        len(grader) == 1
        and grader[0].extra["model_role"] == "grader"
        and grader[0].phase == "model_graded_fact"
    )
    assert (
        t.outcome is not None
        and t.outcome.success is True
        and t.outcome.metrics["primary_scorer"] == "model_graded_fact"
    )
    assert t.outcome.ground_truth == "Paris\nparis"
    assert t.usage is not None and t.usage.cost_usd == 0.0021 and t.usage.cache_write_tokens == 20
    first_llm = next(e for e in t.events if e.kind == "llm_call")
    assert first_llm.usage is not None and first_llm.usage.cached_input_tokens == 100
    # the sample without events is read from its messages; its error is the termination
    t3 = items[2]
    assert isinstance(t3, Trace) and t3.trace_id == "EvFix0001:3:1"
    assert t3.kind_counts() == {"message": 3, "tool_call": 1, "tool_result": 1}
    assert t3.termination is not None and (t3.termination.reason, t3.termination.by) == ("error", "error")
    assert t3.outcome is not None and t3.outcome.score == 1.0 and t3.outcome.success is None
    assert [c.tool_call.name for c, r in t3.tool_calls() if c.tool_call and r] == ["python"]


def test_legacy_transcript_and_step_events() -> None:
    [t] = _all(FIX / "legacy_transcript_log.json")
    assert t.trace_id == "OldRun1:1:1" and t.framework_version == "0.3.25"
    assert [e.subtype for e in t.events if e.kind == "system"] == ["step_begin", "log_warning", "step_end"]
    assert all(e.phase == "generate" for e in t.events if e.kind in ("llm_call", "message"))
    assert t.termination is not None and t.termination.reason == "max_steps" and t.termination.at_seq == 6
    assert t.events[6].kind == "termination"
    assert t.outcome is not None and t.outcome.success is False
    assert _message_indexes(t) == [0, 1]


def _write_eval(path: Path, header: dict, samples: dict[str, object]) -> None:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("_journal/start.json", json.dumps({k: header[k] for k in ("version", "eval", "plan")}))
        for name, sample in samples.items():
            zf.writestr(name, sample if isinstance(sample, str) else json.dumps(sample))
        if header.get("status") != "started":
            zf.writestr("header.json", json.dumps(header))


def test_eval_zip_written_by_helper(tmp_path: Path) -> None:
    doc = json.loads((FIX / "multi_agent_log.json").read_text())
    header = {k: v for k, v in doc.items() if k != "samples"}
    samples = {
        "samples/q-17_epoch_2.json": doc["samples"][0],
        "samples/2_epoch_1.json": "{not json",
        "samples/3_epoch_1.json": doc["samples"][2],
    }
    path = tmp_path / "run.eval"
    _write_eval(path, header, samples)
    assert get_importer("inspect_ai").sniff(Source(path)) >= 0.9
    items = list(iter_load(path))
    assert [type(i).__name__ for i in items] == ["Trace", "TraceLoadError", "Trace"]
    assert isinstance(items[1], TraceLoadError) and "samples/2_epoch_1.json" in items[1].reason
    t = items[0]
    assert isinstance(t, Trace) and t.extra["zip_entry"] == "samples/q-17_epoch_2.json"
    assert all(e.source is None or e.source.path == "samples/q-17_epoch_2.json" for e in t.events)
    assert t.raw["log"]["status"] == "error"
    # a run still in progress: no header.json, the journal's start record is the header
    started = tmp_path / "live.eval"
    _write_eval(started, {**header, "status": "started"}, {"samples/3_epoch_1.json": doc["samples"][2]})
    [live] = _all(started)
    assert live.trace_id == "EvFix0001:3:1" and "status" not in live.raw["log"]


def test_sniff_is_specific(tmp_path: Path) -> None:
    imp = get_importer("inspect_ai")
    other = tmp_path / "other.zip"
    with zipfile.ZipFile(other, "w") as zf:
        zf.writestr("data.json", "{}")
    assert imp.sniff(Source(other)) == 0.0
    chat = tmp_path / "chat.json"
    chat.write_text(json.dumps({"messages": [{"role": "user", "content": "hi"}], "eval": "x"}))
    assert imp.sniff(Source(chat)) == 0.0
    bad = tmp_path / "bad.json"
    bad.write_text(
        json.dumps({"version": 2, "eval": {"task": "t", "model": "m"}, "status": "success", "samples": 5})
    )
    [err] = list(iter_load(bad))
    assert isinstance(err, TraceLoadError) and "'samples' is not a list" in err.reason


def test_newer_event_types_and_redacted_reasoning_summary() -> None:
    # inspect_ai 0.3.1xx: anchor / branch / interrupt / score_edit events, pooled inputs and calls
    # (`input_refs`, `call_refs`), encrypted reasoning that still carries a plain-text summary
    (t,) = _all(FIX / "new_events_log.json")
    assert t.trace_id == "s-1"
    reasoning = [e.content for e in t.events if e.kind == "reasoning"]
    assert reasoning == ["add them"]
    by_subtype = {e.subtype: e for e in t.events if e.kind == "system"}
    assert by_subtype["interrupt"].content == "user_cancel: between_turns"
    assert by_subtype["branch"].content == "from sp0 at a1"
    assert by_subtype["score_edit"].content == "match: I"
    unknown = by_subtype["something_new"]
    assert unknown.raw == {"event": "something_new", "timestamp": "2026-01-01T00:00:10+00:00", "payload": 1}
    assert _native_events(t) == 12  # every sample event kept once
    # pooled inputs are expanded: the system prompt and task come from events_data.messages
    assert [e.content for e in t.events if e.kind == "message"][:2] == ["sys", "What is 2+2?"]
    ((_call, result),) = list(t.tool_calls())
    assert result is not None and result.tool_result is not None
    assert (result.tool_result.is_error, result.tool_result.status) == (True, "timeout")


# -- shapes met in real logs shipped in the inspect_ai sdists (0.3.250: the viewer's chunked
# fixtures; 0.3.50-0.3.250: header-only logs in tests/test_eval_set) ------------------------------


def _tool_calls(t: Trace) -> list[tuple[str, object]]:
    return [(e.tool_call.name, e.tool_call.arguments) for e in t.events if e.tool_call is not None]


def _shape(t: Trace) -> list[tuple[object, ...]]:
    return [(e.kind, e.actor, e.role, e.content, e.started_at) for e in t.events]


def test_zstd_eval_with_monolith_and_chunked_samples() -> None:
    # newer inspect_ai writes .eval entries with zstd (zip method 93), which zipfile reads only from
    # Python 3.14; `inspect log convert --chunked` splits a sample into a folder of sequence chunks
    mono, chunked = _all(FIX / "zstd_mixed_shapes.eval")
    assert (mono.trace_id, chunked.trace_id) == ("zstd-sample-1", "zstd-sample-2")
    assert mono.extra["zip_entry"] == "samples/1_epoch_1.json"
    assert chunked.extra["zip_entry"] == "samples/2_epoch_1"
    for t in (mono, chunked):
        # the command sits in an attachment (`attachment://<hash>` / `attachment://<index>`)
        assert _tool_calls(t) == [("bash", {"cmd": "ls -la /tmp"})]
        assert t.outcome is not None and t.outcome.success is True
        assert t.usage is not None and t.usage.total_tokens == 142
        assert [e.actor for e in t.events if e.kind == "llm_call"] == ["shell_agent", "shell_agent"]
        assert _message_indexes(t) == [0, 1, 2, 3, 4]
    assert _shape(mono) == _shape(chunked)
    assert chunked.raw["sample"]["metadata"] == {"difficulty": "easy"}


def test_zstd_eval_without_a_decoder_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from mastkit.traces.importers import inspect_ai as mod

    monkeypatch.setattr(mod, "_zstandard", lambda: None)  # as if zstandard were not installed
    [err] = list(iter_load(FIX / "zstd_mixed_shapes.eval"))
    assert isinstance(err, TraceLoadError)
    assert "header.json" in err.reason and "zstd" in err.reason and "zstandard" in err.reason


def test_zstd_decompression_stops_at_the_size_the_zip_directory_gives() -> None:
    """A hostile entry that expands to 20 MB is refused after reading at most size + 1 bytes."""
    import tracemalloc

    import zstandard

    from mastkit.traces.importers.inspect_ai import _zstd_decompress

    bomb = zstandard.ZstdCompressor().compress(b"\0" * 20_000_000)  # ~1 KB
    tracemalloc.start()
    try:
        with pytest.raises(zipfile.BadZipFile, match="more"):
            _zstd_decompress(bomb, 1000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 5_000_000
    assert _zstd_decompress(bomb, 20_000_000)[-1:] == b"\0"


def _zip_record(data: bytearray, name: str, *, central: bool) -> int:
    """Offset of the central-directory record (``central``) or the local header of entry ``name``."""
    sig, name_len_at, name_at = (b"PK\x01\x02", 28, 46) if central else (b"PK\x03\x04", 26, 30)
    at = data.find(sig)
    while at != -1:
        n = int.from_bytes(data[at + name_len_at : at + name_len_at + 2], "little")
        if data[at + name_at : at + name_at + n] == name.encode():
            return at
        at = data.find(sig, at + 4)
    raise AssertionError(f"no zip record of {name}")


def test_zstd_entry_larger_than_the_zip_directory_says_is_an_error(tmp_path: Path) -> None:
    """A hostile entry cannot expand past the size the zip directory gives it."""
    data = bytearray((FIX / "zstd_mixed_shapes.eval").read_bytes())
    at = _zip_record(data, "header.json", central=True) + 24  # its uncompressed size, one byte less
    data[at : at + 4] = (int.from_bytes(data[at : at + 4], "little") - 1).to_bytes(4, "little")
    bad = tmp_path / "bomb.eval"
    bad.write_bytes(bytes(data))
    [err] = list(iter_load(bad))
    assert isinstance(err, TraceLoadError) and "header.json" in err.reason and "more" in err.reason


def test_damaged_zstd_entry_is_a_reported_error(tmp_path: Path) -> None:
    """A corrupt zstd stream (checksum mismatch) is an error naming the entry, not a crash."""
    data = bytearray((FIX / "zstd_mixed_shapes.eval").read_bytes())
    at = _zip_record(data, "header.json", central=False)
    name_len, extra_len = (int.from_bytes(data[at + k : at + k + 2], "little") for k in (26, 28))
    size = int.from_bytes(data[at + 18 : at + 22], "little")
    data[at + 30 + name_len + extra_len + size // 2] ^= 0xFF  # a byte in the middle of its data
    bad = tmp_path / "damaged.eval"
    bad.write_bytes(bytes(data))
    [err] = list(iter_load(bad))
    assert isinstance(err, TraceLoadError) and not err.internal
    assert "header.json" in err.reason and "checksum" in err.reason  # zstd's own check, reported


@pytest.mark.skipif(sys.version_info >= (3, 14), reason="zipfile reads zstd entries itself from 3.14")
def test_zstd_entry_whose_crc_does_not_match_is_an_error(tmp_path: Path) -> None:
    """The zstd stream is intact but the zip directory's CRC of the entry is not its content's."""
    data = bytearray((FIX / "zstd_mixed_shapes.eval").read_bytes())
    at = _zip_record(data, "header.json", central=True) + 16  # the entry's CRC-32
    data[at] ^= 0xFF
    bad = tmp_path / "crc.eval"
    bad.write_bytes(bytes(data))
    [err] = list(iter_load(bad))
    assert isinstance(err, TraceLoadError) and not err.internal
    assert "header.json" in err.reason and "CRC" in err.reason


def _write_chunked(path: Path, header: dict[str, object], sample: dict[str, object], size: int) -> None:
    """A deflate .eval whose one sample has the chunked layout, sequences cut every ``size`` items."""
    pool = sample["messages"]
    assert isinstance(pool, list)
    events = sample["events"]
    assert isinstance(events, list)
    shell = {k: v for k, v in sample.items() if k not in ("messages", "events", "attachments", "metadata")}
    shell["message_refs"] = [[0, len(pool)]]
    attachments = sample.get("attachments") or {}
    assert isinstance(attachments, dict)

    def dump(value: object) -> str:  # refs become `attachment://<index>` into the attachments sequence
        text = json.dumps(value)
        for i, key in enumerate(attachments):
            text = text.replace(f'"attachment://{key}"', f'"attachment://{i}"')
        return text

    prefix = f"samples/{sample['id']}_epoch_{sample['epoch']}"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("header.json", json.dumps(header))
        zf.writestr(f"{prefix}/sample.json", dump(shell))
        zf.writestr(f"{prefix}/skeleton.json", json.dumps({"version": 1, "spans": []}))
        for seq, items in (
            ("messages", pool),
            ("events", events),
            ("attachments", list(attachments.values())),
        ):
            for start in range(0, len(items), size):
                zf.writestr(f"{prefix}/{seq}/{start}.json", dump(items[start : start + size]))


def test_chunked_sample_equals_its_monolith(tmp_path: Path) -> None:
    doc = json.loads((FIX / "multi_agent_log.json").read_text())
    header = {k: v for k, v in doc.items() if k != "samples"}
    sample = doc["samples"][0]
    loaded = [t for t in iter_load(FIX / "multi_agent_log.json") if isinstance(t, Trace)]
    [mono] = [t for t in loaded if t.task_id == str(sample["id"])]
    path = tmp_path / "chunked.eval"
    _write_chunked(path, header, sample, size=2)
    [t] = _all(path)
    assert t.trace_id == mono.trace_id and _shape(t) == _shape(mono)
    assert _tool_calls(t) == _tool_calls(mono) and t.outcome == mono.outcome
    assert _message_indexes(t) == _message_indexes(mono)
    # a missing chunk is reported, not skipped over
    broken = tmp_path / "broken.eval"
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(broken, "w") as dst:
        for name in src.namelist():
            if not name.endswith("/events/2.json"):
                dst.writestr(name, src.read(name))
    [err] = list(iter_load(broken))
    assert isinstance(err, TraceLoadError) and "events/4.json" in err.reason
    # an entry named with non-ASCII digits is not a chunk (int() of "²" fails, of "١" names another)
    odd = tmp_path / "odd.eval"
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(odd, "w") as dst:
        for name in src.namelist():
            dst.writestr(name, src.read(name))
        prefix = next(n for n in src.namelist() if n.endswith("/events/2.json"))[: -len("2.json")]
        dst.writestr(prefix + "\u00b2.json", b"[]")
        dst.writestr(prefix + "\u0661.json", b"[]")
    [t2] = _all(odd)
    assert _shape(t2) == _shape(t)


def test_header_only_logs_say_why_nothing_loads(tmp_path: Path) -> None:
    # `inspect eval-set` keeps header-only logs (no `samples`), e.g. of a failed or cancelled run
    header = {
        "version": 2,
        "status": "error",
        "eval": {"task": "popularity", "model": "openai/gpt-4"},
        "plan": {},
        "results": {"total_samples": 10, "completed_samples": 0},
    }
    path = tmp_path / "header_only.json"
    path.write_text(json.dumps(header))
    [err] = list(iter_load(path))
    assert isinstance(err, TraceLoadError)
    assert "without samples" in err.reason and "'error'" in err.reason and "total_samples=10" in err.reason
    empty = tmp_path / "cancelled.json"
    empty.write_text(json.dumps({**header, "status": "cancelled", "samples": []}))
    [err] = list(iter_load(empty))
    assert isinstance(err, TraceLoadError) and "'cancelled'" in err.reason
    zipped = tmp_path / "header_only.eval"
    with zipfile.ZipFile(zipped, "w") as zf:
        zf.writestr("header.json", json.dumps(header))
        zf.writestr("summaries.json", "[]")
    [err] = list(iter_load(zipped))
    assert isinstance(err, TraceLoadError) and "without samples" in err.reason


def test_tool_call_arguments_resolve_attachments(tmp_path: Path) -> None:
    # long tool-call arguments (a shell script) are stored as `attachment://<hash>` in model
    # outputs and tool events alike (seen in a real codex_cli run, inspect_ai 0.3.239)
    doc = json.loads((FIX / "new_events_log.json").read_text())
    sample = doc["samples"][0]
    sample["attachments"] = {**(sample.get("attachments") or {}), "c0ffee": "print(2+2)"}
    args = {"code": "attachment://c0ffee", "opts": ["attachment://c0ffee", 3]}
    for ev in sample["events"]:
        if ev.get("event") == "tool":
            ev["arguments"] = args
        for choice in ev.get("output", {}).get("choices", []) if ev.get("event") == "model" else []:
            for call in choice["message"].get("tool_calls") or []:
                call["arguments"] = args
    path = tmp_path / "log.json"
    path.write_text(json.dumps(doc))
    t = next(load_traces(path))
    calls = [c for c in _tool_calls(t) if c[0] == "python"]
    assert calls and all(a == {"code": "print(2+2)", "opts": ["print(2+2)", 3]} for _n, a in calls)
