"""What a model-backed run will cost, estimated before it starts.

The estimate renders each trace the way the run will (:func:`~mastkit.llm.render.render_windows`
for the judge's windows; the whole log clipped to one window for the attributor) and counts
tokens with the provider's own estimate (about 4 characters per token). Per call it counts:

* input: the fixed prompt (``system_tokens``: system prompt and instructions), the trace's
  task text, a small allowance for the fence and trace header
  (:data:`PER_CALL_OVERHEAD_TOKENS`) and the rendered window;
* output: a quarter of the output cap (``max_output_tokens // 4``), the same guess the budget
  reserves before each call — replies are usually far below the cap.

It does not count repair requests (sent only when a reply is unusable), nor traces the caller
``skip``s (already in the store: answered from it without a call). It is an estimate: the
server's tokenizer decides the real numbers (English and code come within a few tens of
percent; the heuristic undercounts CJK text).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from mastkit.llm.render import render_events, render_windows
from mastkit.providers import CHARS_PER_TOKEN, Provider
from mastkit.traces.model import Trace

__all__ = ["PER_CALL_OVERHEAD_TOKENS", "Estimate", "estimate_cost"]

PER_CALL_OVERHEAD_TOKENS = 64
"""Fence tags, the trace header (id, event count, agents) and the window note of each request."""


@dataclass(frozen=True)
class Estimate:
    """The estimated size and cost of a run."""

    calls: int
    """Model requests."""
    input_tokens: int
    output_tokens: int
    usd: float | None
    """None when the model's price is unknown."""
    traces: int = 0
    """Traces that will be sent to the model."""
    skipped: int = 0
    """Traces left out (already in the store)."""

    def describe(self, price: str | None = None) -> str:
        """One line, e.g. ``~12 calls, ~48,000 input tokens, ~$0.0090 (price: gpt-4o-mini ...)``."""
        usd = f"~${self.usd:.4f}" if self.usd is not None else "cost unknown"
        text = (
            f"estimate: ~{self.calls:,} calls for {self.traces:,} trace(s), ~{self.input_tokens:,} input tokens, "
            f"~{self.output_tokens:,} output tokens, {usd}"
        )
        if price:
            text += f" (price: {price})"
        if self.skipped:
            text += f"; {self.skipped:,} trace(s) already in the store, not counted"
        return text


def estimate_cost(
    traces: Iterable[Trace],
    provider: Provider,
    *,
    system_tokens: int,
    window_tokens: int,
    max_output_tokens: int,
    samples: int = 1,
    max_windows: int = 8,
    overlap_events: int = 3,
    calls_per_trace: Callable[[Trace], int] | None = None,
    skip: Callable[[Trace], bool] | None = None,
    ending_tokens: int = 1500,
) -> Estimate:
    """Estimate the calls, tokens and USD of running a model over ``traces``.

    By default each trace is cut into windows of ``window_tokens`` as the judge cuts it
    (``max_windows``, ``overlap_events``), and each window is asked ``samples`` times. With
    ``calls_per_trace`` (the attributor) a trace is one log clipped to ``window_tokens``,
    sent ``calls_per_trace(trace) * samples`` times. ``skip`` leaves traces out (those the
    store already answers). The USD figure uses ``provider.estimate_cost``.

    A trace cut into several windows also gets the judge's adjudication request: the context,
    a short line per window and ``ending_tokens`` of the end of the run. Every request carries
    the task (up to 20,000 characters) and the agents' role specifications (up to 2,000 each).
    """
    k = max(1, samples)
    out_per_call = max(0, max_output_tokens) // 4
    calls = input_tokens = n = skipped = 0
    for trace in traces:
        if skip is not None and skip(trace):
            skipped += 1
            continue
        n += 1
        fixed = system_tokens + PER_CALL_OVERHEAD_TOKENS
        if trace.task:
            fixed += provider.estimate_tokens(trace.task[:20_000])
        for agent in trace.agents[:30]:
            spec = " / ".join(x for x in (agent.role_description, agent.system_prompt) if x)
            fixed += provider.estimate_tokens(f"- {agent.name}: {spec[:2000]}")
        if calls_per_trace is None:
            windows = render_windows(
                trace, window_tokens, overlap_events=overlap_events, max_windows=max_windows
            )
            sizes = [provider.estimate_tokens(w.text) for w in windows]
            if len(windows) > 1:  # the adjudication request
                sizes.append(ending_tokens + 60 * len(windows))
        else:
            log = "\n".join(block for _seq, block in render_events(trace))
            clipped = min(len(log), max(4000, window_tokens * CHARS_PER_TOKEN))
            sizes = [provider.estimate_tokens(log[:clipped])] * calls_per_trace(trace)
        calls += len(sizes) * k
        input_tokens += sum(fixed + s for s in sizes) * k
    output_tokens = calls * out_per_call
    usd = provider.estimate_cost(input_tokens, output_tokens) if calls else 0.0
    return Estimate(calls, input_tokens, output_tokens, usd, n, skipped)
