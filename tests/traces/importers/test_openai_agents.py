"""OpenAI Agents SDK tracing importer: the real trace dump plus hand-written export variants."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from conftest import load_split, shared_path
from mastkit import load_traces
from mastkit.errors import FormatError
from mastkit.traces.importers.openai_agents import OpenAIAgentsImporter, parse_repr
from mastkit.traces.model import Trace
from mastkit.traces.source import Source

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "openai_agents"


_load = load_split


def _roundtrip(t: Trace) -> None:
    assert Trace.model_validate_json(t.model_dump_json()) == t


# -- the real sample ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sample() -> Trace:
    path = shared_path("trace_samples", "openai_agents_trace", "traces_2025-06-29_00-23-37.json")
    traces = list(load_traces(path))
    assert len(traces) == 1  # README: 1 trace
    return traces[0]


def test_sample_counts(sample: Trace) -> None:
    t = sample
    assert t.source_format == "openai_agents"
    assert t.trace_id == "trace_98b1922f8dc0455daf6191f1167901de"
    assert t.framework == "openai-agents"
    # README: 6 spans (agent 3, response 3)
    assert t.extra["span_count"] == 6
    assert t.extra["span_types"] == {"agent": 3, "response": 3}
    assert t.extra["workflow_name"] == "Module 1 Trace"
    # README: 3 agents SearchAgent, CriteriaGenerator, CriteriaEvaluator
    assert [a.name for a in t.agents] == ["SearchAgent", "CriteriaGenerator", "CriteriaEvaluator"]
    assert t.actors() == ["SearchAgent", "system", "user", "CriteriaGenerator", "CriteriaEvaluator"]
    kinds = t.kind_counts()
    assert kinds["handoff"] == 3
    assert kinds["llm_call"] == 3
    # README: no span errors
    assert kinds["error"] == 0
    # README: 0 tool calls (no function spans). The model's hosted web search, found in the
    # non-standard response repr, is kept as a tool_call with subtype hosted_tool.
    assert sum(1 for e in t.events if e.kind == "tool_call" and e.subtype != "hosted_tool") == 0
    hosted = [e for e in t.events if e.subtype == "hosted_tool"]
    assert len(hosted) == 1 and hosted[0].tool_call is not None
    assert hosted[0].tool_call.name == "web_search"
    assert hosted[0].tool_call.arguments["query"].startswith("success criteria for a workshop")
    # every span's native record kept once, including the non-standard span_data_input field
    raws = [e.raw for e in t.events if e.raw is not None]
    assert len(raws) == 6
    assert sum(1 for r in raws if "span_data_input" in r) == 3
    _roundtrip(t)


def test_sample_model_calls(sample: Trace) -> None:
    t = sample
    calls = [e for e in t.events if e.kind == "llm_call"]
    assert [c.actor for c in calls] == ["SearchAgent", "CriteriaGenerator", "CriteriaEvaluator"]
    assert all(c.model == "gpt-4o-2024-08-06" for c in calls)
    assert t.model == "gpt-4o-2024-08-06"
    usage = [(c.usage.input_tokens, c.usage.output_tokens) for c in calls if c.usage]
    assert usage == [(508, 707), (1027, 311), (1419, 255)]
    # input (span_data_input) and output (parsed from the Response repr) become messages
    roles = Counter(e.role for e in t.events if e.kind == "message")
    assert roles == {"system": 3, "user": 3, "assistant": 3}
    search_out = next(e for e in t.events if e.kind == "message" and e.actor == "SearchAgent")
    assert search_out.content and search_out.content.startswith("To develop a comprehensive workshop")
    assert search_out.llm_call_id == calls[0].llm_call_id
    assert t.agents[0].system_prompt and t.agents[0].system_prompt.startswith(
        "You are a web search assistant"
    )
    assert t.agents[0].tools == ["web_search_preview"]
    assert t.task and t.task.startswith("Find information about success criteria")
    assert t.raw["envelope"] == {"timestamp": "2025-06-29T00:23:56.643711", "count": 1}


# -- export payload JSONL: handoffs, functions, errors, bad lines --------------------------------


def test_export_payload_jsonl() -> None:
    traces, errors = _load(FIX / "export_payload.jsonl")
    assert sorted(e.line or 0 for e in errors) == [2, 3]  # a span without trace_id, a cut-off line
    assert [t.trace_id for t in traces] == [
        "trace_5f2a9c0e4b7d4e1a8c3b6d9f0a1e2b3c",
        "trace_0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e",
    ]
    t = traces[0]
    assert t.source_format == "openai_agents"
    assert t.extra["group_id"] == "thread_7" and t.extra["metadata"] == {"customer": "c-19"}
    assert [(a.name, a.parent) for a in t.agents] == [
        ("Triage Agent", None),
        ("Billing Agent", "Triage Agent"),
    ]
    transfer = next(e for e in t.events if e.subtype == "transfer")
    assert transfer.kind == "handoff" and transfer.actor == "Triage Agent"
    assert transfer.recipients == ["Billing Agent"]
    pairs = [
        (c.tool_call.name, r.tool_result.output if r and r.tool_result else None) for c, r in t.tool_calls()
    ]  # type: ignore[union-attr]
    assert pairs == [
        ("lookup_order", "{'order_id': '1182', 'charges': 2}"),
        ("transfer_to_billing_agent", '{"assistant": "Billing Agent"}'),
        ("issue_refund", None),
    ]
    # function spans answer the calls the generation announced: no duplicate tool_call
    assert t.kind_counts()["tool_call"] == 3
    refund = [e for e in t.events if e.kind == "tool_result"][-1]
    assert refund.tool_result is not None and refund.tool_result.is_error is True
    err = next(e for e in t.events if e.kind == "error")
    assert err.content == "Error running tool" and err.extra["data"]["error"] == "payment gateway timeout"
    assert err.actor == "Billing Agent"
    # history re-sent to every generation is not repeated
    assert sum(1 for e in t.events if e.role == "user") == 1
    assert not any(e.is_copied_context for e in t.events)
    last_call = [e for e in t.events if e.kind == "llm_call"][-1]
    assert last_call.usage is not None and last_call.usage.cached_input_tokens == 128
    assert last_call.extra["copied_input_messages"] == 4  # user, a1, t1, a2; the transfer result is new
    guard = next(e for e in t.events if e.subtype == "guardrail")
    assert guard.content == "pii_check" and guard.extra["triggered"] is False
    for tr in traces:
        _roundtrip(tr)


def test_standard_export_without_content() -> None:
    traces, _ = _load(FIX / "export_payload.jsonl")
    t = traces[1]
    # response spans of the standard export carry only response_id + usage
    calls = [e for e in t.events if e.kind == "llm_call"]
    assert [c.extra["response_id"] for c in calls] == ["resp_abc123", "resp_abc124"]
    assert [c.usage.input_tokens for c in calls if c.usage] == [300, 400]
    assert t.kind_counts()["message"] == 0
    # newer task/turn spans (exported as custom): task usage is the run total
    assert t.usage is not None and t.usage.total_tokens == 760
    assert [e.subtype for e in t.events if e.kind == "system"] == ["task", "mcp_tools", "turn"]
    call = next(e for e in t.events if e.kind == "tool_call")
    assert call.tool_call is not None and call.tool_call.namespace == "docs-server"
    assert call.tool_call.arguments == {"q": "rate limits"}
    assert call.actor == "Docs Agent"


def test_single_trace_with_response_dicts() -> None:
    (t,) = list(load_traces(FIX / "single_trace.json"))
    assert t.source_format == "openai_agents"
    assert [e.kind for e in t.events] == [
        "handoff", "message", "message", "llm_call", "reasoning", "tool_call", "tool_result", "llm_call",
        "message",
    ]  # fmt: skip
    call = next(e for e in t.events if e.kind == "tool_call")
    assert call.tool_call is not None and call.tool_call.call_id == "call_x1"
    result = next(e for e in t.events if e.kind == "tool_result")
    assert result.tool_result is not None and result.tool_result.call_id == "call_x1"
    assert result.raw is not None and result.raw["id"] == "span_fx_fn"
    llm = [e for e in t.events if e.kind == "llm_call"]
    assert llm[0].usage is not None and llm[0].usage.reasoning_tokens == 64
    assert t.events[-1].content == "20 EUR is about 21.60 USD."
    assert t.model == "o4-mini-2025-04-16"
    _roundtrip(t)


def test_bare_span_list_minimal_fields() -> None:
    (t,) = list(load_traces(FIX / "bare_spans.json"))
    assert t.trace_id == "trace_min"
    assert [e.kind for e in t.events] == ["handoff", "tool_call", "tool_result"]
    assert t.events[2].tool_result is not None and t.events[2].tool_result.output == "pong"
    assert t.ended_at is None or t.ended_at >= t.started_at  # type: ignore[operator]
    _roundtrip(t)


# -- malformed input, sniffing -------------------------------------------------------------------


def test_malformed(tmp_path: Path) -> None:
    imp = OpenAIAgentsImporter()
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"hello": "world"}))
    assert imp.sniff(Source(other)) == 0.0
    with pytest.raises(FormatError):
        list(imp.load(Source(other)))
    noid = tmp_path / "noid.json"
    noid.write_text(json.dumps({"traces": [{"object": "trace", "spans": []}]}))
    with pytest.raises(FormatError, match="no id"):
        list(imp.load(Source(noid)))
    bad_item = tmp_path / "bad_item.json"
    bad_item.write_text(json.dumps({"data": [{"object": "trace", "id": "t1"}, 5]}))
    with pytest.raises(FormatError, match="not an OpenAI Agents trace or span"):
        list(imp.load(Source(bad_item)))
    # odd span_data values do not crash
    odd = tmp_path / "odd.json"
    odd.write_text(
        json.dumps(
            [
                {"object": "trace.span", "id": "s1", "trace_id": "t", "span_data": "x", "error": "boom"},
                {"object": "trace.span", "id": "s2", "trace_id": "t", "parent_id": "s1",
                 "span_data": {"type": "response", "response": "Response(output=[ unterminated"}},
            ]
        )
    )  # fmt: skip
    (t,) = list(load_traces(odd))
    assert [e.kind for e in t.events] == ["system", "llm_call", "error"]
    assert t.events[-1].content == "boom"


def test_sniff() -> None:
    imp = OpenAIAgentsImporter()
    for name in ("export_payload.jsonl", "single_trace.json", "bare_spans.json"):
        assert imp.sniff(Source(FIX / name)) >= 0.9
    assert imp.sniff(Source(FIX.parent / "otlp" / "openinference_tools.json")) == 0.0


def test_parse_repr() -> None:
    value = parse_repr(
        'Response(id=\'r1\', output=[Msg(text="it\'s \\"ok\\"\\n\\u00e9", n=-1.5e3, ok=True, x=None)],'
        " meta={'a': (1, 2)}, status=<Status.DONE: 'done'>)"
    )
    assert value["__type__"] == "Response"
    assert value["output"][0] == {
        "__type__": "Msg",
        "text": 'it\'s "ok"\né',
        "n": -1500.0,
        "ok": True,
        "x": None,
    }
    assert value["meta"] == {"a": [1, 2]}
    assert value["status"] == "<Status.DONE: 'done'>"
    assert parse_repr("Point(1, 'b')") == {"__type__": "Point", "_0": 1, "_1": "b"}
    for bad in ("Response(id='x'", "Response(id='x') trailing", "@@"):
        with pytest.raises((ValueError, IndexError)):
            parse_repr(bad)


@pytest.mark.parametrize(
    ("body", "text"),
    [
        ("a\\nb\\tc", "a\nb\tc"),
        ("\\x41\\u00e9\\U0001F600", "Aé😀"),
        ("it\\'s \\\\ fine", "it's \\ fine"),
        ("\\q \\xZZ \\U00110000", "\\q \\xZZ \\U00110000"),  # unknown or invalid: kept as written
        ("trailing \\", "trailing \\"),
    ],
)
def test_repr_string_unescape(body: str, text: str) -> None:
    from mastkit.traces.importers.openai_agents import _unescape

    assert _unescape(body) == text


def test_js_sdk_private_response_fields() -> None:
    # @openai/agents (JS): response span data keeps the input/response as `_input` / `_response`
    # when a processor serialises the span data itself; function `mcp_data` is JSON text.
    traces, errors = _load(FIX / "js_private_fields.jsonl")
    assert not errors and len(traces) == 1
    t = traces[0]
    assert Trace.model_validate_json(t.model_dump_json()) == t
    assert t.task == "What time is it?"
    assert [e.content for e in t.events if e.subtype == "system_prompt"] == ["You tell the time."]
    calls = [(e.tool_call.name, e.tool_call.call_id) for e in t.events if e.tool_call]
    results = [(e.tool_result.call_id, e.tool_result.output) for e in t.events if e.tool_result]
    assert calls == [("get_time", "call_t1")] and results == [("call_t1", "10:00")]
    assert [e.content for e in t.events if e.kind == "message" and e.role == "assistant"] == ["It is 10:00."]
    assert t.model == "gpt-4.1"


def test_js_mcp_data_as_json_text(tmp_path: Path) -> None:
    span = {
        "object": "trace.span", "id": "span_f", "trace_id": "trace_x", "parent_id": None,
        "started_at": "2025-07-01T10:00:00Z", "ended_at": "2025-07-01T10:00:01Z",
        "span_data": {"type": "function", "name": "read", "input": "{}", "output": "ok", "mcp_data": '{"server":"fs"}'},
        "error": None,
    }  # fmt: skip
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps([span]))
    traces, _errors = _load(path)
    call = next(e for e in traces[0].events if e.tool_call)
    assert call.tool_call is not None and call.tool_call.namespace == "fs"


def _span(sid: str, parent: str | None, second: int, data: dict[str, Any]) -> dict[str, Any]:
    return {
        "object": "trace.span", "id": sid, "trace_id": "trace_1", "parent_id": parent,
        "started_at": f"2025-01-01T00:00:0{second}+00:00", "ended_at": f"2025-01-01T00:00:0{second}.5+00:00",
        "span_data": data,
    }  # fmt: skip


def test_an_output_message_keeps_its_finish_reason(tmp_path: Path) -> None:
    """As in the otlp importer (one shared walk): a model output message's finish reason, when the
    message has one, is in its event's extra."""
    output = [{"role": "assistant", "content": "Cut short", "finish_reason": "length"}]
    gen = {"type": "generation", "model": "m", "input": [{"role": "user", "content": "Go"}], "output": output}
    path = tmp_path / "gen.json"
    path.write_text(json.dumps({"data": [_span("span_g", None, 1, gen)]}))
    (t,) = list(load_traces(path))
    [answer] = [e for e in t.events if e.kind == "message" and e.role == "assistant"]
    assert (answer.content, answer.extra.get("finish_reason")) == ("Cut short", "length")


def test_a_span_that_is_its_own_parent_is_a_root_in_start_order(tmp_path: Path) -> None:
    """The span tree drops a self-reference (this importer keeps the parent id as written, so the
    tree's rule is what is tested): each such span is a root, walked in start-time order, not
    left to the cycle breaker after the true roots."""
    spans = [
        _span("span_c", "span_c", 3, {"type": "custom", "name": "late self-parent"}),
        _span("span_b", None, 2, {"type": "custom", "name": "root"}),
        _span("span_a", "span_a", 1, {"type": "custom", "name": "early self-parent"}),
    ]
    path = tmp_path / "self.json"
    path.write_text(json.dumps({"data": spans}))
    (t,) = list(load_traces(path))
    assert [e.content for e in t.events] == ["early self-parent", "root", "late self-parent"]
