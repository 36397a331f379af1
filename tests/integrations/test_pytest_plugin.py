"""The pytest plugin: a marked agent test fails when fatal modes are in its trace (pytester)."""

from __future__ import annotations

import json
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from mastkit.testing import FakeLLMServer, Reply

pytest_plugins = ["pytester"]

HERE = Path(__file__).resolve().parent


def _plugin_args() -> list[str]:
    """Load the plugin by name unless the installed package already registers it (pytest11)."""
    names = {ep.value for ep in entry_points(group="pytest11")}
    return (
        [] if "mastkit.integrations.pytest_plugin" in names else ["-p", "mastkit.integrations.pytest_plugin"]
    )


LOOPING_AGENT = """
import pytest

def run_agent(guard, calls=4):
    guard.record_user("Wait until the service is healthy.")
    for _ in range(calls):
        d = guard.check_tool_call("http_get", {"url": "/health"})
        if d.stops:
            break
        guard.record_tool_result("starting")
    guard.check_stop("It is healthy.")
"""


def run(pytester: pytest.Pytester, body: str, *args: str) -> pytest.RunResult:
    pytester.makepyfile(test_agent=LOOPING_AGENT + body)
    return pytester.runpytest_inprocess(*_plugin_args(), "-p", "no:cacheprovider", *args)


def test_looping_agent_fails_with_the_mode_and_evidence(pytester: pytest.Pytester) -> None:
    res = run(
        pytester,
        """
@pytest.mark.mastkit(fail_on=["FM-1.3"])
def test_it(mastkit_trace):
    run_agent(mastkit_trace.guardian)
""",
    )
    res.assert_outcomes(failed=1)
    out = res.stdout.str()
    assert "mastkit: fatal failure modes in trace" in out
    assert "FM-1.3 Step Repetition" in out or "FM-1.3" in out
    assert "evidence: seq" in out and "http_get" in out


def test_modes_not_listed_are_not_fatal(pytester: pytest.Pytester) -> None:
    res = run(
        pytester,
        """
@pytest.mark.mastkit(fail_on=["FM-3.3"])
def test_it(mastkit_trace):
    run_agent(mastkit_trace.guardian)
    assert mastkit_trace.annotations == []   # checked after the body

def test_healthy(mastkit_trace):
    run_agent(mastkit_trace.guardian, calls=1)
""",
    )
    res.assert_outcomes(passed=2)


def test_default_fail_on_is_every_mode(pytester: pytest.Pytester) -> None:
    res = run(
        pytester,
        """
@pytest.mark.mastkit
def test_it(mastkit_trace):
    run_agent(mastkit_trace.guardian)
""",
    )
    res.assert_outcomes(failed=1)
    assert "FM-1.3" in res.stdout.str()


def test_trace_file_named_by_the_marker(pytester: pytest.Pytester) -> None:
    from mastkit.guard import guarded_run

    with guarded_run(save_to=pytester.path / "run.jsonl", task="Wait for health") as g:
        for _ in range(4):
            g.check_tool_call("http_get", {"url": "/health"})
            g.record_tool_result("starting")
    res = run(
        pytester,
        """
@pytest.mark.mastkit(fail_on=["FM-1.3"], trace="run.jsonl")
def test_file():
    pass

def test_added(mastkit_trace):
    mastkit_trace.add("run.jsonl")
""",
    )
    res.assert_outcomes(failed=2)


def test_unmarked_tests_are_untouched_and_a_missing_trace_is_an_error(pytester: pytest.Pytester) -> None:
    res = run(
        pytester,
        """
def test_plain():
    pass

@pytest.mark.mastkit(fail_on=["FM-1.3"])
def test_nothing_recorded():
    pass

@pytest.mark.mastkit(fail_on=["FM-9.9"])
def test_bad_code(mastkit_trace):
    run_agent(mastkit_trace.guardian, calls=1)

@pytest.mark.mastkit
def test_body_failure_stands(mastkit_trace):
    run_agent(mastkit_trace.guardian)
    assert 1 == 2, "own failure"
""",
        "-rf",
    )
    res.assert_outcomes(passed=1, failed=3)
    out = res.stdout.str()
    assert "no trace to check" in out
    assert "unknown failure mode code(s) in fail_on: FM-9.9" in out
    assert "own failure" in out


def test_spec_from_the_marker_drives_the_guardian(pytester: pytest.Pytester) -> None:
    res = run(
        pytester,
        """
@pytest.mark.mastkit(fail_on=["FM-3.3"], spec={"guards": {"loop": {"warn_at": 2, "block_at": 2}}})
def test_it(mastkit_trace):
    g = mastkit_trace.guardian
    g.check_tool_call("read", {"p": 1}); g.record_tool_result("x")
    assert g.check_tool_call("read", {"p": 1}).action == "block"
""",
    )
    res.assert_outcomes(passed=1)


def test_llm_judge_when_configured(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.annotate._judgekit import reply_json

    doc = json.loads(reply_json(present=("FM-3.3",)))
    for mode in doc["modes"]:
        if mode["code"] == "FM-3.3":  # the agent's final claim, with no check run: seq 3
            mode["evidence"] = [{"seq_start": 3, "seq_end": 3, "agent": None, "quote": "It is healthy."}]
    with FakeLLMServer([Reply(json.dumps(doc))]) as srv:
        monkeypatch.setenv("MASTKIT_PYTEST_ANNOTATOR", "llm")
        monkeypatch.setenv("MASTKIT_PYTEST_MODEL", "openai:judge-model")
        monkeypatch.setenv("MASTKIT_PYTEST_BASE_URL", srv.openai_base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        res = run(
            pytester,
            """
@pytest.mark.mastkit(fail_on=["FM-3.3"])
def test_it(mastkit_trace):
    run_agent(mastkit_trace.guardian, calls=1)
""",
        )
        res.assert_outcomes(failed=1)
        assert "FM-3.3" in res.stdout.str() and "(llm annotator)" in res.stdout.str()
        assert len(srv.requests) == 1
        assert json.loads(srv.requests[0].body)["model"] == "judge-model"
