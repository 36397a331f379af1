"""LangGraph (``pip install 'mastkit[langgraph]'``): guards around the graph's tool node.

:class:`LangGraphGuard` wraps one :class:`~mastkit.guard.Guardian` (one run) as a tool-call
wrapper of LangGraph's ``ToolNode`` (``wrap_tool_call`` / ``awrap_tool_call``). Each tool call
the model asks for is checked before it runs; its result is recorded after. A stopping decision
does one of three things (``on_stop``):

* ``"message"`` (default): the call does not run; the model gets a ``ToolMessage`` with the
  guard's message (status ``error``) and decides what to do next;
* ``"end"``: the same message, and the graph ends there — route the tool node's way out
  through :meth:`LangGraphGuard.after_tools` (``add_conditional_edges("tools",
  guard.after_tools("agent"))``), which goes to ``END`` once a call was stopped;
* ``"raise"``: :class:`GuardStop` is raised out of ``graph.invoke`` with the message.

A warning is appended to the tool's output. :class:`GuardCallbackHandler` (in ``callbacks``)
adds model usage to the token and cost budgets::

    guard = LangGraphGuard(spec="guards.yaml", on_stop="end")
    builder.add_node("tools", guard.tool_node([search, edit_file]))
    builder.add_conditional_edges("tools", guard.after_tools("agent"))   # for on_stop="end"
    graph.invoke({"messages": [...]}, config={"callbacks": [guard.callback]})
    guard.save("run.jsonl")
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import ToolMessage
from langchain_core.outputs import LLMResult
from langgraph.graph import END
from langgraph.prebuilt import ToolNode
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command

from mastkit.guard import Decision, Guardian, GuardSpec
from mastkit.integrations._adapter import GuardedRun
from mastkit.traces.model import Event, Usage

__all__ = ["GuardCallbackHandler", "GuardStop", "LangGraphGuard"]

OnStop = Literal["message", "end", "raise"]


class GuardStop(RuntimeError):
    """Raised out of the graph when a guard stops a step and ``on_stop="raise"``."""

    def __init__(self, decision: Decision) -> None:
        self.decision = decision
        super().__init__(_text(decision))


class LangGraphGuard(GuardedRun):
    """One guarded LangGraph run: a tool-call wrapper and a callback handler on one Guardian."""

    framework = "langgraph"

    def __init__(
        self,
        guardian: Guardian | None = None,
        *,
        spec: GuardSpec | dict[str, Any] | str | Path | None = None,
        task: str | None = None,
        on_stop: OnStop = "message",
    ) -> None:
        super().__init__(guardian, spec=spec, task=task)
        self.on_stop: OnStop = on_stop
        self.callback = GuardCallbackHandler(self.guardian)
        self.stopped = False
        """True once a call was stopped with ``on_stop="end"`` (:meth:`after_tools` then ends)."""

    # -- wiring -------------------------------------------------------------------------------

    def tool_node(self, tools: Sequence[Any], **kwargs: Any) -> ToolNode:
        """A ``ToolNode`` for ``tools`` whose every call goes through this guard."""
        return ToolNode(
            tools, wrap_tool_call=self.wrap_tool_call, awrap_tool_call=self.awrap_tool_call, **kwargs
        )

    def after_tools(self, next_node: str) -> Callable[[Any], str]:
        """A router for the edge out of the tool node: ``END`` once a call was stopped with
        ``on_stop="end"``, else ``next_node``."""

        def route(state: Any) -> str:
            return END if self.stopped else next_node

        return route

    # -- the wrapper ----------------------------------------------------------------------------

    def wrap_tool_call(
        self, request: ToolCallRequest, execute: Callable[[ToolCallRequest], ToolMessage | Command[Any]]
    ) -> ToolMessage | Command[Any]:
        """``ToolNode(wrap_tool_call=...)``: check the call, run it when allowed, record the result."""
        refused, decision = self._before(request)
        if refused is not None:
            return refused
        return self._after(request, decision, execute(request))

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        execute: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        """The async form of :meth:`wrap_tool_call`."""
        refused, decision = self._before(request)
        if refused is not None:
            return refused
        return self._after(request, decision, await execute(request))

    def _before(self, request: ToolCallRequest) -> tuple[ToolMessage | None, Decision]:
        call = request.tool_call
        decision = self.guardian.check_tool_call(call["name"], call.get("args"), call_id=call.get("id"))
        if not decision.stops:
            return None, decision
        if self.on_stop == "raise":
            raise GuardStop(decision)
        message = ToolMessage(
            content=_text(decision), tool_call_id=call.get("id") or "", name=call["name"], status="error"
        )
        if self.on_stop == "end":
            self.stopped = True
        return message, decision

    def _after(
        self, request: ToolCallRequest, decision: Decision, result: ToolMessage | Command[Any]
    ) -> ToolMessage | Command[Any]:
        if isinstance(result, ToolMessage):
            output = (
                result.content if isinstance(result.content, str) else json.dumps(result.content, default=str)
            )
            self.guardian.record_tool_result(
                output, call_id=request.tool_call.get("id"), name=request.tool_call["name"],
                is_error=result.status == "error",
            )  # fmt: skip
            if decision.action == "warn":
                result = result.model_copy(update={"content": f"{output}\n\n{_text(decision)}"})
        return result


class GuardCallbackHandler(BaseCallbackHandler):
    """Adds each model response's token usage to the guardian (for the budgets)."""

    def __init__(self, guardian: Guardian) -> None:
        self.guardian = guardian

    def on_llm_end(self, response: LLMResult, **kwargs: Any) -> None:
        usage = _usage(response)
        if usage is not None:
            g = self.guardian
            g.check(Event(seq=len(g.events), kind="llm_call", role="assistant", usage=usage))


def _usage(response: LLMResult) -> Usage | None:
    for gens in response.generations:
        for gen in gens:
            meta = getattr(getattr(gen, "message", None), "usage_metadata", None)
            if meta:
                return Usage(
                    input_tokens=meta.get("input_tokens"),
                    output_tokens=meta.get("output_tokens"),
                    total_tokens=meta.get("total_tokens"),
                )
    token_usage = (response.llm_output or {}).get("token_usage") or {}
    if token_usage:
        return Usage(
            input_tokens=token_usage.get("prompt_tokens"),
            output_tokens=token_usage.get("completion_tokens"),
            total_tokens=token_usage.get("total_tokens"),
        )
    return None


def _text(decision: Decision) -> str:
    tag = ", ".join(x for x in (decision.guard, decision.mode) if x)
    return f"[mastkit guard{': ' + tag if tag else ''}] {decision.message}"
