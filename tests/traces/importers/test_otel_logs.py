"""OTel log records of agent runs (``otel_logs``): Codex (ITBench traces.jsonl), Claude Code (OTLP/JSON),
Gemini CLI (telemetry outfile) and GenAI events exported without spans.

The three fixtures are hand-written after the producers' public source and docs (see
docs/formats/otel_logs.md); ids, prompts and outputs are made up."""

from __future__ import annotations

import json
import os
import random
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import assert_loads_cleanly, load_split
from mastkit.traces.model import Trace

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "otel_logs"


_load = load_split


def _one(path: Path) -> Trace:
    traces, errors = _load(path)
    assert errors == []
    (t,) = traces
    assert t.source_format == "otel_logs"
    assert Trace.model_validate_json(t.model_dump_json()) == t
    return t


def _shape(t: Trace) -> list[tuple[str, str | None, str | None]]:
    return [(e.kind, e.actor, e.subtype) for e in t.events]


def test_codex_itbench_traces_jsonl() -> None:
    t = _one(FIX / "codex_otlp_logs.jsonl")
    assert (t.trace_id, t.framework, t.framework_version) == (
        "019bc26a-8a6c-7f43-8605-0aa1c35bd7f8",
        "Codex",
        "0.80.0",
    )
    assert t.model == "openai/gpt-5.1"
    assert _shape(t) == [
        ("system", "codex", "codex.conversation_starts"),
        ("message", "user", None),
        ("llm_call", "codex", "codex.api_request"),
        ("system", "codex", "codex.tool_decision"),
        ("tool_call", "codex", None),
        ("tool_result", "environment", None),
        ("llm_call", "codex", "codex.api_request"),
        ("error", "codex", "codex.api_request"),
    ]
    # the record time is 0: event.timestamp orders and dates the events
    assert (
        t.events[0].started_at is not None
        and t.events[0].started_at.isoformat() == "2026-01-15T11:08:44.901000+00:00"
    )
    prompt = t.events[1]
    assert prompt.content == "Investigate the failing checkout service and write output.json"
    assert prompt.extra["prompt_logged"] is True
    # the usage comes from the sse_event response.completed record (counts sent as text), folded in
    call = t.events[2]
    assert call.usage is not None
    assert (call.usage.input_tokens, call.usage.output_tokens, call.usage.cached_input_tokens) == (
        9412,
        388,
        6144,
    )
    assert call.usage.reasoning_tokens == 256
    assert [r["attributes"]["event.kind"] for r in call.extra["sse_events"]][-1] == "response.completed"
    tool = t.events[4]
    assert tool.tool_call is not None
    assert (tool.tool_call.name, tool.tool_call.call_id) == ("shell", "call_7Qk2ZtM1")
    assert tool.tool_call.arguments == {
        "command": ["bash", "-lc", "kubectl get pods -n shop"],
        "workdir": "/work",
    }
    result = t.events[5]
    assert result.tool_result is not None
    assert (result.tool_result.is_error, result.tool_result.duration_ms) == (False, 1337.0)
    assert result.content is not None and "CrashLoopBackOff" in result.content
    assert "timed out" in (t.events[7].content or "")
    # every record is kept: as an event's raw, or folded into the call it belongs to
    kept = sum(e.raw is not None for e in t.events) + sum(
        len(e.extra.get("sse_events", [])) for e in t.events
    )
    assert (
        kept
        == t.raw["records"]
        == sum(
            len(sl["log_records"])
            for line in (FIX / "codex_otlp_logs.jsonl").read_text().splitlines()
            for rl in json.loads(line)["data"]["resource_logs"]
            for sl in rl["scope_logs"]
        )
    )


def test_claude_code_otlp_json() -> None:
    t = _one(FIX / "claude_code_otlp_logs.json")
    assert (t.trace_id, t.framework, t.framework_version) == (
        "5f0c2b1e-8d43-4c1a-9a57-3f2e1b7c9d10",
        "Claude Code",
        "2.1.30",
    )
    # the body names the event (claude_code.api_request), event.name only its short form
    assert [e.subtype for e in t.events if e.kind in ("llm_call", "system", "error")] == [
        "claude_code.api_request", "claude_code.tool_decision", "claude_code.api_error", "claude_code.api_request",
    ]  # fmt: skip
    prompt = t.events[0]
    assert (prompt.kind, prompt.content, prompt.extra["prompt_logged"]) == (
        "message",
        None,
        False,
    )  # <REDACTED>
    first = t.events[1]
    assert first.usage is not None and first.usage.cost_usd == pytest.approx(0.0213465)
    assert (first.usage.cached_input_tokens, first.usage.cache_write_tokens) == (14820, 1903)
    decision = t.events[2]
    assert decision.content is None and "session.id" not in decision.extra
    assert t.total_usage().cost_usd == pytest.approx(0.0213465 + 0.00081)


def test_claude_code_order_follows_event_sequence(tmp_path: Path) -> None:
    doc = json.loads((FIX / "claude_code_otlp_logs.json").read_text())
    recs = doc["resourceLogs"][0]["scopeLogs"][0]["logRecords"]
    for r in recs:  # the exporter's batches need not be in order, and the times may tie
        r["timeUnixNano"] = "1770113700000000000"
        r["attributes"] = [kv for kv in r["attributes"] if kv["key"] != "event.timestamp"]
    recs.reverse()
    path = tmp_path / "logs.json"
    path.write_text(json.dumps(doc))
    shuffled = _one(path)
    assert [e.kind for e in shuffled.events] == [
        e.kind for e in _one(FIX / "claude_code_otlp_logs.json").events
    ]


def test_gemini_cli_outfile() -> None:
    t = _one(FIX / "gemini_cli_telemetry.log")
    assert (t.trace_id, t.framework, t.model) == (
        "8d606a51-bd01-44a5-9d77-e1debf5f3ce1",
        "Gemini CLI",
        "gemini-2.5-flash",
    )
    assert t.framework_version is None  # service.version is the Node version
    assert [e.kind for e in t.events] == ["message", "llm_call", "tool_call", "tool_result", "error"]
    call = t.events[1]
    assert call.usage is not None and (call.usage.input_tokens, call.usage.output_tokens) == (963, 43)
    assert (
        call.extra["response"]["attributes"]["event.name"] == "gemini_cli.api_response"
    )  # kept with its call
    tool = t.events[2]
    assert tool.tool_call is not None and tool.tool_call.arguments == {"path": "src"}
    assert t.events[3].tool_result is not None and t.events[3].tool_result.is_error is False
    assert t.raw["records"] == 5  # the metrics export in the file is not a record


def _genai_logs(trace_id: str, *, user: str, answer: str) -> dict[str, Any]:
    def kv(d: dict[str, Any]) -> list[dict[str, Any]]:
        return [
            {
                "key": k,
                "value": {"kvlistValue": {"values": kv(v)}} if isinstance(v, dict) else {"stringValue": v},
            }
            for k, v in d.items()
        ]

    def rec(name: str, body: dict[str, Any]) -> dict[str, Any]:
        return {
            "eventName": name,
            "traceId": trace_id,
            "spanId": "00f067aa0ba902b7",
            "body": {"kvlistValue": {"values": kv(body)}},
        }

    records = [
        rec("gen_ai.user.message", {"content": user}),
        rec("gen_ai.choice", {"finish_reason": "stop", "message": {"role": "assistant", "content": answer}}),
    ]
    return {"resourceLogs": [{"resource": {}, "scopeLogs": [{"scope": {}, "logRecords": records}]}]}


def test_genai_events_without_spans_one_trace_per_trace_id(tmp_path: Path) -> None:
    path = tmp_path / "logs.jsonl"
    lines = [
        _genai_logs("4bf92f3577b34da6a3ce929d0e0e4736", user="Hi", answer="Hello!"),
        _genai_logs("0af7651916cd43dd8448eb211c80319c", user="2+2?", answer="4"),
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    traces, errors = _load(path)
    assert errors == []
    assert [(t.trace_id, [(e.role, e.content) for e in t.events]) for t in traces] == [
        ("4bf92f3577b34da6a3ce929d0e0e4736", [("user", "Hi"), ("assistant", "Hello!")]),
        ("0af7651916cd43dd8448eb211c80319c", [("user", "2+2?"), ("assistant", "4")]),
    ]


def test_itbench_lines_of_other_signals_are_skipped(tmp_path: Path) -> None:
    lines = (FIX / "codex_otlp_logs.jsonl").read_text().splitlines()
    other = [
        {"timestamp": "2026-01-15T11:08:45Z", "path": "/v1/metrics", "content_type": "application/json", "data": {"resourceMetrics": []}},
        {"timestamp": "2026-01-15T11:08:46Z", "path": "/v1/logs", "content_type": "application/x-protobuf",
         "data": {"error": "Error parsing message", "format": "protobuf", "body_hex": "0a0b"}},
    ]  # fmt: skip
    path = tmp_path / "traces.jsonl"
    path.write_text("\n".join([lines[0], *(json.dumps(o) for o in other), *lines[1:]]) + "\n")
    t = _one(path)
    assert len(t.events) == len(_one(FIX / "codex_otlp_logs.jsonl").events)


def test_bad_input_reports_and_keeps_the_rest(tmp_path: Path) -> None:
    text = (FIX / "gemini_cli_telemetry.log").read_text()
    cut = text.rindex('{\n  "hrTime"') + 40  # the last record cut off
    path = tmp_path / "telemetry.log"
    path.write_text(text[:cut])
    traces, errors = _load(path)
    assert len(errors) == 1 and errors[0].offset == text.rindex('{\n  "hrTime"')
    assert "invalid JSON" in errors[0].reason
    (t,) = traces
    assert len(t.events) == 4  # the api_error record was the one cut off

    bad_line = tmp_path / "codex.jsonl"
    lines = (FIX / "codex_otlp_logs.jsonl").read_text().splitlines()
    bad_line.write_text(
        "\n".join(
            [lines[0], '{"timestamp": "x", "path": "/v1/logs", "data": {"resource_logs": 7}}', *lines[1:]]
        )
    )
    traces, errors = _load(bad_line)
    assert len(traces) == 1 and len(errors) == 1
    assert errors[0].line == 2 and "resource_logs is not a list" in errors[0].reason


def test_not_claimed_for_spans(tmp_path: Path) -> None:
    """A file of spans is the otlp importer's; logs with spans in the same file go there too."""
    from mastkit.traces.importers.otel_logs import OtelLogsImporter
    from mastkit.traces.source import Source

    spans = tmp_path / "spans.json"
    spans.write_text(json.dumps({"resourceSpans": []}))
    assert OtelLogsImporter().sniff(Source(spans)) == 0.0
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text(json.dumps({"resourceLogs": []}) + "\n" + json.dumps({"resourceSpans": []}) + "\n")
    assert OtelLogsImporter().sniff(Source(mixed)) == 0.5


_FUZZ = settings(max_examples=int(os.environ.get("MASTKIT_FUZZ_EXAMPLES", "40")), deadline=None)
_FIXTURES = sorted(FIX.iterdir())


def _mutate(value: Any, rnd: random.Random) -> Any:
    """One random change deep in a JSON value (a key dropped, a value swapped for an odd one)."""
    if isinstance(value, dict) and value and rnd.random() < 0.8:
        key = rnd.choice(sorted(value))
        out = dict(value)
        if rnd.random() < 0.2:
            del out[key]
        else:
            out[key] = _mutate(value[key], rnd)
        return out
    if isinstance(value, list) and value and rnd.random() < 0.8:
        i = rnd.randrange(len(value))
        return [*value[:i], _mutate(value[i], rnd), *value[i + 1 :]]
    return rnd.choice([None, 0, -1, "", "0", "x", [], {}, True, 1.5e300, [[1, 2]], {"stringValue": 5}])


@_FUZZ
@given(seed=st.integers(0, 2**32 - 1), cut=st.floats(0, 1))
def test_fuzz_mutated_fixtures(seed: int, cut: float) -> None:
    rnd = random.Random(seed)
    src = rnd.choice(_FIXTURES)
    text = src.read_text()
    fd, name = tempfile.mkstemp(suffix=src.suffix)
    try:
        with os.fdopen(fd, "w") as fh:
            if rnd.random() < 0.3:  # cut off anywhere
                fh.write(text[: int(len(text) * cut)])
            elif src.suffix == ".jsonl":
                lines = text.splitlines()
                i = rnd.randrange(len(lines))
                lines[i] = json.dumps(_mutate(json.loads(lines[i]), rnd))
                fh.write("\n".join(lines))
            elif src.suffix == ".log":  # concatenated objects: mutate one
                decoder, objs, pos = json.JSONDecoder(), [], 0
                while pos < len(text.rstrip()):
                    obj, pos = decoder.raw_decode(text, pos)
                    objs.append(obj)
                    while pos < len(text) and text[pos].isspace():
                        pos += 1
                i = rnd.randrange(len(objs))
                objs[i] = _mutate(objs[i], rnd)
                fh.write("".join(json.dumps(o, indent=2) + "\n" for o in objs))
            else:
                fh.write(json.dumps(_mutate(json.loads(text), rnd)))
        assert_loads_cleanly(name)
        assert_loads_cleanly(name, format="otel_logs")
    finally:
        os.unlink(name)


def test_numbers_out_of_range_are_dropped(tmp_path: Path) -> None:
    doc = json.loads((FIX / "claude_code_otlp_logs.json").read_text())
    for r in doc["resourceLogs"][0]["scopeLogs"][0]["logRecords"]:
        for kv in r["attributes"]:
            if kv["key"] in ("duration_ms", "cost_usd", "input_tokens"):
                kv["value"] = {"intValue": "9" * 400}
    path = tmp_path / "logs.json"
    path.write_text(json.dumps(doc))
    t = _one(path)  # and it serialises: no count beyond 64 bits is kept
    calls = [e for e in t.events if e.kind == "llm_call"]
    assert [(c.usage.cost_usd, c.usage.input_tokens) for c in calls if c.usage] == [
        (None, None),
        (None, None),
    ]
    assert all(e.tool_result.duration_ms is None for e in t.events if e.tool_result is not None)


@pytest.mark.parametrize("text", ["--5", "\u00b2", "9" * 5000])
def test_a_count_int_cannot_read_is_dropped_not_the_session(tmp_path: Path, text: str) -> None:
    """Text that str.isdigit() accepts but int() does not (a doubled sign, a superscript digit,
    more digits than Python converts) is no count; it used to raise and lose the session."""
    doc = json.loads((FIX / "claude_code_otlp_logs.json").read_text())
    for r in doc["resourceLogs"][0]["scopeLogs"][0]["logRecords"]:
        for kv in r["attributes"]:
            if kv["key"] == "input_tokens":
                kv["value"] = {"stringValue": text}
    path = tmp_path / "logs.json"
    path.write_text(json.dumps(doc))
    calls = [e for e in _one(path).events if e.kind == "llm_call"]
    assert [c.usage.input_tokens for c in calls if c.usage] == [None, None]
    assert all(c.usage and c.usage.output_tokens for c in calls)  # the rest of the usage is read


def _request(*records: dict[str, Any], service: str = "svc") -> dict[str, Any]:
    """A logs request whose records have plain-object attributes and bodies (as the ITBench decoder
    and many exporters write them)."""
    resource = {"attributes": {"service.name": service}}
    return {
        "resourceLogs": [{"resource": resource, "scopeLogs": [{"scope": {}, "logRecords": list(records)}]}]
    }


def _write(tmp_path: Path, *lines: dict[str, Any]) -> Path:
    path = tmp_path / "logs.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def test_logs_with_no_records_say_so(tmp_path: Path) -> None:
    """The otlp importer is tried after otel_logs on a file of logs requests; when both fail, the
    reason given is otel_logs' (the format the file claimed to be), not otlp's."""
    path = _write(tmp_path, _request(), {"resourceLogs": []})
    traces, errors = _load(path)
    assert traces == []
    (err,) = errors
    assert (err.reason, err.tried, err.importer) == (
        "no log records found",
        ["otel_logs", "otlp"],
        "otel_logs",
    )


def test_equal_times_keep_file_order_across_requests(tmp_path: Path) -> None:
    def rec(n: int) -> dict[str, Any]:
        attrs = {"event.name": "x.step", "session.id": "s", "n": n}
        return {"timeUnixNano": "1770000000000000000", "attributes": attrs}

    t = _one(_write(tmp_path, _request(rec(0), rec(1)), _request(rec(2))))
    assert [e.extra["n"] for e in t.events] == [0, 1, 2]


def test_event_sequence_out_of_range_does_not_stop_the_file(tmp_path: Path) -> None:
    recs = [
        {"attributes": {"event.name": "user_prompt", "session.id": "s", "event.sequence": seq, "prompt": p}}
        for seq, p in (("9" * 400, "late"), ("nan", "also late"), (1, "first"))
    ]
    t = _one(_write(tmp_path, _request(*recs, service="claude-code")))
    assert [e.content for e in t.events] == ["first", "late", "also late"]


def test_codex_call_site_event_name_is_not_the_event(tmp_path: Path) -> None:
    """Codex's Rust bridge sets eventName to the call site; event.name names the event."""
    rec = {
        "eventName": "event codex-rs/otel/src/events/session_telemetry.rs:312",
        "attributes": {"event.name": "codex.user_prompt", "conversation.id": "c", "prompt": "hi"},
    }
    t = _one(_write(tmp_path, _request(rec, service="codex_exec")))
    assert (t.framework, [(e.kind, e.content) for e in t.events]) == ("Codex", [("message", "hi")])
    assert t.task == "hi"


def test_gemini_response_text_and_claude_assistant_response(tmp_path: Path) -> None:
    answer = {
        "candidates": [{"content": {"parts": [{"text": "thinking", "thought": True}, {"text": "Done."}]}}]
    }
    gemini = [
        {"attributes": {"event.name": "gemini_cli.api_request", "session.id": "g", "model": "gemini-2.5-pro"}},
        {"attributes": {"event.name": "gemini_cli.api_response", "session.id": "g", "model": "gemini-2.5-pro",
                        "input_token_count": 10, "output_token_count": 3, "response_text": json.dumps(answer)}},
    ]  # fmt: skip
    t = _one(_write(tmp_path, _request(*gemini, service="gemini-cli")))
    assert [(e.kind, e.content) for e in t.events] == [("llm_call", None), ("message", "Done.")]
    assert t.events[0].usage is not None and t.events[0].usage.input_tokens == 10
    assert t.events[1].raw is not None and "response" not in t.events[0].extra  # the message keeps the record
    claude = {
        "body": "claude_code.assistant_response",
        "attributes": {"event.name": "assistant_response", "session.id": "c", "response": "All tests pass."},
    }
    t = _one(_write(tmp_path, _request(claude, service="claude-code")))
    assert [(e.kind, e.role, e.content) for e in t.events] == [("message", "assistant", "All tests pass.")]


def test_genai_events_read_as_otlp_reads_them(tmp_path: Path) -> None:
    """Without spans: a tool message is the result of its call, the history every call logs again is
    flagged copied, and an operation-details event is the model call with its usage."""
    tid = "4bf92f3577b34da6a3ce929d0e0e4736"
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
    }

    def ev(name: str, body: dict[str, Any]) -> dict[str, Any]:
        return {"eventName": name, "traceId": tid, "body": body}

    recs = [
        ev("gen_ai.user.message", {"content": "Weather in Oslo?"}),
        ev("gen_ai.choice", {"index": 0, "finish_reason": "tool_calls", "message": {"tool_calls": [call]}}),
        ev("gen_ai.user.message", {"content": "Weather in Oslo?"}),  # the second call's history
        ev("gen_ai.assistant.message", {"tool_calls": [call]}),
        ev("gen_ai.tool.message", {"content": "4 C, rain", "id": "c1"}),
        {
            "eventName": "gen_ai.client.inference.operation.details",
            "traceId": tid,
            "attributes": {
                "gen_ai.request.model": "gpt-4o",
                "gen_ai.response.model": "gpt-4o-2024-08-06",
                "gen_ai.usage.input_tokens": 80,
                "gen_ai.usage.cache_read.input_tokens": 64,
                "gen_ai.output.messages": json.dumps(
                    [{"role": "assistant", "parts": [{"type": "text", "content": "4 C and rain."}]}]
                ),
            },
        },
    ]
    t = _one(_write(tmp_path, _request(*recs)))
    assert [(e.kind, e.is_copied_context) for e in t.events] == [
        ("message", False), ("tool_call", False), ("message", True), ("tool_call", True),
        ("tool_result", False), ("llm_call", False), ("message", False),
    ]  # fmt: skip
    result = t.events[4]
    assert result.tool_result is not None and (result.tool_result.call_id, result.content) == (
        "c1",
        "4 C, rain",
    )
    llm = t.events[5]
    assert llm.usage is not None and (llm.usage.input_tokens, llm.usage.cached_input_tokens) == (80, 64)
    assert llm.model == t.model == "gpt-4o-2024-08-06"  # the model that answered, as otlp reads it
    assert t.extra["models"] == ["gpt-4o-2024-08-06"]
    assert t.events[6].content == "4 C and rain."
