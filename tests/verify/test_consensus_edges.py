"""Edge cases of consensus across a task's rollouts: exact effect keys, multiset similarity, and
agreement/unshared for groups of one, two and three rollouts."""

from __future__ import annotations

from collections import Counter

import pytest
from tests.verify.test_process import run

from mastkit.traces.model import Event, ToolCall, ToolResult, Trace
from mastkit.verify.consensus import consensus_features, effects, similarity


def test_effect_keys_are_normalised_json() -> None:
    t = run(
        "a",
        [
            ("call", ("cancel_booking", {"z": " AB12 ", "a": [2.0, " X ", {"k": 1.5}], "n": None}, "done")),
            ("call", ("get_booking", {"id": "AB12"}, "{}")),  # read-only: no effect
            ("call", ("cancel_booking", {"id": "x"}, "error: locked")),  # failed: no effect
            ("call", ("transfer_to_human_agents", {"summary": "Angry customer"}, "ok")),
        ],
    )
    assert effects(t) == Counter(
        {
            ("cancel_booking", '{"a":[2,"x",{"k":1.5}],"n":null,"z":"ab12"}'): 1,
            ("transfer_to_human_agents", "null"): 1,
        }
    )


def test_effects_match_results_by_call_id_then_the_next_event() -> None:
    def call(seq: int, cid: str | None, raw: str = '{"Id": "Q"}') -> Event:
        return Event(
            seq=seq, kind="tool_call", tool_call=ToolCall(name="update_seat", call_id=cid, arguments_raw=raw)
        )

    def result(seq: int, cid: str, out: str) -> Event:
        return Event(seq=seq, kind="tool_result", tool_result=ToolResult(call_id=cid, output=out))

    events = [
        call(0, "a"),
        call(1, "b", '{"x": 1}'),
        result(2, "b", "done"),
        result(3, "a", "error: full"),  # a failed, though its result is not next to it
        call(4, None, "7"),
        result(5, "zz", "error"),  # no call id: the next event's result decides
        call(6, None, "8"),
        result(7, "yy", "ok"),
        call(8, "c", "9"),  # no result at all: counted
    ]
    got = effects(Trace(trace_id="t", source_format="test", events=events))
    # arguments_raw is a string, normalised as one (trimmed, lower-cased)
    assert got == Counter(
        {("update_seat", '"{\\"x\\": 1}"'): 1, ("update_seat", '"8"'): 1, ("update_seat", '"9"'): 1}
    )


def test_similarity_of_multisets() -> None:
    a = Counter({("w", "1"): 2, ("w", "2"): 1})
    b = Counter({("w", "1"): 1, ("w", "3"): 1})
    assert similarity(a, b) == pytest.approx(1 / 4)  # min 1 over max 2+1+1
    assert similarity(a, a) == 1.0
    assert similarity(Counter(), Counter()) == 1.0
    assert similarity(a, Counter()) == 0.0


def _write(tid: str, *values: str) -> Trace:
    return run(tid, [("call", ("update_booking", {"id": v}, "done")) for v in values])


def test_one_rollout_gets_the_neutral_agreement() -> None:
    assert consensus_features([_write("a", "x1", "x2")]) == [{"agreement": 0.5, "unshared": 0.0}]
    assert consensus_features([]) == []


def test_two_rollouts_tie_and_empty_effects() -> None:
    same = consensus_features([_write("a", "X1 "), _write("b", "x1")])
    assert same == [{"agreement": 1.0, "unshared": 0.0}] * 2
    empty = consensus_features([_write("a"), _write("b")])
    assert empty == [{"agreement": 1.0, "unshared": 0.0}] * 2
    one_sided = consensus_features([_write("a", "x1", "x2"), _write("b")])
    assert one_sided == [{"agreement": 0.0, "unshared": 2.0}, {"agreement": 0.0, "unshared": 0.0}]


def test_three_rollouts_agreement_is_the_mean_over_siblings() -> None:
    a, b, c = _write("a", "x1", "x2"), _write("b", "x1"), _write("c", "x3")
    fa, fb, fc = consensus_features([a, b, c])
    assert fa == {"agreement": pytest.approx((1 / 2 + 0) / 2), "unshared": 1.0}
    assert fb == {"agreement": pytest.approx((1 / 2 + 0) / 2), "unshared": 0.0}
    assert fc == {"agreement": 0.0, "unshared": 1.0}


def test_unshared_counts_distinct_effects_not_repeats() -> None:
    a, b = _write("a", "x1", "x1", "x9"), _write("b", "x1")
    fa, fb = consensus_features([a, b])
    assert fa == {"agreement": pytest.approx(1 / 3), "unshared": 1.0}
    assert fb == {"agreement": pytest.approx(1 / 3), "unshared": 0.0}


def test_any_two_handoffs_agree() -> None:
    h1 = run("a", [("call", ("transfer_to_human_agents", {"summary": "one"}, "ok"))])
    h2 = run("b", [("call", ("transfer_to_human_agents", {"summary": "two"}, "ok"))])
    assert consensus_features([h1, h2]) == [{"agreement": 1.0, "unshared": 0.0}] * 2


def test_a_failed_last_call_without_a_call_id_has_no_effect() -> None:
    # the result that decides is the event right after the call, here the last one
    events = [
        Event(seq=0, kind="tool_call", tool_call=ToolCall(name="update_seat", arguments_raw="1")),
        Event(seq=1, kind="tool_result", tool_result=ToolResult(call_id="zz", output="error: full")),
    ]
    assert effects(Trace(trace_id="t", source_format="test", events=events)) == Counter()
