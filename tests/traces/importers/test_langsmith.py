"""LangSmith runs: {post, patch} batches, run objects / lists (with child_runs), run-ops JSONL."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import shared_path
from mastkit.errors import TraceLoadError
from mastkit.traces import Source, Trace, get_importer, iter_load, load_traces

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "langsmith"


def _check(t: Trace) -> Trace:
    assert t.source_format == "langsmith"
    assert Trace.model_validate_json(t.model_dump_json()) == t
    return t


def test_shared_batch_payload() -> None:
    path = shared_path("trace_samples", "langsmith_runs", "langsmith_py_wrap_openai_stream.json")
    assert get_importer("langsmith").sniff(Source(path)) >= 0.9
    [t] = [_check(t) for t in load_traces(path)]
    assert t.trace_id == "fe8ffecb-72ce-4cd2-bdb7-01f34654c391"
    # 1 post + 1 patch for one llm run: merged into one run, both records kept as its raw
    llm = [e for e in t.events if e.kind == "llm_call"]
    assert len(llm) == 1 and isinstance(llm[0].raw, list) and len(llm[0].raw) == 2
    assert [bool(r.get("inputs")) for r in llm[0].raw] == [True, False]  # post has inputs, patch outputs
    assert t.extra["run_types"] == {"llm": 1}
    assert t.kind_counts() == {"message": 2, "llm_call": 1}  # user input, llm call, assistant output
    assert t.kind_counts()["tool_call"] == 0
    assert [a.name for a in t.agents] == ["ChatOpenAI"]
    assert llm[0].model == "gpt-4o-mini-2024-07-18" and llm[0].usage is not None
    assert (llm[0].usage.input_tokens, llm[0].usage.output_tokens, llm[0].usage.total_tokens) == (9, 9, 18)
    assert llm[0].extra["stream_tokens"] == 12  # streamed: new_token events stay in raw
    assert t.task == "howdy"
    assert t.outcome is not None and t.outcome.final_output == "Howdy! How can I assist you today?"
    assert t.termination is None  # no error recorded
    out = t.events[-1]
    assert out.source is not None and out.source.pointer == "/patch/0/outputs"
    assert (t.framework, t.framework_version) == ("langsmith", "0.1.131")


def test_run_ops_jsonl_langgraph() -> None:
    items = list(iter_load(FIX / "run_ops_langgraph.jsonl"))
    errors = [i for i in items if isinstance(i, TraceLoadError)]
    traces = [_check(i) for i in items if isinstance(i, Trace)]
    assert len(errors) == 1 and errors[0].line == 6  # the broken line; the rest loads
    [t] = traces
    assert t.trace_id == "1f0a0000-0000-4000-8000-000000000001"
    assert (t.framework, t.framework_version) == ("langgraph", "0.2.60")
    assert t.extra["run_types"] == {"chain": 4, "llm": 2, "tool": 1}
    # node transitions are handoffs
    handoffs = [(e.actor, e.recipients) for e in t.events if e.kind == "handoff"]
    assert handoffs == [("LangGraph", ["agent"]), ("agent", ["tools"]), ("tools", ["agent"])]
    # re-sent history is not repeated: system + user once, one tool call, one result, one answer
    assert t.kind_counts() == {
        "system": 1, "handoff": 3, "message": 3, "llm_call": 2, "tool_call": 1, "tool_result": 1,
    }  # fmt: skip
    [(call, result)] = list(t.tool_calls())
    assert call.tool_call is not None and call.tool_call.call_id == "call_w1" and call.actor == "agent"
    assert call.tool_call.arguments == {"city": "Paris"}
    assert (
        result is not None and result.tool_result is not None and result.tool_result.output == "18C and sunny"
    )
    assert result.tool_result.is_error is False and result.phase == "tools"
    first = next(e for e in t.events if e.kind == "llm_call")
    assert (
        first.usage is not None
        and first.usage.cached_input_tokens == 32
        and first.model == "gpt-4o-2024-08-06"
    )
    assert first.extra["invocation_params"]["temperature"] == 0
    assert t.total_usage().input_tokens == 200
    assert t.task == "What's the weather in Paris?"
    assert t.outcome is not None and t.outcome.final_output == "It is 18C and sunny in Paris."
    assert t.extra["session_name"] == "weather-bot"
    # every run record (create + update lines) is kept: 15 lines minus the broken one
    kept = [e.raw for e in t.events if e.raw is not None]
    assert sum(len(r) if isinstance(r, list) else 1 for r in kept) == 14


def test_exported_runs_with_children_and_errors() -> None:
    items = list(iter_load(FIX / "exported_runs.json"))
    errors = [i for i in items if isinstance(i, TraceLoadError)]
    traces = [_check(i) for i in items if isinstance(i, Trace)]
    assert len(errors) == 1 and "/2" in errors[0].reason
    assert [t.trace_id for t in traces] == [
        "2a000000-0000-4000-8000-000000000001",
        "2a000000-0000-4000-8000-0000000000ff",
    ]
    t = traces[0]
    assert t.kind_counts() == {
        "system": 1, "message": 3, "llm_call": 1, "reasoning": 1, "tool_call": 1, "tool_result": 1, "error": 1,
    }  # fmt: skip
    assert next(e for e in t.events if e.subtype == "system_prompt").content == "You are a support agent."
    llm = next(e for e in t.events if e.kind == "llm_call")
    assert llm.model == "claude-3-5-sonnet-20241022"
    assert llm.usage is not None and (llm.usage.cache_write_tokens, llm.usage.cost_usd) == (10, 0.0004)
    # the tool run has no call id: it is paired with the model's tool_use of the same name
    [(call, result)] = list(t.tool_calls())
    assert call.tool_call is not None and call.tool_call.call_id == "toolu_1"
    assert result is not None and result.tool_result is not None and result.tool_result.is_error is True
    assert t.termination is not None and (t.termination.reason, t.termination.by) == ("error", "error")
    assert t.events[t.termination.at_seq or 0].kind == "error"
    retriever = traces[1]
    assert [e.kind for e in retriever.events] == ["tool_call", "tool_result"]
    assert retriever.events[0].subtype == "retriever" and retriever.task == "refund policy"


def test_single_run_and_list_of_batches(tmp_path: Path) -> None:
    run = {
        "id": "3b000000-0000-4000-8000-000000000001",
        "name": "summarise",
        "run_type": "chain",
        "start_time": "2025-04-01T10:00:00Z",
        "end_time": "2025-04-01T10:00:02Z",
        "inputs": {"question": "Summarise the memo"},
        "outputs": {"output": "Short memo."},
    }
    single = tmp_path / "run.json"
    single.write_text(json.dumps(run))
    [t] = [_check(t) for t in load_traces(single)]
    assert t.trace_id == run["id"] and t.task == "Summarise the memo"
    assert t.outcome is not None and t.outcome.final_output == "Short memo."
    # two ingest batches in one JSON list: the second patches a run posted by the first
    child = {
        "id": "3b000000-0000-4000-8000-000000000002",
        "trace_id": run["id"],
        "parent_run_id": run["id"],
        "name": "OpenAI",
        "run_type": "llm",
        "dotted_order": "20250401T100000000000Z3b000000-0000-4000-8000-000000000001."
        "20250401T100001000000Z3b000000-0000-4000-8000-000000000002",
        "inputs": {"prompts": ["Summarise the memo"]},
    }
    patch = {
        "id": child["id"],
        "trace_id": run["id"],
        "dotted_order": child["dotted_order"],
        "outputs": {
            "generations": [[{"text": "Short memo."}]],
            "llm_output": {"token_usage": {"total_tokens": 7}},
        },
        "end_time": "2025-04-01T10:00:01.500000Z",
    }
    root = {
        **run,
        "trace_id": run["id"],
        "dotted_order": "20250401T100000000000Z3b000000-0000-4000-8000-000000000001",
    }
    batches = tmp_path / "batches.json"
    batches.write_text(json.dumps([{"post": [root, child]}, {"patch": [patch]}]))
    assert get_importer("langsmith").sniff(Source(batches)) >= 0.9
    [t2] = [_check(t) for t in load_traces(batches)]
    assert [e.kind for e in t2.events] == ["system", "message", "llm_call", "message"]
    assert t2.events[2].usage is not None and t2.events[2].usage.total_tokens == 7
    assert t2.events[3].content == "Short memo." and t2.events[3].source is not None
    assert t2.events[3].source.pointer == "/1/patch/0/outputs"


def test_sniff_is_specific(tmp_path: Path) -> None:
    imp = get_importer("langsmith")
    chat = tmp_path / "chat.json"
    chat.write_text(json.dumps({"id": "x", "messages": [{"role": "user", "content": "hi"}]}))
    assert imp.sniff(Source(chat)) == 0.0
    otel = tmp_path / "spans.json"
    otel.write_text(json.dumps({"id": "abc", "run_type": "workflow", "name": "x"}))
    assert imp.sniff(Source(otel)) == 0.0


def test_export_feedback_stats_and_reasoning_summary() -> None:
    # list_runs export: feedback_stats on the root; langchain-openai Responses output blocks
    # (reasoning with a summary list).
    [t] = [_check(t) for t in load_traces(FIX / "export_feedback_v1blocks.json")]
    assert t.outcome is not None and t.outcome.final_output == "Paris"
    assert t.outcome.metrics == {"correctness": 1.0, "helpfulness": 0.5}
    assert [e.content for e in t.events if e.kind == "reasoning"] == ["Recall geography."]
    assert [e.content for e in t.events if e.kind == "message" and e.role == "assistant"] == ["Paris"]


def test_langchain_v1_call_blocks_and_chat_model_task() -> None:
    t1, t2 = [_check(t) for t in load_traces(FIX / "lc_v1_blocks.jsonl")]
    # Responses function_call block duplicates tool_calls: one call; reasoning summary read
    assert [(e.tool_call.name, e.tool_call.call_id) for e in t1.events if e.tool_call] == [
        ("weather", "call_w")
    ]
    assert [e.content for e in t1.events if e.kind == "reasoning"] == ["Need the tool."]
    assert t1.task == "weather in Rome?"  # chat model root: {"messages": [[...]]}
    # LangChain v1 tool_call block with no tool_calls kwarg
    assert [(e.tool_call.name, e.tool_call.call_id) for e in t2.events if e.tool_call] == [("lookup", "tc_1")]
    assert [e.content for e in t2.events if e.kind == "message" and e.role == "assistant"] == ["Looking up."]


def test_id_less_call_block_repeating_tool_calls_gives_one_call(tmp_path: Path) -> None:
    # tool_calls without ids and the same call as an id-less content block: one call, not two
    run = {
        "id": "3aaa0000-0000-4000-8000-000000000001", "trace_id": "3aaa0000-0000-4000-8000-000000000001",
        "name": "ChatModel", "run_type": "llm", "start_time": "2025-07-01T10:00:00Z",
        "inputs": {"messages": [[{"type": "human", "content": "go"}]]},
        "outputs": {"generations": [[{"message": {
            "type": "ai",
            "content": [{"type": "tool_call", "name": "lookup", "args": {"q": "x"}}],
            "tool_calls": [{"id": None, "name": "lookup", "args": {"q": "x"}, "type": "tool_call"}],
        }}]]},
    }  # fmt: skip
    path = tmp_path / "runs.jsonl"
    path.write_text(json.dumps(run) + "\n")
    [t] = [_check(t) for t in load_traces(path)]
    assert [e.tool_call.name for e in t.events if e.tool_call] == ["lookup"]


def test_js_sdk_batch_epoch_ms_and_id_less_patch() -> None:
    # the JS SDK's own test data: times in epoch milliseconds, the patch carries no "id" (the run id
    # is the tail of its dotted_order)
    path = FIX / "langsmith_js_wrap_openai_default.json"
    assert get_importer("langsmith").sniff(Source(path)) >= 0.9
    [t] = [_check(t) for t in load_traces(path)]
    assert t.trace_id == "dc34609e-3eeb-459d-bc2a-6fedb01d2e6e"
    assert t.kind_counts() == {"message": 2, "llm_call": 1}
    assert [a.name for a in t.agents] == ["ChatOpenAI"]
    llm = next(e for e in t.events if e.kind == "llm_call")
    assert isinstance(llm.raw, list) and len(llm.raw) == 2 and "id" not in llm.raw[1]  # patch kept as written
    assert llm.model == "gpt-4o-mini-2024-07-18"
    assert llm.usage is not None and (llm.usage.input_tokens, llm.usage.output_tokens) == (9, 9)
    assert llm.started_at is not None and llm.started_at.isoformat() == "2024-10-13T07:05:37.170000+00:00"
    assert llm.ended_at is not None and llm.ended_at.isoformat() == "2024-10-13T07:05:38.285000+00:00"
    assert t.started_at == llm.started_at and t.ended_at == llm.ended_at
    assert t.events[-1].content == "Howdy! How can I assist you today?" and t.events[-1].role == "assistant"
    assert (t.framework, t.framework_version, t.extra["sdk"]) == ("langsmith", "0.1.65", "langsmith-js")


def test_js_camel_case_runs_and_epoch_ms_order(tmp_path: Path) -> None:
    # runs written from JS RunTree options (camelCase names, epoch ms numbers); the children have no
    # dotted_order, so they are ordered by start time: 9.9e11 ms sorts before 1.0e12 ms as a number,
    # not as text
    root = "4c000000-0000-4000-8000-000000000001"
    runs = [
        {"id": root, "name": "Agent", "runType": "chain", "startTime": 999_999_999_000,
         "endTime": 1_000_000_005_000, "inputs": {"input": "hi"}, "outputs": {"output": "done"}},
        {"id": "4c000000-0000-4000-8000-000000000003", "name": "second", "runType": "tool",
         "parentRunId": root, "traceId": root, "startTime": 1_000_000_001_000, "inputs": {"input": "b"},
         "outputs": {"output": "B"}},
        {"id": "4c000000-0000-4000-8000-000000000002", "name": "first", "runType": "tool",
         "parentRunId": root, "traceId": root, "startTime": 999_999_999_500, "inputs": {"input": "a"},
         "outputs": {"output": "A"}},
    ]  # fmt: skip
    path = tmp_path / "runs.json"
    path.write_text(json.dumps(runs))
    [t] = [_check(t) for t in load_traces(path)]
    assert t.trace_id == root and t.task == "hi"
    assert [e.tool_call.name for e in t.events if e.tool_call] == ["first", "second"]
    assert t.started_at is not None and t.started_at.year == 2001
    assert t.extra["run_types"] == {"chain": 1, "tool": 2}


def test_record_without_any_run_id_says_so(tmp_path: Path) -> None:
    ok = {"id": "4d000000-0000-4000-8000-000000000001", "name": "a", "run_type": "chain", "inputs": {}}
    path = tmp_path / "runs.jsonl"
    path.write_text(json.dumps(ok) + "\n" + json.dumps({"outputs": {"output": "x"}, "end_time": 5}) + "\n")
    items = list(iter_load(path))
    [err] = [i for i in items if isinstance(i, TraceLoadError)]
    assert err.line == 2 and "no 'id'" in err.reason and "dotted_order" in err.reason
