"""LangGraph: a small ReAct graph (ChatOpenAI against FakeLLMServer) looping on one tool."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langgraph", reason="langgraph not installed (pip install 'mastkit[langgraph]')")
pytest.importorskip(
    "langchain_openai", reason="langchain-openai not installed (pip install 'mastkit[langgraph]')"
)

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import tools_condition
from tests.integrations._toolchat import LoopingModel

import mastkit
from mastkit.integrations.langgraph import GuardStop, LangGraphGuard
from mastkit.testing import FakeLLMServer

RAN: list[str] = []


@tool
def check_health(service: str) -> str:
    """Report a service's health."""
    RAN.append(service)
    return f"{service}: starting"


def build_graph(srv: FakeLLMServer, guard: LangGraphGuard) -> Any:
    llm = ChatOpenAI(model="fake-model", base_url=srv.openai_base_url, api_key="x", max_retries=0)
    bound = llm.bind_tools([check_health])

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [bound.invoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", guard.tool_node([check_health]))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition, {"tools": "tools", END: END})
    builder.add_conditional_edges("tools", guard.after_tools("agent"), ["agent", END])
    return builder.compile()


@pytest.fixture(autouse=True)
def _reset() -> None:
    RAN.clear()


def _run(guard: LangGraphGuard, looping: LoopingModel) -> dict[str, Any]:
    with FakeLLMServer(handler=looping) as srv:
        graph = build_graph(srv, guard)
        return dict(
            graph.invoke(
                {"messages": [HumanMessage("Is payments healthy?")]},
                config={"callbacks": [guard.callback], "recursion_limit": 50},
            )
        )


def test_looping_graph_gets_the_refusal_and_stops_looping(tmp_path: Path) -> None:
    looping = LoopingModel("check_health", {"service": "payments"})
    guard = LangGraphGuard(task="Is payments healthy?")
    out = _run(guard, looping)
    assert looping.calls == 5 and RAN == ["payments"] * 4  # the 5th call never ran
    refusal = out["messages"][-2]
    assert isinstance(refusal, ToolMessage) and refusal.status == "error"
    assert "FM-1.3" in str(refusal.content)
    assert isinstance(out["messages"][-1], AIMessage)
    assert out["messages"][-1].content == "Giving up: still starting."
    assert [d.action for d in guard.decisions] == ["warn", "warn", "block"]
    # the 3rd and 4th results carry the warning
    results = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert ["Warning" in str(m.content) for m in results] == [False, False, True, True, False]
    assert guard.guardian.state.tokens > 0  # usage through the callback handler
    guard.save(tmp_path / "run.jsonl")
    [trace] = mastkit.load_traces(tmp_path / "run.jsonl")
    assert trace.framework == "langgraph"
    assert sum(e.subtype == "guard" for e in trace.events) == 3


def test_on_stop_end_ends_the_graph_at_the_refusal() -> None:
    looping = LoopingModel("check_health", {"service": "payments"})
    guard = LangGraphGuard(on_stop="end")
    out = _run(guard, looping)
    last = out["messages"][-1]
    assert isinstance(last, ToolMessage) and "Blocked" in str(last.content)
    assert looping.calls == 5 and looping.refused_with is None  # the model never saw it: the graph ended
    assert len(RAN) == 4


def test_on_stop_raise() -> None:
    looping = LoopingModel("check_health", {"service": "payments"})
    guard = LangGraphGuard(on_stop="raise")
    with pytest.raises(GuardStop) as info:
        _run(guard, looping)
    assert info.value.decision.mode == "FM-1.3" and "5 times" in str(info.value)
    assert len(RAN) == 4
