"""The LLM attributor can blame a user who takes part in the conversation (a simulated customer),
not only the agents; a user who only states the task is not a candidate. Against the loopback
FakeLLMServer: the scripted replies depend on the question asked, so a method that never offers the
user's message as a candidate cannot name it."""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

from tests.attribute._miles import RETRY

from mastkit.attribute import LLMAttributor
from mastkit.attribute.llm import AttributionOptions
from mastkit.attribute.model import Attribution
from mastkit.providers import get_provider
from mastkit.testing import FakeLLMServer, Reply
from mastkit.traces.model import Event, Outcome, ToolCall, ToolResult, Trace

_STEP = re.compile(r"step (\d+) by")
_RANGE = re.compile(r"First half: steps (\d+) to (\d+)\. Second half: steps (\d+) to (\d+)\.")
USER_RULE = "The user in the conversation"


def _msg(seq: int, actor: str, role: str, text: str) -> Event:
    return Event(seq=seq, kind="message", actor=actor, role=role, content=text)


def _chat() -> Trace:
    """A customer-service run: the customer (actor "user") answers the agent at 3 and 7."""
    events = [
        _msg(0, "system", "system", "You are an airline agent."),
        _msg(1, "user", "user", "I want to change my flight."),
        _msg(2, "agent", "assistant", "Your user id, please?"),
        _msg(3, "user", "user", "It is raj_1. The trip is a round trip."),
        Event(seq=4, kind="tool_call", actor="agent", role="assistant",
              tool_call=ToolCall(name="get_reservation", arguments={"id": "R1"}, call_id="c1")),
        Event(seq=5, kind="tool_result", actor="tool", role="tool",
              tool_result=ToolResult(call_id="c1", output='{"flight_type": "one_way"}')),
        _msg(6, "agent", "assistant", "Booking a round trip as you said."),
        _msg(7, "user", "user", "Yes, go ahead."),
    ]  # fmt: skip
    return Trace(trace_id="chat", source_format="test", events=events, outcome=Outcome(success=False))


class Script:
    """Says the customer's message at 3 is the decisive mistake, whatever the method asks."""

    def __init__(self, blamed: int = 3, agent: str = "user") -> None:
        self.blamed = blamed
        self.agent = agent
        self.systems: list[str] = []
        self.questions: list[str] = []

    def __call__(self, payload: Any) -> Reply:
        self.systems.append(payload["messages"][0]["content"])
        question = payload["messages"][-1]["content"]
        self.questions.append(question)
        body: dict[str, Any]
        if "Identify the agent that made the decisive mistake" in question:
            body = {"reason": "wrong trip type", "agent": self.agent, "step": self.blamed, "mode": None,
                    "confidence": 0.7, "alternatives": []}  # fmt: skip
        elif "Does step" in question:
            step = int(_STEP.search(question).group(1))  # type: ignore[union-attr]
            body = {"reason": f"step {step}", "mode": None, "decisive_error": step == self.blamed,
                    "error_probability": 0.9 if step == self.blamed else 0.1}  # fmt: skip
        else:
            lo, mid_lo, _, _ = (int(x) for x in _RANGE.search(question).groups())  # type: ignore[union-attr]
            body = {"reason": "r", "mode": None, "half": "first" if lo <= self.blamed <= mid_lo else "second",
                    "confidence": 0.8}  # fmt: skip
        return Reply(json.dumps(body))


def _attribute(trace: Trace, script: Script, method: str) -> tuple[Attribution, int]:
    with FakeLLMServer(handler=script) as srv:
        provider = get_provider("openai:x", base_url=srv.openai_base_url, api_key="k", retry=RETRY)
        result = LLMAttributor(provider, options=AttributionOptions()).attribute(trace, method=method)
        return result, srv.request_count


def test_step_by_step_asks_about_the_users_answers_and_can_blame_them() -> None:
    script = Script()
    result, n = _attribute(_chat(), script, "step-by-step")
    assert (result.agent, result.step) == ("user", 3)
    # agent step 2, then the customer's answer 3: found there, so two requests
    assert n == 2
    assert 'The log above runs up to the step to judge: step 3 by "user".' in script.questions[1]


def test_the_users_first_message_states_the_task_and_is_never_a_candidate() -> None:
    script = Script(blamed=1)
    result, n = _attribute(_chat(), script, "step-by-step")
    asked = [int(_STEP.search(q).group(1)) for q in script.questions]  # type: ignore[union-attr]
    assert asked == [2, 3, 4, 6, 7]  # every candidate, none of them the task statement at 1
    assert n == 5 and result.step != 1


def test_binary_search_halves_run_over_agent_steps_and_user_answers() -> None:
    script = Script(blamed=7)
    result, n = _attribute(_chat(), script, "binary-search")
    assert (result.agent, result.step) == ("user", 7)
    # candidates 2, 3, 4, 6, 7: halves [2..4 | 6..7], then [6 | 7]
    assert "First half: steps 2 to 4. Second half: steps 6 to 7." in script.questions[0]
    assert "First half: steps 6 to 6. Second half: steps 7 to 7." in script.questions[1]
    assert n == 2


def test_all_at_once_takes_the_user_named_in_the_reply() -> None:
    result, _ = _attribute(_chat(), Script(agent="USER"), "all-at-once")
    assert (result.agent, result.step) == ("user", 3)


def test_the_system_prompt_names_the_conversing_user_only_when_there_is_one() -> None:
    script = Script()
    _attribute(_chat(), script, "all-at-once")
    assert f'{USER_RULE} ("user") can be the one responsible' in script.systems[0]
    # the same run without the customer's answers: the task statement alone is not a conversation
    quiet = _chat().model_copy(update={"events": [e for e in _chat().events if e.seq not in (3, 7)]})
    script = Script(blamed=2, agent="agent")
    result, _ = _attribute(quiet, script, "all-at-once")
    assert USER_RULE not in script.systems[0]
    assert (result.agent, result.step) == ("agent", 2)


def test_requests_for_counts_the_users_answers() -> None:
    attributor = LLMAttributor(get_provider("openai:x", api_key="k"))
    assert attributor.requests_for(_chat(), "step-by-step") == 5  # agent 2, 4, 6 and customer 3, 7
    copied = _chat().model_copy(
        update={"events": [dataclasses.replace(e, is_copied_context=e.seq == 7) for e in _chat().events]}
    )
    assert attributor.requests_for(copied, "step-by-step") == 4  # replayed context is not a candidate


def test_only_a_non_agent_users_messages_join_the_agent_steps() -> None:
    events = [
        *_chat().events,
        _msg(8, "system", "system", "Reminder: keep answers short."),  # a system message mid-run
        _msg(9, "Coder", "user", "I am an agent whose messages are sent as the user role."),
        Event(seq=10, kind="tool_call", actor="user", role="user",
              tool_call=ToolCall(name="look", arguments={}, call_id="u1")),  # not a message
    ]  # fmt: skip
    trace = _chat().model_copy(update={"events": events})
    attributor = LLMAttributor(get_provider("openai:x", api_key="k"))
    assert attributor.requests_for(trace, "step-by-step") == 5  # still agent 2, 4, 6 and user 3, 7


def test_every_conversing_user_is_named_in_the_system_prompt() -> None:
    events = [*_chat().events, _msg(8, "human", "user", "I am her manager; she means one way.")]
    script = Script()
    _attribute(_chat().model_copy(update={"events": events}), script, "all-at-once")
    assert '("user", "human") can be the one responsible' in script.systems[0]
