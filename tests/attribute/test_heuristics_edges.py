"""Edge cases of the single attribution heuristics: exact findings, boundaries and each branch.

The broader scenarios live in ``test_heuristics.py``; these pin the details a mutation run
showed unobserved (which output answers a call, which argument values count, the exact
signal and reason strings).
"""

from __future__ import annotations

from datetime import date
from typing import Any

from mastkit.annotate.detectors import _base
from mastkit.annotate.model import Evidence, ModeVerdict
from mastkit.attribute import heuristics as h
from mastkit.traces.model import Event, Label, ToolCall, ToolResult, Trace


def say(seq: int, actor: str, text: str | None, *, role: str | None = None) -> Event:
    role = role or {"user": "user", "system": "system"}.get(actor, "assistant")
    return Event(seq=seq, kind="message", actor=actor, role=role, content=text)  # type: ignore[arg-type]


def call(seq: int, name: str, call_id: str | None = "", args: Any = None, **kw: Any) -> Event:
    cid = f"c{seq}" if call_id == "" else call_id
    tc = ToolCall(name=name, call_id=cid, arguments=kw if args is None else args)
    return Event(seq=seq, kind="tool_call", actor="assistant", role="assistant", tool_call=tc)


def result(
    seq: int,
    output: str | None,
    call_id: str | None,
    *,
    error: bool | None = None,
    content: str | None = None,
) -> Event:
    tr = ToolResult(call_id=call_id, output=output, is_error=error)
    return Event(
        seq=seq, kind="tool_result", actor="environment", role="tool", tool_result=tr, content=content
    )


def seq_of(found: h.Finding | None) -> int | None:
    return None if found is None else found.step.seq


# -- who is an agent, who is a user -----------------------------------------------------------------


def test_roles_decide_agent_and_user() -> None:
    assert not h.is_agent(say(0, "system", "rules"))
    assert not h.is_agent(say(0, "Planner", "relayed", role="user"))
    assert h.is_agent(say(0, "Planner", "plan"))
    assert not h.is_user(say(0, "system", "rules"))
    assert not h.is_user(say(0, "Planner", "relayed", role="user"))
    assert h.is_user(say(0, "user", "hi"))


def test_blind_drops_labels_and_extra() -> None:
    t = Trace(
        trace_id="t",
        source_format="test",
        events=[say(0, "user", "hi")],
        labels=[Label(code="FM-1.1")],
        extra={"secret": 1},
    )
    b = h.blind(t)
    assert b.labels == [] and b.extra == {}


# -- which output answers a call -------------------------------------------------------------------


def write_clean(events: list[Event]) -> bool:
    found = h.first_write(events)
    assert found is not None and found.signal == "first_write"
    return not found.reason.endswith(" (failed)")


def test_result_with_the_call_id_answers_it_not_another() -> None:
    events = [
        say(0, "user", "cancel it"),
        call(1, "cancel_reservation", reservation_id="A1"),
        result(2, "Error: boom", "c9", error=True),
        result(3, "cancelled", "c1"),
    ]
    assert write_clean(events)
    assert not write_clean([*events[:2], result(2, "Error: boom", "c1", error=True)])


def test_agent_message_right_before_the_call_does_not_answer_it() -> None:
    events = [
        say(0, "user", "cancel it"),
        say(1, "assistant", "I'll cancel it."),
        call(2, "cancel_reservation", reservation_id="A1"),
        result(3, "Error: boom", "c2", error=True),
    ]
    assert not write_clean(events)


def test_user_message_is_skipped_when_looking_for_the_result() -> None:
    events = [
        say(0, "user", "cancel it"),
        call(1, "cancel_reservation", reservation_id="A1"),
        say(2, "user", "hurry"),
        result(3, "Error: boom", "c1", error=True),
    ]
    assert not write_clean(events)


def test_other_calls_are_skipped_and_an_agent_message_ends_the_search() -> None:
    events = [
        say(0, "user", "cancel it"),
        call(1, "cancel_reservation", reservation_id="A1"),
        call(2, "get_reservation_details", reservation_id="A1"),
        result(3, "Error: boom", "c1", error=True),
    ]
    assert not write_clean(events)
    told = [*events[:2], say(2, "assistant", "Done."), result(3, "Error: boom", "c1", error=True)]
    assert write_clean(told)


def test_result_without_call_id_answers_the_call() -> None:
    events = [say(0, "user", "x"), call(1, "cancel_reservation", reservation_id="A1")]
    assert not write_clean([*events, result(2, "Error: boom", None, error=True)])
    assert not write_clean([*events, say(2, "Computer_terminal", "exitcode: 1 (execution failed)")])


def test_call_without_id_takes_the_next_output() -> None:
    events = [
        say(0, "user", "x"),
        call(1, "cancel_reservation", call_id=None, reservation_id="A1"),
        result(2, "Error: boom", "zz", error=True),
    ]
    assert not write_clean(events)


# -- first agent step, first write ------------------------------------------------------------------


def test_first_agent_step_after_a_system_prompt() -> None:
    events = [
        say(0, "system", "rules"),
        say(1, "Planner", "plan it"),
        say(2, "user", "go"),
        say(3, "Coder", "done"),
    ]
    assert h.first_agent_step(events) == h.Finding("first_action", events[1], "first agent step")


def test_first_agent_step_after_agents_and_a_relayed_task() -> None:
    events = [
        say(0, "Planner", "restating"),
        say(1, "Coder", "starting"),
        say(2, "user", "the task"),
        say(3, "Coder", "working"),
    ]
    assert h.first_agent_step(events) == h.Finding("first_action", events[3], "first agent step")


def test_first_agent_step_when_only_the_opening_message_exists() -> None:
    events = [say(0, "Planner", "restating")]
    assert h.first_agent_step(events) == h.Finding("first_action", events[0], "first agent step")


def test_first_write_reason_when_clean() -> None:
    events = [say(0, "user", "x"), call(1, "cancel_reservation", reservation_id="A1"), result(2, "ok", "c1")]
    found = h.first_write(events)
    assert found == h.Finding("first_write", events[1], "first state-changing action cancel_reservation")


# -- unresolved errors ------------------------------------------------------------------------------


def test_unresolved_error_skips_an_output_nobody_caused() -> None:
    events = [
        result(0, "Error: stale", None, error=True),
        say(1, "user", "cancel it"),
        call(2, "cancel_reservation", reservation_id="A1"),
        result(3, "Error: boom", "c2", error=True),
    ]
    reason = "its action failed at event 3 and was not redone"
    assert h.first_unresolved_error(events) == h.Finding("unresolved_error", events[2], reason)


def test_unresolved_error_looks_past_a_resolved_one() -> None:
    events = [
        say(0, "user", "cancel it"),
        call(1, "get_details", id="A1"),
        result(2, "Error: busy", "c1", error=True),
        call(3, "get_details", id="A1"),
        result(4, "{}", "c3"),
        call(5, "cancel_reservation", reservation_id="A1"),
        result(6, "Error: boom", "c5", error=True),
    ]
    assert seq_of(h.first_unresolved_error(events)) == 5


def test_a_clean_call_before_the_failure_does_not_resolve_it() -> None:
    events = [
        say(0, "user", "cancel both"),
        call(1, "cancel_reservation", reservation_id="A1"),
        result(2, "cancelled", "c1"),
        call(3, "cancel_reservation", reservation_id="B2"),
        result(4, "Error: boom", "c3", error=True),
    ]
    assert seq_of(h.first_unresolved_error(events)) == 3


def test_a_parallel_call_answered_later_does_not_resolve_the_failure() -> None:
    events = [
        say(0, "user", "cancel both"),
        call(1, "cancel_reservation", reservation_id="A1"),
        call(2, "cancel_reservation", reservation_id="B2"),
        result(3, "Error: boom", "c1", error=True),
        result(4, "cancelled", "c2"),
    ]
    assert seq_of(h.first_unresolved_error(events)) == 2


def test_executor_reply_right_after_the_failure_resolves_it() -> None:
    events = [
        say(0, "user", "compute"),
        say(1, "Coder", "```python\nprint(1/0)\n```"),
        say(2, "Computer_terminal", "exitcode: 1 (execution failed)"),
        say(3, "Computer_terminal", "exitcode: 0\n1"),
    ]
    assert h.first_unresolved_error(events) is None


def test_only_the_same_executor_resolves_a_failure() -> None:
    events = [
        say(0, "user", "compute"),
        say(1, "Coder", "```python\nprint(1/0)\n```"),
        say(2, "Computer_terminal", "exitcode: 1 (execution failed)"),
        say(3, "Coder", "```python\nprint(1)\n```"),
        say(4, "Python_executor", "exitcode: 0\n1"),
    ]
    assert seq_of(h.first_unresolved_error(events)) == 1


def test_the_retry_is_judged_by_the_agent_just_before_the_reply() -> None:
    events = [
        say(0, "user", "compute"),
        say(1, "Coder", "```python\nprint(1/0)\n```"),
        say(2, "Computer_terminal", "exitcode: 1 (execution failed)"),
        say(3, "Coder", "```python\nprint(1)\n```"),
        say(4, "Computer_terminal", "exitcode: 0\n1"),
        say(5, "Checker", "looks right"),
    ]
    assert h.first_unresolved_error(events) is None


# -- argument values ------------------------------------------------------------------------------


def scalars(value: object) -> list[tuple[str, str]]:
    return list(h._scalars(value))


def test_scalars_walk_lists_with_their_key() -> None:
    assert scalars(["AB12"]) == [("", "AB12")]  # a bare value has no key
    assert scalars({"ids": ["AB12", "CD34"]}) == [("ids", "AB12"), ("ids", "CD34")]


def test_scalars_skip_zero_one_flags_and_none() -> None:
    assert scalars({"a": 0, "b": 1, "c": True, "d": False, "e": None}) == []
    assert scalars({"n": 2}) == [("n", "2")]


def test_scalars_format_numbers() -> None:
    assert scalars({"n": 12345678, "x": 305.0, "y": 2.5}) == [("n", "12345678"), ("x", "305"), ("y", "2.5")]


def test_scalars_string_length_and_word_bounds() -> None:
    assert scalars({"s": "A"}) == []
    assert scalars({"s": " AB "}) == [("s", "AB")]
    assert scalars({"s": "x" * 40}) == [("s", "x" * 40)]
    assert scalars({"s": "x" * 41}) == []
    assert scalars({"s": "a b c"}) == [("s", "a b c")]
    assert scalars({"s": "a b c d"}) == []


def test_values_from_a_result_without_content_or_output_are_not_invented() -> None:
    base = [say(0, "user", "hi"), result(1, "ok", "c0")]
    assert seq_of(h.unverified_action([*base, call(2, "cancel_reservation", code="xx")])) == 2
    empty = [say(0, "user", "hi"), result(1, None, "c0")]
    assert seq_of(h.unverified_action([*empty, call(2, "cancel_reservation", code="xx")])) == 2


def test_a_tool_result_verifies_values_in_its_content_and_output() -> None:
    events = [say(0, "user", "hi"), result(1, "ok", "c0", content="booking QX7")]
    assert h.unverified_action([*events, call(2, "cancel_reservation", code="QX7")]) is None


def test_read_call_arguments_count_as_seen() -> None:
    events = [
        say(0, "user", "hi"),
        call(1, "get_user_details", user_id="mia_1"),
        result(2, "{}", "c1"),
        call(3, "cancel_reservation", user_id="mia_1"),
    ]
    assert h.unverified_action(events) is None
    dated = [
        say(0, "user", "hi"),
        call(1, "get_flights", args={"day": date(2031, 1, 2)}),
        result(2, "{}", "c1"),
    ]
    assert h.unverified_action([*dated, call(3, "book_flight", day="2031-01-02")]) is None


def test_write_arguments_do_not_verify_a_later_write() -> None:
    events = [say(0, "user", "hi"), call(1, "update_user", user_id="mia_1"), result(2, "{}", "c1")]
    found = h.unverified_action(events)
    assert seq_of(found) == 1


def test_non_dict_arguments_are_not_checked() -> None:
    assert h.unverified_action([say(0, "user", "hi"), call(1, "cancel_reservation", args="XYZ999")]) is None


def test_whitespace_is_collapsed_before_matching() -> None:
    events = [say(0, "user", "fly to New \n  York"), call(1, "book_flight", city="New York")]
    assert h.unverified_action(events) is None


# -- user pivot -----------------------------------------------------------------------------------


def test_user_pivot_with_exactly_two_user_turns() -> None:
    events = [
        say(0, "user", "Please remove my friend from A1."),
        say(1, "assistant", "I'm unable to remove a passenger."),
        say(2, "user", "Then cancel A1."),
        call(3, "cancel_reservation", reservation_id="A1"),
        result(4, "cancelled", "c3"),
    ]
    assert seq_of(h.user_pivot(events)) == 2


def test_user_pivot_ignores_transfers() -> None:
    events = [
        say(0, "user", "Please remove my friend from A1."),
        say(1, "assistant", "I'm unable to remove a passenger."),
        say(2, "user", "Then cancel A1."),
        call(3, "transfer_to_human_agents", summary="x"),
        result(4, "transferred", "c3"),
        call(5, "cancel_reservation", reservation_id="A1"),
        result(6, "cancelled", "c5"),
    ]
    assert seq_of(h.user_pivot(events)) == 2


def test_user_pivot_checks_every_decline() -> None:
    events = [
        say(0, "user", "Please update my flight."),
        say(1, "assistant", "I cannot change that flight."),
        say(2, "user", "Then update the seat."),
        call(3, "update_seat", seat="12A"),
        result(4, "updated", "c3"),
        say(5, "assistant", "I'm unable to remove a passenger."),
        say(6, "user", "Then just cancel the booking."),
        call(7, "cancel_reservation", reservation_id="A1"),
        result(8, "cancelled", "c7"),
    ]
    assert seq_of(h.user_pivot(events)) == 6


# -- wrong answer ---------------------------------------------------------------------------------


def test_wrong_answer_normalises_both_sides() -> None:
    agent = [say(0, "user", "capital?"), say(1, "Solver", "Final answer: London")]
    assert seq_of(h.wrong_answer(agent, "Paris")) == 1
    right = [say(0, "user", "capital?"), say(1, "Solver", "Final answer: PARIS")]
    assert h.wrong_answer(right, "Paris!") is None


def test_wrong_answer_reads_only_agent_messages() -> None:
    events = [say(0, "user", "The answer is London, right"), say(1, "Solver", "Final answer: Paris")]
    assert h.wrong_answer(events, "Paris") is None


# -- detector finding -----------------------------------------------------------------------------


def _register(monkeypatch: Any, seq: int) -> None:
    def fires(t: Trace) -> ModeVerdict:
        return _base.present("FM-9.8", "edge", [Evidence(seq_start=seq, seq_end=seq, note="e")], "e")

    _base.detectors()
    det = _base.Detector("FM-9.8", "edge", fires, "")
    monkeypatch.setitem(_base._DETECTORS, det.key, det)


def _trace(*events: Event) -> Trace:
    return Trace(trace_id="t", source_format="test", events=list(events))


STEPS = [
    say(0, "user", "task"),
    say(1, "Planner", "plan it"),
    say(2, "Checker", "noted"),
    say(3, "Coder", "did it"),
]


def test_detector_evidence_maps_to_the_step_at_its_seq(monkeypatch: Any) -> None:
    _register(monkeypatch, 1)
    found = h.detector_finding(_trace(*STEPS), STEPS)
    assert found is not None and found[1] == "FM-9.8"
    assert found[0] == h.Finding("detector", STEPS[1], "first rule finding FM-9.8 at event 1")


def test_detector_evidence_between_events_maps_to_the_next(monkeypatch: Any) -> None:
    _register(monkeypatch, 2)
    live = [STEPS[0], STEPS[1], STEPS[3]]  # event 2 left out, as replayed context would be
    found = h.detector_finding(_trace(*STEPS), live)
    assert found is not None and seq_of(found[0]) == 3


def test_detector_evidence_after_the_end_maps_to_the_last_event(monkeypatch: Any) -> None:
    _register(monkeypatch, 9)
    found = h.detector_finding(_trace(*STEPS), STEPS)
    assert found is not None and seq_of(found[0]) == 3


def test_detector_evidence_on_an_output_maps_to_the_step_before_it(monkeypatch: Any) -> None:
    _register(monkeypatch, 2)
    events = [STEPS[0], STEPS[1], say(2, "Computer_terminal", "exitcode: 0"), STEPS[3]]
    found = h.detector_finding(_trace(*events), events)
    assert found is not None and seq_of(found[0]) == 1


def test_last_agent_step_skips_outputs_and_users() -> None:
    events = [
        say(0, "user", "go"),
        say(1, "Planner", "plan"),
        say(2, "Coder", "run it"),
        say(3, "Computer_terminal", "exitcode: 0"),
        say(4, "user", "thanks"),
    ]
    assert h.last_agent_step(events) == h.Finding("last_action", events[2], "last agent step")
    assert h.last_agent_step(events[:1]) is None
