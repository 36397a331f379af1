"""Claude Code hooks: the ``mastkit hook`` verbs answer real hook payloads in the hook protocol.

End-to-end tests run the CLI as a subprocess (a new process per hook call, as Claude Code does);
the finer behaviour goes through :func:`handle_hook` in-process, on the same payload files.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import mastkit
from mastkit.integrations.claude_code import HookOptions, handle_hook
from mastkit.integrations.claude_code.install import merge_hooks, remove_hooks

HERE = Path(__file__).resolve().parent
FIX = HERE / "fixtures" / "claude_code_hooks"
SRC = HERE.parents[1] / "src"

VERIFY_SPEC = """\
version: 1
guards:
  verification:
    checks:
      - {name: tests, tool: Bash, args_regex: pytest, exit_code: 0, output_not_regex: FAILED}
"""


def payload(name: str, session: str = "sess-1", **changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIX / f"{name}.json").read_text())
    data["session_id"] = session
    data["transcript_path"] = "/nonexistent/transcript.jsonl"
    data.update(changes)
    return data


def run_cli(verb: str, data: dict[str, Any] | str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("MASTKIT_GUARD_SPEC", "CLAUDE_PROJECT_DIR")}
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), env.get("PYTHONPATH", "")])
    stdin = data if isinstance(data, str) else json.dumps(data)
    return subprocess.run(
        [sys.executable, "-m", "mastkit.cli.entry", "hook", verb, *args],
        input=stdin, capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip


@pytest.fixture(autouse=True)
def _no_env_spec(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MASTKIT_GUARD_SPEC", raising=False)
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)


def call(verb: str, data: dict[str, Any], state: Path, **opts: Any) -> Any:
    return handle_hook(verb, data, HookOptions(state_dir=state, **opts))


# -- end to end, one process per call -------------------------------------------------------------


def test_loop_of_identical_bash_calls_is_denied_on_the_fifth(tmp_path: Path) -> None:
    state = str(tmp_path / "state")
    outs = []
    for i in range(5):
        tid = f"toolu_loop{i}"
        pre = run_cli("pre-tool-use", payload("pre_tool_use_bash", tool_use_id=tid), "--state-dir", state)
        assert pre.returncode == 0, pre.stderr
        outs.append(pre.stdout)
        if i < 4:
            post = run_cli(
                "post-tool-use", payload("post_tool_use_bash", tool_use_id=tid), "--state-dir", state
            )
            assert (post.returncode, post.stdout) == (0, ""), post.stderr
    assert outs[0] == outs[1] == ""  # allowed: no output, the normal permission flow goes on
    warn = json.loads(outs[2])
    assert warn["hookSpecificOutput"]["hookEventName"] == "PreToolUse"
    assert "permissionDecision" not in warn["hookSpecificOutput"]
    assert "3 times" in warn["hookSpecificOutput"]["additionalContext"]
    deny = json.loads(outs[4])["hookSpecificOutput"]
    assert deny["hookEventName"] == "PreToolUse"
    assert deny["permissionDecision"] == "deny"
    assert "FM-1.3" in deny["permissionDecisionReason"]
    assert "5 times" in deny["permissionDecisionReason"]


def test_stop_without_verification_after_an_edit_is_blocked_until_stop_hook_active(tmp_path: Path) -> None:
    state = str(tmp_path / "state")
    spec = tmp_path / "guards.yaml"
    spec.write_text(VERIFY_SPEC)
    common = ("--state-dir", state, "--spec", str(spec))
    assert run_cli("user-prompt-submit", payload("user_prompt_submit"), *common).returncode == 0
    assert run_cli("pre-tool-use", payload("pre_tool_use_edit"), *common).stdout == ""
    assert run_cli("post-tool-use", payload("post_tool_use_edit"), *common).stdout == ""
    stop = run_cli("stop", payload("stop"), *common)
    assert stop.returncode == 0, stop.stderr
    out = json.loads(stop.stdout)
    assert out["decision"] == "block"
    assert "FM-3.3" in out["reason"] and "tests" in out["reason"]
    again = run_cli("stop", payload("stop_hook_active"), *common)
    assert (again.returncode, again.stdout, again.stderr) == (0, "", "")
    # the turn ended: it was written as a canonical trace, guard decision included
    [trace] = mastkit.load_traces(tmp_path / "state" / "traces")
    guard_events = [e for e in trace.events if e.subtype == "guard"]
    assert [e.extra["guard"]["mode"] for e in guard_events] == ["FM-3.3"]
    assert trace.task and trace.task.startswith("The cart total")


def test_exit_code_style_blocks_with_exit_2_and_the_reason_on_stderr(tmp_path: Path) -> None:
    spec = tmp_path / "guards.yaml"
    spec.write_text(VERIFY_SPEC)
    common = ("--state-dir", str(tmp_path / "s"), "--spec", str(spec), "--exit-code")
    run_cli("pre-tool-use", payload("pre_tool_use_edit"), *common)
    run_cli("post-tool-use", payload("post_tool_use_edit"), *common)
    stop = run_cli("stop", payload("stop"), *common)
    assert stop.returncode == 2
    assert stop.stdout == ""
    assert "Not verified" in stop.stderr


def test_hook_process_is_fast_enough(tmp_path: Path) -> None:
    """Process start + decision, measured; Claude Code's default hook timeout is 60 s."""
    t0 = time.perf_counter()
    res = run_cli("pre-tool-use", payload("pre_tool_use_bash"), "--state-dir", str(tmp_path))
    elapsed = time.perf_counter() - t0
    assert res.returncode == 0
    assert elapsed < 10, elapsed  # typically ~0.3 s; generous for a loaded CI machine


def test_hook_does_not_import_the_report_or_provider_stack() -> None:
    code = (
        "import sys, runpy; sys.argv=['mastkit','hook','--help'];\n"
        "import mastkit.integrations.claude_code.cli as c, mastkit.integrations.claude_code.hook\n"
        "bad=[m for m in sys.modules if m.startswith(('mastkit.report','mastkit.providers','mastkit.cli.main',"
        "'mastkit.annotate','typer','rich','openai','jinja2'))]\n"
        "print(','.join(bad))"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""


# -- in process ------------------------------------------------------------------------------------


def test_stop_allowed_after_passing_tests_and_refused_after_failing_ones(tmp_path: Path) -> None:
    spec = tmp_path / "guards.yaml"
    spec.write_text(VERIFY_SPEC)
    st = tmp_path / "s"
    for name in ("pre_tool_use_edit", "post_tool_use_edit", "pre_tool_use_pytest"):
        assert (
            call(name.split("_tool")[0].replace("_", "-") + "-tool-use", payload(name), st, spec=spec).stdout
            == ""
        )
    failed = call("post-tool-use-failure", payload("post_tool_use_failure_pytest"), st, spec=spec)
    assert failed.exit_code == 0
    stop = call("stop", payload("stop"), st, spec=spec)
    assert json.loads(stop.stdout)["decision"] == "block"
    # fixed, tests run again and pass: now it may stop
    call("pre-tool-use", payload("pre_tool_use_pytest", tool_use_id="toolu_again"), st, spec=spec)
    call("post-tool-use", payload("post_tool_use_pytest", tool_use_id="toolu_again"), st, spec=spec)
    ok = call("stop", payload("stop"), st, spec=spec)
    assert (ok.exit_code, ok.stdout) == (0, "")


def test_a_new_prompt_starts_a_new_run(tmp_path: Path) -> None:
    st = tmp_path / "s"
    for i in range(4):
        call("pre-tool-use", payload("pre_tool_use_bash", tool_use_id=f"t{i}"), st)
        call("post-tool-use", payload("post_tool_use_bash", tool_use_id=f"t{i}"), st)
    call("stop", payload("stop"), st)
    call("user-prompt-submit", payload("user_prompt_submit"), st)
    fifth = call("pre-tool-use", payload("pre_tool_use_bash", tool_use_id="t5"), st)
    assert fifth.decision.action == "allow"  # the count started again with the new turn
    traces = list(mastkit.load_traces(st / "traces"))
    assert len(traces) == 1 and traces[0].trace_id.endswith("-t1")


def test_sessions_are_kept_apart(tmp_path: Path) -> None:
    st = tmp_path / "s"
    for i in range(4):
        for session in ("a", "b/../b"):
            call("pre-tool-use", payload("pre_tool_use_bash", session, tool_use_id=f"t{i}"), st)
            call("post-tool-use", payload("post_tool_use_bash", session, tool_use_id=f"t{i}"), st)
    assert call("pre-tool-use", payload("pre_tool_use_bash", "a"), st).decision.action == "block"
    assert call("pre-tool-use", payload("pre_tool_use_bash", "c"), st).decision.action == "allow"
    assert sorted(p.name for p in (st / "sessions").glob("*.json"))[0] == "a.json"
    assert all(p.parent == st / "sessions" for p in (st / "sessions").iterdir())


def test_first_call_replays_the_transcript_turn(tmp_path: Path) -> None:
    """Hooks installed mid-session: the transcript's 4 identical calls count."""
    transcript = str(FIX / "transcript.jsonl")
    res = call("pre-tool-use", payload("pre_tool_use_bash", transcript_path=transcript), tmp_path)
    assert res.decision.action == "block" and res.decision.mode == "FM-1.3"
    other = call(
        "pre-tool-use", payload("pre_tool_use_bash", "s2", transcript_path=transcript), tmp_path / "x",
        use_transcript=False,
    )  # fmt: skip
    assert other.decision.action == "allow"


def test_stop_reads_the_last_assistant_message_from_the_transcript(tmp_path: Path) -> None:
    from mastkit.integrations.claude_code.hook import last_assistant_text

    assert (
        last_assistant_text(str(FIX / "transcript.jsonl"))
        == "The service is still starting; I will check again."
    )
    call(
        "stop", payload("stop", transcript_path=str(FIX / "transcript.jsonl")), tmp_path, use_transcript=False
    )
    [trace] = mastkit.load_traces(tmp_path / "traces")
    assert trace.events[-1].content == "The service is still starting; I will check again."
    assert trace.termination is not None and trace.termination.reason == "final_answer"


def test_subagent_stop_is_never_gated(tmp_path: Path) -> None:
    spec = tmp_path / "guards.yaml"
    spec.write_text(VERIFY_SPEC)
    call("pre-tool-use", payload("pre_tool_use_edit"), tmp_path, spec=spec)
    call("post-tool-use", payload("post_tool_use_edit"), tmp_path, spec=spec)
    res = call("subagent-stop", payload("subagent_stop"), tmp_path, spec=spec)
    assert (res.exit_code, res.stdout) == (0, "")


def test_todo_write_is_not_a_state_change(tmp_path: Path) -> None:
    spec = tmp_path / "guards.yaml"
    spec.write_text(VERIFY_SPEC)
    for name in ("edit", "pytest"):
        call("pre-tool-use", payload(f"pre_tool_use_{name}"), tmp_path, spec=spec)
        call("post-tool-use", payload(f"post_tool_use_{name}"), tmp_path, spec=spec)
    todo = payload("pre_tool_use_bash", tool_name="TodoWrite", tool_input={"todos": []}, tool_use_id="td")
    call("pre-tool-use", todo, tmp_path, spec=spec)
    res = call("stop", payload("stop"), tmp_path, spec=spec)
    assert res.decision.action == "allow"  # the tests ran after the last change (the Edit)


def test_bad_payload_and_bad_spec(tmp_path: Path) -> None:
    res = handle_hook("pre-tool-use", b"not json", HookOptions(state_dir=tmp_path))
    assert (res.exit_code, res.stdout) == (0, "") and "unreadable payload" in res.stderr
    res = handle_hook("pre-tool-use", {"tool_name": "Bash"}, HookOptions(state_dir=tmp_path))
    assert res.exit_code == 0 and "session_id" in res.stderr
    bad = tmp_path / "bad.yaml"
    bad.write_text("guards:\n  loop:\n    block_at: 1\n")
    res = call("pre-tool-use", payload("pre_tool_use_bash"), tmp_path, spec=bad)
    assert res.exit_code == 1 and "block_at" in res.stderr


def test_spec_found_in_the_project_folder(tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "guards.yaml").write_text("guards:\n  loop: {warn_at: 2, block_at: 2}\n")
    st = tmp_path / "s"
    call("pre-tool-use", payload("pre_tool_use_bash", cwd=str(tmp_path), tool_use_id="1"), st)
    call("post-tool-use", payload("post_tool_use_bash", cwd=str(tmp_path), tool_use_id="1"), st)
    res = call("pre-tool-use", payload("pre_tool_use_bash", cwd=str(tmp_path), tool_use_id="2"), st)
    assert res.decision.action == "block"


# -- install ---------------------------------------------------------------------------------------


EXISTING = {
    "permissions": {"allow": ["Bash(npm test:*)"]},
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./check-bash.sh"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
    },
}


def test_install_merges_and_is_idempotent(tmp_path: Path) -> None:
    settings = tmp_path / "proj" / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps(EXISTING))
    spec = tmp_path / "guards.yaml"
    spec.write_text(VERIFY_SPEC)
    args = ["--project", "--project-dir", str(tmp_path / "proj"), "--spec", str(spec)]
    first = run_cli("install", "", *args)
    assert first.returncode == 0, first.stderr
    assert "updated" in first.stdout
    after = json.loads(settings.read_text())
    assert after["permissions"] == EXISTING["permissions"]
    pre = after["hooks"]["PreToolUse"]
    assert pre[0] == EXISTING["hooks"]["PreToolUse"][0]  # theirs kept, first
    assert pre[1]["matcher"] == "*"
    assert pre[1]["hooks"][0]["command"] == f"mastkit hook pre-tool-use --spec {spec.resolve()}"
    assert after["hooks"]["Stop"][0] == EXISTING["hooks"]["Stop"][0]
    assert after["hooks"]["Stop"][1]["hooks"][0]["command"].startswith("mastkit hook stop --spec")
    assert "matcher" not in after["hooks"]["Stop"][1]
    assert set(after["hooks"]) == {"PreToolUse", "PostToolUse", "Stop", "SubagentStop", "UserPromptSubmit"}
    second = run_cli("install", "", *args)
    assert "already up to date" in second.stdout
    assert json.loads(settings.read_text()) == after


def test_install_updates_our_entry_in_place_and_uninstall_removes_only_ours() -> None:
    ours_old = {"type": "command", "command": "mastkit hook pre-tool-use --spec /old.yaml"}
    mixed = {
        "hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "x"}, ours_old]}]}
    }
    merged = merge_hooks(mixed, events=["pre-tool-use"])
    assert merged["hooks"]["PreToolUse"] == [
        {"matcher": "*", "hooks": [{"type": "command", "command": "x"},
                                   {"type": "command", "command": "mastkit hook pre-tool-use", "timeout": 10}]}
    ]  # fmt: skip
    assert mixed["hooks"]["PreToolUse"][0]["hooks"][1] is ours_old  # input untouched
    assert remove_hooks(merged) == {
        "hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "x"}]}]}
    }
    assert remove_hooks(merge_hooks({})) == {}


def test_install_refuses_a_broken_settings_file_or_spec(tmp_path: Path) -> None:
    settings = tmp_path / "settings.json"
    settings.write_text("{broken")
    res = run_cli("install", "", "--settings", str(settings))
    assert res.returncode == 2 and "not valid JSON" in res.stderr
    assert settings.read_text() == "{broken"
    bad = tmp_path / "bad.yaml"
    bad.write_text("guards:\n  loop: {block_at: 1}\n")
    res = run_cli("install", "", "--settings", str(tmp_path / "new.json"), "--spec", str(bad))
    assert res.returncode == 2 and "block_at" in res.stderr
    assert not (tmp_path / "new.json").exists()


def test_hook_verb_through_the_full_command_line(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from mastkit.cli.main import app

    res = CliRunner().invoke(
        app, ["hook", "install", "--settings", str(tmp_path / "s.json"), "--events", "stop"]
    )
    assert res.exit_code == 0, res.output
    assert (
        json.loads((tmp_path / "s.json").read_text())["hooks"]["Stop"][0]["hooks"][0]["command"]
        == "mastkit hook stop"
    )


def test_parallel_calls_of_one_session_lose_no_events(tmp_path: Path) -> None:
    """Claude Code runs hooks of parallel tool calls at once: the session lock serialises them."""
    from concurrent.futures import ThreadPoolExecutor

    from mastkit.integrations.claude_code.session import SessionStore

    def one(i: int) -> None:
        data = payload("pre_tool_use_bash", tool_use_id=f"p{i}", tool_input={"command": f"echo {i}"})
        assert call("pre-tool-use", data, tmp_path).exit_code == 0

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(one, range(24)))
    record = SessionStore(tmp_path).load("sess-1")
    assert record is not None
    assert sorted(e.tool_call.call_id for e in record.events if e.tool_call) == sorted(
        f"p{i}" for i in range(24)
    )
