"""OpenAI Agents SDK: a real Agent on OpenAIChatCompletionsModel against FakeLLMServer."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

agents = pytest.importorskip(
    "agents", reason="openai-agents not installed (pip install 'mastkit[openai-agents]')"
)

from openai import AsyncOpenAI  # noqa: E402
from tests.integrations._toolchat import LoopingModel, tool_call_reply  # noqa: E402

import mastkit  # noqa: E402
from mastkit.integrations.openai_agents import AgentsGuard  # noqa: E402
from mastkit.testing import FakeLLMServer, Reply  # noqa: E402

agents.set_tracing_disabled(True)

HEALTH_CALLS: list[str] = []


@agents.function_tool
def check_health(service: str) -> str:
    """Report a service's health."""
    HEALTH_CALLS.append(service)
    return f"{service}: starting"


@agents.function_tool
def run_tests() -> str:
    """Run the test suite."""
    return "3 passed"


@agents.function_tool
def edit_file(path: str, patch: str) -> str:
    """Apply a patch to a file."""
    return f"patched {path}"


def _agent(srv: FakeLLMServer, guard: AgentsGuard, tools: list[Any], **kw: Any) -> Any:
    client = AsyncOpenAI(base_url=srv.openai_base_url, api_key="x", max_retries=0)
    model = agents.OpenAIChatCompletionsModel(model="fake-model", openai_client=client)
    return agents.Agent(name="ops", instructions="Fix it.", model=model, tools=guard.protect(tools), **kw)


@pytest.fixture(autouse=True)
def _reset() -> None:
    HEALTH_CALLS.clear()


def test_repeated_tool_call_is_rejected_and_the_model_told_why(tmp_path: Path) -> None:
    looping = LoopingModel("check_health", {"service": "payments"})
    guard = AgentsGuard(task="Is payments healthy?")
    with FakeLLMServer(handler=looping) as srv:
        agent = _agent(srv, guard, [check_health])
        result = asyncio.run(
            agents.Runner.run(agent, "Is payments healthy?", hooks=guard.hooks, max_turns=20)
        )
    assert result.final_output == "Giving up: still starting."
    assert not check_health.tool_input_guardrails  # protect() guarded a copy
    assert looping.calls == 5  # the 5th identical call was proposed...
    assert len(HEALTH_CALLS) == 4  # ...and never ran
    assert looping.refused_with is not None and "FM-1.3" in looping.refused_with
    assert [d.action for d in guard.decisions] == ["warn", "warn", "block"]
    assert guard.guardian.state.tokens > 0  # usage reached the budgets through the run hooks
    # the guarded run loads back as a trace with the decisions in it
    guard.save(tmp_path / "run.jsonl")
    [trace] = mastkit.load_traces(tmp_path / "run.jsonl")
    assert trace.framework == "openai-agents"
    assert [e.extra["guard"]["action"] for e in trace.events if e.subtype == "guard"] == [
        "warn",
        "warn",
        "block",
    ]


def test_raise_on_stop_trips_the_sdk_wire() -> None:
    looping = LoopingModel("check_health", {"service": "payments"})
    guard = AgentsGuard(raise_on_stop=True)
    with FakeLLMServer(handler=looping) as srv:
        agent = _agent(srv, guard, [check_health])
        with pytest.raises(agents.ToolInputGuardrailTripwireTriggered) as info:
            asyncio.run(agents.Runner.run(agent, "Is payments healthy?", max_turns=20))
    assert info.value.output.output_info["mode"] == "FM-1.3"
    assert "5 times" in info.value.output.output_info["message"]
    assert len(HEALTH_CALLS) == 4


def test_warning_is_appended_to_the_tool_output() -> None:
    guard = AgentsGuard()
    script = [tool_call_reply("check_health", {"service": "db"}, f"c{i}") for i in range(3)] + [Reply("done")]
    with FakeLLMServer(script) as srv:
        agent = _agent(srv, guard, [check_health])
        asyncio.run(agents.Runner.run(agent, "db?", max_turns=10))
        tool_msgs = [m for m in srv.requests[-1].json["messages"] if m["role"] == "tool"]
    assert [("[mastkit guard: loop, FM-1.3] Warning" in m["content"]) for m in tool_msgs] == [
        False,
        False,
        True,
    ]
    assert tool_msgs[2]["content"].startswith("db: starting")


def test_unverified_final_answer_trips_the_output_guardrail() -> None:
    spec = {"guards": {"verification": {"checks": [{"name": "tests", "tool": "run_tests"}]}}}
    guard = AgentsGuard(spec=spec)
    script = [tool_call_reply("edit_file", {"path": "a.py", "patch": "x"}, "e1"), Reply("Fixed.")]
    with FakeLLMServer(script) as srv:
        agent = _agent(srv, guard, [edit_file, run_tests], output_guardrails=[guard.output_guardrail])
        with pytest.raises(agents.OutputGuardrailTripwireTriggered) as info:
            asyncio.run(agents.Runner.run(agent, "fix a.py", max_turns=10))
    assert info.value.guardrail_result.output.output_info["mode"] == "FM-3.3"
    # with the tests run after the edit, the same answer passes
    guard = AgentsGuard(spec=spec)
    script = [
        tool_call_reply("edit_file", {"path": "a.py", "patch": "x"}, "e1"),
        tool_call_reply("run_tests", {}, "t1"),
        Reply("Fixed."),
    ]
    with FakeLLMServer(script) as srv:
        agent = _agent(srv, guard, [edit_file, run_tests], output_guardrails=[guard.output_guardrail])
        result = asyncio.run(agents.Runner.run(agent, "fix a.py", max_turns=10))
    assert result.final_output == "Fixed."
