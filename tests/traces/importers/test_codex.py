"""Codex CLI rollouts, codex exec --json streams and ITBench workspaces."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from mastkit.errors import TraceLoadError
from mastkit.traces import Source, Trace, get_importer, iter_load, load_traces

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "codex"
ROLLOUT = FIX / "rollout-2025-09-20T08-00-00-01994a2e-7c1d-7b10-9a3e-5f6e7d8c9b0a.jsonl"
LEGACY = FIX / "rollout-2025-05-12T10-00-00-5f0e7a34-1b2c-4d3e-8f9a-0b1c2d3e4f50.jsonl"
WS = FIX / "itbench_workspace" / "2" / "1"


def _one(path: Path, fmt: str = "codex") -> Trace:
    traces = list(load_traces(path))
    assert len(traces) == 1
    t = traces[0]
    assert t.source_format == fmt
    assert Trace.model_validate_json(t.model_dump_json()) == t
    return t


def test_rollout_structure() -> None:
    t = _one(ROLLOUT)
    assert t.trace_id == "01994a2e-7c1d-7b10-9a3e-5f6e7d8c9b0a"
    assert (t.framework, t.framework_version, t.model) == ("codex", "0.39.0", "gpt-5-codex")
    assert t.task == "Why does `make test` fail on the rounding test? Fix it."
    assert t.extra["cwd"] == "/home/dev/ledger" and t.extra["originator"] == "codex_cli_rs"
    assert t.kind_counts() == {"message": 2, "reasoning": 1, "tool_call": 4, "tool_result": 3, "system": 2}
    env = t.events[0]
    assert env.subtype == "environment_context" and env.actor == "system"
    # event_msg mirrors are dropped, not duplicated
    assert sum(1 for e in t.events if e.content and "rounding test" in e.content) == 1
    assert t.extra["mirrored_event_msgs"]["user_message"] == 1
    assert t.extra["mirrored_event_msgs"]["agent_reasoning"] == 1


def test_rollout_tool_results() -> None:
    t = _one(ROLLOUT)
    pairs = list(t.tool_calls())
    assert [c.tool_call.name for c, _r in pairs if c.tool_call] == ["shell", "shell", "apply_patch", "shell"]
    first_call, first_res = pairs[0]
    assert first_call.tool_call is not None and first_call.tool_call.arguments["command"][-1] == "make test"
    assert first_res is not None and first_res.tool_result is not None
    assert first_res.tool_result.exit_code == 2 and first_res.tool_result.is_error is True
    assert first_res.tool_result.duration_ms == 4300
    assert first_res.tool_result.output is not None and first_res.tool_result.output.startswith("FAILED")
    patch_call, patch_res = pairs[2]
    assert patch_call.subtype == "custom_tool_call" and patch_call.tool_call is not None
    assert (
        patch_call.tool_call.arguments_raw is not None and "Begin Patch" in patch_call.tool_call.arguments_raw
    )
    assert (
        patch_res is not None and patch_res.tool_result is not None and patch_res.tool_result.exit_code == 0
    )
    assert pairs[3][1] is None  # interrupted before the last command returned


def test_rollout_usage_per_call() -> None:
    t = _one(ROLLOUT)
    with_usage = [e for e in t.events if e.usage is not None]
    # 4 model calls: 3 token_counts with usage, one with info null
    assert [e.usage.input_tokens for e in with_usage if e.usage] == [5200, 5700, 3100]
    assert with_usage[0].kind == "reasoning" and with_usage[0].usage is not None
    assert with_usage[0].usage.cached_input_tokens == 3072 and with_usage[0].usage.reasoning_tokens == 128
    group = [e for e in t.events if e.llm_call_id == with_usage[0].llm_call_id]
    assert [e.kind for e in group] == ["reasoning", "tool_call"]
    patch = next(e for e in t.events if e.subtype == "custom_tool_call")
    assert patch.usage is None and patch.extra["token_count"]["payload"]["info"] is None
    assert t.usage is not None and t.usage.input_tokens == 14000  # the last cumulative total
    assert t.total_usage().input_tokens == 14000


def test_rollout_compaction_and_abort() -> None:
    t = _one(ROLLOUT)
    comp = [e for e in t.events if e.subtype == "context_compaction"]
    assert len(comp) == 1 and comp[0].kind == "system"  # compacted + context_compacted counted once
    assert comp[0].content is not None and comp[0].content.startswith("Summary so far")
    assert comp[0].extra["replacement_history_items"] == 1
    assert t.termination is not None
    assert (t.termination.reason, t.termination.by, t.termination.native) == (
        "aborted",
        "user",
        "turn_aborted:interrupted",
    )
    assert t.termination.at_seq == len(t.events) - 1


def test_legacy_layout() -> None:
    t = _one(LEGACY)
    assert t.trace_id == "5f0e7a34-1b2c-4d3e-8f9a-0b1c2d3e4f50"
    assert t.agents[0].system_prompt == "Be terse."
    call, res = next(iter(t.tool_calls()))
    assert call.tool_call is not None and call.tool_call.name == "shell"
    assert call.tool_call.arguments_raw == "ls -1"
    assert res is not None and res.tool_result is not None and res.tool_result.exit_code == 0
    assert len(t.raw["records"]) == 2  # the {record_type: state} lines


def test_broken_line_rest_loads() -> None:
    items = list(iter_load(FIX / "broken_rollout.jsonl"))
    errors = [i for i in items if isinstance(i, TraceLoadError)]
    traces = [i for i in items if isinstance(i, Trace)]
    assert len(errors) == 1 and errors[0].line == 5
    assert len(traces) == 1 and traces[0].kind_counts()["tool_call"] == 2


def test_exec_stream() -> None:
    t = _one(FIX / "exec_stream.jsonl")
    assert t.trace_id == "0199b7c2-aaaa-7bbb-8ccc-ddddeeeeffff"
    pairs = list(t.tool_calls())
    assert len(pairs) == 4 and all(r is not None for _c, r in pairs)
    mcp = pairs[1][0].tool_call
    assert mcp is not None and (mcp.namespace, mcp.name) == ("sre_tools", "alert_summary")
    failed = pairs[2][1]
    assert failed is not None and failed.tool_result is not None
    assert failed.tool_result.exit_code == 1 and failed.tool_result.is_error is True
    assert t.kind_counts()["plan"] == 1
    assert t.usage is not None and t.usage.input_tokens == 24000
    assert t.total_usage().output_tokens == 900  # per-turn usage counted once
    assert t.termination is not None and t.termination.reason == "completed"
    assert t.outcome is not None and t.outcome.final_output is not None
    assert t.outcome.final_output.startswith("Root cause")


def test_workspace_resumed_rollouts() -> None:
    t = _one(WS, "codex_workspace")
    assert t.trace_id == "2/1"
    assert (t.framework, t.benchmark, t.task_id, t.model) == ("codex", "ITBench", "2", "gpt-oss-120b")
    assert t.task is not None and t.task.startswith("# SRE investigation")
    assert "Begin investigation" in t.task
    assert t.agents[0].system_prompt is not None and "SRE agent" in t.agents[0].system_prompt
    assert {e.segment for e in t.events} == {0, 1}
    copied = [e for e in t.events if e.is_copied_context]
    assert len(copied) == 5 and {e.segment for e in copied} == {1}
    new_user = next(e for e in t.events if e.content and e.content.startswith("I don't see"))
    assert not new_user.is_copied_context and new_user.segment == 1
    # the replayed calls are not counted twice as fresh work
    fresh_calls = [e for e in t.events if e.kind == "tool_call" and not e.is_copied_context]
    assert len(fresh_calls) == 3
    assert t.events[-1].kind == "artifact" and t.events[-1].raw["entities"][0]["contributing_factor"] is True
    assert t.outcome is not None
    assert t.outcome.final_output is not None and "flagd-config" in t.outcome.final_output
    assert t.outcome.metrics["root_cause_entity_recall"] == 1.0
    assert t.outcome.score == 1.0 and t.outcome.success is True
    assert t.raw["judge_output"]["metadata"]["scenario_name"] == "2"
    assert t.termination is not None and t.termination.native == "task_complete"
    assert len([p for p in t.source_paths if p.endswith(".jsonl")]) == 2
    sources = {e.source.path for e in t.events if e.source and e.source.path}
    assert any("12-09-00" in s for s in sources) and any("12-00-00" in s for s in sources)


def test_workspace_from_stdout_log_and_partial_recall() -> None:
    t = _one(FIX / "itbench_workspace" / "7" / "2", "codex_workspace")
    assert t.outcome is not None and t.outcome.score == 0.5 and t.outcome.success is False
    assert t.kind_counts()["tool_call"] == 4


def _telemetry_workspace(tmp_path: Path, telemetry: str) -> Path:
    """An ITBench trial folder whose only trace is Codex's OTLP logs (``--collect-traces``)."""
    ws = tmp_path / "5" / "3"
    (ws / "traces").mkdir(parents=True)
    for name in ("AGENTS.md", "judge_output.json"):
        shutil.copy(FIX / "itbench_workspace" / "7" / "2" / name, ws / name)
    (ws / "traces" / "traces.jsonl").write_text(telemetry)
    return ws


def test_workspace_from_telemetry_when_nothing_else_is_there(tmp_path: Path) -> None:
    """No rollout and no exec stream: the events come from traces/traces.jsonl, one segment per
    conversation the harness ran (a resume starts a new one), in time order."""
    first = (FIX.parent / "otel_logs" / "codex_otlp_logs.jsonl").read_text()
    conv = "019bc26a-8a6c-7f43-8605-0aa1c35bd7f8"
    assert conv in first and "2026-01-15T11:" in first
    resumed = first.replace(conv, "019bc26a-ffff-7f43-8605-0aa1c35bd7f8").replace(
        "2026-01-15T11:", "2026-01-15T12:"
    )
    ws = _telemetry_workspace(tmp_path, resumed + first)
    t = _one(ws, "codex_workspace")
    assert t.trace_id == "5/3" and t.framework == "codex" and t.model == "openai/gpt-5.1"
    assert t.source_paths[0] == str(ws / "traces" / "traces.jsonl")
    assert t.outcome is not None and t.outcome.score == 0.5  # judge_output.json still read
    one = _one(FIX.parent / "otel_logs" / "codex_otlp_logs.jsonl", "otel_logs")
    assert one.task is not None and t.task == (ws / "AGENTS.md").read_text() + "\n\n" + one.task
    assert one.started_at is not None and one.ended_at is not None
    assert t.started_at == one.started_at and t.ended_at == one.ended_at.replace(hour=12)  # the resumed run
    assert len(t.events) == 2 * len(one.events)
    assert [e.seq for e in t.events] == list(range(len(t.events)))
    assert [e.segment for e in t.events] == [0] * len(one.events) + [1] * len(one.events)
    assert [e.content for e in t.events[: len(one.events)]] == [e.content for e in one.events]
    assert [x["trace_id"] for x in t.extra["telemetry"]] == [
        one.trace_id,
        "019bc26a-ffff-7f43-8605-0aa1c35bd7f8",
    ]


def test_workspace_telemetry_errors_name_the_file(tmp_path: Path) -> None:
    ws = _telemetry_workspace(tmp_path, '{"timestamp": "x", "path": "/v1/metrics", "data": {}}\n')
    (err,) = [x for x in iter_load(ws) if isinstance(x, TraceLoadError)]
    assert err.path == str(ws / "traces" / "traces.jsonl") and err.reason == "no log records found"
    assert err.tried == ["codex_workspace"]


def test_agents_md_beside_telemetry_alone_is_not_a_workspace(tmp_path: Path) -> None:
    """Many projects have an AGENTS.md; without an ITBench output file, the telemetry loads alone."""
    ws = _telemetry_workspace(tmp_path, (FIX.parent / "otel_logs" / "codex_otlp_logs.jsonl").read_text())
    (ws / "judge_output.json").unlink()
    assert get_importer("codex_workspace").sniff(Source(ws)) == 0.0
    assert [t.source_format for t in load_traces(ws)] == ["otel_logs"]


def test_walking_the_parent_folder_finds_both_workspaces() -> None:
    ids = sorted(t.trace_id for t in load_traces(FIX / "itbench_workspace"))
    assert ids == ["2/1", "7/2"]


def test_sniff(tmp_path: Path) -> None:
    imp = get_importer("codex")
    assert imp.sniff(Source(ROLLOUT)) >= 0.9
    assert imp.sniff(Source(FIX / "exec_stream.jsonl")) >= 0.9
    assert imp.sniff(Source(LEGACY)) >= 0.8
    cc = tmp_path / "cc.jsonl"
    cc.write_text(json.dumps({"type": "user", "sessionId": "s", "uuid": "u", "message": {}}) + "\n")
    assert imp.sniff(Source(cc)) == 0.0
    ws = get_importer("codex_workspace")
    assert ws.sniff(Source(WS)) >= 0.8
    home = tmp_path / "codexhome"
    (home / "sessions" / "2026" / "01" / "01").mkdir(parents=True)
    (home / "sessions" / "2026" / "01" / "01" / "rollout-2026-01-01T00-00-00-x.jsonl").write_text(
        ROLLOUT.read_text()
    )
    (home / "history.jsonl").write_text("")
    (home / "AGENTS.md").write_text("global instructions")
    assert ws.sniff(Source(home)) == 0.0  # ~/.codex: load its sessions one by one


def test_malformed_payloads_do_not_crash(tmp_path: Path) -> None:
    rows = [
        {"timestamp": "x", "type": "session_meta", "payload": {"id": 3, "cli_version": ["a"]}},
        {"timestamp": "x", "type": "response_item", "payload": "not a dict"},
        {"timestamp": "x", "type": "response_item", "payload": {"type": "function_call", "arguments": 5}},
        {"timestamp": "x", "type": "response_item", "payload": {"type": "function_call_output", "output": 7}},
        {
            "timestamp": "x",
            "type": "event_msg",
            "payload": {"type": "token_count", "info": {"last_token_usage": 1}},
        },
        {"timestamp": "x", "type": "response_item", "payload": {"type": "reasoning", "summary": "s"}},
        {"timestamp": "x", "type": "compacted", "payload": {"message": None, "replacement_history": 3}},
    ]
    bad = tmp_path / "rollout-bad.jsonl"
    bad.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    items = list(iter_load(bad))
    assert all(not (isinstance(i, TraceLoadError) and i.internal) for i in items)
    assert sum(isinstance(i, Trace) for i in items) == 1


SPAWNED = FIX / "rollout-2026-03-02T10-00-05-019cae10-0005-7000-8000-00000000c41d.jsonl"
USER_FORK = FIX / "rollout-2026-01-02T03-10-00-019b7c2a-2000-7000-8000-0000000000f2.jsonl"


def test_spawned_subagent_rollout_flags_copied_parent_history() -> None:
    t = _one(SPAWNED)
    assert t.trace_id == "019cae10-0005-7000-8000-00000000c41d"
    assert t.extra["parent_thread_id"] == t.extra["forked_from_id"] == "019cae0f-0000-7000-8000-0000000000aa"
    assert (t.extra["agent_nickname"], t.extra["agent_path"], t.extra["subagent_depth"]) == (
        "Noether",
        "/root/test_runner",
        1,
    )
    assert t.raw["inherited_session_meta"][0]["id"] == "019cae0f-0000-7000-8000-0000000000aa"
    copied = [e for e in t.events if e.is_copied_context]
    assert [e.kind for e in copied] == ["system", "message", "tool_call"]
    assert copied[2].actor == "codex"  # the parent spoke in the copied history, not the sub-agent
    # the spawn message is the sub-agent's task, from agent path /root
    spawn = next(e for e in t.events if e.subtype == "inter_agent_communication")
    assert (
        not spawn.is_copied_context and spawn.actor == "/root" and spawn.recipients == ["/root/test_runner"]
    )
    assert t.task == "Run the slow test suite and report failures."
    assert t.model == "gpt-5.3-codex-mini"  # not the parent's model from the copied turn_context
    assert {e.actor for e in t.events if e.role == "assistant" and not e.is_copied_context} >= {"Noether"}
    # the parent's usage (and the child's re-announcement of it) is not this session's
    assert [e.usage.input_tokens for e in t.events if e.usage] == [1200, 1800]
    assert t.usage is not None and (t.usage.input_tokens, t.usage.output_tokens) == (3000, 100)
    assert t.extra["mirrored_event_msgs"]["inherited_token_count"] == 2
    # 2026 rollout items are kept in order, not dropped
    assert {"world_state", "security_risk_score", "response_item:ghost_snapshot"} <= {
        e.subtype for e in t.events
    }
    shell = next(r for c, r in t.tool_calls() if c.subtype == "local_shell_call")
    assert shell is not None and shell.tool_result is not None
    assert shell.tool_result.output is not None and shell.tool_result.output.startswith("2 failed")
    assert t.termination is not None and t.termination.reason == "completed"


def test_user_fork_copied_history_ends_at_the_childs_first_turn() -> None:
    t = _one(USER_FORK)
    assert t.trace_id == "019b7c2a-2000-7000-8000-0000000000f2"
    assert [e.is_copied_context for e in t.events] == [True, True, True, False, False]
    assert t.task == "Now try it with ninja instead."
    assert t.termination is None  # the copied parent task_complete does not end this session
    assert t.usage is not None and (t.usage.input_tokens, t.usage.output_tokens) == (250, 20)
    assert t.total_usage().input_tokens == 250


def test_codex_cli_typescript_rollout_json() -> None:
    t = _one(FIX / "rollout-2025-04-20-3b1f0c2e-aaaa-4bbb-8ccc-0123456789ab.json")
    assert t.trace_id == "3b1f0c2e-aaaa-4bbb-8ccc-0123456789ab"
    assert t.agents[0].system_prompt == "Prefer small diffs."
    assert t.task == "List the python files and count them."
    call, res = next(iter(t.tool_calls()))
    assert call.tool_call is not None and call.tool_call.arguments["command"][-1].startswith("find")
    assert res is not None and res.tool_result is not None
    assert (res.tool_result.exit_code, res.tool_result.output) == (0, "17\n")
    assert res.source is not None and res.source.pointer == "/items/3"


def test_legacy_exec_json_events() -> None:
    t = _one(FIX / "exec_legacy_events.jsonl")
    assert t.trace_id == "7a0c1d2e-3f40-4a5b-9c6d-7e8f9a0b1c2d"
    assert (t.model, t.task) == ("codex-mini-latest", "Make the failing test pass.")
    assert t.raw["config"]["sandbox"] == "workspace-write"
    pairs = list(t.tool_calls())
    assert [(c.tool_call.name if c.tool_call else None) for c, _r in pairs] == [
        "shell",
        "apply_patch",
        "search",
    ]
    assert all(r is not None for _c, r in pairs)
    shell = pairs[0][1]
    assert shell is not None and shell.tool_result is not None
    assert (shell.tool_result.exit_code, shell.tool_result.is_error) == (1, True)
    mcp_call, mcp_res = pairs[2]
    assert mcp_call.tool_call is not None and mcp_call.tool_call.namespace == "docs"
    assert mcp_res is not None and mcp_res.tool_result is not None and mcp_res.tool_result.output == "no docs"
    assert mcp_res.tool_result.duration_ms == 5.0
    assert [e.usage.input_tokens for e in t.events if e.usage] == [1674, 2100]
    assert t.termination is not None and t.termination.reason == "completed"
    assert t.outcome is not None and t.outcome.final_output is not None
    assert t.outcome.final_output.startswith("Fixed the sign error")


def test_exec_json_of_codex_0_4x_session_created_and_item_type() -> None:
    t = _one(FIX / "exec_session_created.jsonl")
    assert t.trace_id == "0199a0b1-1111-7222-8333-444455556666"
    assert t.kind_counts()["message"] == 1 and t.kind_counts()["reasoning"] == 1
    call, res = next(iter(t.tool_calls()))
    assert call.tool_call is not None and call.tool_call.name == "shell"
    assert res is not None and res.tool_result is not None and res.tool_result.exit_code == 0
    assert t.outcome is not None and t.outcome.final_output == "The repo has only a README."


def test_fork_with_an_out_of_range_naive_timestamp_still_loads(tmp_path: Path) -> None:
    """A stamp Python cannot turn into epoch seconds (naive year 1) inside a fork's copied history
    used to escape as ValueError and lose the whole file."""
    lines = [json.loads(x) for x in USER_FORK.read_text().splitlines()]
    lines[2]["timestamp"] = "0001-01-01T00:00:00"  # the copied parent turn_context
    path = tmp_path / USER_FORK.name
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    items = list(iter_load(path))
    assert not any(isinstance(i, TraceLoadError) for i in items)
    (t,) = items
    assert isinstance(t, Trace)
    assert [e.is_copied_context for e in t.events] == [True, True, True, False, False]


def test_legacy_exec_sniff_does_not_claim_prompt_lists_or_other_id_msg_lines(tmp_path: Path) -> None:
    imp = get_importer("codex")
    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text('{"prompt": "Write a poem."}\n{"prompt": "What is 2+2?"}\n')
    other = tmp_path / "chat.jsonl"
    other.write_text(
        '{"id": 1, "msg": {"type": "greeting", "text": "hi"}}\n{"id": 2, "msg": {"type": "reply"}}\n'
    )
    assert imp.sniff(Source(prompts)) == 0.0
    assert imp.sniff(Source(other)) == 0.0
    # a legacy stream whose config (and prompt) lines are missing is still Codex's
    lines = (FIX / "exec_legacy_events.jsonl").read_text().splitlines(keepends=True)
    for n in (1, 2):
        cut = tmp_path / f"legacy_{n}.jsonl"
        cut.write_text("".join(lines[n:]))
        assert imp.sniff(Source(cut)) >= 0.5
        assert _one(cut).trace_id == "7a0c1d2e-3f40-4a5b-9c6d-7e8f9a0b1c2d"
