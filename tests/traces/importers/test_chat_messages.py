"""OpenAI-style chat messages: every accepted shape, tool pairing, blocks, metadata, tau-bench."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from conftest import shared_path
from mastkit.errors import TraceLoadError
from mastkit.traces import Trace, iter_load, load_traces
from mastkit.traces.registry import get_importer
from mastkit.traces.source import Source

CALL = {
    "role": "assistant",
    "content": "Checking the pods.",
    "tool_calls": [
        {
            "id": "c1",
            "type": "function",
            "function": {"name": "shell", "arguments": '{"cmd": "kubectl get pods"}'},
        }
    ],
    "usage": {"prompt_tokens": 120, "completion_tokens": 30},
    "model": "gpt-4o",
}
RESULT = {"role": "tool", "tool_call_id": "c1", "content": "pod-a CrashLoopBackOff"}


def _write(tmp_path: Path, name: str, value: Any) -> Path:
    path = tmp_path / name
    path.write_bytes(orjson.dumps(value))
    return path


def _one(path: Path) -> Trace:
    (t,) = list(load_traces(path))
    assert t.source_format == "chat_messages"
    return t


@pytest.mark.parametrize("n", [1, 3])
def test_bare_list_of_messages(tmp_path: Path, n: int) -> None:
    msgs = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}"} for i in range(n)]
    t = _one(_write(tmp_path, "run.json", msgs))
    assert [e.content for e in t.events] == [f"m{i}" for i in range(n)]
    assert t.events[0].source is not None and t.events[0].source.pointer == "/0"


def test_messages_object_with_tool_calls_results_and_metadata(tmp_path: Path) -> None:
    doc = {
        "id": "run-7",
        "task": "Why is pod-a down?",
        "model": "gpt-4o",
        "success": False,
        "messages": [
            {"role": "system", "content": "You are an SRE agent."},
            {"role": "user", "content": "go"},
            CALL,
            RESULT,
        ],
    }
    t = _one(_write(tmp_path, "run.json", doc))
    assert t.trace_id == "run-7" and t.task == "Why is pod-a down?" and t.model == "gpt-4o"
    assert t.outcome is not None and t.outcome.success is False
    assert [e.kind for e in t.events] == ["message", "message", "message", "tool_call", "tool_result"]
    assert t.events[0].subtype == "system_prompt"
    call, result = t.events[3], t.events[4]
    assert call.tool_call is not None and call.tool_call.arguments == {"cmd": "kubectl get pods"}
    assert call.tool_call.arguments_raw == '{"cmd": "kubectl get pods"}'
    assert (
        result.tool_result is not None
        and result.tool_result.call_id == "c1"
        and result.actor == "environment"
    )
    assert list(t.tool_calls()) == [(call, result)]
    # usage counted once, on the message's last event; the native message is raw of its first
    assert t.events[2].usage is None and call.usage is not None and call.usage.input_tokens == 120
    assert t.events[2].raw == CALL and call.raw is None and call.model == "gpt-4o"
    assert t.raw == {k: v for k, v in doc.items() if k != "messages"}


def test_anthropic_blocks_and_reasoning(tmp_path: Path) -> None:
    msgs = [
        {"role": "user", "content": "list files"},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "I should run ls."},
                {"type": "text", "text": "Running ls."},
                {"type": "tool_use", "id": "tu1", "name": "bash", "input": {"command": "ls"}},
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "tu1", "content": "a.txt", "is_error": False}],
        },
        {"role": "assistant", "content": "Done.", "reasoning_content": "one file"},
    ]
    t = _one(_write(tmp_path, "run.json", {"messages": msgs}))
    assert [e.kind for e in t.events] == [
        "message", "reasoning", "message", "tool_call", "tool_result", "reasoning", "message",
    ]  # fmt: skip
    assert t.events[3].tool_call is not None and t.events[3].tool_call.arguments == {"command": "ls"}
    assert t.events[4].tool_result is not None and t.events[4].tool_result.is_error is False
    assert [(c.seq, r.seq if r else None) for c, r in t.tool_calls()] == [(3, 4)]


def test_sharegpt_and_named_agents(tmp_path: Path) -> None:
    t = _one(
        _write(
            tmp_path,
            "sg.json",
            {"conversations": [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "hello"}]},
        )
    )
    assert [(e.role, e.content) for e in t.events] == [("user", "hi"), ("assistant", "hello")]
    t = _one(
        _write(
            tmp_path,
            "ma.json",
            [
                {"role": "assistant", "name": "Planner", "content": "plan"},
                {"role": "assistant", "name": "Coder", "content": "code"},
            ],
        )
    )
    assert [e.actor for e in t.events] == ["Planner", "Coder"] and [a.name for a in t.agents] == [
        "Planner",
        "Coder",
    ]


def test_jsonl_one_trace_per_line_and_a_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    lines = [
        orjson.dumps({"id": f"r{i}", "messages": [{"role": "user", "content": str(i)}]}) for i in range(3)
    ]
    path.write_bytes(b"\n".join([lines[0], b'{"id": "broken", "messages": [', lines[1], lines[2]]) + b"\n")
    items = list(iter_load(path))
    traces = [i for i in items if isinstance(i, Trace)]
    errors = [i for i in items if isinstance(i, TraceLoadError)]
    assert [t.trace_id for t in traces] == ["r0", "r1", "r2"]
    assert len(errors) == 1 and errors[0].line == 2
    assert traces[1].events[0].source is not None and traces[1].events[0].source.line == 3


def test_list_of_runs(tmp_path: Path) -> None:
    runs = [
        {"id": f"r{i}", "messages": [{"role": "user", "content": "x"}, {"role": "assistant", "content": "y"}]}
        for i in range(2)
    ]
    assert [t.trace_id for t in load_traces(_write(tmp_path, "runs.json", runs))] == ["r0", "r1"]


def test_fallback_trace_id_is_stable_and_content_based(tmp_path: Path) -> None:
    msgs = [{"role": "user", "content": "same"}]
    (tmp_path / "a").mkdir()
    a = _one(_write(tmp_path / "a", "run.json", msgs))
    b = _one(_write(tmp_path, "run.json", msgs))  # same content elsewhere: same id
    c = _one(_write(tmp_path, "other.json", [{"role": "user", "content": "different"}]))
    assert a.trace_id == b.trace_id and a.trace_id.startswith("run-") and c.trace_id != a.trace_id


def test_sniff_does_not_claim_other_json(tmp_path: Path) -> None:
    imp = get_importer("chat_messages")
    for value in ({"a": 1}, [1, 2, 3], [{"role": "wizard", "content": "x"}], {"messages": []}):
        assert imp.sniff(Source(_write(tmp_path, "x.json", value))) == 0


def test_tau_bench_sample_counts() -> None:
    t = _one(shared_path("trace_samples", "tau_bench", "tb_airline.json"))
    # README: 1 run (airline task 0), 42 messages, 12 tool calls, reward 0.0 (failed)
    assert t.benchmark == "tau-bench" and t.trace_id == "tau-0-trial0"
    assert len(t.raw and t.events) > 0 and sum(1 for e in t.events if e.kind == "tool_call") == 12
    assert (
        len({e.raw["content"] if isinstance(e.raw, dict) else None for e in t.events if e.raw is not None})
        >= 1
    )
    assert sum(1 for e in t.events if e.raw is not None) == 42
    assert t.outcome is not None and t.outcome.success is False and t.outcome.score == 0.0
    assert {e.role for e in t.events} == {"system", "user", "assistant", "tool"}


FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "chat_messages"


def test_tau2_bench_results() -> None:
    # tau2-bench: {info, tasks, simulations: [...]}; tool messages carry the call id as ``id``
    # and the error flag as ``error``; tool_calls are flat {id, name, arguments}
    traces = list(load_traces(FIXTURES / "tau2_results.json"))
    assert [t.trace_id for t in traces] == ["sim-aaa", "sim-bbb"]
    a, b = traces
    assert a.source_format == "chat_messages" and a.benchmark == "tau2-bench" and a.task_id == "0"
    [(call, result)] = list(a.tool_calls())
    assert call.tool_call is not None and call.tool_call.arguments == {"reservation_id": "ABC123"}
    assert result is not None and result.tool_result is not None and result.tool_result.is_error is False
    assert a.outcome is not None and (a.outcome.success, a.outcome.score) == (True, 1.0)
    assert a.termination is not None
    assert (a.termination.reason, a.termination.native, a.termination.by) == ("user", "user_stop", "user")
    assert a.events[0].source is not None and a.events[0].source.pointer == "/simulations/0/messages/0"
    assert b.outcome is not None and b.outcome.success is False
    assert b.termination is not None and b.termination.by == "limit"
    err = next(e for e in b.events if e.kind == "tool_result")
    assert err.tool_result is not None and (err.tool_result.call_id, err.tool_result.is_error) == (
        "call_9",
        True,
    )


def test_responses_api_items() -> None:
    # OpenAI Responses API input items: function_call / function_call_output / reasoning have no role
    [t] = list(load_traces(FIXTURES / "responses_items.json"))
    assert t.source_format == "chat_messages"
    assert [e.kind for e in t.events] == [
        "message",
        "message",
        "reasoning",
        "tool_call",
        "tool_result",
        "message",
    ]
    [(call, result)] = list(t.tool_calls())
    assert call.tool_call is not None and call.tool_call.call_id == "call_A"
    assert call.tool_call.arguments == {"cmd": ["cat", "README"]}
    assert result is not None and result.tool_result is not None and result.tool_result.output == "hello"
    assert t.events[2].content == "Read the file."
    assert t.events[-1].content == "It says hello." and t.events[-1].actor == "assistant"


def test_sharegpt_function_call_and_observation() -> None:
    # ShareGPT tool-use datasets (LLaMA-Factory style): from = function_call / observation
    [t] = list(load_traces(FIXTURES / "sharegpt_tools.json"))
    assert [e.kind for e in t.events] == ["message", "tool_call", "tool_result", "message"]
    call = t.events[1].tool_call
    assert call is not None and call.name == "get_weather" and call.arguments == {"city": "Paris"}
    assert t.events[2].actor == "environment" and t.events[2].role == "tool"


def test_non_string_type_does_not_lose_the_file(tmp_path: Path) -> None:
    # a message whose ``type`` is a list / dict (unhashable) was looked up in the item-type set
    path = _write(
        tmp_path,
        "chat.json",
        [
            {"role": "user", "content": "hi"},
            {"from": "gpt", "value": "x", "type": ["a"]},
            {"from": "human", "value": "y", "type": {"k": 1}},
        ],
    )
    items = list(iter_load(path))
    assert not [i for i in items if isinstance(i, TraceLoadError)]
    [t] = items
    assert isinstance(t, Trace) and [e.content for e in t.events] == ["hi", "x", "y"]


def test_termination_reason_alone_is_not_tau2(tmp_path: Path) -> None:
    # any harness may log a ``termination_reason``: only tau2-bench results (simulations /
    # reward_info) are labelled tau2-bench
    messages = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]
    path = _write(tmp_path, "run.json", {"messages": messages, "termination_reason": "max_turns"})
    [t] = list(load_traces(path))
    assert t.benchmark is None and t.framework is None and t.termination is None
    assert t.raw is not None and t.raw["termination_reason"] == "max_turns"


def test_tau2_results_metadata_kept_per_simulation() -> None:
    # the results' info (agent / user models) and the simulation's task were dropped
    a, b = list(load_traces(FIXTURES / "tau2_results.json"))
    assert a.raw is not None and a.raw["tau2_results"]["info"]["agent_info"]["llm"] == "gpt-4.1"
    assert a.raw["tau2_results"]["timestamp"] == "2025-06-20T10:00:00"
    assert a.raw["tau2_task"] == {"id": "0"} and b.raw is not None and "tau2_task" not in b.raw
    assert a.model == "gpt-4.1"


def test_function_message_id_is_not_a_call_id(tmp_path: Path) -> None:
    # a legacy ``role: function`` result paired by position: its own message ``id`` is not a call id
    msgs = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": None, "function_call": {"name": "f", "arguments": "{}"}},
        {"role": "function", "name": "f", "content": "out", "id": "msg-3"},
    ]
    [t] = list(load_traces(_write(tmp_path, "fn.json", msgs)))
    [(_call, result)] = list(t.tool_calls())
    assert result is not None and result.tool_result is not None and result.tool_result.call_id is None


def test_tau2_user_tool_calls_keep_the_user_role(tmp_path: Path) -> None:
    # tau2-bench telecom: the user simulator calls tools itself (role user, requestor user); its
    # calls are the user's, not an assistant turn
    sim = {
        "id": "sim-u", "task_id": "t1", "messages": [
            {"role": "assistant", "content": "Please restart your phone."},
            {"role": "user", "content": None, "tool_calls": [
                {"id": "u1", "name": "toggle_airplane_mode", "arguments": {}, "requestor": "user"}]},
            {"role": "tool", "id": "u1", "content": "airplane mode off", "requestor": "user"},
            {"role": "user", "content": "Done. ###STOP###"},
        ],
    }  # fmt: skip
    path = _write(tmp_path, "results.json", {"info": {}, "tasks": [], "simulations": [sim]})
    [t] = list(load_traces(path))
    [(call, result)] = list(t.tool_calls())
    assert (call.actor, call.role) == ("user", "user")
    assert (
        result is not None
        and result.tool_result is not None
        and result.tool_result.output == "airplane mode off"
    )


def test_tau2_results_with_no_simulation_say_so(tmp_path: Path) -> None:
    # a tau2-bench run stopped before it saved a simulation (10 of 52 files in a public fork's
    # data/simulations): it was "no importer recognises", now it names what is missing
    info = {"environment_info": {"domain_name": "airline"}, "agent_info": {"llm": "grok-3"}}
    path = _write(
        tmp_path, "results.json", {"timestamp": "t", "info": info, "tasks": [{"id": "0"}], "simulations": []}
    )
    errors: list[TraceLoadError] = []
    assert list(load_traces(path, on_error=errors.append)) == []
    [err] = errors
    assert (
        err.reason == "tau2-bench results with no simulations: the run saved none (only its info and tasks)"
    )
    assert err.importer == "chat_messages" and Path(err.path) == path
    # an empty list under another header is not claimed as tau2-bench
    other = _write(tmp_path, "other.json", {"info": {"name": "x"}, "simulations": []})
    assert get_importer("chat_messages").sniff(Source(other)) == 0
    assert get_importer("chat_messages").sniff(Source(_write(tmp_path, "list.json", [1]))) == 0


def test_a_run_with_no_messages_among_others_is_a_trace_with_no_events(tmp_path: Path) -> None:
    # a harness JSONL in which one run stopped before its first message: its failure still counts
    runs = [
        {"id": "r1", "messages": [{"role": "user", "content": "hi"}], "eval_result": {"score": 1.0}},
        {"id": "r2", "messages": [], "eval_result": {"score": 0.0}, "meta": {"is_correct": False}},
    ]
    path = tmp_path / "runs.jsonl"
    path.write_bytes(b"\n".join(orjson.dumps(r) for r in runs) + b"\n")
    errors: list[TraceLoadError] = []
    traces = list(load_traces(path, on_error=errors.append))
    assert not errors and [t.trace_id for t in traces] == ["r1", "r2"]
    assert traces[1].events == [] and traces[1].outcome is not None
    assert traces[1].outcome.success is False and traces[1].outcome.score == 0.0
    # an empty list alone is not a chat file: the sniffer does not claim it
    assert get_importer("chat_messages").sniff(Source(_write(tmp_path, "x.json", runs[1]))) == 0
    # the empty run first: the file is still read (a weak claim), both runs load
    first_empty = tmp_path / "first_empty.jsonl"
    first_empty.write_bytes(b"\n".join(orjson.dumps(r) for r in reversed(runs)) + b"\n")
    assert [t.trace_id for t in load_traces(first_empty)] == ["r2", "r1"]


@pytest.mark.parametrize(
    ("verdict", "success", "score"),
    [
        ({"eval_result": {"score": 0.5, "passed": True}}, True, 0.5),
        ({"meta": {"is_correct": False}, "metadata": {"reward": 0}}, False, 0.0),
        ({"result": {"resolved": True}}, True, None),
        ({"success": False, "metadata": {"success": True}}, False, None),  # the record's own key wins
    ],
)
def test_a_harness_verdict_below_the_record_is_the_outcome(
    tmp_path: Path, verdict: dict[str, Any], success: bool, score: float | None
) -> None:
    rec = {"benchmark_name": "taubench", "messages": [{"role": "user", "content": "hi"}], **verdict}
    t = _one(_write(tmp_path, "run.json", rec))
    assert t.benchmark == "taubench"
    assert t.outcome is not None and (t.outcome.success, t.outcome.score) == (success, score)


def test_magentic_one_agent_name_roles() -> None:
    path = FIXTURES / "magentic_one_history.json"
    assert get_importer("chat_messages").sniff(Source(path)) > 0
    [t] = load_traces(path)
    assert t.source_format == "chat_messages"
    assert Trace.model_validate_json(t.model_dump_json()) == t
    assert len(t.events) == 11
    assert t.kind_counts() == {"message": 6, "reasoning": 3, "plan": 2}
    assert [a.name for a in t.agents] == ["Orchestrator", "WebSurfer", "Assistant"]
    assert [(e.kind, e.actor, e.role) for e in t.events[:4]] == [
        ("message", "user", "user"),
        ("plan", "Orchestrator", "assistant"),
        ("reasoning", "Orchestrator", "assistant"),
        ("message", "Orchestrator", "assistant"),
    ]
    assert t.events[3].recipients == ["WebSurfer"] and t.events[8].recipients == ["Assistant"]
    assert [e.content for e in t.events if e.kind == "plan"][1].startswith("New plan:")
    assert (t.events[5].actor, t.events[5].kind) == ("WebSurfer", "message")
    assert (t.events[10].subtype, t.events[10].actor) == ("termination condition", "Orchestrator")
    assert t.events[1].raw == {"role": "Orchestrator (thought)", "content": t.events[1].content}


def test_agent_name_roles_broken_message_is_named(tmp_path: Path) -> None:
    path = tmp_path / "history.json"
    msgs = [
        {"role": "Orchestrator (thought)", "content": "Next speaker WebSurfer"},
        {"role": "WebSurfer", "text": "I clicked the link."},
    ]
    path.write_text(json.dumps(msgs))
    with pytest.raises(TraceLoadError) as err:
        list(load_traces(path))
    assert "item 1 (role 'WebSurfer') has no 'content'" in str(err.value)


def test_plain_named_roles_without_chat_role_are_not_claimed(tmp_path: Path) -> None:
    # agent-name roles alone, without a chat role or a Magentic-One suffix, are too weak a sign
    path = tmp_path / "rows.json"
    path.write_text(json.dumps([{"role": "admin", "content": "x"}, {"role": "editor", "content": "y"}]))
    assert get_importer("chat_messages").sniff(Source(path)) < 0.45


def test_autogen_agentchat_task_result() -> None:
    path = FIXTURES / "agentchat_task_result.json"
    assert get_importer("chat_messages").sniff(Source(path)) >= 0.5
    [t] = load_traces(path)
    assert Trace.model_validate_json(t.model_dump_json()) == t
    assert t.framework == "autogen-agentchat" and t.task == "What is the weather in Paris?"
    assert [(e.kind, e.actor) for e in t.events] == [
        ("message", "user"), ("reasoning", "planner"), ("tool_call", "planner"), ("tool_result", "environment"),
        ("message", "planner"), ("message", "writer"),
    ]  # fmt: skip
    assert [a.name for a in t.agents] == ["planner", "writer"]
    [(call, result)] = list(t.tool_calls())
    assert call.tool_call is not None and (call.tool_call.call_id, call.tool_call.arguments) == (
        "call_1", {"city": "Paris"},
    )  # fmt: skip
    assert result is not None and result.tool_result is not None and result.tool_result.is_error is False
    assert call.usage is not None and (call.usage.input_tokens, call.usage.output_tokens) == (40, 12)
    assert t.total_usage().input_tokens == 71
    assert t.events[4].subtype == "tool_call_summary"
    assert t.events[0].started_at is not None and t.events[0].started_at.isoformat().startswith(
        "2026-11-26T22:51:10"
    )
    assert t.termination is not None and (t.termination.reason, t.termination.by) == ("final_answer", "agent")
    assert t.termination.native == "Text 'TERMINATE' mentioned"


def test_autogen_agentchat_handoff_and_limit(tmp_path: Path) -> None:
    msgs = [
        {"source": "user", "content": "Book a table", "type": "TextMessage", "models_usage": None},
        {"source": "router", "content": "Transferred to booker", "target": "booker", "type": "HandoffMessage"},
        {"source": "booker", "content": ["booker", "router"], "type": "SelectSpeakerEvent"},
        {"source": "booker", "content": [{"content": "no tables", "name": "book", "call_id": "c9", "is_error": True}],
         "type": "ToolCallExecutionEvent"},
    ]  # fmt: skip
    path = tmp_path / "result.json"
    path.write_text(json.dumps({"messages": msgs, "stop_reason": "Maximum number of messages 4 reached"}))
    [t] = load_traces(path)
    assert [(e.kind, e.actor) for e in t.events] == [
        ("message", "user"), ("handoff", "router"), ("system", "booker"), ("tool_result", "environment"),
    ]  # fmt: skip
    assert t.events[1].recipients == ["booker"] and t.events[2].subtype == "SelectSpeakerEvent"
    assert t.events[3].tool_result is not None and t.events[3].tool_result.is_error is True
    assert t.termination is not None and (t.termination.reason, t.termination.by) == ("max_steps", "limit")


def test_autogen_agentchat_team_state_thread() -> None:
    # team.save_state(): the messages are the group chat manager's message_thread
    path = FIXTURES / "agentchat_team_state.json"
    assert get_importer("chat_messages").sniff(Source(path)) == 0.5
    [t] = load_traces(path)
    assert Trace.model_validate_json(t.model_dump_json()) == t
    assert [e.kind for e in t.events] == [
        "message",
        "reasoning",
        "tool_call",
        "tool_result",
        "message",
        "message",
    ]
    assert [a.name for a in t.agents] == ["planner", "writer"] and t.framework == "autogen-agentchat"
    assert t.events[2].source is not None
    assert t.events[2].source.pointer == "/agent_states/RoundRobinGroupChatManager/message_thread/2"


def test_tau2_user_scenario_becomes_the_task(tmp_path: Path) -> None:
    # the simulated user's instructions are its goal, as tau-bench's info.task.instruction is
    structured = {
        "persona": "Calm and brief.",
        "instructions": {
            "domain": "airline",
            "reason_for_call": "Change a flight.",
            "known_info": "Your user id is mia_kim_4397.",
            "unknown_info": None,
            "task_instructions": "Insist on a nonstop flight.",
        },
    }
    doc = {
        "info": {"agent_info": {"llm": "m"}},
        "tasks": [
            {"id": "1", "user_scenario": structured},
            {"id": "2", "user_scenario": {"persona": None, "instructions": "You want a refund."}},
            {"id": "3", "user_scenario": {"instructions": {"domain": "airline"}}},
        ],
        "simulations": [
            {"id": f"s{i}", "task_id": str(i), "messages": [{"role": "user", "content": "hi"}]}
            for i in (1, 2, 3)
        ],
    }
    a, b, c = list(load_traces(_write(tmp_path, "results.json", doc)))
    assert a.task == (
        "Calm and brief.\n\nReason for call: Change a flight.\n\nKnown info: Your user id is mia_kim_4397."
        "\n\nTask instructions: Insist on a nonstop flight."
    )
    assert b.task == "You want a refund." and c.task is None
