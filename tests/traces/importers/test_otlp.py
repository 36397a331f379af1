"""OTLP/JSON importer: the real collector export plus hand-written variants (current GenAI,
OpenInference, legacy OpenLLMetry in the console-exporter layout)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from conftest import load_split, shared_path
from mastkit import load_traces
from mastkit.errors import FormatError, TraceLoadError
from mastkit.traces.importers._otlp import any_value, genai_usage, hex_id
from mastkit.traces.importers.otel_logs import OtelLogsImporter
from mastkit.traces.importers.otlp import OtlpImporter
from mastkit.traces.model import Trace
from mastkit.traces.source import HEAD_BYTES, Source

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "otlp"


_load = load_split


def _roundtrip(t: Trace) -> None:
    assert Trace.model_validate_json(t.model_dump_json()) == t


# -- the real sample ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sample() -> tuple[Path, Trace]:
    path = shared_path("trace_samples", "otlp_json", "0_OTEL-Data-agento-otlp.json")
    traces = list(load_traces(path))
    assert len(traces) == 1  # README: 1 trace
    return path, traces[0]


def test_sample_detected_and_counts(sample: tuple[Path, Trace]) -> None:
    path, t = sample
    assert t.source_format == "otlp"
    assert t.trace_id == "e27ba1417d55831a03436ba30a90ef5e"
    # README: 39 lines, 57 spans; openinference.span.kind LLM 39, AGENT 10, CHAIN 7, EVALUATOR 1
    assert len(path.read_text().splitlines()) == 39
    assert t.extra["span_count"] == 57
    assert t.extra["span_kinds"] == {"LLM": 39, "AGENT": 10, "CHAIN": 7, "EVALUATOR": 1}
    # README: span status OK 46, UNSET 11, ERROR 0
    assert t.extra["span_status"] == {"OK": 46, "UNSET": 11}
    kinds = t.kind_counts()
    assert kinds["llm_call"] == 39
    assert kinds["handoff"] == 10
    assert kinds["error"] == 0
    assert kinds["tool_call"] == 0  # README: LLM-only pipeline
    subtypes = Counter(e.subtype for e in t.events if e.kind == "system")
    assert subtypes == {"chain": 7, "evaluator": 1}
    # one assistant message per LLM span (gen_ai.response.content)
    assert kinds["message"] == 39
    assert all(e.role == "assistant" for e in t.events if e.kind == "message")
    # every span's native record is kept exactly once
    assert sum(e.raw is not None for e in t.events) == 57
    assert all(e.source is not None and e.source.line is not None for e in t.events)


def test_sample_agents_providers_usage(sample: tuple[Path, Trace]) -> None:
    path, t = sample
    # README: service agento; AGENT spans agento.pipeline*, agento.event.accepted_revision
    assert t.framework == "agento"
    assert {a.name for a in t.agents} == {
        "agento.pipeline",
        "agento.pipeline.develop_plan",
        "agento.pipeline.revise_plan",
        "agento.event.accepted_revision",
    }
    providers = {e.extra.get("provider") for e in t.events if e.kind == "llm_call"}
    assert providers == {"gemini", "openai", "anthropic"}  # legacy gen_ai.system
    assert t.model is None  # three models: no single main model
    assert set(t.extra["models"]) == {"gemini-1.5-pro", "gpt-4", "claude-3-5-sonnet-20240620"}
    # usage: per LLM span, summed equals the attributes in the file
    expected_in = expected_out = 0
    for line in path.read_text().splitlines():
        for rs in json.loads(line)["resourceSpans"]:
            for ss in rs["scopeSpans"]:
                for sp in ss["spans"]:
                    attrs = {a["key"]: a["value"] for a in sp["attributes"]}
                    if "gen_ai.usage.input_tokens" in attrs:
                        expected_in += int(attrs["gen_ai.usage.input_tokens"]["intValue"])
                        expected_out += int(attrs["gen_ai.usage.output_tokens"]["intValue"])
    total = t.total_usage()
    assert (total.input_tokens, total.output_tokens) == (expected_in, expected_out)
    # LLM spans nested under an agent inherit its actor
    assert all(e.actor for e in t.events if e.kind == "llm_call")
    assert t.task and t.task.startswith("I need the design and build requirements")
    assert t.started_at is not None and t.ended_at is not None and t.started_at < t.ended_at


def test_sample_order_follows_tree(sample: tuple[Path, Trace]) -> None:
    _, t = sample
    first = t.events[0]
    assert first.kind == "handoff" and first.actor == "agento.pipeline"
    # the root span is on line 1 but its children come from many lines: order comes from the tree
    seqs = [e.seq for e in t.events]
    assert seqs == list(range(len(t.events)))
    _roundtrip(t)


# -- current OTel GenAI conventions --------------------------------------------------------------


def test_current_genai_tool_calls_and_bad_line() -> None:
    traces, errors = _load(FIX / "genai_current_tools.jsonl")
    assert [e.line for e in errors] == [2]  # cut-off line reported, the rest loads
    assert len(traces) == 2
    t = traces[0]
    assert t.source_format == "otlp"
    assert t.trace_id == "5b8efff798038103d269b633813fc60c"
    # spans of one trace spread over lines 1 and 4 (children before their parent)
    assert t.events[0].kind == "handoff" and t.events[0].actor == "weather_agent"
    assert [a.name for a in t.agents] == ["weather_agent"]
    agent = t.agents[0]
    assert agent.role_description == "Answers weather questions"
    assert agent.system_prompt == "You are a weather assistant. Use tools."
    kinds = [e.kind for e in t.events]
    assert kinds == [
        "handoff", "message", "message", "llm_call", "reasoning", "tool_call", "tool_result", "llm_call",
        "message",
    ]  # fmt: skip
    # the tool call is announced by the model and executed by execute_tool: one tool_call event
    pairs = list(t.tool_calls())
    assert len(pairs) == 1
    call, result = pairs[0]
    assert call.tool_call is not None and call.tool_call.name == "get_weather"
    assert call.tool_call.call_id == "call_w1" and call.tool_call.arguments == {"city": "Oslo"}
    assert result is not None and result.tool_result is not None
    assert result.tool_result.output == "rain, 4°C" and result.tool_result.call_id == "call_w1"
    assert result.tool_result.duration_ms == pytest.approx(190.0)
    # the second call re-sends system/user/assistant/tool history: not repeated as new events
    assert sum(1 for e in t.events if e.role == "user") == 1
    second = [e for e in t.events if e.kind == "llm_call"][1]
    assert second.extra["copied_input_messages"] == 4
    assert not any(e.is_copied_context for e in t.events)
    first_call = next(e for e in t.events if e.kind == "llm_call")
    assert first_call.usage is not None
    assert (first_call.usage.input_tokens, first_call.usage.output_tokens) == (120, 30)
    assert first_call.usage.cached_input_tokens == 100
    assert first_call.model == "gpt-4.1-2025-04-14"
    assert t.task == "What's the weather in Oslo?"
    assert t.framework == "openai_agents"  # opentelemetry.instrumentation.<name> scope
    for tr in traces:
        _roundtrip(tr)


def test_snake_case_base64_ids_and_tool_error() -> None:
    traces, _ = _load(FIX / "genai_current_tools.jsonl")
    t = traces[1]
    assert t.trace_id == "0af7651916cd43dd8448eb211c80319c"  # base64 id decoded to hex
    assert t.events[0].id == "b000000000000001"
    result = next(e for e in t.events if e.kind == "tool_result")
    assert result.tool_result is not None and result.tool_result.is_error is True
    errors = [e for e in t.events if e.kind == "error"]
    assert [e.content for e in errors] == ["permission denied", "tool failed"]
    assert t.termination is not None
    assert (t.termination.reason, t.termination.by, t.termination.native) == ("error", "error", "tool failed")
    assert t.termination.at_seq == errors[-1].seq
    assert t.model == "claude-sonnet-4"


# -- OpenInference -------------------------------------------------------------------------------


def test_openinference_tool_spans() -> None:
    (t,) = list(load_traces(FIX / "openinference_tools.json"))
    assert t.source_format == "otlp"
    assert t.framework == "openai"  # openinference.instrumentation.openai
    assert t.model == "gpt-4o-mini"
    # TOOL spans without ids are matched by name to the calls the LLM announced
    pairs = [(c.tool_call.name, c.tool_call.call_id, r.tool_result.output) for c, r in t.tool_calls()]  # type: ignore[union-attr]
    assert pairs[:2] == [
        ("lookup_population", "call_p1", "522000"),
        ("lookup_population", "call_p2", "227000"),
    ]
    # a TOOL span nobody announced gets its own call (id = span id); a RETRIEVER too
    assert pairs[2] == ("calculator", "c000000000000006", "749000")
    assert pairs[3][0] == "retrieve_docs" and "Lille has 227k" in (pairs[3][2] or "")
    assert t.kind_counts()["tool_call"] == 4 and t.kind_counts()["tool_result"] == 4
    calc = next(
        e for e in t.events if e.kind == "tool_call" and e.tool_call and e.tool_call.name == "calculator"
    )
    assert calc.tool_call is not None and calc.tool_call.arguments == {"expr": "522000+227000"}
    # re-sent history (system, user, assistant tool calls, 2 tool results) skipped on the second call
    calls = [e for e in t.events if e.kind == "llm_call"]
    assert calls[1].extra["copied_input_messages"] == 5
    assert calls[0].usage is not None and calls[0].usage.total_tokens == 250
    assert [e.role for e in t.events if e.kind == "message"] == ["system", "user", "assistant"]
    assert t.outcome is not None
    assert t.outcome.final_output == "Lyon and Lille together have about 749,000 inhabitants."
    assert t.agents[0].name == "ResearchAgent"
    _roundtrip(t)


# -- legacy gen_ai.* in the console-exporter flat layout -----------------------------------------


def test_legacy_console_spans() -> None:
    (t,) = list(load_traces(FIX / "legacy_console_spans.json"))
    assert t.source_format == "otlp"
    assert t.trace_id == "9e5d0a1b2c3d4e5f60718293a4b5c6d7"  # 0x prefix dropped
    assert t.framework == "legacy-app"
    assert t.events[0].kind == "system" and t.events[0].subtype == "chain"  # traceloop workflow
    call = next(e for e in t.events if e.kind == "tool_call")
    assert call.tool_call is not None
    assert (call.tool_call.name, call.tool_call.call_id, call.tool_call.arguments) == (
        "search_flights",
        "call_f1",
        {"to": "FCO"},
    )
    pairs = list(t.tool_calls())
    assert len(pairs) == 1 and pairs[0][1] is not None
    llm = [e for e in t.events if e.kind == "llm_call"]
    assert llm[0].usage is not None
    assert (llm[0].usage.input_tokens, llm[0].usage.output_tokens, llm[0].usage.total_tokens) == (45, 17, 62)
    assert llm[0].extra["provider"] == "OpenAI"
    assert llm[1].extra["copied_input_messages"] == 4
    err = next(e for e in t.events if e.kind == "error")
    assert err.content == "RateLimitError: 429"
    assert err.seq == len(t.events) - 1
    assert t.termination is None  # the failing span is not the root
    assert t.task == "Book me a flight to Rome."
    assert t.started_at is not None and t.started_at.isoformat() == "2026-01-01T13:00:00+00:00"
    _roundtrip(t)


# -- the bundled examples (evaluation events give the outcome) ----------------------------------


@pytest.mark.parametrize(
    ("name", "success"),
    [("08_otlp_sre_checks_pod_not_errors.json", False), ("09_otlp_sre_rollback_verified.json", True)],
)
def test_bundled_examples(name: str, success: bool) -> None:
    path = Path(__file__).resolve().parents[3] / "src" / "mastkit" / "examples" / name
    manifest = json.loads((path.parent / "manifest.json").read_text())
    (t,) = list(load_traces(path))
    assert t.source_format == "otlp"
    assert t.outcome is not None and t.outcome.success is success
    assert t.outcome.metrics["incident_resolved"]["label"] == ("pass" if success else "fail")
    entries = (
        manifest if isinstance(manifest, list) else next(v for v in manifest.values() if isinstance(v, list))
    )
    assert next(e for e in entries if e["file"] == name)["success"] is success
    assert [a.name for a in t.agents] == ["sre-remediator"]
    assert t.kind_counts()["tool_call"] == 4 and len(list(t.tool_calls())) == 4
    assert all(r is not None for _c, r in t.tool_calls())
    _roundtrip(t)


# -- span events, malformed input, edge cases ---------------------------------------------------


def _kv(d: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"key": k, "value": {"stringValue": v}} for k, v in d.items()]


def _req(*spans: dict[str, Any]) -> dict[str, Any]:
    return {
        "resourceSpans": [
            {"resource": {"attributes": []}, "scopeSpans": [{"scope": {}, "spans": list(spans)}]}
        ]
    }


def _sp(sid: str, parent: str | None = None, **kw: Any) -> dict[str, Any]:
    sp: dict[str, Any] = {
        "traceId": "11111111111111111111111111111111",
        "spanId": sid,
        "name": kw.pop("name", "span"),
        "startTimeUnixNano": str(1767261600000000000 + int(sid[-2:], 16) * 1000),
        "endTimeUnixNano": str(1767261600000000000 + int(sid[-2:], 16) * 1000 + 500),
        "attributes": kw.pop("attributes", []),
    }
    if parent:
        sp["parentSpanId"] = parent
    sp.update(kw)
    return sp


def test_genai_span_events(tmp_path: Path) -> None:
    span = _sp(
        "00000000000000a1",
        name="chat gpt-4o",
        attributes=_kv({"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o"}),
        events=[
            {"name": "gen_ai.system.message", "attributes": _kv({"content": "Be brief."})},
            {"name": "gen_ai.user.message", "attributes": _kv({"content": "Hi"})},
            {
                "name": "gen_ai.choice",
                "attributes": _kv(
                    {
                        "message": json.dumps(
                            {
                                "role": "assistant",
                                "tool_calls": [{"id": "c1", "function": {"name": "f", "arguments": "{}"}}],
                            }
                        )
                    }
                ),
            },
        ],
    )
    path = tmp_path / "events.json"
    path.write_text(json.dumps(_req(span)))
    (t,) = list(load_traces(path))
    assert [(e.kind, e.role) for e in t.events] == [
        ("message", "system"),
        ("message", "user"),
        ("llm_call", None),
        ("tool_call", "assistant"),
    ]
    assert t.events[3].tool_call is not None and t.events[3].tool_call.call_id == "c1"


def test_parent_cycle_and_duplicate_spans(tmp_path: Path) -> None:
    a = _sp("00000000000000a1", "00000000000000a2", name="a")
    b = _sp("00000000000000a2", "00000000000000a1", name="b")
    path = tmp_path / "cycle.jsonl"
    path.write_text("\n".join(json.dumps(_req(x)) for x in (a, b, a)) + "\n")
    (t,) = list(load_traces(path))
    assert len(t.events) == 2  # both spans once, duplicate dropped, cycle broken
    assert t.raw["duplicate_spans"] == 1


def test_a_span_that_is_its_own_parent_is_a_root_in_start_order(tmp_path: Path) -> None:
    # the self-reference is dropped when the span is read (its event has no parent); each such
    # span is a root, walked in start-time order (the walk's own rule is tested in test_openai_agents)
    spans = [
        _sp("00000000000000a3", "00000000000000a3", name="late self-parent"),
        _sp("00000000000000a2", name="root"),
        _sp("00000000000000a1", "00000000000000a1", name="early self-parent"),
    ]
    path = tmp_path / "self.jsonl"
    path.write_text("\n".join(json.dumps(_req(x)) for x in spans) + "\n")
    (t,) = list(load_traces(path))
    assert [(e.extra["span_name"], e.parent_id) for e in t.events] == [
        ("early self-parent", None),
        ("root", None),
        ("late self-parent", None),
    ]


def test_unknown_openinference_history_flagged(tmp_path: Path) -> None:
    attrs = {
        "openinference.span.kind": "LLM",
        "llm.input_messages.0.message.role": "user",
        "llm.input_messages.0.message.content": "Earlier question",
        "llm.input_messages.1.message.role": "assistant",
        "llm.input_messages.1.message.content": "Earlier answer from a previous run",
        "llm.input_messages.2.message.role": "user",
        "llm.input_messages.2.message.contents.0.message_content.type": "text",
        "llm.input_messages.2.message.contents.0.message_content.text": "Follow-up",
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.content": "Answer",
    }
    path = tmp_path / "oi.json"
    path.write_text(json.dumps(_req(_sp("00000000000000b1", attributes=_kv(attrs)))))
    (t,) = list(load_traces(path))
    copied = [e for e in t.events if e.is_copied_context]
    assert [e.content for e in copied] == ["Earlier answer from a previous run"]
    assert [e.content for e in t.events if e.role == "user"] == ["Earlier question", "Follow-up"]


def test_malformed_inputs(tmp_path: Path) -> None:
    imp = OtlpImporter()
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"resourceSpans": "nope"}))
    with pytest.raises(FormatError, match="not a list"):
        list(imp.load(Source(bad)))
    noid = tmp_path / "noid.json"
    noid.write_text(json.dumps(_req({"name": "x", "traceId": "11" * 16})))
    with pytest.raises(FormatError, match="no traceId/spanId"):
        list(imp.load(Source(noid)))
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"hello": "world"}))
    with pytest.raises(FormatError):
        list(imp.load(Source(other)))
    # a bad item in the middle of a list: reported, the rest still loads
    mixed = tmp_path / "mixed.json"
    good = _req(_sp("00000000000000c1", name="ok"))
    mixed.write_text(
        json.dumps([good, {"resourceSpans": [{"scopeSpans": [{"spans": [{"name": 1}]}]}]}, good])
    )
    items = list(imp.load(Source(mixed)))
    errs = [i for i in items if isinstance(i, TraceLoadError)]
    traces = [i for i in items if isinstance(i, Trace)]
    assert len(errs) == 1 and "item 1" in errs[0].reason
    assert len(traces) == 1 and traces[0].raw["duplicate_spans"] == 1
    # through the public loader, a non-OTLP file is never claimed by this importer
    assert imp.sniff(Source(other)) == 0.0


def test_sniff_is_specific() -> None:
    imp = OtlpImporter()
    assert imp.sniff(Source(FIX / "genai_current_tools.jsonl")) >= 0.9
    assert imp.sniff(Source(FIX / "legacy_console_spans.json")) >= 0.8
    agents = FIX.parent / "openai_agents" / "single_trace.json"
    assert imp.sniff(Source(agents)) == 0.0


def test_any_value_and_ids() -> None:
    assert any_value({"intValue": "42"}) == 42
    assert any_value({"doubleValue": 0.5}) == 0.5
    assert any_value({"boolValue": False}) is False
    assert any_value({"bytesValue": "AQI="}) == "AQI="
    assert any_value({"arrayValue": {"values": [{"stringValue": "a"}, {"intValue": "1"}]}}) == ["a", 1]
    kv = {"kvlistValue": {"values": [{"key": "k", "value": {"stringValue": "v"}}]}}
    assert any_value(kv) == {"k": "v"}
    assert any_value({}) is None
    assert hex_id("W47/95gDgQPSabYzgT/GDA==") == "5b8eff f798038103d269b633813fc60c".replace(" ", "")
    assert hex_id("0x00f067aa0ba902b7") == "00f067aa0ba902b7"
    assert hex_id("0000000000000000") is None
    assert hex_id("") is None


# -- other producers' variants -----------------------------------------------------------------


def _one(path: Path) -> Trace:
    traces, errors = _load(path)
    assert not errors and len(traces) == 1
    _roundtrip(traces[0])
    return traces[0]


def _calls_and_results(t: Trace) -> tuple[list[tuple[str, Any, Any]], list[tuple[Any, Any]]]:
    calls = [(e.tool_call.name, e.tool_call.call_id, e.tool_call.arguments) for e in t.events if e.tool_call]
    results = [(e.tool_result.call_id, e.tool_result.output) for e in t.events if e.tool_result]
    return calls, results


def test_pydantic_ai_legacy_attributes() -> None:
    # pydantic-ai before the gen_ai.input.messages conventions: "agent run" span (agent_name,
    # final_result), chat spans with an `events` JSON attribute, "running tool" with tool_arguments/
    # tool_response.
    t = _one(FIX / "pydantic_ai_legacy.jsonl")
    start = t.events[0]
    assert (start.kind, start.subtype, start.actor) == ("handoff", "agent_start", "weather_agent")
    assert t.task == "Weather in Oslo?"
    assert [e.content for e in t.events if e.kind == "message" and e.role == "system"] == ["Be brief."]
    calls, results = _calls_and_results(t)
    assert calls == [("get_weather", "call_1", {"city": "Oslo"})]  # announced by the model, not repeated
    assert results == [("call_1", "rainy, 9C")]
    assert [e.content for e in t.events if e.kind == "message" and e.role == "assistant"] == [
        "Oslo: rainy, 9C."
    ]
    assert t.outcome is not None and t.outcome.final_output == "Oslo: rainy, 9C."
    assert {e.actor for e in t.events if e.kind == "llm_call"} == {"weather_agent"}


def test_strands_legacy_span_events() -> None:
    # Strands: span events whose content is a JSON list of Bedrock content blocks (text, toolUse,
    # toolResult); execute_tool spans carry input/result only in events.
    t = _one(FIX / "strands_legacy.json")
    assert t.task == "What is 6*7?"
    calls, results = _calls_and_results(t)
    assert calls == [("calculator", "tooluse_A1", {"expression": "6*7"})]
    assert results == [("tooluse_A1", "42")]
    texts = [e.content for e in t.events if e.kind == "message" and e.role == "assistant"]
    assert texts == ["Let me compute.", "6*7 = 42"]  # no raw JSON block text
    assert not any(e.content and e.content.startswith("[{") for e in t.events)
    assert t.outcome is not None and t.outcome.final_output == "6*7 = 42"  # agent span gen_ai.choice


def test_strands_latest_operation_details_tool_span(tmp_path: Path) -> None:
    t = _one(FIX / "strands_latest.json")
    calls, results = _calls_and_results(t)
    assert calls == [("shell", "t1", {"cmd": "ls"})]
    assert results == [("t1", "a.txt b.txt")]
    # a tool span alone: arguments and result come from its events
    doc = json.loads((FIX / "strands_latest.json").read_text())
    spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
    doc["resourceSpans"][0]["scopeSpans"][0]["spans"] = [
        s for s in spans if s["name"].startswith("execute_tool")
    ]
    path = tmp_path / "tool_only.json"
    path.write_text(json.dumps(doc))
    calls, results = _calls_and_results(_one(path))
    assert calls == [("shell", "t1", {"cmd": "ls"})] and results == [("t1", "a.txt b.txt")]


def test_google_adk_attributes() -> None:
    t = _one(FIX / "adk.json")
    assert t.task == "Roll a d6"
    assert [e.content for e in t.events if e.subtype == "system_prompt"] == ["You are a dice agent."]
    calls, results = _calls_and_results(t)
    assert calls == [("roll_die", "adk-1", {"sides": 6})]  # Gemini function_call part in llm_response
    assert results == [("adk-1", '{"result": 4}')]  # the tool span's result; re-sent history skipped
    assert [e.content for e in t.events if e.kind == "message" and e.role == "assistant"] == [
        "You rolled a 4."
    ]
    assert t.model == "gemini-2.0-flash"


def test_jaeger_query_json() -> None:
    path = FIX / "jaeger.json"
    assert OtlpImporter().sniff(Source(path)) >= 0.9
    t = _one(path)
    assert t.trace_id == "4bf92f3577b34da6a3ce929d0e0e4736"
    assert t.framework == "smolagents"  # otel.scope.name tag
    assert t.kind_counts() == Counter(
        {"handoff": 1, "message": 1, "llm_call": 1, "tool_call": 1, "tool_result": 1, "error": 1}
    )
    llm = next(e for e in t.events if e.kind == "llm_call")
    assert llm.usage is not None and (llm.usage.input_tokens, llm.usage.output_tokens) == (11, 7)
    first = next(e for e in t.events if e.id == "00f067aa0ba902b8")  # the chat span's first event
    assert first.parent_id == "00f067aa0ba902b7"  # CHILD_OF reference
    assert isinstance(first.raw, dict) and first.raw["operationName"] == "chat gpt-4o-mini"  # native span
    res = next(e for e in t.events if e.tool_result)
    assert (
        res.tool_result is not None and res.tool_result.is_error is True and res.tool_result.call_id == "c1"
    )
    err = next(e for e in t.events if e.kind == "error")
    assert err.content == "timeout" and err.extra["type"] == "TimeoutError"
    assert t.started_at is not None and t.started_at.year == 2024
    assert t.raw["resources"][0]["service.name"] == "trip-planner"


@pytest.mark.parametrize("wrapper", ["result", "trace"])
def test_query_api_wrappers(tmp_path: Path, wrapper: str) -> None:
    # Jaeger v2 /api/v3/traces -> {"result": request}; Tempo /api/v2/traces/<id> -> {"trace": request}
    line = (FIX / "genai_current_tools.jsonl").read_text().splitlines()[0]
    path = tmp_path / f"{wrapper}.json"
    path.write_text(json.dumps({wrapper: json.loads(line)}))
    assert OtlpImporter().sniff(Source(path)) >= 0.9
    traces, errors = _load(path)
    plain = tmp_path / "plain.json"
    plain.write_text(line)
    expected, _ = _load(plain)
    # the same spans as the request itself, only pointed at through the wrapper
    assert not errors and [t.kind_counts() for t in traces] == [t.kind_counts() for t in expected]
    assert [e.text() for e in traces[0].events] == [e.text() for e in expected[0].events]
    assert traces[0].events[0].source is not None and f"/{wrapper}/" in str(
        traces[0].events[0].source.pointer
    )


# -- review fixes -------------------------------------------------------------------------------


def _flat(tmp_path: Path, spans: list[dict[str, Any]]) -> Path:
    path = tmp_path / "spans.json"
    path.write_text(json.dumps({"spans": spans}))
    return path


def _flat_span(
    name: str, attrs: dict[str, Any], events: list[tuple[str, dict[str, Any]]] | None = None
) -> dict[str, Any]:
    return {
        "traceId": "ab" * 16, "spanId": "cd" * 8, "name": name,
        "startTimeUnixNano": "1700000000000000000", "endTimeUnixNano": "1700000001000000000",
        "attributes": attrs, "events": [{"name": n, "attributes": a} for n, a in events or []],
    }  # fmt: skip


def test_agent_name_attribute_alone_does_not_make_an_agent_span(tmp_path: Path) -> None:
    # a custom `agent_name` attribute on an OpenLLMetry LLM span (no operation name): still an LLM call
    attrs = {
        "agent_name": "planner", "gen_ai.request.model": "gpt-4o", "gen_ai.prompt.0.role": "user",
        "gen_ai.prompt.0.content": "plan it", "gen_ai.completion.0.role": "assistant",
        "gen_ai.completion.0.content": "the plan",
    }  # fmt: skip
    [t] = _load(_flat(tmp_path, [_flat_span("openai.chat", attrs)]))[0]
    assert [(e.kind, e.content) for e in t.events if e.kind != "llm_call"] == [
        ("message", "plan it"),
        ("message", "the plan"),
    ]
    assert {e.actor for e in t.events if e.kind in ("llm_call", "message") and e.role == "assistant"} == {
        "planner"
    }
    assert t.kind_counts()["handoff"] == 0


def test_event_json_list_that_is_not_content_blocks_stays_text(tmp_path: Path) -> None:
    # a tool output / answer that is a JSON list of records is not a list of Strands content blocks
    records = json.dumps([{"title": "A", "url": "http://a"}, {"title": "B", "url": "http://b"}])
    answer = json.dumps([{"name": "x", "score": 1}])
    events = [
        ("gen_ai.user.message", {"content": "find"}),
        ("gen_ai.tool.message", {"id": "c1", "content": records}),
        ("gen_ai.choice", {"message": answer}),
    ]
    chat = _flat_span("chat", {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"}, events)
    [t] = _load(_flat(tmp_path, [chat]))[0]
    assert [e.tool_result.output for e in t.events if e.tool_result] == [records]
    assert [e.content for e in t.events if e.kind == "message" and e.role == "assistant"] == [answer]


def test_pydantic_ai_thinking_parts_are_reasoning(tmp_path: Path) -> None:
    # pydantic-ai event bodies: assistant content [{kind: thinking, text}, {kind: text, text}]
    events = [
        {"role": "user", "content": "hi", "event.name": "gen_ai.user.message"},
        {
            "index": 0, "event.name": "gen_ai.choice",
            "message": {"role": "assistant", "content": [{"kind": "thinking", "text": "greet back"},
                                                         {"kind": "text", "text": "hello"}]},
        },
    ]  # fmt: skip
    chat = _flat_span("chat m", {"gen_ai.operation.name": "chat", "events": json.dumps(events)})
    [t] = _load(_flat(tmp_path, [chat]))[0]
    assert [(e.kind, e.content) for e in t.events if e.role == "assistant"] == [
        ("reasoning", "greet back"),
        ("message", "hello"),
    ]


def _jaeger_trace(tid: str, start: Any) -> dict[str, Any]:
    span = {
        "traceID": tid, "spanID": "00f067aa0ba902b9", "operationName": "work", "references": [],
        "startTime": start, "duration": "inf", "tags": [], "processID": "p1",
        "logs": [{"timestamp": "nan", "fields": [{"key": "event", "type": "string", "value": "tick"}]}],
    }  # fmt: skip
    return {"traceID": tid, "spans": [span], "processes": {"p1": {"serviceName": "svc", "tags": []}}}


def test_an_unreadable_span_is_reported_and_the_rest_loads(tmp_path: Path) -> None:
    # one request holding two traces and two spans that cannot be read (no span id; not an
    # object): each is a TraceLoadError naming where it is, and both traces still load
    other = _sp("00000000000000c1", traceId="22" * 16)
    request = _req(_sp("00000000000000a1"), {"name": "x", "traceId": "11" * 16}, "oops", other)
    path = tmp_path / "request.json"
    path.write_text(json.dumps(request))
    traces, errors = _load(path)
    assert sorted(t.trace_id for t in traces) == ["11" * 16, "22" * 16]
    spans = "/resourceSpans/0/scopeSpans/0/spans"
    assert [e.reason for e in errors] == [
        f"span at {spans}/1 has no traceId/spanId",
        f"span at {spans}/2 is not an object",
    ]
    # in JSONL, a bad span is reported with its line; a line with no readable span is one error
    lines = [_req(_sp("00000000000000a1")), _req(_sp("00000000000000a2"), 7), _req("oops", 8)]
    jsonl = tmp_path / "requests.jsonl"
    jsonl.write_text("\n".join(json.dumps(r) for r in lines) + "\n")
    traces, errors = _load(jsonl)
    assert [len(t.events) for t in traces] == [2]
    assert [(e.line, e.reason) for e in errors] == [
        (2, f"span at {spans}/1 is not an object"),
        (3, f"span at {spans}/0 is not an object (and 1 other unreadable record)"),
    ]
    three = tmp_path / "three.json"
    three.write_text(json.dumps([_req(_sp("00000000000000a1")), _req("oops", 8, None)]))
    traces, errors = _load(three)
    assert len(traces) == 1
    assert [e.reason for e in errors] == [
        f"item 1: span at /1{spans}/0 is not an object (and 2 other unreadable records)"
    ]
    # a record whose structure is wrong is one error: its spans (readable or not) are not loaded
    broken = _req("oops")
    broken["resourceSpans"][0]["scopeSpans"].append("not a scope")
    two = tmp_path / "two.json"
    two.write_text(json.dumps([_req(_sp("00000000000000a1")), broken]))
    traces, errors = _load(two)
    assert len(traces) == 1
    assert [e.reason for e in errors] == ["item 1: resourceSpans[0].scopeSpans[1] is not an object"]


def test_jaeger_bad_times_and_a_bad_trace(tmp_path: Path) -> None:
    # non-finite µs times are dropped (they raised ValueError/OverflowError); one bad trace of a
    # Jaeger file is a TraceLoadError and the other traces still load
    doc = {"data": [_jaeger_trace("a" * 32, "nan"), "oops", _jaeger_trace("b" * 32, 1700000000000000)]}
    path = tmp_path / "jaeger.json"
    path.write_text(json.dumps(doc))
    traces, errors = _load(path)
    assert [t.trace_id for t in traces] == ["a" * 32, "b" * 32]
    assert [e.reason for e in errors] == ["data[1] is not a Jaeger trace object"]
    assert traces[0].started_at is None and traces[1].started_at is not None
    assert traces[1].ended_at == traces[1].started_at  # duration "inf" ignored


def test_query_wrapper_needs_a_request_inside(tmp_path: Path) -> None:
    # {"result": {"batches": ...}} is only Tempo data when the batches hold scope spans
    path = tmp_path / "jobs.json"
    path.write_text(json.dumps({"result": {"batches": [{"id": 1, "status": "done"}]}}))
    assert OtlpImporter().sniff(Source(path)) == 0.0


# -- Vercel AI SDK (experimental_telemetry) -------------------------------------------------------
# Hand-written from the AI SDK telemetry docs and source (not captured files): 4.x generateText with
# `args`/`result` and `ai.usage.promptTokens`; 5.x streamText with `input`, `output: {type, value}`,
# `ai.usage.inputTokens`, a failing tool span and `ai.stream.*` span events.


def _no_duplicate_content(t: Trace) -> None:
    seen = Counter((e.kind, e.role, e.content) for e in t.events if e.kind == "message")
    assert all(n == 1 for n in seen.values()), seen
    ids = Counter(e.tool_call.call_id for e in t.events if e.tool_call)
    assert all(n == 1 for n in ids.values()), ids


def test_vercel_ai_v4_generate_text() -> None:
    path = FIX / "vercel_ai_v4_generate_text.json"
    assert OtlpImporter().sniff(Source(path)) >= 0.9
    t = _one(path)
    assert [(e.kind, e.subtype, e.role) for e in t.events] == [
        ("handoff", "agent_start", None),  # ai.generateText with telemetry functionId
        ("message", "system_prompt", "system"),
        ("message", None, "user"),
        ("llm_call", None, None),
        ("tool_call", None, "assistant"),  # from ai.response.toolCalls; the ai.toolCall span adds none
        ("tool_result", None, "tool"),
        ("llm_call", None, None),  # step 2: its four prompt messages are re-sent history
        ("message", None, "assistant"),
    ]
    _no_duplicate_content(t)
    assert [a.name for a in t.agents] == ["weather-assistant"]
    assert t.agents[0].system_prompt == "You are a weather assistant. Answer in one sentence."
    # every kind is there (a subset test would pass on none), and none is missing its actor
    actors = {
        e.kind: e.actor
        for e in t.events
        if e.kind in ("llm_call", "tool_call", "message") and e.role != "user"
    }
    assert set(actors) == {"llm_call", "tool_call", "message"}
    assert {
        (e.kind, e.role, e.actor)
        for e in t.events
        if e.kind in ("llm_call", "tool_call", "message") and e.role != "user"
    } == {
        ("message", "system", "system"),
        ("llm_call", None, "weather-assistant"),
        ("tool_call", "assistant", "weather-assistant"),
        ("message", "assistant", "weather-assistant"),
    }
    assert t.task == "What is the weather in Paris?"
    (call, result), *rest = list(t.tool_calls())
    assert not rest and call.tool_call is not None and result is not None and result.tool_result is not None
    assert (call.tool_call.name, call.tool_call.call_id) == ("getWeather", "call_8Zk1")
    assert call.tool_call.arguments == {"city": "Paris"}
    assert call.tool_call.arguments_raw == '{"city":"Paris"}'
    assert result.tool_result.output == '{"tempC":18,"sky":"cloudy"}'
    # usage per doGenerate span, counted once (the ai.generateText totals are not added again)
    llm = [e for e in t.events if e.kind == "llm_call"]
    assert [(e.usage.input_tokens, e.usage.output_tokens) for e in llm if e.usage] == [(120, 18), (130, 22)]
    total = t.total_usage()
    assert (total.input_tokens, total.output_tokens) == (250, 40)
    assert llm[1].extra["copied_input_messages"] == 4
    assert llm[0].extra["provider"] == "openai.chat" and llm[0].extra["finish_reasons"] == ["tool-calls"]
    assert t.model == "gpt-4o-mini-2024-07-18"
    assert t.outcome is not None and t.outcome.final_output == "It is 18°C and cloudy in Paris right now."
    assert t.extra["ai_sdk"] == {
        "function_ids": ["weather-assistant"],
        "metadata": {"userId": "user-42", "sessionId": "sess-7"},
    }
    assert t.extra["span_kinds"] == {"ai.generateText": 1, "ai.generateText.doGenerate": 2, "ai.toolCall": 1}
    assert sum(e.raw is not None for e in t.events) == 4  # every span kept once


def test_vercel_ai_v5_stream_text_tool_error() -> None:
    t = _one(FIX / "vercel_ai_v5_stream_text.json")
    assert t.kind_counts() == Counter(
        {"system": 1, "message": 3, "llm_call": 2, "tool_call": 1, "tool_result": 1, "error": 1}
    )
    _no_duplicate_content(t)
    assert t.agents == []  # no functionId: the streamText span is a plain wrapper
    outer = t.events[0]
    assert (outer.kind, outer.subtype, outer.content) == ("system", "chain", "ai.streamText")
    texts = [e.content for e in t.events if e.kind == "message" and e.role == "assistant"]
    assert texts == ["Let me read it.", "I could not find notes.txt, so there is nothing to summarise."]
    calls, results = _calls_and_results(t)
    assert calls == [("readFile", "toolu_01R", {"path": "notes.txt"})]  # 5.x `input`
    assert results == [("toolu_01R", None)]  # the tool threw: no ai.toolCall.result
    pairs = list(t.tool_calls())
    assert len(pairs) == 1 and pairs[0][1] is not None and pairs[0][1].tool_result is not None
    assert pairs[0][1].tool_result.is_error is True
    err = next(e for e in t.events if e.kind == "error")
    assert err.content == "ENOENT: no such file or directory, open 'notes.txt'"
    assert err.extra["type"] == "Error"
    total = t.total_usage()
    assert (total.input_tokens, total.output_tokens, total.cached_input_tokens) == (610, 49, 256)
    assert t.model == "claude-3-5-haiku-20241022"
    assert t.termination is None  # only the tool span failed
    assert t.outcome is not None and t.outcome.final_output == texts[-1]


def _vercel_doc(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((FIX / name).read_text())
    return doc


def _vercel_spans(doc: dict[str, Any]) -> list[dict[str, Any]]:
    spans: list[dict[str, Any]] = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
    return spans


def test_vercel_ai_outer_span_alone_is_the_model_call(tmp_path: Path) -> None:
    # a partial export with only the ai.generateText span: its ai.prompt / ai.response.* are the call
    doc = _vercel_doc("vercel_ai_v4_generate_text.json")
    spans = _vercel_spans(doc)
    spans[:] = [s for s in spans if s["name"] == "ai.generateText"]
    path = tmp_path / "outer.json"
    path.write_text(json.dumps(doc))
    t = _one(path)
    assert [(e.kind, e.role) for e in t.events] == [
        ("message", "system"),
        ("message", "user"),
        ("llm_call", None),
        ("message", "assistant"),
    ]
    llm = t.events[2]
    assert llm.model == "gpt-4o-mini"  # ai.model.id
    assert llm.usage is not None and (llm.usage.input_tokens, llm.usage.output_tokens) == (250, 40)
    assert llm.actor == "weather-assistant"


def test_vercel_ai_v3_result_attributes_and_object(tmp_path: Path) -> None:
    # 3.x wrote ai.result.text / ai.result.toolCalls / ai.finishReason; generateObject writes
    # ai.response.object; an exporter that drops ai.operationId is recognised by the span name
    doc = _vercel_doc("vercel_ai_v4_generate_text.json")
    spans = _vercel_spans(doc)
    for s in spans:
        attrs = s["attributes"]
        for kv in attrs:
            kv["key"] = {
                "ai.response.text": "ai.result.text",
                "ai.response.toolCalls": "ai.result.toolCalls",
                "ai.response.finishReason": "ai.finishReason",
            }.get(kv["key"], kv["key"])
        s["attributes"] = [kv for kv in attrs if kv["key"] != "ai.operationId"]
    path = tmp_path / "v3.json"
    path.write_text(json.dumps(doc))
    t = _one(path)
    calls, results = _calls_and_results(t)
    assert calls == [("getWeather", "call_8Zk1", {"city": "Paris"})]
    assert results == [("call_8Zk1", '{"tempC":18,"sky":"cloudy"}')]
    assert [e.content for e in t.events if e.kind == "message" and e.role == "assistant"] == [
        "It is 18°C and cloudy in Paris right now."
    ]
    obj = {
        "traceId": "c" * 32,
        "spanId": "c" * 16,
        "name": "ai.generateObject.doGenerate",
        "attributes": {
            "ai.operationId": "ai.generateObject.doGenerate",
            "ai.model.id": "gpt-4o",
            "ai.prompt.messages": json.dumps(
                [{"role": "user", "content": [{"type": "text", "text": "A cat?"}]}]
            ),
            "ai.response.object": '{"name":"Tom","age":3}',
            "ai.usage.promptTokens": 9,
            "ai.usage.completionTokens": 7,
        },
    }
    path = tmp_path / "object.json"
    path.write_text(json.dumps([obj]))
    t = _one(path)
    assert [(e.kind, e.content) for e in t.events if e.kind == "message"] == [
        ("message", "A cat?"),
        ("message", '{"name":"Tom","age":3}'),
    ]
    assert t.total_usage().input_tokens == 9 and t.model == "gpt-4o"


# -- Langfuse (OTel-based SDK v3 attributes) -------------------------------------------------------


def test_langfuse_v3_observations() -> None:
    # hand-written from langfuse-python `_client/attributes.py` (not a captured export)
    path = FIX / "langfuse_v3.json"
    assert OtlpImporter().sniff(Source(path)) >= 0.9
    t = _one(path)
    assert [(e.kind, e.subtype) for e in t.events] == [
        ("handoff", "agent_start"),  # langfuse.observation.type agent
        ("message", "system_prompt"),
        ("message", None),
        ("llm_call", None),  # generation
        ("tool_call", None),  # from the generation output; the tool observation matched by name
        ("tool_result", None),
        ("system", "span"),
        ("error", None),  # langfuse.observation.level ERROR
        ("llm_call", None),  # re-sent history skipped
        ("message", None),
    ]
    _no_duplicate_content(t)
    assert [a.name for a in t.agents] == ["weather-agent"]
    (call, result), *rest = list(t.tool_calls())
    assert not rest and call.tool_call is not None and result is not None and result.tool_result is not None
    assert (call.tool_call.name, call.tool_call.call_id, call.tool_call.arguments) == (
        "get_weather",
        "call_r1",
        {"city": "Rome"},
    )
    assert result.tool_result.output == '{"temp_c":24,"sky":"sunny"}'
    assert t.events[7].content == "cache unavailable"
    total = t.total_usage()
    assert (total.input_tokens, total.output_tokens, total.total_tokens) == (130, 21, 151)
    assert total.cost_usd == pytest.approx(0.000535)
    assert t.model == "gpt-4o" and t.task == "Weather in Rome?"
    assert t.outcome is not None and t.outcome.final_output == "Sunny, 24C in Rome."
    assert t.extra["langfuse"] == {
        "name": "weather-run",
        "user_id": "u-1",
        "session_id": "s-9",
        "input": '{"question":"Weather in Rome?"}',
        "output": "Sunny, 24C in Rome.",
        "environment": "production",
        "metadata": {"tier": "pro"},
    }


def test_openinference_openai_agents_handoff_span_is_a_handoff(tmp_path: Path) -> None:
    # openinference-instrumentation-openai-agents 2.x writes a handoff as a TOOL span named
    # "handoff to <agent>" holding only input.value = source agent, output.value = target agent.
    # It is not a second tool call (the model's transfer_to_* call already is one).
    kind = {"openinference.span.kind": "TOOL"}
    llm = {
        "openinference.span.kind": "LLM", "llm.model_name": "m",
        "llm.input_messages.0.message.role": "user", "llm.input_messages.0.message.content": "refund A1",
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.tool_calls.0.tool_call.id": "call_h",
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "transfer_to_refunds",
    }  # fmt: skip
    spans = [
        _sp("00000000000000a1", name="Triage", attributes=_kv({"openinference.span.kind": "AGENT", "agent.name": "Triage"})),
        _sp("00000000000000a2", "00000000000000a1", name="response", attributes=_kv(llm)),
        _sp("00000000000000a3", "00000000000000a1", name="handoff to Refunds",
            attributes=_kv({**kind, "input.value": "Triage", "output.value": "Refunds"})),
        _sp("00000000000000a4", name="Refunds", attributes=_kv({"openinference.span.kind": "AGENT", "agent.name": "Refunds"})),
    ]  # fmt: skip
    path = tmp_path / "oi_handoff.json"
    path.write_text(json.dumps(_req(*spans)))
    [t] = _load(path)[0]
    assert [e.tool_call.name for e in t.events if e.tool_call] == ["transfer_to_refunds"]
    assert not [e for e in t.events if e.kind == "tool_result"]
    [h] = [e for e in t.events if e.kind == "handoff" and e.subtype == "transfer"]
    assert (h.actor, h.recipients, h.content) == ("Triage", ["Refunds"], "handoff to Refunds")
    # as in the openai_agents importer, the agent handed over to gets the handing agent as parent
    # (its span is a root: no enclosing agent names it)
    assert [(a.name, a.parent) for a in t.agents] == [("Triage", None), ("Refunds", "Triage")]
    starts = [e for e in t.events if e.kind == "handoff" and e.subtype == "agent_start"]
    assert [(e.actor, e.extra.get("from_agent")) for e in starts] == [("Triage", None), ("Refunds", "Triage")]
    _roundtrip(t)


def test_pydantic_ai_scope_names_the_framework(tmp_path: Path) -> None:
    # pydantic-ai's own instrumentation scope is "pydantic-ai" (version = pydantic-ai's version);
    # the resource service.name is the user's application, not the framework. The code before
    # this rule named the framework after service.name: ("my-app", None) here, "weather-bot" for
    # the fixture, so both assertions below fail on it.
    span = _sp(
        "00000000000000a1",
        name="invoke_agent weather_agent",
        attributes=_kv({"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "weather_agent"}),
    )
    req = _req(span)
    req["resourceSpans"][0]["resource"]["attributes"] = _kv({"service.name": "my-app"})
    req["resourceSpans"][0]["scopeSpans"][0]["scope"] = {"name": "pydantic-ai", "version": "1.2.3"}
    path = tmp_path / "pyd.json"
    path.write_text(json.dumps(req))
    [t] = _load(path)[0]
    assert (t.framework, t.framework_version) == ("pydantic_ai", "1.2.3")
    assert _one(FIX / "pydantic_ai_legacy.jsonl").framework == "pydantic_ai"
    # without that scope the service name still names the framework
    req["resourceSpans"][0]["scopeSpans"][0]["scope"] = {"name": "my.own.scope", "version": "9"}
    path.write_text(json.dumps(req))
    [t] = _load(path)[0]
    assert (t.framework, t.framework_version) == ("my-app", None)


def test_chat_completion_outputs_read_by_the_shared_unwrapper(tmp_path: Path) -> None:
    # an OpenAI chat completion (``choices``) as OpenInference output.value and as a Langfuse
    # generation's output: each choice's message, tool calls included
    completion = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": "Looking it up.",
                    "tool_calls": [
                        {"id": "call_c1", "type": "function", "function": {"name": "find", "arguments": "{}"}}
                    ],
                },
            },
            "not a choice",
        ],
    }
    oi = {
        "openinference.span.kind": "LLM",
        "input.value": json.dumps({"messages": [{"role": "user", "content": "find it"}]}),
        "output.value": json.dumps(completion),
    }
    lf = {
        "langfuse.observation.type": "generation",
        "langfuse.observation.input": json.dumps([{"role": "user", "content": "and then?"}]),
        "langfuse.observation.output": json.dumps({"choices": [{"message": {"content": "Done."}}]}),
    }
    spans = [
        _sp("00000000000000a1", name="oi", attributes=_kv(oi)),
        _sp("00000000000000a2", name="lf", attributes=_kv(lf)),
    ]
    path = tmp_path / "choices.json"
    path.write_text(json.dumps(_req(*spans)))
    [t] = _load(path)[0]
    assert [(e.kind, e.role, e.content) for e in t.events if e.kind in ("message", "tool_call")] == [
        ("message", "user", "find it"),
        ("message", "assistant", "Looking it up."),
        ("tool_call", "assistant", None),
        ("message", "user", "and then?"),
        ("message", "assistant", "Done."),
    ]
    [call] = [e.tool_call for e in t.events if e.tool_call]
    assert (call.name, call.call_id) == ("find", "call_c1")


def test_message_list_reads_choices() -> None:
    from mastkit.traces.importers._llm_spans import message_list

    msgs = message_list(
        '{"choices": [{"message": {"role": "assistant", "content": "a"}}, 3, {"message": {"content": "b"}}]}',
        "assistant",
    )
    assert [(m.role, m.text) for m in msgs] == [("assistant", "a"), ("assistant", "b")]
    assert message_list({"choices": []}) == []
    # without choices, unchanged: a wrapped list, else one message
    assert [m.text for m in message_list({"messages": [{"role": "user", "content": "q"}]})] == ["q"]
    assert [m.text for m in message_list({"role": "user", "content": "q"})] == ["q"]


def test_langfuse_trace_output_from_any_span_is_the_final_output(tmp_path: Path) -> None:
    # langfuse.trace.input / output may be set by any span (update_trace inside a nested
    # observation): task and final output both come from the collected trace attributes, not the
    # root's own output
    root = {"langfuse.observation.type": "agent", "langfuse.observation.output": "root says hi"}
    inner = {
        "langfuse.observation.type": "span",
        "langfuse.trace.input": "What is 2+2?",
        "langfuse.trace.output": "4",
    }
    spans = [
        _sp("00000000000000a1", name="agent", attributes=_kv(root)),
        _sp("00000000000000a2", "00000000000000a1", name="inner", attributes=_kv(inner)),
    ]
    path = tmp_path / "lf_nested.json"
    path.write_text(json.dumps(_req(*spans)))
    [t] = _load(path)[0]
    assert t.task == "What is 2+2?"
    assert t.outcome is not None and t.outcome.final_output == "4"
    assert t.extra["langfuse"] == {"input": "What is 2+2?", "output": "4"}


def test_plain_spans_have_no_vendor_extras(tmp_path: Path) -> None:
    # user.id / session.id alone do not make a trace Langfuse; no ai.* attribute, no ai_sdk entry
    attrs = {"user.id": "u-1", "session.id": "s-1", "http.method": "GET", "aix.telemetry.functionId": "f"}
    path = tmp_path / "plain.json"
    path.write_text(json.dumps(_req(_sp("00000000000000a1", attributes=_kv(attrs)))))
    [t] = _load(path)[0]
    assert "langfuse" not in t.extra and "ai_sdk" not in t.extra


# -- log records written with the spans ---------------------------------------------------------


def _kv_any(d: dict[str, Any]) -> list[dict[str, Any]]:
    def val(v: Any) -> dict[str, Any]:
        if isinstance(v, str):
            return {"stringValue": v}
        if isinstance(v, bool):
            return {"boolValue": v}
        if isinstance(v, int):
            return {"intValue": str(v)}
        if isinstance(v, dict):
            return {"kvlistValue": {"values": _kv_any(v)}}
        return {"arrayValue": {"values": [val(x) for x in v]}}

    return [{"key": k, "value": val(v)} for k, v in d.items()]


_TID, _SID = "5b8efff798038103d269b633813fc60c", "eee19b7ec3c1b174"


def _genai_span_line() -> dict[str, Any]:
    """A chat span of opentelemetry-instrumentation-openai-v2: no message content in its attributes
    (the instrumentation logs the messages as events)."""
    span = {
        "traceId": _TID, "spanId": _SID, "name": "chat gpt-4o-mini", "kind": 3,
        "startTimeUnixNano": "1760000000000000000", "endTimeUnixNano": "1760000001500000000",
        "attributes": _kv_any({
            "gen_ai.operation.name": "chat", "gen_ai.system": "openai", "gen_ai.request.model": "gpt-4o-mini",
            "gen_ai.response.model": "gpt-4o-mini-2024-07-18", "gen_ai.usage.input_tokens": 52,
            "gen_ai.usage.output_tokens": 17,
        }),
        "status": {},
    }  # fmt: skip
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": _kv_any({"service.name": "weather-bot"})},
                "scopeSpans": [
                    {"scope": {"name": "opentelemetry.instrumentation.openai_v2"}, "spans": [span]}
                ],
            }
        ]
    }


def _genai_logs_line(*, event_name_field: bool) -> dict[str, Any]:
    def rec(name: str, body: dict[str, Any], t: str) -> dict[str, Any]:
        r: dict[str, Any] = {
            "timeUnixNano": t, "traceId": _TID, "spanId": _SID, "body": {"kvlistValue": {"values": _kv_any(body)}},
            "attributes": _kv_any({"gen_ai.system": "openai"}),
        }  # fmt: skip
        if event_name_field:
            r["eventName"] = name  # OTLP 1.5+
        else:
            r["attributes"] += _kv_any({"event.name": name})  # the older event API
        return r

    call = {
        "id": "call_7",
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
    }
    records = [
        rec("gen_ai.system.message", {"content": "You answer weather questions."}, "1760000000000000001"),
        rec("gen_ai.user.message", {"content": "Weather in Oslo?"}, "1760000000000000002"),
        rec(
            "gen_ai.choice",
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {"role": "assistant", "tool_calls": [call]},
            },
            "1760000001500000000",
        ),
    ]
    return {
        "resourceLogs": [
            {
                "resource": {"attributes": _kv_any({"service.name": "weather-bot"})},
                "scopeLogs": [
                    {"scope": {"name": "opentelemetry.instrumentation.openai_v2"}, "logRecords": records}
                ],
            }
        ]
    }


@pytest.mark.parametrize("logs_first", [False, True])
@pytest.mark.parametrize("event_name_field", [False, True])
def test_genai_log_events_join_their_span(tmp_path: Path, logs_first: bool, event_name_field: bool) -> None:
    lines = [_genai_span_line(), _genai_logs_line(event_name_field=event_name_field)]
    if logs_first:
        lines.reverse()
    path = tmp_path / "collector.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    if logs_first:  # spans in the head: otlp claims the file over otel_logs, which never reads it
        assert (OtlpImporter().sniff(Source(path)), OtelLogsImporter().sniff(Source(path))) == (0.9, 0.5)
    traces, errors = _load(path)
    assert errors == []
    (t,) = traces
    assert t.source_format == "otlp"
    by_kind = [(e.kind, e.role, e.content) for e in t.events if e.kind in ("message", "tool_call")]
    assert by_kind == [
        ("message", "system", "You answer weather questions."),
        ("message", "user", "Weather in Oslo?"),
        ("tool_call", "assistant", None),
    ]
    call = next(e for e in t.events if e.kind == "tool_call")
    assert call.tool_call is not None
    assert (call.tool_call.name, call.tool_call.call_id) == ("get_weather", "call_7")
    assert call.tool_call.arguments == {"city": "Oslo"}
    llm = next(e for e in t.events if e.kind == "llm_call")
    assert llm.usage is not None and (llm.usage.input_tokens, llm.usage.output_tokens) == (52, 17)
    assert len(t.raw["log_records"]) == 3  # kept whole, in file order
    assert t.raw["log_records"][1]["body"]["kvlistValue"]["values"][0]["value"] == {
        "stringValue": "Weather in Oslo?"
    }
    _roundtrip(t)


def test_a_text_body_reads_the_same_with_or_without_its_span(tmp_path: Path) -> None:
    """A GenAI event whose body is plain text (not a key-value list) is its message's content,
    whether the otlp importer joins it to its span or otel_logs reads it alone."""
    logs = _genai_logs_line(event_name_field=True)
    logs["resourceLogs"][0]["scopeLogs"][0]["logRecords"][1]["body"] = {"stringValue": "Weather in Oslo?"}
    both, alone = tmp_path / "collector.jsonl", tmp_path / "logs.jsonl"
    both.write_text(json.dumps(_genai_span_line()) + "\n" + json.dumps(logs) + "\n")
    alone.write_text(json.dumps(logs) + "\n")
    for path, fmt in ((both, "otlp"), (alone, "otel_logs")):
        traces, errors = _load(path)
        assert errors == []
        (t,) = traces
        assert t.source_format == fmt
        user = [e.content for e in t.events if e.kind == "message" and e.role == "user"]
        assert user == ["Weather in Oslo?"], fmt


def test_spans_past_the_sniffed_head_are_not_dropped(tmp_path: Path) -> None:
    """A collector file whose first lines are log records, with its spans further in than the head
    read to choose a format: otel_logs claims it, meets the spans, hands it back before yielding
    anything, and the otlp importer reads it all (a bad line is reported once)."""
    logs = _genai_logs_line(event_name_field=True)
    user = logs["resourceLogs"][0]["scopeLogs"][0]["logRecords"][1]
    long_prompt = "Weather in Oslo? " + "x" * (HEAD_BYTES + 1000)
    user["body"]["kvlistValue"]["values"] = _kv_any({"content": long_prompt})
    path = tmp_path / "collector.jsonl"
    path.write_text(json.dumps(logs) + "\n{not json\n" + json.dumps(_genai_span_line()) + "\n")
    assert '"resourceSpans"' not in Source(path).head_text
    traces, errors = _load(path)
    assert [(e.line, "otel_logs" in e.tried, "otlp" in e.tried) for e in errors] == [(2, True, True)]
    (t,) = traces
    assert t.source_format == "otlp"
    assert [e.content for e in t.events if e.kind == "message" and e.role == "user"] == [long_prompt]
    assert any(e.kind == "llm_call" for e in t.events)
    assert len(t.raw["log_records"]) == 3


def test_log_records_of_no_span_in_the_file(tmp_path: Path) -> None:
    """Records of the file's trace that name no span of it are kept in its raw, not made events;
    a file of log records alone is not a spans file."""
    logs = _genai_logs_line(event_name_field=True)
    recs = logs["resourceLogs"][0]["scopeLogs"][0]["logRecords"]
    recs[0]["spanId"] = "aaaaaaaaaaaaaaaa"
    path = tmp_path / "collector.jsonl"
    path.write_text(json.dumps(_genai_span_line()) + "\n" + json.dumps(logs) + "\n")
    (t,), errors = _load(path)
    assert errors == []
    assert [e.role for e in t.events if e.kind == "message"] == ["user"]
    assert len(t.raw["log_records"]) == 3
    only_logs = tmp_path / "logs.json"
    only_logs.write_text(json.dumps(logs))
    assert OtlpImporter().sniff(Source(only_logs)) == 0.0
    with pytest.raises(FormatError, match="only log records"):
        list(OtlpImporter().load(Source(only_logs)))


def test_langfuse_usage_details_fill_what_the_attributes_leave() -> None:
    details = json.dumps({"input": 50, "output": 12, "total": 62, "input_cache_read": 40})
    usage = genai_usage({"langfuse.observation.usage_details": details, "gen_ai.usage.output_tokens": 9})
    assert usage is not None
    assert (usage.input_tokens, usage.output_tokens, usage.total_tokens, usage.cached_input_tokens) == (
        50,
        9,
        62,
        40,
    )


def test_jsonl_of_request_lists(tmp_path: Path) -> None:
    """A collector that writes each batch as a JSON list of requests, one list per line."""
    a, b = _req(_sp("00000000000000a1")), _req(_sp("00000000000000a2", parent="00000000000000a1"))
    path = tmp_path / "batches.json"
    path.write_text(json.dumps([a]) + "\n" + json.dumps([b]) + "\n")
    assert Source(path).json_shape == "jsonl"
    (t,), errors = _load(path)
    assert errors == [] and len(t.events) >= 2


def test_console_exporter_stream_of_pretty_printed_spans() -> None:
    # the Python SDK's ConsoleSpanExporter prints one indented JSON object per span, one after another
    path = Path(__file__).resolve().parents[2] / "fixtures" / "otlp" / "console_exporter_autogen.txt"
    assert OtlpImporter().sniff(Source(path)) >= 0.85
    [t] = load_traces(path)
    _roundtrip(t)
    assert t.source_format == "otlp" and t.trace_id == "138694841370fdaaf0386dc2a0811424"
    assert len(t.events) == 9
    assert t.kind_counts() == {"system": 4, "llm_call": 2, "tool_call": 1, "tool_result": 1, "error": 1}
    # autogen-core names the handling agent only in messaging.destination; a custom agent.name too
    assert [a.name for a in t.agents] == ["MagenticOneOrchestrator", "WebSurfer", "Coder"]
    llm = [e for e in t.events if e.kind == "llm_call"]
    assert [(e.actor, e.model) for e in llm] == [
        ("MagenticOneOrchestrator", "gpt-4o"),
        ("WebSurfer", "gpt-4o"),
    ]
    assert llm[0].usage is not None and llm[0].usage.input_tokens == 812
    call = next(e for e in t.events if e.kind == "tool_call")
    assert call.actor == "WebSurfer" and call.tool_call is not None and call.tool_call.name == "web_search"
    result = next(e for e in t.events if e.kind == "tool_result")
    assert result.tool_result is not None and result.tool_result.is_error is True
    assert isinstance(t.events[0].raw, dict) and t.events[0].raw["kind"] == "SpanKind.PRODUCER"
    assert t.started_at is not None and t.started_at.isoformat() == "2026-11-26T22:45:34.330260+00:00"
    # each span's source line is where its object starts in the stream
    assert t.events[0].source is not None and t.events[0].source.line == 194
    assert [e.source.line for e in llm if e.source] == [1, 66]


def test_console_stream_with_a_broken_span_loads_the_rest(tmp_path: Path) -> None:
    spans = (
        Path(__file__).resolve().parents[2] / "fixtures" / "otlp" / "console_exporter_autogen.txt"
    ).read_text()
    first_end = spans.index("\n}\n") + 3
    broken = spans[:first_end] + '{\n    "name": "cut off",\n    "context": {\n' + spans[first_end:]
    path = tmp_path / "spans.txt"
    path.write_text(broken)
    items = list(iter_load_items(path))
    errors = [i for i in items if isinstance(i, TraceLoadError)]
    traces = [i for i in items if isinstance(i, Trace)]
    assert len(errors) == 1 and errors[0].line == 35 and "invalid JSON value" in errors[0].reason
    assert len(traces) == 1 and len(traces[0].events) == 9


def test_console_span_without_ids_is_named(tmp_path: Path) -> None:
    one = {
        "name": "a",
        "context": {"trace_id": "0x" + "1" * 32, "span_id": "0x" + "2" * 16},
        "attributes": {},
    }
    bad = {"name": "b", "context": {"span_id": "0x" + "3" * 16}, "attributes": {}}
    path = tmp_path / "spans.txt"
    path.write_text(json.dumps(one, indent=4) + "\n" + json.dumps(bad, indent=4) + "\n")
    items = list(iter_load_items(path))
    [err] = [i for i in items if isinstance(i, TraceLoadError)]
    assert err.line == 9 and "trace" in err.reason.lower()
    assert len([i for i in items if isinstance(i, Trace)]) == 1


def iter_load_items(path: Path) -> list[Trace | TraceLoadError]:
    from mastkit.traces import iter_load

    return list(iter_load(path))


def test_js_sdk_readable_spans_hrtime_and_parent_context() -> None:
    [t] = load_traces(FIX / "js_sdk_readable_spans.jsonl")
    _roundtrip(t)
    assert t.kind_counts() == {
        "handoff": 1,
        "message": 1,
        "llm_call": 1,
        "tool_call": 1,
        "tool_result": 1,
        "error": 1,
    }
    # parentSpanContext (2.x) and parentSpanId (1.x) both hang the spans below the agent span
    assert {e.actor for e in t.events if e.kind in ("llm_call", "tool_call", "error")} == {"support"}
    assert [a.name for a in t.agents] == ["support"]
    assert t.started_at is not None and t.started_at.isoformat() == "2026-01-01T12:00:00+00:00"
    assert t.ended_at is not None and t.ended_at.isoformat() == "2026-01-01T12:00:09.500000+00:00"
    llm = next(e for e in t.events if e.kind == "llm_call")
    assert llm.started_at is not None and llm.started_at.isoformat() == "2026-01-01T12:00:00.100000+00:00"
    msg = next(e for e in t.events if e.kind == "message")
    assert msg.content == "Where is my order?"
    result = next(e for e in t.events if e.kind == "tool_result")
    assert result.tool_result is not None and result.tool_result.is_error is True


def test_flat_span_without_trace_id_says_which_id(tmp_path: Path) -> None:
    ok = {"context": {"trace_id": "0x" + "1" * 32, "span_id": "0x" + "2" * 16}, "name": "a"}
    bad = {"context": {"span_id": "0x" + "3" * 16, "trace_id": None}, "name": "b"}
    path = tmp_path / "spans.jsonl"
    path.write_text(json.dumps(ok) + "\n" + json.dumps(bad) + "\n")
    errors = [i for i in iter_load_items(path) if isinstance(i, TraceLoadError)]
    assert (
        len(errors) == 1
        and "has no trace id" in errors[0].reason
        and "span id" not in errors[0].reason.split("(")[0]
    )


def test_go_stdouttrace_pretty_printed_stream() -> None:
    path = FIX / "go_stdouttrace.txt"
    assert OtlpImporter().sniff(Source(path)) == 0.85
    [t] = load_traces(path)
    _roundtrip(t)
    assert t.trace_id == "4bf92f3577b34da6a3ce929d0e0e4736"
    assert [e.kind for e in t.events] == ["handoff", "llm_call", "tool_call", "tool_result", "error"]
    assert {e.actor for e in t.events if e.kind != "tool_result"} == {"refunds"}  # Parent.SpanID links them
    llm = t.events[1]
    assert llm.model == "gpt-4o-mini" and llm.usage is not None and llm.usage.input_tokens == 210
    assert llm.started_at is not None and llm.started_at.isoformat() == "2026-02-03T09:15:00.120000+00:00"
    result = t.events[3]
    assert result.tool_result is not None and result.tool_result.is_error is True
    assert t.events[4].content == "refund window closed"
    assert isinstance(t.events[0].raw, dict) and "SpanContext" in t.events[0].raw  # the Go span as printed
    assert t.raw is not None and t.raw["resources"][0]["service.name"] == "go-support-agent"


def test_go_stdouttrace_old_fields_and_zero_times(tmp_path: Path) -> None:
    # SDKs before 1.0: StatusCode / StatusMessage, MessageEvents; a zero time is no time
    old = {
        "Name": "chat", "SpanContext": {"TraceID": "ab" * 16, "SpanID": "cd" * 8},
        "Parent": {"TraceID": "00" * 16, "SpanID": "00" * 8}, "SpanKind": 3,
        "StartTime": "0001-01-01T00:00:00Z", "EndTime": "0001-01-01T00:00:00Z",
        "Attributes": [{"Key": "gen_ai.request.model", "Value": {"Type": "STRING", "Value": "gpt-4o"}}],
        "MessageEvents": None, "StatusCode": "Error", "StatusMessage": "boom",
        "InstrumentationLibrary": {"Name": "app", "Version": "semver:0.20.0"},
    }  # fmt: skip
    path = tmp_path / "spans.json"
    path.write_text(json.dumps([old]))
    [t] = load_traces(path)
    assert [e.kind for e in t.events] == ["llm_call", "error"]
    assert t.events[1].content == "boom" and t.events[0].started_at is None
