"""The judge's design, pinned: reply schema order, what each request carries, evidence checks,
how samples combine, hybrid filling, prose replies, and the cache around unusable replies.

Each test here failed on the judge before the redesign (judge-2) or kills a mutant of it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from mastkit.annotate import annotate
from mastkit.annotate.judge.evidence import MIN_QUOTE_CHARS, TraceText, check_item, normalise, verify
from mastkit.annotate.judge.judge import _fill_from_rules, combine
from mastkit.annotate.judge.parse import _text_verdicts, parse_reply
from mastkit.annotate.judge.prompt import PROMPT_VERSION, PromptOptions, context_block
from mastkit.annotate.judge.schema import reply_model
from mastkit.annotate.model import Evidence, ModeVerdict
from mastkit.llm.reply import strict_schema
from mastkit.store import Store
from mastkit.testing import FakeLLMServer
from mastkit.traces.model import AgentInfo, Event, Trace

from ._judgekit import CODES, TAX, make_judge, reply_json, simple_trace, user_text

# -- the reply schema ------------------------------------------------------------------------------


def test_schema_puts_evidence_and_reasoning_before_each_verdict() -> None:
    schema = strict_schema(reply_model(TAX))
    finding = schema["$defs"]["ModeFinding"]
    assert list(finding["properties"]) == ["code", "evidence", "reasoning", "verdict", "confidence"]
    assert finding["required"] == list(finding["properties"]) and finding["additionalProperties"] is False
    assert next(iter(schema["properties"])) == "summary"  # what happened, before any verdict
    assert list(schema["properties"])[-3:] == ["task_success", "responsible_agent", "responsible_step"]
    assert finding["properties"]["code"]["enum"] == CODES
    assert "minimum" not in json.dumps(schema) and "title" not in finding


def test_schema_keeps_a_property_named_like_a_schema_keyword() -> None:
    from pydantic import BaseModel

    class M(BaseModel):
        title: str
        default: int | None

    schema = strict_schema(M)
    assert list(schema["properties"]) == ["title", "default"]
    assert schema["required"] == ["title", "default"]


def test_judge_requests_send_the_schema() -> None:
    with FakeLLMServer([reply_json()]) as srv:
        annotate([simple_trace()], make_judge(srv))
        body = srv.chat_requests[0].json
    sent = body["response_format"]["json_schema"]["schema"]
    assert list(sent["$defs"]["ModeFinding"]["properties"])[:4] == [
        "code",
        "evidence",
        "reasoning",
        "verdict",
    ]


# -- what a request carries -----------------------------------------------------------------------------


def _roles_trace(task: str) -> Trace:
    events = [
        Event(seq=0, kind="message", actor="user", role="user", content="Plan the trip."),
        Event(seq=1, kind="message", actor="planner", role="assistant", content="Done, I fixed it."),
    ]
    agents = [
        AgentInfo(
            name="planner", role_description="Plans only; never books.", system_prompt="You are PLANNER-7."
        ),
        AgentInfo(name="booker", system_prompt="You book what the planner decided."),
    ]
    return Trace(trace_id="roles", source_format="test", events=events, agents=agents, task=task)


def test_requests_carry_role_specifications_and_the_whole_task() -> None:
    task = "Book a trip. " + "x" * 9000 + " LAST-WORDS-OF-TASK"
    with FakeLLMServer([reply_json()]) as srv:
        annotate([_roles_trace(task)], make_judge(srv))
        text = user_text(srv.chat_requests[0].json)
    fence_open = text.index("<trace-")
    fence_close = text.index("</trace-")
    inside = text[fence_open:fence_close]
    assert "- planner: Plans only; never books. / You are PLANNER-7." in inside
    assert "- booker: You book what the planner decided." in inside
    assert "LAST-WORDS-OF-TASK" in inside  # 9,000 characters are not cut (judge-2 cut at 4,000 silently)
    # the question is restated after the trace
    assert "Now decide each of the 14 modes" in text[fence_close:]


def test_a_task_over_the_limit_is_cut_with_a_marker() -> None:
    block = context_block(_roles_trace("a" * 300), PromptOptions(task_chars=100, role_chars=10))
    assert "[task cut here: 100 of 300 characters shown]" in block
    assert "[role specification cut here: 10 of 45 characters shown]" in block


def test_the_framing_is_neutral_and_states_base_rates() -> None:
    with FakeLLMServer([reply_json()]) as srv:
        annotate([simple_trace()], make_judge(srv))
        system = srv.chat_requests[0].json["messages"][0]["content"]
    assert "Most failure modes are absent from most traces" in system
    assert "what went wrong only if something did" in system
    assert "confidence is your probability" in system


# -- evidence checks --------------------------------------------------------------------------------------


TRACE = simple_trace("ev", ["Please fix the checkout bug.", "Done, I fixed it.", "Great, thanks a lot."])
TEXT = TraceText.of(TRACE)


def _present(*evidence: Evidence) -> ModeVerdict:
    return ModeVerdict(
        code="FM-3.2", verdict="present", confidence=0.9, evidence=list(evidence), rationale="r"
    )


def test_a_quote_in_the_cited_event_is_kept() -> None:
    v = verify(_present(Evidence(seq_start=1, seq_end=1, quote="done, I FIXED   it")), TEXT)
    assert v.verdict == "present" and v.evidence[0].seq_start == 1 and "unverified_evidence" not in v.extra


def test_a_quote_at_another_event_is_relocated() -> None:
    v = verify(_present(Evidence(seq_start=0, seq_end=0, quote="Great, thanks a lot")), TEXT)
    assert v.verdict == "present"
    assert (v.evidence[0].seq_start, v.evidence[0].seq_end) == (2, 2)
    assert v.evidence[0].note == "quote found at event 2, not at the cited 0..0"


def test_an_invented_quote_downgrades_present_to_unknown() -> None:
    v = verify(_present(Evidence(seq_start=1, seq_end=1, quote="I ran the tests and they pass")), TEXT)
    assert v.verdict == "unknown" and v.evidence == []
    assert v.extra["downgraded_from"] == "present"
    assert v.extra["unverified_evidence"][0]["reason"].startswith("quote not found in the trace")
    assert "none of its evidence was found" in (v.rationale or "")


def test_present_without_evidence_is_downgraded() -> None:
    v = verify(_present(), TEXT)
    assert v.verdict == "unknown" and v.extra["downgraded_from"] == "present"
    assert "no evidence given" in (v.rationale or "")


def test_one_good_item_keeps_present_and_the_bad_one_is_reported() -> None:
    v = verify(
        _present(
            Evidence(seq_start=1, seq_end=1, quote="Done, I fixed it"),
            Evidence(seq_start=2, seq_end=2, quote="this text is nowhere"),
        ),
        TEXT,
    )
    assert v.verdict == "present" and len(v.evidence) == 1
    assert len(v.extra["unverified_evidence"]) == 1


def test_quotes_with_gaps_and_across_events() -> None:
    assert check_item(Evidence(seq_start=0, seq_end=1, quote="checkout bug. … Done, I fixed"), TEXT)[0]
    # pieces out of order are not the same quote
    assert check_item(Evidence(seq_start=0, seq_end=1, quote="Done, I fixed … checkout bug"), TEXT)[0] is None


def test_short_quotes_identify_nothing() -> None:
    short = "x" * (MIN_QUOTE_CHARS - 1)
    trace = simple_trace("s", [short, short + "y"])
    item, reason = check_item(Evidence(seq_start=0, seq_end=0, quote=short), TraceText.of(trace))
    assert item is None and reason == "quote too short to locate"
    ok, _ = check_item(Evidence(seq_start=1, seq_end=1, quote=short + "y"), TraceText.of(trace))
    assert ok is not None


def test_absent_and_unknown_verdicts_are_not_downgraded() -> None:
    for verdict in ("absent", "unknown"):
        v = ModeVerdict(code="FM-1.1", verdict=verdict, evidence=[Evidence(quote="nowhere to be seen")])  # type: ignore[arg-type]
        out = verify(v, TEXT)
        assert out.verdict == verdict and out.evidence == [] and out.extra["unverified_evidence"]


def test_normalise_unifies_typography() -> None:
    assert normalise("It’s  “DONE”\n now") == 'it\'s "done" now'


def test_the_judge_downgrades_an_invented_quote_end_to_end() -> None:
    reply = reply_json(("FM-3.2", "FM-1.1")).replace(
        '"quote": "Done, I fixed it"', '"quote": "tests passed: 12"', 1
    )
    with FakeLLMServer([reply]) as srv:
        (a,) = annotate([simple_trace()], make_judge(srv)).annotations
    assert a.present() == ["FM-3.2"]  # FM-1.1 (first in the reply) quoted text that is not in the trace
    v = a.verdict("FM-1.1")
    assert v is not None and v.verdict == "unknown" and v.extra["downgraded_from"] == "present"
    assert any("FM-1.1 present without verifiable evidence" in p for p in a.extra["problems"])


# -- combining samples ------------------------------------------------------------------------------------


def _v(verdict: str, conf: float | None = 0.9, code: str = "FM-1.1") -> ModeVerdict:
    ev = [Evidence(seq_start=1, seq_end=1, quote=f"q-{verdict}")] if verdict == "present" else []
    return ModeVerdict(code=code, verdict=verdict, confidence=conf, evidence=ev, rationale=verdict)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("verdicts", "expected", "confidence"),
    [
        (["present", "absent"], "unknown", None),  # a tie is not "present" (judge-2 gave present)
        (["present", "present", "absent"], "present", (0.9 + 0.9 + 0.1) / 3),
        (["absent", "absent", "present"], "absent", (0.9 + 0.9 + 0.1) / 3),
        (["unknown", "unknown", "present"], "unknown", None),  # most samples could not tell
        (["unknown", "present", "present"], "present", 0.9),
        (["unknown", "absent", "absent"], "absent", 0.9),
        (["unknown", "present", "absent"], "unknown", None),
    ],
)
def test_combine(verdicts: list[str], expected: str, confidence: float | None) -> None:
    (out,) = combine([[_v(v)] for v in verdicts], "judge:x")
    assert out.verdict == expected
    assert out.confidence == (pytest.approx(confidence, abs=1e-3) if confidence is not None else None)
    assert out.extra["samples"] == len(verdicts)
    if expected == "present":
        assert out.evidence and out.evidence[0].quote == "q-present"
        assert out.rationale == "present"


def test_combine_weighs_confidence() -> None:
    # one sure "present" outweighs two unsure "absent": (0.95 + 0.4 + 0.4) / 3 > 0.5
    (out,) = combine([[_v("present", 0.95)], [_v("absent", 0.6)], [_v("absent", 0.6)]], "j")
    assert out.verdict == "present" and out.confidence == pytest.approx(0.583, abs=1e-3)
    # a missing confidence counts as 0.75
    (out,) = combine([[_v("present", None)], [_v("absent", 0.6)]], "j")
    assert out.verdict == "present" and out.confidence == pytest.approx(0.575, abs=1e-3)


def test_one_sample_is_returned_as_it_is() -> None:
    v = _v("present", 0.42)
    assert combine([[v]], "j") == [v]


# -- hybrid ------------------------------------------------------------------------------------------------


def test_hybrid_never_turns_a_rule_absent_into_the_answer() -> None:
    judge = ModeVerdict(code="FM-1.3", verdict="unknown", rationale="cannot tell")
    rule_absent = ModeVerdict(code="FM-1.3", verdict="absent", source="rule:loop")
    rule_present = _v("present", code="FM-1.3").model_copy(update={"source": "rule:loop"})
    assert _fill_from_rules(judge, rule_absent) is judge
    filled = _fill_from_rules(judge, rule_present)
    assert filled.verdict == "present" and filled.extra["filled_from_rules"] is True
    assert filled.extra["judge_rationale"] == "cannot tell"
    decided = ModeVerdict(code="FM-1.3", verdict="absent")
    assert _fill_from_rules(decided, rule_present) is decided


# -- prose replies -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "3.2 No or Incomplete Verification (yes)",
        "**3.2 No or Incomplete Verification** yes",
        "3.2 No Or Incomplete Verification → yes",
        "3.2 No or Incomplete Verification\tyes",
        "3.2: No or Incomplete Verification - yes",
    ],
)
def test_the_no_of_a_mode_name_is_not_the_verdict(line: str) -> None:
    assert _text_verdicts(line, TAX) == {"FM-3.2": "present"}


def test_a_name_followed_by_no_is_absent() -> None:
    assert _text_verdicts("3.2 No or Incomplete Verification: no", TAX) == {"FM-3.2": "absent"}


def test_parse_accepts_rationale_for_reasoning_and_drops_a_non_numeric_confidence() -> None:
    reply = {
        "summary": "s",
        "modes": [
            {"code": "1.1", "verdict": "yes", "confidence": "high", "rationale": "why", "evidence": []}
        ],
    }
    parsed = parse_reply(json.dumps(reply), TAX, source="j")
    v = parsed.verdicts[0]
    assert (v.code, v.verdict, v.confidence, v.rationale) == ("FM-1.1", "present", None, "why")


def test_parse_keeps_an_unreadable_verdict_unknown_with_the_reason() -> None:
    reply = {"modes": [{"code": "FM-1.1", "verdict": "maybe"}, {"code": "FM-1.2", "verdict": "no"}]}
    parsed = parse_reply(json.dumps(reply), TAX, source="j")
    assert [v.verdict for v in parsed.verdicts[:2]] == ["unknown", "absent"]
    assert "FM-1.1: unreadable verdict 'maybe'; kept as unknown" in parsed.problems


# -- the cache ------------------------------------------------------------------------------------------------


def test_an_unusable_reply_is_not_cached(tmp_path: Any) -> None:
    with Store(tmp_path / "m.db") as store, FakeLLMServer(["garbage", reply_json(("FM-1.1",))]) as srv:
        (a,) = annotate([simple_trace()], make_judge(srv, cache=store)).annotations
        assert srv.request_count == 2 and a.present() == ["FM-1.1"]
        (n,) = store._query("SELECT COUNT(*) FROM responses")[0]
        assert n == 1  # only the usable (repair) reply


def test_the_prompt_version_is_part_of_the_cache_key(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import mastkit.annotate.judge.judge as judge_mod

    with Store(tmp_path / "m.db") as store:
        with FakeLLMServer([reply_json()]) as srv:
            annotate([simple_trace()], make_judge(srv, cache=store))
        monkeypatch.setattr(judge_mod, "PROMPT_VERSION", PROMPT_VERSION + "-next")
        with FakeLLMServer([reply_json()]) as srv:
            annotate([simple_trace()], make_judge(srv, cache=store))
            assert srv.request_count == 1  # same messages, other prompt version: not served from cache


def test_a_responsible_step_outside_the_trace_is_dropped() -> None:
    reply = json.loads(reply_json(("FM-3.2",)))
    reply["responsible_step"], reply["responsible_agent"] = 99, "coder"
    with FakeLLMServer([json.dumps(reply)]) as srv:
        (a,) = annotate([simple_trace()], make_judge(srv)).annotations
    assert a.attribution is not None and a.attribution.step is None and a.attribution.agent == "coder"
    assert "responsible step 99 is not an event of the trace; dropped" in a.extra["problems"]
    reply["responsible_step"] = 2
    with FakeLLMServer([json.dumps(reply)]) as srv:
        (a,) = annotate([simple_trace()], make_judge(srv)).annotations
    assert a.attribution is not None and a.attribution.step == 2
