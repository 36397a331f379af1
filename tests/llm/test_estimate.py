"""The pre-run estimate against what the judge and the attributor actually send (FakeLLMServer)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mastkit.annotate import annotate
from mastkit.annotate.factory import make_annotator
from mastkit.annotate.judge.judge import JudgeAnnotator
from mastkit.attribute.llm import LLMAttributor
from mastkit.cli._cost import preflight_annotate
from mastkit.llm.estimate import estimate_cost
from mastkit.store import Store
from mastkit.taxonomy import load_taxonomy
from mastkit.testing import FakeLLMServer, Reply
from mastkit.traces.load import load_traces

EXAMPLES = Path(__file__).resolve().parents[2] / "src" / "mastkit" / "examples"
CODES = [m.code for m in load_taxonomy("mast").modes]
REPLY = json.dumps(
    {
        "summary": "s",
        "task_success": False,
        "modes": [
            {"code": c, "verdict": "absent", "confidence": 0.9, "evidence": [], "rationale": "r"}
            for c in CODES
        ],
        "responsible_agent": None,
        "responsible_step": None,
    }
)


def _judge_estimate(traces: list, ann: JudgeAnnotator) -> tuple[int, int]:
    from mastkit.annotate.judge.prompt import system_prompt

    opts = ann.options
    system = ann.provider.estimate_tokens(
        system_prompt(ann.taxonomy, "trace-0123456789", examples=opts.examples)
    )
    est = estimate_cost(
        traces,
        ann.provider,
        system_tokens=system,
        window_tokens=opts.window_tokens or 100_000,
        max_output_tokens=opts.max_output_tokens,
        samples=opts.samples,
    )
    return est.calls, est.input_tokens


@pytest.mark.parametrize(
    ("example", "window_tokens", "samples"),
    [("01_sre_cart_oomkilled.json", None, 1), ("10_sweagent_week_dates_derailed.traj", 500, 2)],
)
def test_judge_estimate_is_within_a_factor_of_2_of_real_input_tokens(
    tmp_path: Path, example: str, window_tokens: int | None, samples: int
) -> None:
    traces = list(load_traces(EXAMPLES / example))
    with FakeLLMServer(default=Reply(REPLY)) as srv, Store(tmp_path / "m.db") as store:
        ann = make_annotator("llm", model="openai:gpt-4o-mini", base_url=srv.openai_base_url, api_key="k",
                             cache=store, window_tokens=window_tokens, samples=samples)  # fmt: skip
        assert isinstance(ann, JudgeAnnotator)
        calls, est_in = _judge_estimate(traces, ann)
        annotate(traces, ann, store=store)
        stats = store.call_stats()
    # the server counts ~4 characters per token of the whole request, as a tokenizer would see it
    assert calls == stats["calls"] == srv.request_count
    if window_tokens:
        assert calls > 2 * samples  # the trace really was cut into several windows
    assert stats["input_tokens"] / 2 <= est_in <= stats["input_tokens"] * 2, (est_in, stats)


def test_attribution_estimate_is_within_a_factor_of_2(tmp_path: Path) -> None:
    (trace,) = load_traces(EXAMPLES / "12_whowhen_units_withheld.json")
    reply = '{"agent": "a", "step": 1, "reason": "r", "mode": null, "confidence": 0.5, "alternatives": []}'
    with FakeLLMServer(default=Reply(reply)) as srv:
        attr = LLMAttributor.from_spec("openai:gpt-4o-mini", base_url=srv.openai_base_url, api_key="k")
        est = estimate_cost(
            [trace],
            attr.provider,
            system_tokens=attr.system_tokens(),
            window_tokens=attr.log_tokens(),
            max_output_tokens=attr.options.max_output_tokens,
            calls_per_trace=lambda t: attr.requests_for(t, "all-at-once"),
        )
        attr.attribute(trace, method="all-at-once")
        real = sum(len(r.body) for r in srv.requests) // 4
    assert est.calls == srv.request_count == 1
    assert real / 2 <= est.input_tokens <= real * 2, (est.input_tokens, real)


def test_estimate_counts_samples_windows_output_and_price() -> None:
    (trace,) = load_traces(EXAMPLES / "01_sre_cart_oomkilled.json")
    ann = make_annotator("llm", model="openai:gpt-4o-mini", api_key="k")
    one = estimate_cost([trace], ann.provider, system_tokens=1000, window_tokens=100_000,  # type: ignore[attr-defined]
                        max_output_tokens=4096)  # fmt: skip
    three = estimate_cost([trace, trace], ann.provider, system_tokens=1000, window_tokens=100_000,  # type: ignore[attr-defined]
                          max_output_tokens=4096, samples=3)  # fmt: skip
    assert (one.calls, three.calls) == (1, 6)
    assert three.input_tokens == 6 * one.input_tokens
    assert one.output_tokens == 1024  # a quarter of the cap, as the budget reserves
    assert one.usd == pytest.approx((one.input_tokens * 0.15 + 1024 * 0.60) / 1e6)
    skipped = estimate_cost([trace], ann.provider, system_tokens=1000, window_tokens=100_000,  # type: ignore[attr-defined]
                            max_output_tokens=4096, skip=lambda t: True)  # fmt: skip
    assert (skipped.calls, skipped.skipped, skipped.usd) == (0, 1, 0.0)


def test_preflight_skips_traces_already_in_the_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    traces = list(load_traces(EXAMPLES / "01_sre_cart_oomkilled.json"))
    with FakeLLMServer(default=Reply(REPLY)) as srv, Store(tmp_path / "m.db") as store:
        ann = make_annotator(
            "llm", model="openai:gpt-4o-mini", base_url=srv.openai_base_url, api_key="k", cache=store
        )
        preflight_annotate(traces, ann, store, budget_total=None, confirm_above=1.0, yes=False)
        annotate(traces, ann, store=store)
        preflight_annotate(traces, ann, store, budget_total=None, confirm_above=1.0, yes=False)
    first, second = [line for line in capsys.readouterr().err.splitlines() if line.startswith("estimate")]
    assert "~1 calls for 1 trace(s)" in first
    assert "~0 calls for 0 trace(s)" in second
