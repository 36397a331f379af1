"""Where the process signals read from: only user messages confirm a write, only user messages
and tool results ground a value, only messages say who spoke last, and a hand-off does not end
the reading."""

from __future__ import annotations

from tests.verify.test_process import run

from mastkit.verify import process


def test_an_agent_message_neither_confirms_nor_grounds_a_write() -> None:
    p = process(
        run(
            "r",
            [
                ("user", "change my seat"),
                ("agent", "Okay, I will set seat QQ9. Yes?"),
                ("call", ("update_seat", {"seat": "QQ9"}, "done")),
            ],
        )
    )
    assert (p.writes, p.unconfirmed_writes, p.ungrounded_values) == (1, 1, 1)


def test_a_value_read_from_a_tool_result_is_grounded() -> None:
    p = process(
        run(
            "r",
            [
                ("user", "book the morning flight, yes"),
                ("call", ("search_flights", {}, "Flight QX77 departs 09:00")),
                ("call", ("book_flight", {"flight": "QX77"}, "booked")),
            ],
        )
    )
    assert (p.writes, p.unconfirmed_writes, p.ungrounded_values) == (1, 0, 0)


def test_texts_that_are_missing_ground_nothing() -> None:
    # a user message without content and a tool result without output, then a two-letter value
    p = process(
        run(
            "r",
            [
                ("user", None),
                ("call", ("get_codes", {}, None)),
                ("call", ("set_code", {"code": "xx"}, "done")),
            ],
        )
    )
    assert (p.writes, p.unconfirmed_writes, p.ungrounded_values) == (1, 1, 1)


def test_calls_after_a_handoff_are_still_read() -> None:
    p = process(
        run(
            "r",
            [
                ("user", "yes"),
                ("call", ("transfer_to_human_agents", {}, "ok")),
                ("call", ("cancel_booking", {}, "error: locked")),
            ],
        )
    )
    assert (p.handoff, p.writes, p.tool_errors, p.unresolved_errors) == (True, 1, 1, 1)


def test_who_spoke_last_ignores_tool_calls_after_the_last_message() -> None:
    p = process(run("r", [("agent", "Shall I?"), ("user", "no thanks"), ("call", ("get_booking", {}, "x"))]))
    assert p.ended_by_user is True


def test_the_final_agent_message_skips_messages_without_content() -> None:
    p = process(run("r", [("user", "hi"), ("agent", "Sorry, can I help otherwise?"), ("agent", None)]))
    assert (p.final_question, p.final_decline, p.declines) == (True, True, 1)


def test_as_dict_names_every_signal() -> None:
    p = process(run("r", [("user", "yes"), ("call", ("cancel_booking", {"id": "zz9"}, "done"))]))
    assert p.as_dict() == {
        "writes": 1,
        "unconfirmed_writes": 0,
        "tool_errors": 0,
        "unresolved_errors": 0,
        "ungrounded_values": 1,
        "handoff": False,
        "ended_by_user": True,
        "final_question": False,
        "declines": 0,
        "final_decline": False,
    }
