"""The LLM attributor's decisions with several samples, probabilities and counterfactual checks,
and what ``from_spec`` builds, against the loopback FakeLLMServer.

Replies are chosen by the question and the request's seed (sample k of a request carries seed
k), so each scenario below fixes every sample's answer and the expected attribution is worked
out by hand in the comments.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from tests.attribute._miles import RETRY, miles_events

from mastkit.attribute import LLMAttributor
from mastkit.attribute.llm import AttributionOptions, expected_calls
from mastkit.attribute.model import Attribution
from mastkit.providers import get_provider
from mastkit.store import Store
from mastkit.taxonomy import load_taxonomy
from mastkit.testing import FakeLLMServer, Reply
from mastkit.traces.model import Event, Outcome, Trace

_STEP = re.compile(r"step (\d+) by")


def _trace() -> Trace:
    """Agent steps (the candidates): 1 planner, 2 coder, 4 coder, 5 verifier."""
    events = miles_events()
    return Trace(trace_id="miles", source_format="test", events=events, outcome=Outcome(success=False))


class Script:
    """Scripted answers: ``steps[seq]`` is one (decisive, probability) per sample; ``cf[seq]``
    one would_succeed per sample; ``blame`` one step per sample."""

    def __init__(
        self,
        steps: Mapping[int, Sequence[tuple[bool, float | None]]] | None = None,
        cf: dict[int, list[bool]] | None = None,
        blame: list[int] | None = None,
        reason: str = "r",
    ) -> None:
        self.steps = steps or {}
        self.cf = cf or {}
        self.blame = blame or [2]
        self.reason = reason
        self.questions: list[str] = []

    def __call__(self, payload: Any) -> Reply:
        question = payload["messages"][-1]["content"]
        seed = int(payload.get("seed") or 0)
        self.questions.append(question)
        step_m = _STEP.search(question)
        body: dict[str, Any]
        if "Identify the agent that made the decisive mistake" in question:
            step = self.blame[seed % len(self.blame)]
            body = {"reason": f"blame {step} s{seed}", "agent": "coder", "step": step, "mode": None,
                    "confidence": 0.8, "alternatives": [{"step": 1}, {"step": 4}]}  # fmt: skip
        elif "Does step" in question and step_m:
            decisive, prob = self.steps.get(int(step_m.group(1)), [(False, 0.0)] * 9)[seed]
            body = {"reason": f"step {step_m.group(1)} s{seed}", "mode": None, "decisive_error": decisive}
            if prob is not None:
                body["error_probability"] = prob
        else:
            assert "Counterfactual check" in question and step_m
            ok = self.cf.get(int(step_m.group(1)), [True] * 9)[seed]
            body = {"reason": f"cf {step_m.group(1)} s{seed} {ok}", "would_succeed": ok, "confidence": 0.9}
        return Reply(json.dumps(body))


def _attribute(script: Script, method: str, **options: Any) -> tuple[Attribution, int]:
    with FakeLLMServer(handler=script) as srv:
        provider = get_provider("openai:x", base_url=srv.openai_base_url, api_key="k", retry=RETRY)
        result = LLMAttributor(provider, options=AttributionOptions(**options)).attribute(
            _trace(), method=method
        )
        return result, srv.request_count


# -- step by step ------------------------------------------------------------------------------------


def test_a_tie_between_samples_is_not_a_decisive_error() -> None:
    # step 1: one yes of two (a tie) -> go on; step 2: two of two -> blamed, confidence 2/2
    script = Script(steps={1: [(True, 0.9), (False, 0.1)], 2: [(True, 0.7), (True, 0.6)]})
    result, calls = _attribute(script, "step-by-step", samples=2)
    assert (result.step, result.agent, result.confidence) == (2, "coder", 1.0)
    assert result.reason == "step 2 s0" and calls == 4


def test_a_majority_of_three_samples_gives_its_share_as_confidence() -> None:
    script = Script(
        steps={1: [(True, None), (False, None), (False, None)], 2: [(True, 0.9), (False, 0.2), (True, 0.8)]}
    )
    result, _ = _attribute(script, "step-by-step", samples=3)
    assert (result.step, result.confidence) == (2, 0.667)


def test_one_sample_gives_the_reply_probability_as_confidence() -> None:
    result, calls = _attribute(Script(steps={4: [(True, 0.85)]}), "step-by-step")
    assert (result.step, result.confidence, result.reason) == (4, 0.85, "step 4 s0")
    assert calls == 3  # steps 1, 2 and 4


def test_no_decisive_step_keeps_the_most_suspicious_one_by_mean_probability() -> None:
    # means: step 1 0.3, step 2 0.4, step 4 0.4 (a later tie does not replace it), step 5 0.1
    script = Script(
        steps={
            1: [(False, 0.2), (False, 0.4)],
            2: [(False, 0.6), (False, 0.2)],
            4: [(False, 0.4), (False, 0.4)],
            5: [(False, 0.1), (False, 0.1)],
        }
    )
    result, _ = _attribute(script, "step-by-step", samples=2)
    assert result.step == 2
    assert result.confidence == 0.2  # min(0.4, 0.5) * 0.5
    assert (
        result.reason == "step 2 s0 [no step was judged the decisive error; the most suspicious step is kept]"
    )


def test_without_probabilities_the_share_of_yes_votes_is_the_suspicion() -> None:
    # no step has a majority; step 4 has one yes of three (1/3), the others none
    no = [(False, None)] * 3
    script = Script(steps={1: no, 2: no, 4: [(False, None), (True, None), (False, None)], 5: no})
    result, _ = _attribute(script, "step-by-step", samples=3)
    assert result.step == 4
    assert result.confidence == 0.167  # min(1/3, 0.5) * 0.5
    assert result.reason is not None and result.reason.startswith("step 4 s1 ")  # the yes vote's reason


def test_no_votes_and_no_probabilities_keep_the_first_step() -> None:
    no = [(False, None)]
    result, _ = _attribute(Script(steps={1: no, 2: no, 4: no, 5: no}), "step-by-step")
    assert (result.step, result.confidence) == (1, 0.0)


def test_counterfactual_rejections_move_on_to_the_next_flagged_step() -> None:
    yes = [(True, 0.9)]
    script = Script(steps={1: yes, 2: yes, 4: yes}, cf={1: [False], 2: [False], 4: [True]})
    result, calls = _attribute(script, "step-by-step", counterfactual=True)
    assert result.step == 4 and result.confidence == 0.9
    assert result.reason == (
        "step 4 s0 [counterfactual check rejected 2 earlier step(s); counterfactual check passed: cf 4 s0 True]"
    )
    assert calls == 6  # three step questions, three counterfactual checks


def test_when_every_flagged_step_is_rejected_the_first_is_kept_and_lowered() -> None:
    yes = [(True, 0.9)]
    script = Script(steps={1: yes, 2: yes, 4: yes, 5: yes}, cf={s: [False] for s in (1, 2, 4, 5)})
    result, calls = _attribute(script, "step-by-step", counterfactual=True, max_candidates=2)
    assert result.step == 1
    assert result.confidence == 0.45  # 0.9 lowered by half
    assert result.reason == "step 1 s0 [counterfactual check: no flagged step would have fixed the run]"
    assert calls == 4  # steps 1 and 2, each checked, then the candidate limit (2) is reached


# -- counterfactual votes -----------------------------------------------------------------------------


def test_counterfactual_samples_vote_and_a_tie_keeps_the_candidate() -> None:
    script = Script(blame=[2], cf={2: [True, False]})
    result, _ = _attribute(script, "all-at-once", samples=2, counterfactual=True)
    assert result.step == 2
    assert result.reason == "blame 2 s0 [counterfactual check passed: cf 2 s0 True]"


def test_a_counterfactual_minority_does_not_keep_the_candidate() -> None:
    # two of three say no for step 2: the next candidate (1) is checked, and all three say yes
    script = Script(blame=[2], cf={2: [False, True, False], 1: [True, True, True]})
    result, _ = _attribute(script, "all-at-once", samples=3, counterfactual=True)
    assert result.step == 1 and result.agent == "planner"
    assert result.reason == "cf 1 s0 True [counterfactual check rejected step 2; next candidate step 1]"
    assert result.confidence == 0.8  # 1.0 (three votes for step 2) * 0.8


def test_the_suspicion_is_cut_to_500_characters_in_the_counterfactual_question() -> None:
    script = Script(blame=[2])

    def handler(payload: Any) -> Reply:
        reply = script(payload)
        if "Identify the agent" in payload["messages"][-1]["content"]:
            body = json.loads(reply.text)
            body["reason"] = "w" * 600
            reply = Reply(json.dumps(body))
        return reply

    with FakeLLMServer(handler=handler) as srv:
        provider = get_provider("openai:x", base_url=srv.openai_base_url, api_key="k", retry=RETRY)
        LLMAttributor(provider, options=AttributionOptions(counterfactual=True)).attribute(_trace())
    (cf,) = [q for q in script.questions if "Counterfactual check" in q]
    assert f'Candidate decisive error: step 2 by "coder". Suspected because: {"w" * 500}\n' in cf


# -- sizes and construction ---------------------------------------------------------------------------


def test_requests_for_counts_agent_steps_and_the_counterfactual() -> None:
    provider = get_provider("openai:x", api_key="k")
    plain = LLMAttributor(provider)
    cf = LLMAttributor(provider, options=AttributionOptions(counterfactual=True))
    trace = _trace()  # 4 agent steps
    assert [plain.requests_for(trace, m) for m in ("all-at-once", "step-by-step", "binary-search")] == [
        1,
        4,
        2,
    ]
    assert [cf.requests_for(trace, m) for m in ("all-at-once", "step-by-step", "binary-search")] == [2, 5, 3]
    empty = Trace(
        trace_id="e", source_format="test", events=[Event(seq=0, kind="message", actor="user", role="user")]
    )
    assert cf.requests_for(empty, "all-at-once") == 0  # nothing to blame: no check either


def test_expected_calls() -> None:
    assert [expected_calls("binary-search", n) for n in (0, 1, 2, 3, 4, 5, 8, 9)] == [0, 0, 1, 2, 2, 3, 3, 4]
    assert [expected_calls("all-at-once", n) for n in (0, 1, 7)] == [0, 1, 1]
    assert [expected_calls("step-by-step", n) for n in (-1, 0, 1, 7)] == [0, 0, 1, 7]


def test_from_spec_defaults() -> None:
    a = LLMAttributor.from_spec("openai:gpt-4o-mini", api_key="sk-test-123")
    assert a.options == AttributionOptions()
    assert a.taxonomy.id == "mast" and a.cache is None and a.budget is None
    assert a.provider.redactor is not None  # type: ignore[attr-defined]
    assert a.provider.timeout == 120.0  # type: ignore[attr-defined]
    assert a.model_id == "openai:gpt-4o-mini"


def test_from_spec_passes_every_setting_on(tmp_path: Path) -> None:
    tax = load_taxonomy("mast")
    store = Store.memory()
    a = LLMAttributor.from_spec(
        "openai:x",
        base_url="http://127.0.0.1:9/v1",
        api_key="sk-test-123",
        taxonomy=tax,
        cache=store,
        budget_usd=1.5,
        budget_total_usd=9.0,
        price_in=2.0,
        price_out=8.0,
        hints=True,
        counterfactual=True,
        samples=3,
        structured_output=False,
        trace_tokens=5000,
        redact=False,
        timeout=7.5,
        provider_options={"retry": RETRY},
    )
    assert a.options == AttributionOptions(
        hints=True, counterfactual=True, samples=3, structured_output=False, trace_tokens=5000
    )
    assert a.taxonomy is tax and a.cache is store
    assert a.budget is not None and (a.budget.max_usd, a.budget.total_usd) == (1.5, 9.0)
    p: Any = a.provider
    assert p.redactor is None and p.timeout == 7.5 and p.retry == RETRY
    assert p.estimate_cost(1_000_000, 1_000_000) == pytest.approx(10.0)
    assert "127.0.0.1:9" in str(p.base_url)


def test_from_spec_reads_a_price_file_and_an_assumed_price(tmp_path: Path) -> None:
    f = tmp_path / "p.toml"
    f.write_text('[models."llama3"]\ninput = 1.0\noutput = 3.0\n')
    priced: Any = LLMAttributor.from_spec("ollama:llama3", prices=str(f)).provider
    assert priced.estimate_cost(1_000_000, 1_000_000) == pytest.approx(4.0)
    assumed: Any = LLMAttributor.from_spec("openai:unknown-model-x", api_key="k", assume_price=5.0).provider
    assert assumed.estimate_cost(1_000_000, 0) == pytest.approx(5.0)
