"""OpenAI Agents SDK (``pip install 'mastkit[openai-agents]'``): guards on every tool call.

:class:`AgentsGuard` wraps one :class:`~mastkit.guard.Guardian` (one run) and plugs it into the
SDK's own extension points:

* a **tool input guardrail** checks each function-tool call before it runs. A stopping decision
  either rejects the call — the model gets the guard's message instead of the tool's output and
  the run goes on (default) — or, with ``raise_on_stop=True``, trips the SDK's wire: the run ends
  with ``agents.ToolInputGuardrailTripwireTriggered`` (``exc.output.output_info`` is the decision
  as a dict, its ``message`` says why);
* a **tool output guardrail** records each result (for "same result" loops, verification checks,
  state transitions, ambiguity signals) and appends a warning to the output the model sees;
* an **agent output guardrail** checks the final answer as a stop attempt (the verification
  gate, the termination state machine) and trips ``OutputGuardrailTripwireTriggered`` when the
  run may not stop yet;
* **run hooks** feed model usage to the token and cost budgets.

::

    guard = AgentsGuard(spec="guards.yaml", task=question)
    agent = Agent(name="ops", tools=guard.protect([check_health, restart]),
                  output_guardrails=[guard.output_guardrail])
    result = await Runner.run(agent, question, hooks=guard.hooks)
    guard.save("run.jsonl")       # the run, guard decisions included, as a canonical trace
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from agents import (
    Agent,
    FunctionTool,
    GuardrailFunctionOutput,
    OutputGuardrail,
    RunContextWrapper,
    RunHooks,
    ToolGuardrailFunctionOutput,
    ToolInputGuardrail,
    ToolInputGuardrailData,
    ToolOutputGuardrail,
    ToolOutputGuardrailData,
)
from agents.items import ModelResponse

from mastkit.guard import Decision, Guardian, GuardSpec
from mastkit.integrations._adapter import GuardedRun
from mastkit.traces.model import Event, Usage

__all__ = ["AgentsGuard", "GuardRunHooks"]


class AgentsGuard(GuardedRun):
    """One guarded Agents SDK run: guardrails and hooks backed by one :class:`Guardian`."""

    framework = "openai-agents"

    def __init__(
        self,
        guardian: Guardian | None = None,
        *,
        spec: GuardSpec | dict[str, Any] | str | Path | None = None,
        task: str | None = None,
        raise_on_stop: bool = False,
    ) -> None:
        super().__init__(guardian, spec=spec, task=task)
        self.raise_on_stop = raise_on_stop
        self._warnings: dict[str, str] = {}
        self.input_guardrail: ToolInputGuardrail[Any] = ToolInputGuardrail(
            self._check_call, name="mastkit_guard"
        )
        self.output_guardrail_tool: ToolOutputGuardrail[Any] = ToolOutputGuardrail(
            self._record_result, name="mastkit_guard_result"
        )
        self.output_guardrail: OutputGuardrail[Any] = OutputGuardrail(
            self._check_final, name="mastkit_guard_stop"
        )
        self.hooks = GuardRunHooks(self)

    # -- wiring -------------------------------------------------------------------------------

    def protect(self, tools: Iterable[Any]) -> list[Any]:
        """Copies of the tools with this guard's input and output guardrails added (function
        tools only; other tools are returned as they are). The tools passed in are not changed,
        so one tool definition can serve many guarded runs."""
        out = []
        for tool in tools:
            if isinstance(tool, FunctionTool):
                tool = copy.copy(tool)
                tool.tool_input_guardrails = [*(tool.tool_input_guardrails or []), self.input_guardrail]
                tool.tool_output_guardrails = [
                    *(tool.tool_output_guardrails or []),
                    self.output_guardrail_tool,
                ]
            out.append(tool)
        return out

    # -- the run --------------------------------------------------------------------------------

    # -- guardrail functions ----------------------------------------------------------------------

    def _check_call(self, data: ToolInputGuardrailData) -> ToolGuardrailFunctionOutput:
        ctx = data.context
        decision = self.guardian.check_tool_call(
            ctx.tool_name, _arguments(ctx.tool_arguments), call_id=ctx.tool_call_id, actor=data.agent.name
        )
        if decision.stops:
            if self.raise_on_stop:
                return ToolGuardrailFunctionOutput.raise_exception(output_info=decision.to_dict())
            return ToolGuardrailFunctionOutput.reject_content(_text(decision), output_info=decision.to_dict())
        if decision.action == "warn":
            self._warnings[ctx.tool_call_id] = _text(decision)
        return ToolGuardrailFunctionOutput.allow()

    def _record_result(self, data: ToolOutputGuardrailData) -> ToolGuardrailFunctionOutput:
        ctx = data.context
        output = data.output if isinstance(data.output, str) else _dump(data.output)
        self.guardian.record_tool_result(output, call_id=ctx.tool_call_id, name=ctx.tool_name)
        warning = self._warnings.pop(ctx.tool_call_id, None)
        if warning:
            return ToolGuardrailFunctionOutput.reject_content(f"{output}\n\n{warning}")
        return ToolGuardrailFunctionOutput.allow()

    def _check_final(
        self, context: RunContextWrapper[Any], agent: Agent[Any], output: Any
    ) -> GuardrailFunctionOutput:
        text = output if isinstance(output, str) else _dump(output)
        decision = self.guardian.check_stop(text, actor=agent.name)
        return GuardrailFunctionOutput(output_info=decision.to_dict(), tripwire_triggered=decision.stops)


class GuardRunHooks(RunHooks[Any]):
    """Run hooks that pass each model response's usage to the guards (token and cost budgets)."""

    def __init__(self, guard: AgentsGuard) -> None:
        self.guard = guard

    async def on_llm_end(
        self, context: RunContextWrapper[Any], agent: Agent[Any], response: ModelResponse
    ) -> None:
        u = response.usage
        usage = Usage(input_tokens=u.input_tokens, output_tokens=u.output_tokens, total_tokens=u.total_tokens)
        g = self.guard.guardian
        g.check(Event(seq=len(g.events), kind="llm_call", role="assistant", actor=agent.name, usage=usage))


def _arguments(raw: str) -> Any:
    try:
        return json.loads(raw) if raw else {}
    except ValueError:
        return raw


def _dump(value: Any) -> str:
    try:
        return json.dumps(value, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return str(value)


def _text(decision: Decision) -> str:
    tag = ", ".join(x for x in (decision.guard, decision.mode) if x)
    return f"[mastkit guard{': ' + tag if tag else ''}] {decision.message}"
