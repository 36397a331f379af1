"""The pre-run estimate's arithmetic, checked against numbers worked out by hand.

A stand-in provider counts one token per character and records what it is asked to price, so
every figure below is a sum of string lengths (the real provider's 4-characters-per-token
estimate is checked against FakeLLMServer in ``test_estimate.py``).
"""

from __future__ import annotations

from typing import Any, cast

from mastkit.llm.estimate import PER_CALL_OVERHEAD_TOKENS, Estimate, estimate_cost
from mastkit.llm.render import render_windows
from mastkit.providers import Provider
from mastkit.traces.model import AgentInfo, Event, Trace


class CharProvider:
    """One token per character; a fixed price per token (or none)."""

    def __init__(self, price: bool = True) -> None:
        self.price = price
        self.priced: list[tuple[int, int]] = []

    def estimate_tokens(self, text: str) -> int:
        return len(text)

    def estimate_cost(self, input_tokens: int, output_tokens: int) -> float | None:
        self.priced.append((input_tokens, output_tokens))
        return (input_tokens + 10 * output_tokens) / 1e6 if self.price else None


def _provider(price: bool = True) -> tuple[CharProvider, Provider]:
    p = CharProvider(price)
    return p, cast(Provider, p)


def _trace(n_events: int = 10, chars: int = 1000, **kw: Any) -> Trace:
    events = [
        Event(seq=i, kind="message", actor="a", role="assistant", content=chr(ord("a") + i % 26) * chars)
        for i in range(n_events)
    ]
    return Trace(trace_id="t", source_format="test", events=events, **kw)


def test_the_overhead_constant() -> None:
    assert PER_CALL_OVERHEAD_TOKENS == 64


def test_attributor_calls_clip_the_log_and_add_the_fixed_part() -> None:
    agents = [AgentInfo(name="a", role_description="rr", system_prompt="ss"), AgentInfo(name="b")]
    trace = _trace(task="T" * 40, agents=agents)
    p, provider = _provider()
    est = estimate_cost(
        [trace], provider, system_tokens=1000, window_tokens=1500, max_output_tokens=4096,
        samples=2, calls_per_trace=lambda t: 3,
    )  # fmt: skip
    # fixed: 1000 + 64 + 40 (task) + len("- a: rr / ss") 12 + len("- b: ") 5 = 1121
    # the log (10 events of 1000+ characters) is clipped to max(4000, 1500 * 4) = 6000
    assert est.calls == 6
    assert est.input_tokens == (1121 + 6000) * 6 == 42726
    assert est.output_tokens == 6 * 1024
    assert p.priced == [(42726, 6144)]
    assert est.usd == (42726 + 61440) / 1e6
    assert (est.traces, est.skipped) == (1, 0)


def test_a_small_window_is_clipped_at_4000_characters() -> None:
    _p, provider = _provider()
    est = estimate_cost([_trace()], provider, system_tokens=0, window_tokens=100, max_output_tokens=0,
                        calls_per_trace=lambda t: 1)  # fmt: skip
    assert est.input_tokens == 64 + 4000
    assert est.output_tokens == 0


def test_a_short_log_is_counted_whole_with_newlines_between_events() -> None:
    trace = _trace(n_events=2, chars=10)
    _p, provider = _provider()
    est = estimate_cost([trace], provider, system_tokens=0, window_tokens=100_000, max_output_tokens=8,
                        calls_per_trace=lambda t: 1)  # fmt: skip
    from mastkit.llm.render import render_events

    blocks = [b for _s, b in render_events(trace)]
    assert est.input_tokens == 64 + sum(len(b) for b in blocks) + 1  # one "\n" between the two
    assert est.output_tokens == 2


def test_task_and_agent_specs_are_capped() -> None:
    agents = [AgentInfo(name=f"a{i:02d}") for i in range(31)]
    agents[0] = AgentInfo(name="a00", role_description="r" * 3000)
    trace = _trace(n_events=1, chars=10, task="T" * 25_000, agents=agents)
    _p, provider = _provider()
    base = estimate_cost([_trace(n_events=1, chars=10)], provider, system_tokens=0, window_tokens=100_000,
                         max_output_tokens=0, calls_per_trace=lambda t: 1)  # fmt: skip
    est = estimate_cost([trace], provider, system_tokens=0, window_tokens=100_000, max_output_tokens=0,
                        calls_per_trace=lambda t: 1)  # fmt: skip
    # task: 20,000 characters; agent a00: "- a00: " + 2,000; agents a01-a29: 7 each; a30 is left out
    assert est.input_tokens - base.input_tokens == 20_000 + 7 + 2000 + 29 * 7


def test_only_the_role_or_only_the_prompt() -> None:
    _p, provider = _provider()
    only_prompt = _trace(n_events=1, chars=10, agents=[AgentInfo(name="a", system_prompt="sys")])
    only_role = _trace(n_events=1, chars=10, agents=[AgentInfo(name="a", role_description="role")])
    kw: dict[str, Any] = {"system_tokens": 0, "window_tokens": 100_000, "max_output_tokens": 0,
                          "calls_per_trace": lambda t: 1}  # fmt: skip
    base = estimate_cost([_trace(n_events=1, chars=10)], provider, **kw).input_tokens
    assert estimate_cost([only_prompt], provider, **kw).input_tokens - base == len("- a: sys")
    assert estimate_cost([only_role], provider, **kw).input_tokens - base == len("- a: role")


def test_one_window_has_no_adjudication_request() -> None:
    trace = _trace(n_events=2, chars=50)
    _p, provider = _provider()
    (window,) = render_windows(trace, 100_000)
    est = estimate_cost([trace], provider, system_tokens=100, window_tokens=100_000, max_output_tokens=400)
    assert est.calls == 1
    assert est.input_tokens == 100 + 64 + len(window.text)
    assert est.output_tokens == 100


def test_several_windows_add_the_adjudication_request() -> None:
    trace = _trace(n_events=8, chars=900)
    windows = render_windows(trace, 500, overlap_events=1, max_windows=3)
    assert len(windows) == 3
    _p, provider = _provider()
    est = estimate_cost([trace], provider, system_tokens=10, window_tokens=500, max_output_tokens=40,
                        max_windows=3, overlap_events=1, ending_tokens=100)  # fmt: skip
    sizes = [len(w.text) for w in windows] + [100 + 60 * 3]
    assert est.calls == 4
    assert est.input_tokens == sum(10 + 64 + s for s in sizes)
    assert est.output_tokens == 4 * 10


def test_the_defaults_cut_as_the_judge_does() -> None:
    trace = _trace(n_events=60, chars=500)
    windows = render_windows(trace, 500, overlap_events=3, max_windows=8)
    assert len(windows) == 8 and windows != render_windows(trace, 500, overlap_events=4, max_windows=9)
    _p, provider = _provider()
    est = estimate_cost([trace], provider, system_tokens=0, window_tokens=500, max_output_tokens=0)
    assert est.calls == 9
    assert est.input_tokens == sum(64 + len(w.text) for w in windows) + 64 + 1500 + 60 * 8


def test_samples_below_one_count_as_one_and_negative_output_as_zero() -> None:
    _p, provider = _provider()
    kw: dict[str, Any] = {"system_tokens": 0, "window_tokens": 100_000, "calls_per_trace": lambda t: 1}
    one = estimate_cost([_trace()], provider, max_output_tokens=100, samples=1, **kw)
    zero = estimate_cost([_trace()], provider, max_output_tokens=100, samples=0, **kw)
    assert zero == one and one.calls == 1
    neg = estimate_cost([_trace()], provider, max_output_tokens=-400, **kw)
    assert neg.output_tokens == 0
    three = estimate_cost([_trace()], provider, max_output_tokens=7, samples=3, **kw)
    assert (three.calls, three.output_tokens) == (3, 3)  # 7 // 4 per call


def test_skip_leaves_traces_out_and_no_calls_cost_nothing() -> None:
    p, provider = _provider(price=False)
    traces = [_trace(), _trace(task="x"), _trace(task="y")]
    est = estimate_cost(traces, provider, system_tokens=0, window_tokens=100_000, max_output_tokens=0,
                        skip=lambda t: t.task == "x")  # fmt: skip
    assert (est.traces, est.skipped, est.calls) == (2, 1, 2)
    assert est.usd is None  # unpriced model
    none = estimate_cost(traces, provider, system_tokens=0, window_tokens=100_000, max_output_tokens=0,
                         skip=lambda t: True)  # fmt: skip
    assert none == Estimate(0, 0, 0, 0.0, 0, 3)
    assert len(p.priced) == 1  # the empty run never asks for a price


def test_describe() -> None:
    est = Estimate(
        calls=1234, input_tokens=5_678_901, output_tokens=2000, usd=0.01234, traces=1001, skipped=0
    )
    assert est.describe() == (
        "estimate: ~1,234 calls for 1,001 trace(s), ~5,678,901 input tokens, ~2,000 output tokens, ~$0.0123"
    )
    assert est.describe("gpt-4o-mini $0.15/$0.60 per M") == (
        "estimate: ~1,234 calls for 1,001 trace(s), ~5,678,901 input tokens, ~2,000 output tokens, ~$0.0123"
        " (price: gpt-4o-mini $0.15/$0.60 per M)"
    )
    unknown = Estimate(calls=2, input_tokens=10, output_tokens=1, usd=None, traces=2, skipped=1500)
    assert unknown.describe("") == (
        "estimate: ~2 calls for 2 trace(s), ~10 input tokens, ~1 output tokens, cost unknown"
        "; 1,500 trace(s) already in the store, not counted"
    )
    assert Estimate(1, 1, 1, 0.0).describe().endswith("~$0.0000")
    assert (Estimate(1, 1, 1, 0.0).traces, Estimate(1, 1, 1, 0.0).skipped) == (0, 0)


def test_the_overlap_given_is_the_overlap_used() -> None:
    trace = _trace(n_events=20, chars=300)
    one = render_windows(trace, 500, overlap_events=1)
    assert len(one) == 4 and len(render_windows(trace, 500)) == 6  # the default overlap (3) cuts 6
    _p, provider = _provider()
    est = estimate_cost([trace], provider, system_tokens=0, window_tokens=500, max_output_tokens=0,
                        overlap_events=1)  # fmt: skip
    assert est.calls == 5
    assert est.input_tokens == sum(64 + len(w.text) for w in one) + 64 + 1500 + 60 * 4


def test_two_windows_already_need_the_adjudication_request() -> None:
    trace = _trace(n_events=3, chars=900)
    windows = render_windows(trace, 500)
    assert len(windows) == 2
    _p, provider = _provider()
    est = estimate_cost([trace], provider, system_tokens=0, window_tokens=500, max_output_tokens=0)
    assert est.calls == 3
    assert est.input_tokens == sum(64 + len(w.text) for w in windows) + 64 + 1500 + 120
