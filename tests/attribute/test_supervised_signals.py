"""The signals added for supervised (Magentic-One style) runs, silent runs and the fallbacks.

Each signal gets a hand-built run where it fires (with the exact step and reason) and runs
where it must stay silent; the rule tests check where each one sits in the order.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from mastkit.attribute import heuristics as h
from mastkit.attribute.rule_attributor import attribute_by_rules
from mastkit.traces.model import Event, ToolResult, Trace


def say(seq: int, actor: str, text: str | None, *, role: str | None = None) -> Event:
    role = role or {"human": "user", "user": "user"}.get(actor, "assistant")
    return Event(seq=seq, kind="message", actor=actor, role=role, content=text)  # type: ignore[arg-type]


def out(seq: int, **kw: Any) -> Event:
    return Event(seq=seq, kind="tool_result", actor="sandbox", role="tool", tool_result=ToolResult(**kw))


def ledger(satisfied: bool = False, progress: bool = True, loop: bool = False) -> str:
    """A Magentic-One style progress ledger, as the Orchestrator writes it."""
    body = {
        "is_request_satisfied": {"reason": "r", "answer": satisfied},
        "is_in_loop": {"reason": "r", "answer": loop},
        "is_progress_being_made": {"reason": "r", "answer": progress},
        "next_speaker": {"reason": "r", "answer": "WebSurfer"},
    }
    return "Updated Ledger:\n" + json.dumps(body, indent=2)


def trace(*events: Event) -> Trace:
    return Trace(trace_id="t", source_format="test", events=list(events))


def rules(t: Trace) -> tuple[Any, ...]:
    a = attribute_by_rules(t)
    return (a.agent, a.step, a.reason, a.confidence)


# A supervised run: the Orchestrator plans, keeps a ledger and routes; two workers report.
PLAN = [
    say(0, "human", "How many studio albums did X release?"),
    say(1, "Orchestrator", "Initial plan: ask WebSurfer to search."),
    say(2, "Orchestrator", ledger()),
    say(3, "Orchestrator", "Please search for X's discography."),
    say(4, "WebSurfer", "I typed 'X discography'. The page lists 5 albums."),
    say(5, "Orchestrator", ledger()),
    say(6, "Orchestrator", "Assistant, please count the studio albums."),
    say(7, "Assistant", "There are 3 studio albums."),
]


# -- supervisor ---------------------------------------------------------------------------------------


def test_the_agent_keeping_a_ledger_is_the_supervisor() -> None:
    assert h.supervisor(PLAN) == "Orchestrator"


def test_no_ledger_or_no_worker_means_no_supervisor() -> None:
    plain = [say(0, "human", "q"), say(1, "Planner", "plan"), say(2, "Coder", "code")]
    assert h.supervisor(plain) is None
    alone = [say(0, "human", "q"), say(1, "Orchestrator", ledger()), say(2, "Orchestrator", "thinking")]
    assert h.supervisor(alone) is None
    # a ledger quoted in a tool output, or in the user's message, is not kept by an agent
    quoted = [say(0, "human", ledger()), out(1, output=ledger()), say(2, "Coder", "code")]
    assert h.supervisor(quoted) is None
    # a key named without its object ("is_in_loop": false) is not a ledger
    flat = [say(0, "human", "q"), say(1, "Boss", '{"is_in_loop": false}'), say(2, "Coder", "code")]
    assert h.supervisor(flat) is None


# -- accepted_report ------------------------------------------------------------------------------------


def test_a_report_accepted_as_satisfying_the_request_is_blamed() -> None:
    events = [
        *PLAN,
        say(8, "Orchestrator", ledger(satisfied=True)),
        say(9, "Orchestrator", "Request satisfied."),
    ]
    found = h.accepted_report(events)
    assert found == h.Finding(
        "accepted_report", events[7], "Orchestrator accepts it as satisfying the request at event 8"
    )
    assert rules(trace(*events)) == (
        "Assistant",
        7,
        "accepted_report: Orchestrator accepts it as satisfying the request at event 8",
        0.4,
    )


def test_the_accepted_report_skips_the_supervisors_own_steps_and_outputs() -> None:
    events = [
        *PLAN[:5],
        say(5, "Orchestrator", "Next speaker ComputerTerminal"),
        out(6, output="3"),
        say(7, "Orchestrator", ledger(satisfied=True)),
    ]
    found = h.accepted_report(events)
    assert found is not None and found.step.seq == 4 and found.agent == "WebSurfer"


def test_no_accepted_report_without_a_satisfied_verdict_or_a_report_before_it() -> None:
    assert h.accepted_report(PLAN) is None  # never satisfied
    early = [PLAN[0], say(1, "Orchestrator", ledger(satisfied=True)), PLAN[4]]
    assert h.accepted_report(early) is None  # satisfied before any worker reported
    # the verdict of a worker that happens to echo a ledger is not the supervisor's
    echoed = [*PLAN, say(8, "Assistant", ledger(satisfied=True))]
    assert h.accepted_report(echoed) is None
    # no supervisor: a satisfied ledger alone does not make one
    unsupervised = [say(0, "human", "q"), say(1, "Solver", ledger(satisfied=True))]
    assert h.accepted_report(unsupervised) is None


def test_a_later_satisfied_verdict_is_found_after_an_early_one_without_a_report() -> None:
    events = [
        PLAN[0],
        say(1, "Orchestrator", ledger(satisfied=True)),
        say(2, "WebSurfer", "found it"),
        say(3, "Orchestrator", ledger(satisfied=True)),
    ]
    found = h.accepted_report(events)
    assert found is not None and found.step.seq == 2


def test_an_accepted_report_comes_before_a_stall_report() -> None:
    events = [
        *PLAN[:5],
        say(5, "Orchestrator", ledger(progress=False)),
        say(6, "WebSurfer", "Still the same page."),
        say(7, "Orchestrator", ledger(satisfied=True)),
    ]
    assert rules(trace(*events))[:3] == (
        "WebSurfer",
        6,
        "accepted_report: Orchestrator accepts it as satisfying the request at event 7",
    )
    stalled = trace(*events[:-1])
    assert rules(stalled) == (
        "WebSurfer",
        4,
        "stall_report: Orchestrator reports no progress at event 5",
        0.18,
    )


# -- first_report (the fallback in a supervised run) ----------------------------------------------------


def test_in_a_supervised_run_the_fallback_is_the_first_worker_report() -> None:
    assert h.first_report(PLAN) == h.Finding(
        "first_report", PLAN[4], "first report to the supervisor Orchestrator"
    )
    assert rules(trace(*PLAN)) == (
        "WebSurfer",
        4,
        "first_report: no failure signal found; first report to the supervisor Orchestrator",
        0.57,
    )


def test_without_a_supervisor_there_is_no_first_report() -> None:
    plain = [say(0, "human", "q"), say(1, "Planner", "plan"), say(2, "Coder", "code")]
    assert h.first_report(plain) is None
    assert rules(trace(*plain))[:3] == (
        "Planner",
        1,
        "first_action: no failure signal found; first agent step",
    )


# -- first_action: an opening message that acts ---------------------------------------------------------


def test_an_opening_message_whose_code_runs_is_the_first_action() -> None:
    events = [
        say(0, "Coder", "You are given a task. ```python\nprint(1)\n```"),
        say(1, "Computer_terminal", "exitcode: 0 (execution succeeded)\nCode output: 1"),
        say(2, "Checker", "looks fine"),
    ]
    assert h.first_action(events) == h.Finding(
        "first_action", events[0], "first agent step (the opening message acts)"
    )
    assert rules(trace(*events)) == (
        "Coder",
        0,
        "first_action: no failure signal found; first agent step (the opening message acts)",
        0.44,
    )


def test_an_opening_message_that_does_not_act_is_the_task_statement() -> None:
    restated = [say(0, "Coder", "You are given a task."), say(1, "Checker", "plan"), out(2, output="ok")]
    assert h.first_action(restated) == h.Finding("first_action", restated[1], "first agent step")
    alone = [say(0, "Coder", "hello")]
    assert h.first_action(alone) == h.Finding("first_action", alone[0], "first agent step")
    assert h.first_action([]) is None
    # two events: the opening message and its output
    ran = [say(0, "Coder", "```python\nprint(1)\n```"), out(1, exit_code=0, output="1")]
    assert h.first_action(ran) == h.Finding(
        "first_action", ran[0], "first agent step (the opening message acts)"
    )
    # a user's opening message followed by an output is not an agent acting
    asked = [say(0, "human", "run it"), out(1, output="ok"), say(2, "Coder", "done")]
    assert h.first_action(asked) == h.Finding("first_action", asked[2], "first agent step")


# -- silent runs --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("event", "silent"),
    [
        (out(1, exit_code=0, output=""), True),
        (out(1, exit_code=0, output=" \n "), True),
        (out(1, exit_code=0), True),
        (out(1, exit_code=0, output="3"), False),
        (out(1, output=""), False),  # no exit code: an empty tool answer, not a program run
        (out(1, exit_code=1, output=""), False),
        (say(1, "Computer_terminal", "exitcode: 0 (execution succeeded)\nCode output: "), True),
        (say(1, "Computer_terminal", "exitcode: 0 (execution succeeded)\nCode output: \n"), True),
        (say(1, "Computer_terminal", "exitcode: 0 (execution succeeded)\nCode output: 42"), False),
        (say(1, "Computer_terminal", "exitcode: 1 (execution failed)\nCode output: "), False),
        (say(1, "Computer_terminal", "exitcode: 01\nCode output: "), False),
        (say(1, "Computer_terminal", "Note: exitcode: 0\nCode output: "), False),
        (say(1, "Computer_terminal", None), False),
    ],
)
def test_a_silent_run_exits_cleanly_and_prints_nothing(event: Event, silent: bool) -> None:
    assert h.silent_run(event) is silent


def test_a_silent_run_blames_the_step_that_ran_it() -> None:
    events = [
        say(0, "human", "task"),
        say(1, "Coder", "```python\nx = 1\n```"),
        say(2, "Computer_terminal", "exitcode: 0 (execution succeeded)\nCode output: "),
        say(3, "Checker", "```python\nprint(x\n```"),
        say(4, "Computer_terminal", "exitcode: 1 (execution failed)\nSyntaxError"),
    ]
    assert h.first_bad_result(events) == h.Finding(
        "error_step", events[1], "its action ran and printed nothing at event 2"
    )
    assert h.first_error(events) == h.Finding("error_step", events[3], "its action failed at event 4")
    assert rules(trace(*events)) == (
        "Coder",
        1,
        "error_step: its action ran and printed nothing at event 2",
        0.44,
    )


def test_first_bad_result_reports_failures_and_skips_outputs_without_an_actor() -> None:
    events = [
        say(0, "human", "task"),
        out(1, exit_code=0, output=""),  # nobody acted before it
        say(2, "Coder", "run"),
        out(3, is_error=True, output="boom"),
    ]
    assert h.first_bad_result(events) == h.Finding("error_step", events[2], "its action failed at event 3")
    clean = [say(0, "human", "task"), say(1, "Coder", "run"), out(2, exit_code=0, output="4")]
    assert h.first_bad_result(clean) is None
