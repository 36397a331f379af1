"""The reply-parsing, voting and counting helpers of LLM attribution, one by one.

Written against surviving mutants (see docs/mutation.md): each test pins a value computed by
hand, so a flipped comparison, a dropped alias or a changed constant fails here.
"""

from __future__ import annotations

from collections import Counter

import pytest

from mastkit.annotate.model import Evidence, ModeVerdict
from mastkit.attribute.llm import (
    LLMAttributor,
    _agent,
    _bool,
    _Ctx,
    _hint_lines,
    _lowered,
    _noted,
    _parse_counterfactual,
    _parse_half,
    _parse_step,
    _prob,
    _str,
    _vote,
    expected_calls,
)
from mastkit.attribute.model import Attribution
from mastkit.llm.reply import ReplyError
from mastkit.providers import get_provider
from mastkit.taxonomy import load_taxonomy
from mastkit.testing import FakeLLMServer
from mastkit.traces.model import Event, Trace

TAX = load_taxonomy("mast")


def _ctx(actors: dict[int, str | None]) -> _Ctx:
    steps = {
        seq: Event(seq=seq, kind="message", actor=actor, role="assistant", content=f"s{seq}")
        for seq, actor in actors.items()
    }
    task = Event(seq=0, kind="message", actor="human", role="user", content="task")
    trace = Trace(trace_id="t", source_format="test", events=[task, *steps.values()])
    return _Ctx(
        trace=trace,
        method="all-at-once",
        ground_truth=None,
        fence="f",
        budget_chars=10_000,
        steps=steps,
        candidates=list(steps.values()),
        hints=[],
    )


# -- small value readers -------------------------------------------------------------------------------


def test_bool_reads_words_and_booleans() -> None:
    assert _bool(True) is True and _bool(False) is False
    assert _bool(" Yes. ") is True and _bool("TRUE") is True
    assert _bool("no") is False and _bool("false.") is False
    assert _bool("maybe") is None and _bool(1) is None and _bool(None) is None


def test_prob_clips_to_zero_one_and_refuses_booleans() -> None:
    assert _prob(0.25) == 0.25 and _prob(1) == 1.0 and isinstance(_prob(1), float)
    assert _prob(1.5) == 1.0 and _prob(-0.5) == 0.0
    assert _prob(True) is None and _prob("0.5") is None and _prob(None) is None


def test_str_strips_clips_and_empties_to_none() -> None:
    assert _str("  why  ") == "why"
    assert _str("x" * 1500) == "x" * 1000
    assert _str("abcdef", limit=3) == "abc"
    assert _str("   ") is None and _str(3) is None


# -- votes, notes, counts ------------------------------------------------------------------------------


def test_vote_majority_then_first_in_order() -> None:
    assert _vote(Counter(), [1, 2]) is None
    assert _vote(Counter({3: 2, 5: 1}), [5, 3]) == 3
    assert _vote(Counter({3: 1, 5: 1}), [5, 3]) == 5
    assert _vote(Counter({3: 1, 5: 1}), [3, 5]) == 3
    # a tie between values the order does not list: the first counted wins
    assert _vote(Counter({7: 1, 8: 1}), [1]) == 7
    assert _vote(Counter({8: 1, 7: 1}), []) == 8


def test_noted_and_lowered() -> None:
    a = Attribution(agent="Coder", step=3, reason="off by one", confidence=0.75, method="m")
    assert _noted(a, "checked").reason == "off by one [checked]"
    assert _noted(a.model_copy(update={"reason": None}), "checked").reason == "[checked]"
    assert _noted(a.model_copy(update={"reason": "r" * 2100}), "n").reason == "r" * 2000
    low = _lowered(a, "no candidate passed")
    assert low.confidence == 0.375 and low.reason == "off by one [no candidate passed]"
    assert _lowered(a.model_copy(update={"confidence": 0.3333}), "n").confidence == 0.167
    assert _lowered(a.model_copy(update={"confidence": None}), "n").confidence == 0.25
    assert a.confidence == 0.75  # the original is left alone


@pytest.mark.parametrize(
    ("method", "n", "calls"),
    [
        ("all-at-once", 0, 0),
        ("all-at-once", -1, 0),
        ("all-at-once", 1, 1),
        ("all-at-once", 9, 1),
        ("binary-search", 1, 0),
        ("binary-search", 2, 1),
        ("binary-search", 3, 2),
        ("binary-search", 8, 3),
        ("binary-search", 9, 4),
        ("step-by-step", 1, 1),
        ("step-by-step", 7, 7),
    ],
)
def test_expected_calls(method: str, n: int, calls: int) -> None:
    assert expected_calls(method, n) == calls


# -- naming the agent ----------------------------------------------------------------------------------


def test_agent_matches_a_named_actor_else_the_steps_actor() -> None:
    ctx = _ctx({1: "Planner", 2: "Coder", 3: None})
    assert _agent(ctx, "coder", 1) == "Coder"
    assert _agent(ctx, " **'Coder'** ", 1) == "Coder"
    assert _agent(ctx, "`planner`", 2) == "Planner"
    assert _agent(ctx, "Coder (the programmer)", 1) == "Coder"
    assert _agent(ctx, "Reviewer", 2) == "Coder"  # unknown name: the step's own actor
    assert _agent(ctx, "   ", 1) == "Planner"
    assert _agent(ctx, 7, 2) == "Coder"
    assert _agent(ctx, None, 3) is None


# -- hints ---------------------------------------------------------------------------------------------


def _verdict(code: str, *evidence: Evidence, rationale: str | None = None) -> ModeVerdict:
    return ModeVerdict(code=code, verdict="present", evidence=list(evidence), rationale=rationale)


def test_hint_lines_format_and_range() -> None:
    hints = [
        _verdict(
            "FM-1.3",
            Evidence(seq_start=2, note="repeats   the\nsame call", agent="Coder"),
            Evidence(seq_start=4, seq_end=6, quote="q"),
            Evidence(seq_start=None, note="nowhere"),
            rationale="because",
        ),
        _verdict("FM-2.2", Evidence(seq_start=9), rationale="asks nothing"),
        _verdict("FM-3.1", Evidence(seq_start=5, seq_end=5)),
    ]
    assert _hint_lines(hints, None, None).splitlines() == [
        "- FM-1.3 at step 2 (Coder): repeats the same call",
        "- FM-1.3 at steps 4..6: q",
        "- FM-2.2 at step 9: asks nothing",
        "- FM-3.1 at step 5",
    ]
    # a range keeps evidence that overlaps it, bounds included
    assert _hint_lines(hints, 6, 9).splitlines() == [
        "- FM-1.3 at steps 4..6: q",
        "- FM-2.2 at step 9: asks nothing",
    ]
    assert _hint_lines(hints, 3, 4).splitlines() == ["- FM-1.3 at steps 4..6: q"]
    assert _hint_lines(hints, 7, 8) == ""
    assert _hint_lines(hints, None, 2) == "- FM-1.3 at step 2 (Coder): repeats the same call"
    assert _hint_lines(hints, 9, None) == "- FM-2.2 at step 9: asks nothing"


def test_hint_lines_are_capped_at_20_and_240_characters() -> None:
    many = [_verdict("FM-1.1", *(Evidence(seq_start=i, note="n" * 300) for i in range(30)))]
    lines = _hint_lines(many, None, None).splitlines()
    assert len(lines) == 20
    assert lines[0] == "- FM-1.1 at step 0: " + "n" * 240
    assert lines[-1].startswith("- FM-1.1 at step 19: ")
    two = [_verdict("FM-1.1", Evidence(seq_start=1)), _verdict("FM-1.2", Evidence(seq_start=2))]
    assert _hint_lines(two, None, None) == "- FM-1.1 at step 1\n- FM-1.2 at step 2"


# -- reply parsers -------------------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["decisive_error", "error", "is_error", "answer"])
def test_parse_step_reads_each_alias(key: str) -> None:
    s = _parse_step({key: "no", "reason": "fine", "error_probability": 0.2, "mode": None}, TAX)
    assert (s.error, s.probability, s.reason, s.mode) == (False, 0.2, "fine", None)


def test_parse_step_prefers_the_first_alias_and_reads_confidence() -> None:
    s = _parse_step({"decisive_error": True, "error": False, "reason": "", "confidence": 0.6}, TAX)
    assert (s.error, s.probability, s.reason) == (True, 0.6, None)
    s = _parse_step({"error": True, "error_probability": 0.1, "confidence": 0.9}, TAX)
    assert s.probability == 0.1


@pytest.mark.parametrize(
    ("word", "first"),
    [("first", True), (" Upper half", True), ("SECOND", False), ("lower", False)],
)
def test_parse_half_words(word: str, first: bool) -> None:
    h = _parse_half({"half": word, "reason": " r ", "confidence": 3, "mode": "FM-2.1"}, TAX)
    assert (h.first, h.confidence, h.reason, h.mode) == (first, 1.0, "r", "FM-2.1")


def test_parse_half_reads_answer_and_refuses_other_words() -> None:
    assert _parse_half({"answer": "first"}, TAX).first is True
    assert _parse_half({"half": "second", "answer": "first"}, TAX).first is False
    for bad in ({"half": "middle"}, {"half": 1}, {}):
        with pytest.raises(ReplyError, match="'half'"):
            _parse_half(bad, TAX)


def test_parse_counterfactual() -> None:
    c = _parse_counterfactual({"would_succeed": "yes", "confidence": 0.4, "reason": "fixed"}, TAX)
    assert (c.would_succeed, c.confidence, c.reason) == (True, 0.4, "fixed")
    c = _parse_counterfactual({"answer": "no"}, TAX)
    assert (c.would_succeed, c.confidence, c.reason) == (False, None, None)
    assert _parse_counterfactual({"would_succeed": False, "answer": "yes"}, TAX).would_succeed is False
    with pytest.raises(ReplyError, match="'would_succeed'"):
        _parse_counterfactual({"answer": "perhaps"}, TAX)


def test_parse_blame_aliases_alternatives_and_steps() -> None:
    ctx = _ctx({1: "Planner", 2: "Coder", 3: "Checker", 4: "Coder"})
    with FakeLLMServer() as srv:
        provider = get_provider("openai:x", base_url=srv.openai_base_url, api_key="test")
        attributor = LLMAttributor(provider)
        b = attributor._parse_blame(
            ctx,
            {
                "agent_name": "coder",
                "step_number": "2",
                "reason": "  wrong sum ",
                "mode": "3.3",
                "confidence": 0.7,
                "alternatives": [{"agent": "Checker", "step": 3}, 2, 3, 9, "4", {"agent": 5, "step": 1}, "x"],
            },
        )
        assert (b.agent, b.step, b.reason, b.mode, b.confidence) == ("Coder", 2, "wrong sum", "FM-3.3", 0.7)
        assert b.alternatives == (3, 4, 1)  # own step, repeats and unknown steps dropped, order kept
        b = attributor._parse_blame(ctx, {"mistake_agent": "Checker", "mistake_step": 3, "reason": ""})
        assert (b.agent, b.step, b.reason, b.confidence, b.alternatives) == ("Checker", 3, None, None, ())
        b = attributor._parse_blame(
            ctx, {"agent": "Planner", "agent_name": "Coder", "step": 4, "step_number": 1}
        )
        assert (b.agent, b.step) == ("Planner", 4)
        b = attributor._parse_blame(ctx, {"agent": 3, "step": 4})
        assert b.agent == "Coder"
        with pytest.raises(ReplyError, match="step 7 is not a step of the log"):
            attributor._parse_blame(ctx, {"agent": "Coder", "step": 7})
        with pytest.raises(ReplyError, match="'step'"):
            attributor._parse_blame(ctx, {"agent": "Coder"})
        assert srv.requests == []
