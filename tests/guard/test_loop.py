"""The loop guard: N identical calls with no state change; A-B-A-B cycles; normalisation."""

from __future__ import annotations

from mastkit.guard import LoopGuard, normalize_args

from ._kit import call, only


def test_warns_at_3_and_blocks_the_5th_identical_call_with_an_unchanged_result() -> None:
    g = only(LoopGuard())
    actions = [call(g, "get_metrics", {"service": "api"}, "cpu 90%") for _ in range(6)]
    assert actions == ["allow", "allow", "warn", "warn", "block", "block"]
    d = g.decisions[2]
    calls = [e.seq for e in g.events if e.kind == "tool_call"]
    assert d.mode == "FM-1.3" and d.guard == "loop" and d.seqs == tuple(calls[:5])
    guard_events = g.guard_events()
    assert [e.extra["guard"]["action"] for e in guard_events] == ["warn", "warn", "block", "block"]
    assert guard_events[2].extra["guard"]["checked_seq"] == calls[4]


def test_thresholds_are_configurable() -> None:
    g = only(LoopGuard(warn_at=2, block_at=3))
    assert [call(g, "ls", {}, "a") for _ in range(3)] == ["allow", "warn", "block"]


def test_a_different_result_starts_the_count_again() -> None:
    g = only(LoopGuard())
    outs = ["pending", "queued", "rolling", "ready", "live", "done", "idle"]
    assert [call(g, "status", {"s": 1}, out) for out in outs] == ["allow"] * 7
    g = only(LoopGuard())
    outs = ["pending", "pending", "rolling", "rolling", "ready", "ready", "live", "live"]
    assert "block" not in [call(g, "status", {"s": 1}, out) for out in outs]


def test_a_state_changing_call_in_between_starts_the_count_again() -> None:
    g2 = only(LoopGuard())
    actions = []
    for i in range(6):
        actions.append(call(g2, "run_tests", {}, "1 failed"))
        call(g2, "edit_file", {"patch": str(i)}, "edited")  # a change each time: not a loop
    assert actions == ["allow"] * 6


def test_state_change_reset_can_be_turned_off() -> None:
    g = only(LoopGuard(state_change_resets=False))
    actions = []
    for i in range(5):
        actions.append(call(g, "run_tests", {}, "1 failed"))
        call(g, "edit_file", {"patch": str(i)}, "edited")
    assert actions[-1] == "block"


def test_ids_whitespace_and_key_order_do_not_make_calls_different() -> None:
    g = only(LoopGuard())
    variants = [
        {"q": "error  rate", "request_id": "7f3a2c1d-0000-4000-8000-123456789abc", "n": 1},
        {"n": 1, "q": "error rate", "request_id": "0b3a2c1d-1111-4000-8000-123456789abc"},
        {"q": " error rate ", "n": 1, "request_id": "x"},
        '{"n": 1, "q": "error rate", "request_id": "abc"}',
        {"q": "error\trate", "n": 1, "request_id": 17},
    ]
    assert [call(g, "query", v, "12% at 2026-03-01T10:00:00Z") for v in variants][-1] == "block"
    assert normalize_args({"b": 1, "a": "x  y"}) == '{"a":"x y","b":1}'
    assert normalize_args({"a": 1}) != normalize_args({"a": 2})


def test_results_differing_only_in_timestamps_count_as_unchanged() -> None:
    g = only(LoopGuard())
    outs = [f"rate 12% at 2026-03-01T10:0{i}:00Z" for i in range(5)]
    assert [call(g, "q", {}, o) for o in outs][-1] == "block"


def test_an_a_b_cycle_with_unchanged_results_is_blocked() -> None:
    g = only(LoopGuard(warn_at=99, block_at=99))  # only the cycle rule can fire
    actions = []
    for _ in range(5):
        actions.append(call(g, "read", {"p": "a"}, "A"))
        actions.append(call(g, "grep", {"p": "b"}, "B"))
    assert actions.index("warn") == 5  # 3rd repeat of A-B completes at the 6th call
    assert actions.index("block") == 7  # 4th repeat at the 8th
    assert "cycle" in g.decisions[-1].evidence


def test_a_three_call_cycle_is_found_and_a_changing_cycle_is_not() -> None:
    g = only(LoopGuard(warn_at=99, block_at=99))
    actions = [call(g, t, {}, t.upper()) for _ in range(4) for t in ("a", "b", "c")]
    assert actions[-1] == "block"
    g = only(LoopGuard(warn_at=99, block_at=99))
    actions = [call(g, t, {}, f"{t}{i}") for i in range(6) for t in ("a", "b")]
    assert set(actions) == {"allow"}


def test_cycles_can_be_turned_off() -> None:
    g = only(LoopGuard(warn_at=99, block_at=99, cycles=False))
    assert {call(g, t, {}, t) for _ in range(6) for t in ("a", "b")} == {"allow"}


def test_a_blocked_call_is_not_run_and_its_retry_is_blocked_again() -> None:
    g = only(LoopGuard(warn_at=2, block_at=3))
    for _ in range(3):
        call(g, "ls", {}, "x")
    assert g.check_tool_call("ls", {}).action == "block"
    assert g.state.last_change_seq is None
