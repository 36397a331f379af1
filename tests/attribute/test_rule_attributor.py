"""The ``rules`` attribution method signal by signal, on small hand-built traces.

Each test states the exact attribution (agent, step, reason, confidence) worked out by hand,
so a changed signal order, offset, constant or message fails here (see docs/mutation.md).
"""

from __future__ import annotations

from typing import Any

import pytest

from mastkit.attribute import heuristics as h
from mastkit.attribute.model import Attribution
from mastkit.attribute.rule_attributor import attribute_by_rules
from mastkit.traces.model import Event, ToolCall, ToolResult, Trace


def ev(seq: int, actor: str | None, content: str | None = None, **kw: Any) -> Event:
    role = kw.pop("role", "user" if actor in ("human", "user") else "assistant")
    kind = kw.pop("kind", "message")
    return Event(seq=seq, kind=kind, actor=actor, role=role, content=content, **kw)


def trace(*events: Event) -> Trace:
    return Trace(trace_id="t", source_format="test", events=list(events))


def rules(a: Attribution) -> tuple[Any, ...]:
    return (a.agent, a.step, a.reason, a.confidence, a.mode, a.method)


def result(seq: int, **kw: Any) -> Event:
    # "sandbox" is an agent-like name: only the event kind marks it as an output
    return ev(seq, "sandbox", kind="tool_result", role="tool", tool_result=ToolResult(**kw))


# -- 1. error_step ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "tool_result",
    [
        {"is_error": True, "output": "ok"},
        {"exit_code": 1, "output": "ok"},
        {"exit_code": 2},
        {"output": "Traceback (most recent call last):"},
        {"output": "x" * 5000 + " ERROR at the end"},
    ],
)
def test_a_failed_tool_result_blames_the_agent_that_acted(tool_result: dict[str, Any]) -> None:
    t = trace(
        ev(0, "human", "fix the bug"),
        ev(1, "Planner", "plan: run the tests"),
        ev(
            2,
            "Coder",
            "running",
            kind="tool_call",
            tool_call=ToolCall(name="sh", arguments={"cmd": "pytest"}),
        ),
        result(3, **tool_result),
        ev(4, "Coder", "done"),
    )
    assert rules(attribute_by_rules(t)) == (
        "Coder",
        2,
        "error_step: its action failed at event 3",
        0.44,
        None,
        "rules",
    )


@pytest.mark.parametrize(
    "tool_result",
    [
        {"exit_code": 0, "output": "all good"},
        {"is_error": False},
        {"output": "ERROR early " + "x" * 4000},  # only the last 4000 characters are read
    ],
)
def test_a_clean_tool_result_is_no_error_step(tool_result: dict[str, Any]) -> None:
    t = trace(ev(0, "human", "task"), ev(1, "Coder", "run it"), result(2, **tool_result))
    assert attribute_by_rules(t).reason == "first_action: no failure signal found; first agent step"


def test_an_executor_message_with_a_nonzero_exit_code_is_a_failure() -> None:
    t = trace(
        ev(0, "human", "task"),
        ev(1, "Coder", "```python\nprint(1/0)\n```"),
        ev(2, "Computer_terminal", "exitcode: 1 (execution failed)"),
    )
    assert rules(attribute_by_rules(t))[:4] == ("Coder", 1, "error_step: its action failed at event 2", 0.44)
    long_ok = trace(
        ev(0, "human", "task"),
        ev(1, "Coder", "code"),
        ev(2, "Computer_terminal", "Traceback " + "y" * 4000),
    )
    assert attribute_by_rules(long_ok).reason.startswith("first_action")  # type: ignore[union-attr]
    ending = trace(
        ev(0, "human", "task"), ev(1, "Coder", "code"), ev(2, "Computer_terminal", "y" * 4000 + " ERROR")
    )
    assert attribute_by_rules(ending).reason == "error_step: its action failed at event 2"


def test_a_failure_with_no_agent_before_it_falls_through() -> None:
    t = trace(ev(0, "human", "task"), result(1, is_error=True), ev(2, "Coder", "hello"))
    assert rules(attribute_by_rules(t))[:4] == (
        "Coder",
        2,
        "first_action: no failure signal found; first agent step",
        0.44,
    )


# -- 2. stall_report --------------------------------------------------------------------------------


def test_a_stall_report_blames_the_last_step_of_another_agent() -> None:
    t = trace(
        ev(0, "human", "task"),
        ev(1, "Coder", "trying"),
        ev(2, "WebSurfer", "searching"),
        ev(3, "Orchestrator", "plan"),
        ev(4, "Orchestrator", '{"is_progress_being_made": {"reason": "same", "answer": false}}'),
    )
    assert rules(attribute_by_rules(t)) == (
        "WebSurfer",
        2,
        "stall_report: Orchestrator reports no progress at event 4",
        0.18,
        None,
        "rules",
    )


def test_a_loop_report_in_words_and_the_executor_is_skipped() -> None:
    t = trace(
        ev(0, "human", "task"),
        ev(1, "Coder", "code"),
        ev(2, "Computer_terminal", "output fine"),
        ev(3, "Manager", "No progress has been made so far."),
    )
    assert rules(attribute_by_rules(t))[:3] == (
        "Coder",
        1,
        "stall_report: Manager reports no progress at event 3",
    )
    loop = trace(ev(0, "human", "task"), ev(1, "Coder", "x"), ev(2, "Boss", '"is_in_loop": {"answer": true}'))
    assert attribute_by_rules(loop).step == 1


def test_a_stall_report_with_no_other_agent_falls_through() -> None:
    t = trace(ev(0, "human", "task"), ev(1, "Orchestrator", "no progress is being made"))
    assert attribute_by_rules(t).reason == "first_action: no failure signal found; first agent step"


# -- 3. wrong_answer --------------------------------------------------------------------------------


def test_a_wrong_final_answer_is_blamed_with_the_ground_truth() -> None:
    t = trace(
        ev(0, "human", "What is 6 x 7?"),
        ev(1, "Planner", "let us compute"),
        ev(2, "Solver", "The answer is 48"),
    )
    assert rules(attribute_by_rules(t, ground_truth="42")) == (
        "Solver",
        2,
        "wrong_answer: states '48', expected '42'",
        0.56,
        None,
        "rules",
    )
    # without a ground truth, or with the right answer, the signal stays silent
    assert attribute_by_rules(t).reason == "first_action: no failure signal found; first agent step"
    right = trace(ev(0, "human", "q"), ev(1, "Solver", "Final answer: 42."))
    assert attribute_by_rules(right, ground_truth="42").reason.startswith("first_action")  # type: ignore[union-attr]
    assert attribute_by_rules(right, ground_truth="!!").reason.startswith("first_action")  # type: ignore[union-attr]


def test_wrong_answer_quotes_are_cut_to_60_characters() -> None:
    t = trace(ev(0, "human", "q"), ev(1, "Solver", "result: " + "9" * 100))
    a = attribute_by_rules(t, ground_truth="4" * 100)
    assert a.reason == f"wrong_answer: states '{'9' * 60}', expected '{'4' * 60}'"


# -- 5. first_action and the fallbacks ----------------------------------------------------------------


def test_first_action_skips_the_task_and_empty_steps() -> None:
    t = trace(
        ev(0, "Planner", "I restate the task"),
        ev(1, "human", "the task"),
        ev(2, "Planner", None),
        ev(3, "Coder", "first real step"),
    )
    assert rules(attribute_by_rules(t)) == (
        "Coder",
        3,
        "first_action: no failure signal found; first agent step",
        0.44,
        None,
        "rules",
    )
    calls = trace(
        ev(0, "human", "task"),
        ev(1, "Coder", None, kind="tool_call", tool_call=ToolCall(name="ls", arguments={})),
    )
    assert attribute_by_rules(calls).step == 1


def test_no_events_and_no_agents() -> None:
    assert rules(attribute_by_rules(trace())) == (None, None, "empty trace", 0.0, None, "rules")
    only_people = trace(ev(0, "human", "hello"), ev(1, "user", "anyone?"))
    assert rules(attribute_by_rules(only_people)) == (None, None, "no agent step found", 0.0, None, "rules")


# -- 4. detector findings are not used ---------------------------------------------------------------

REPEATED = "Let me check the configuration file again now."


def test_a_detector_finding_no_longer_decides() -> None:
    # the repetition detector fires here (FM-1.3 at event 2), but the rules fall back to the first step
    t = trace(
        ev(0, "human", "fix the config"),
        ev(1, "Planner", "Coder, look at it"),
        ev(2, "Coder", REPEATED),
        ev(3, "Computer_terminal", "ok fine"),
        ev(4, "Coder", REPEATED),
        ev(5, "Coder", REPEATED),
    )
    found = h.detector_finding(t, h.live_events(t))
    assert found is not None and found[1] == "FM-1.3"
    assert rules(attribute_by_rules(t)) == (
        "Planner",
        1,
        "first_action: no failure signal found; first agent step",
        0.44,
        None,
        "rules",
    )


@pytest.mark.parametrize("executor", [True, False])
def test_only_the_last_4000_characters_are_searched(executor: bool) -> None:
    text = "ERROR " + "y" * 3995  # 4001 characters: the E is the one left out
    out = ev(2, "Computer_terminal", text) if executor else result(2, output=text)
    t = trace(ev(0, "human", "task"), ev(1, "Coder", "run"), out)
    assert attribute_by_rules(t).reason == "first_action: no failure signal found; first agent step"
    short = ev(2, "Computer_terminal", "Traceback (most recent call last)")
    assert attribute_by_rules(trace(ev(0, "human", "task"), ev(1, "Coder", "run"), short)).step == 1
    assert attribute_by_rules(trace(ev(0, "human", "task"), ev(1, "Coder", "run"), short)).confidence == 0.44


def test_an_agent_opening_message_is_the_task_statement() -> None:
    # multi-agent logs open with an agent restating its task: the first action comes after it
    t = trace(ev(0, "Coder", "You are given a task: hello"), ev(1, "Planner", "plan"))
    assert rules(attribute_by_rules(t))[:2] == ("Planner", 1)
    alone = trace(ev(0, "Coder", "hello"))
    assert rules(attribute_by_rules(alone))[:2] == ("Coder", 0)
