"""LLM verifiers end to end against the loopback FakeLLMServer: scripted replies that make the
selection checkable, blinding at the request level, repair, failures, cache, pairwise."""

from __future__ import annotations

import json
from typing import Any

import pytest
from tests.annotate._judgekit import CODES, FAST_RETRY, trace_id_of, user_text
from tests.verify._rollouts import flipped, rollout

from mastkit.store import Store
from mastkit.testing import FakeLLMServer, Reply
from mastkit.verify import select_best
from mastkit.verify.llm import LLMScorer, PairwiseJudge

P = {"a-t0": 0.2, "a-t1": 0.9, "a-t2": 0.4, "b-t0": 0.7, "b-t1": 0.1}


def plain(p: float) -> str:
    return json.dumps({"reasoning": "looks done", "success_probability": p})


def taxonomy_reply(p: float, present: dict[str, str] | None = None) -> str:
    present = present or {}
    modes = [
        {
            "code": c,
            "evidence": [{"seq_start": 0, "seq_end": 0, "agent": None, "quote": present[c]}]
            if c in present
            else [],
            "reasoning": "r",
            "verdict": "present" if c in present else "absent",
            "confidence": 0.9,
        }
        for c in CODES
    ]
    return json.dumps({"summary": "s", "modes": modes, "reasoning": "weighed", "success_probability": p})


def scorer(srv: FakeLLMServer, **kw: Any) -> LLMScorer:
    return LLMScorer.from_spec(
        "openai:x", base_url=srv.openai_base_url, api_key="k", provider_options={"retry": FAST_RETRY}, **kw
    )


def rollouts() -> list[Any]:
    return [rollout(t.split("-")[0], int(t[-1]), success=False) for t in P]


def test_llm_plain_selects_the_rollout_the_model_rates_highest() -> None:
    with FakeLLMServer(handler=lambda body: plain(P[trace_id_of(body) or ""])) as srv:
        s = scorer(srv)
        chosen = select_best(rollouts(), s)
        assert {k: t.trace_id for k, t in chosen.items()} == {"a": "a-t1", "b": "b-t0"}
        assert srv.request_count == len(P)
        body = srv.chat_requests[0].json
        assert body["response_format"]["json_schema"]["schema"]["required"] == [
            "reasoning",
            "success_probability",
        ]
        text = user_text(body)
        assert "reward" not in text and "gold" not in text  # the raw info never reaches the model
        assert text.index("</trace-") < text.index("Did it achieve its task?")


def test_flipped_outcome_sends_the_same_request_bytes() -> None:
    for make in (lambda srv: scorer(srv), lambda srv: scorer(srv, taxonomy="mast")):
        with FakeLLMServer(
            handler=lambda body: taxonomy_reply(0.5) if "modes" in json.dumps(body) else plain(0.5)
        ) as srv:
            s = make(srv)
            t = rollout("a", 0, success=True, changes=1)
            assert s.assess(t) == s.assess(flipped(t))
            one, two = srv.chat_requests
            assert one.body == two.body


def test_llm_taxonomy_checks_evidence_and_uses_the_probability() -> None:
    t = rollout("a", 0, success=False, text="please rebook")
    reply = taxonomy_reply(0.15, {"FM-3.1": "help me a please rebook", "FM-1.3": "a quote that is not there"})
    with FakeLLMServer([reply]) as srv:
        a = scorer(srv, taxonomy="mast").assess(t)
        sent = user_text(srv.chat_requests[0].json)
    assert a.probability == 0.15
    assert a.details["present"] == ["FM-3.1"]
    assert a.details["unverified"] == ["FM-1.3"]
    assert "FM-1.3" in a.explanation and "evidence" in a.explanation
    assert "FM-3.1 Premature Termination" not in sent  # the taxonomy is in the system message


def test_unusable_reply_is_repaired_once_then_fails_the_rollout() -> None:
    with FakeLLMServer(["not json", plain(0.8)]) as srv:
        assert scorer(srv).assess(rollout("a", 0)).probability == 0.8
        assert "could not be used" in srv.chat_requests[1].messages[-1]["content"]
    with FakeLLMServer(default=Reply(text='{"reasoning": "x", "success_probability": 7}')) as srv:
        s = scorer(srv)
        scored = s.assess_many([rollout("a", 0), rollout("a", 1, turns=3)])
        assert [a.probability for a in scored] == [None, None]
        assert set(s.failures) == {"a-t0", "a-t1"}
        assert srv.request_count == 4


def test_a_failed_rollout_is_ranked_last() -> None:
    def handler(body: Any) -> str:
        tid = trace_id_of(body)
        return "garbage" if tid == "a-t1" else plain(P[tid or ""])

    with FakeLLMServer(handler=handler) as srv:
        chosen = select_best(rollouts(), scorer(srv))
    assert chosen["a"].trace_id == "a-t2"


def test_cached_rerun_makes_no_request(tmp_path: Any) -> None:
    with (
        FakeLLMServer(handler=lambda body: plain(P[trace_id_of(body) or ""])) as srv,
        Store(tmp_path / "m.db") as db,
    ):
        first = scorer(srv, cache=db).assess_many(rollouts())
        n = srv.request_count
        again = scorer(srv, cache=db).assess_many(rollouts())
        assert srv.request_count == n == len(P)
        assert [a.probability for a in again] == [a.probability for a in first]


def test_budget_stops_the_run() -> None:
    with FakeLLMServer(handler=lambda body: plain(0.5)) as srv:
        s = scorer(srv, budget_usd=0.000001, price_in=1000.0, price_out=1000.0)
        scored = s.assess_many(rollouts())
    assert all(a.probability is None for a in scored)
    assert srv.request_count == 0


def test_pairwise_asks_both_orders_and_cancels_position_bias() -> None:
    def always_a(body: Any) -> str:
        return json.dumps({"reasoning": "A", "better": "A", "confidence": 0.9})

    with FakeLLMServer(handler=always_a) as srv:
        judge = PairwiseJudge.from_spec("openai:x", base_url=srv.openai_base_url, api_key="k")
        assert judge.prefer_first(rollout("a", 0), rollout("a", 1)) == pytest.approx(0.5)
        assert srv.request_count == 2

    def prefers_t1(body: Any) -> str:
        text = user_text(body)
        a_part = text.split("# Run B")[0]
        better = "A" if "trace id: a-t1" in a_part else "B"
        return json.dumps({"reasoning": "t1 rebooked", "better": better, "confidence": 0.8})

    with FakeLLMServer(handler=prefers_t1) as srv:
        judge = PairwiseJudge.from_spec("openai:x", base_url=srv.openai_base_url, api_key="k")
        rs = [rollout("a", 0, turns=1), rollout("a", 1, turns=2)]
        from mastkit.verify import ShortestScorer

        chosen = select_best(rs, ShortestScorer(), compare=judge.prefer_first)
    assert chosen["a"].trace_id == "a-t1"
