"""Tests that kill the mutants of the judge core that survived tests/annotate (see docs/mutation.md).

Each test states a behaviour with hand-computed expected values; the comment above a group names
the kind of mutant it catches.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from mastkit.annotate import annotate
from mastkit.annotate.judge.evidence import TraceText, check_item, verify
from mastkit.annotate.judge.judge import JudgeAnnotator, JudgeOptions, combine
from mastkit.annotate.judge.parse import ParsedReply, _text_verdicts, _verdict, normalise_code, parse_reply
from mastkit.annotate.model import Evidence, ModeVerdict
from mastkit.llm.render import RenderStats
from mastkit.llm.reply import ReplyError
from mastkit.providers import get_provider
from mastkit.taxonomy import Taxonomy
from mastkit.testing import FakeLLMServer
from mastkit.traces.model import Event, ToolCall, ToolResult, Trace

from ._judgekit import CODES, FAST_RETRY, TAX, make_judge, reply_json, simple_trace


def _trace(*events: Event) -> Trace:
    return Trace(trace_id="t", source_format="test", events=list(events))


def _bare(seq: int, text: str) -> Event:
    """An event with no actor and no role: its searchable text is its content only."""
    return Event(seq=seq, kind="message", content=text)


def _present(*items: Evidence, rationale: str | None = None) -> ModeVerdict:
    return ModeVerdict(
        code="FM-1.1", verdict="present", evidence=list(items), rationale=rationale, source="j"
    )


# -- evidence: where pieces of a quote are searched ------------------------------------------------


def test_quote_pieces_must_appear_in_order_within_one_event() -> None:
    text = TraceText.of(_trace(_bare(0, "We first tried a rollback, then deployment failed.")))
    # both pieces are in the event, but in the other order: not a quote of it
    assert text.find(["deployment failed", "rollback"]) == []
    assert text.find(["rollback", "deployment failed"]) == [0]
    item = Evidence(seq_start=0, seq_end=0, quote="deployment failed … rollback")
    assert check_item(item, text) == (
        None,
        "quote not found in the trace: 'deployment failed … rollback'",
    )


def test_a_quote_at_the_very_start_of_an_event_is_found_there() -> None:
    text = TraceText.of(_trace(_bare(0, "Hello there."), _bare(1, "Tests passed on the first try.")))
    assert text.find(["tests passed"]) == [1]
    kept, reason = check_item(Evidence(seq_start=0, seq_end=0, quote="Tests passed"), text)
    assert reason is None and kept is not None
    assert (kept.seq_start, kept.seq_end) == (1, 1)
    assert kept.note == "quote found at event 1, not at the cited 0..0"


def test_find_skips_seqs_the_trace_does_not_have() -> None:
    text = TraceText.of(_trace(_bare(0, "alpha beta gamma"), _bare(1, "alpha beta gamma")))
    assert text.find(["beta"], [7, 1, 0]) == [1, 0]


def test_a_multi_event_quote_is_read_in_order_from_the_first_cited_event() -> None:
    text = TraceText.of(
        _trace(
            _bare(0, "alpha checks passed"),
            _bare(1, "then beta deploy failed, alpha checks passed again"),
        )
    )
    item = Evidence(seq_start=0, seq_end=1, quote="alpha checks passed … beta deploy failed")
    assert check_item(item, text) == (item, None)
    # the same pieces in the other order occur nowhere
    wrong = Evidence(seq_start=0, seq_end=1, quote="beta deploy failed … alpha checks passed … then")
    assert check_item(wrong, text)[0] is None


def test_a_quote_running_over_the_boundary_of_two_cited_events_is_verified() -> None:
    text = TraceText.of(_trace(_bare(0, "The build is green."), _bare(1, "Ship it now")))
    item = Evidence(seq_start=0, seq_end=1, quote="the build is green. ship it now")
    assert check_item(item, text) == (item, None)


def test_actor_role_and_tool_names_are_searchable_text() -> None:
    trace = _trace(
        Event(seq=0, kind="message", actor="ops_bot", content="Shipping now."),
        Event(seq=1, kind="message", role="assistant", actor="x", content="ok"),
        Event(
            seq=2,
            kind="tool_call",
            actor="coder",
            tool_call=ToolCall(name="apply_migrations", arguments={"db": "prod"}),
        ),
        Event(
            seq=3,
            kind="tool_result",
            actor="coder",
            tool_result=ToolResult(name="apply_migrations", output="done"),
        ),
    )
    text = TraceText.of(trace)
    assert text.by_seq[0] == "ops_bot shipping now."
    assert text.by_seq[1] == "x assistant ok"
    assert text.find(["ops_bot shipping now"]) == [0]
    assert text.find(["apply_migrations"]) == [2, 3]


def test_surrounding_quote_marks_and_full_stops_are_not_part_of_the_quote() -> None:
    text = TraceText.of(_trace(_bare(0, "Done, I fixed it")))
    item = Evidence(seq_start=0, seq_end=0, quote='"Done, I fixed it."')
    assert check_item(item, text) == (item, None)


def test_an_open_ended_citation_is_checked_at_its_start() -> None:
    text = TraceText.of(_trace(_bare(0, "nothing here"), _bare(1, "Rollback finished cleanly")))
    item = Evidence(seq_start=1, seq_end=None, quote="rollback finished")
    assert check_item(item, text) == (item, None)


def test_a_citation_with_only_an_end_seq_is_looked_up_in_the_whole_trace() -> None:
    text = TraceText.of(_trace(_bare(0, "nothing here"), _bare(1, "Rollback finished cleanly")))
    kept, reason = check_item(Evidence(seq_end=0, quote="rollback finished"), text)
    assert reason is None and kept is not None
    assert (kept.seq_start, kept.seq_end) == (1, 1)
    assert kept.note == "quote found at event 1, not at the cited None..0"


def test_the_reasons_for_rejecting_evidence() -> None:
    text = TraceText.of(_trace(_bare(0, "Rollback finished cleanly")))
    assert check_item(Evidence(seq_start=0), text) == (None, "no quote")
    assert check_item(Evidence(seq_start=0, quote="ok …"), text) == (None, "quote too short to locate")


def test_a_downgraded_verdict_says_why_and_lists_what_was_rejected() -> None:
    text = TraceText.of(_trace(_bare(0, "Rollback finished cleanly")))
    no_evidence = verify(_present(), text)
    assert no_evidence.verdict == "unknown"
    assert no_evidence.rationale == "judged present, but no evidence given; kept as unknown"
    invented = verify(_present(Evidence(quote="the database was dropped"), rationale="it broke"), text)
    assert invented.rationale == (
        "judged present, but none of its evidence was found in the trace; kept as unknown"
        " (judge's reasoning: it broke)"
    )
    assert invented.extra["downgraded_from"] == "present"
    assert invented.extra["unverified_evidence"] == [
        {
            "quote": "the database was dropped",
            "reason": "quote not found in the trace: 'the database was dropped'",
        }
    ]


# -- combine: how samples are merged -----------------------------------------------------------------


def _v(verdict: str, confidence: float | None = None, rationale: str | None = None) -> ModeVerdict:
    return ModeVerdict(
        code="FM-1.1", verdict=verdict, confidence=confidence, rationale=rationale, source="sample"
    )  # type: ignore[arg-type]


def test_one_unknown_of_two_samples_leaves_the_other_to_decide() -> None:
    (out,) = combine([[_v("present", 0.9)], [_v("unknown")]], "judge:m")
    assert (out.verdict, out.confidence, out.source) == ("present", 0.9, "judge:m")
    assert out.extra == {"votes": {"present": 1, "unknown": 1}, "samples": 2}


def test_an_even_split_is_unknown_and_says_so() -> None:
    (out,) = combine([[_v("present", 0.8, "saw it")], [_v("absent", 0.8, "did not")]], "judge:m")
    assert (out.verdict, out.confidence) == ("unknown", None)
    assert out.rationale == "the 2 samples disagree evenly: {'present': 1, 'absent': 1}"


def test_a_majority_of_unknowns_keeps_their_reasoning() -> None:
    samples = [[_v("unknown", rationale="cannot tell")], [_v("unknown")], [_v("present", 0.9, "yes")]]
    (out,) = combine(samples, "judge:m")
    assert (out.verdict, out.rationale) == ("unknown", "cannot tell")


def test_unsure_absents_add_up_to_present_without_a_borrowed_rationale() -> None:
    # absent with confidence 0.2 means p(present) = 0.8 for each sample
    (out,) = combine([[_v("absent", 0.2, "probably fine")], [_v("absent", 0.2)]], "judge:m")
    assert (out.verdict, out.confidence, out.rationale, out.evidence) == ("present", 0.8, None, [])


def test_the_combined_confidence_is_rounded_to_three_places() -> None:
    samples = [[_v("present", 0.91)], [_v("present", 0.8)], [_v("present", 0.8)]]
    (out,) = combine(samples, "judge:m")
    assert out.confidence == 0.837  # mean 0.83666...


# -- the annotator around one request ----------------------------------------------------------------


def _annotator(srv: FakeLLMServer | None = None, **options: Any) -> JudgeAnnotator:
    url = srv.openai_base_url if srv is not None else "http://127.0.0.1:9/v1"
    provider = get_provider("openai:x", base_url=url, api_key="k", retry=FAST_RETRY)
    return JudgeAnnotator(TAX, provider, options=JudgeOptions(**options))


def test_the_temperature_option_is_sent() -> None:
    with FakeLLMServer([reply_json(), reply_json()]) as srv:
        judge = _annotator(srv, temperature=0.3)
        asyncio.run(judge.annotate(simple_trace()))
        default = _annotator(srv)
        asyncio.run(default.annotate(simple_trace("t2")))
        bodies = [r.json for r in srv.chat_requests]
    assert [b["temperature"] for b in bodies] == [0.3, 0.0]


def test_without_structured_output_no_schema_is_sent() -> None:
    with FakeLLMServer([reply_json(), reply_json()]) as srv:
        annotate([simple_trace()], make_judge(srv, structured_output=False))
        annotate([simple_trace("t2")], make_judge(srv))
        bodies = [r.json for r in srv.chat_requests]
    assert "response_format" not in bodies[0]
    assert bodies[1]["response_format"]["type"] == "json_schema"


def test_evidence_outside_the_trace_is_reported() -> None:
    reply = json.loads(reply_json(("FM-1.1",)))
    reply["modes"][0]["evidence"] = [
        {"seq_start": 99, "seq_end": 99, "agent": None, "quote": "Done, I fixed it"}
    ]
    with FakeLLMServer([json.dumps(reply)]) as srv:
        (ann,) = annotate([simple_trace()], make_judge(srv)).annotations
    assert "window 0: FM-1.1: evidence seq 99 is outside the trace" in ann.extra["problems"]
    (ev,) = ann.verdicts[0].evidence
    assert (ev.seq_start, ev.note) == (1, "quote found at event 1, not at the cited 99..99")


def test_aclose_closes_the_provider_client() -> None:
    async def run(judge: JudgeAnnotator) -> Any:
        await judge.annotate(simple_trace())
        before = judge.provider._client_obj  # type: ignore[attr-defined]
        await judge.aclose()
        return before, judge.provider._client_obj  # type: ignore[attr-defined]

    with FakeLLMServer([reply_json()]) as srv:
        before, after = asyncio.run(run(_annotator(srv)))
    assert before is not None and after is None


def test_aclose_accepts_a_provider_without_one() -> None:
    class Bare:
        name, model = "bare", "m"

    judge = JudgeAnnotator(TAX, Bare(), options=JudgeOptions())  # type: ignore[arg-type]
    asyncio.run(judge.aclose())


# -- the end of the run shown to the adjudication ------------------------------------------------------


def _ending_trace(n: int = 3, text: str = "hello") -> Trace:
    # each event renders as "[i] a message: hello": 20 characters, 21 with its newline
    return _trace(*(Event(seq=i, kind="message", actor="a", content=text) for i in range(n)))


def test_the_ending_keeps_whole_events_up_to_the_limit() -> None:
    trace = _ending_trace()
    marker = "(… earlier events left out here …)"
    # 21 + 21 = 42 characters fit exactly in 42; the third event would not
    assert (
        _annotator(ending_chars=42)._ending(trace) == f"{marker}\n[1] a message: hello\n[2] a message: hello"
    )
    assert _annotator(ending_chars=41)._ending(trace) == f"{marker}\n[2] a message: hello"
    assert _annotator(ending_chars=63)._ending(trace).count("hello") == 3
    # the last event is always shown, however long
    assert _annotator(ending_chars=5)._ending(trace) == f"{marker}\n[2] a message: hello"


def test_the_ending_is_rendered_with_the_judge_options() -> None:
    trace = _ending_trace(1, "x" * 300)
    ending = _annotator(max_event_chars=50, tail_chars=10)._ending(trace)
    assert ending == "[0] a message: " + "x" * 40 + "…[250 chars elided]…" + "x" * 10


# -- one request with several samples ----------------------------------------------------------------


def test_an_unusable_sample_is_dropped_and_reported_while_the_others_decide() -> None:
    def handler(payload: dict[str, Any]) -> str:
        # seed 1 answers prose, and prose again to its repair; seed 0 answers properly
        return "no idea, sorry" if payload.get("seed") == 1 else reply_json(("FM-1.1",), summary="")

    with FakeLLMServer(handler=handler) as srv:
        report = annotate([simple_trace()], make_judge(srv, samples=2))
    assert not report.errors
    (ann,) = report.annotations
    assert ann.present() == ["FM-1.1"]
    assert ann.summary is None  # no sample gave one
    assert (
        "window 0: 1 of 2 samples unusable: window 0: unusable reply after one repair "
        "(no JSON object found in the reply; then no JSON object found in the reply)"
    ) in ann.extra["problems"]
    assert ann.model_calls == 3


def test_the_responsible_agent_is_voted_over_samples() -> None:
    def handler(payload: dict[str, Any]) -> str:
        reply = json.loads(reply_json())
        reply["responsible_agent"] = "coder" if payload.get("seed") in (0, 2) else "user"
        reply["responsible_step"] = 1
        return json.dumps(reply)

    with FakeLLMServer(handler=handler) as srv:
        (ann,) = annotate([simple_trace()], make_judge(srv, samples=3)).annotations
    assert ann.attribution is not None
    assert (ann.attribution.agent, ann.attribution.step) == ("coder", 1)


# -- the window budget -----------------------------------------------------------------------------------


def _two_block_trace(block_chars: int) -> Trace:
    # "[i] a message: " is 15 characters; two different texts, so nothing is deduplicated
    n = block_chars - 15
    return _trace(
        Event(seq=0, kind="message", actor="a", content="x" * n),
        Event(seq=1, kind="message", actor="a", content="y" * n),
    )


def _window_count(context: int, block_chars: int) -> int:
    provider = get_provider("openai:x", base_url="http://127.0.0.1:9/v1", api_key="k", context_window=context)
    judge = JudgeAnnotator(
        TAX, provider, options=JudgeOptions(max_output_tokens=1000, max_event_chars=50_000, overlap_events=0)
    )
    return len(judge._windows(_two_block_trace(block_chars), "", RenderStats()))


def test_the_window_budget_is_the_context_minus_prompt_reply_and_reserve() -> None:
    # context 10,000 - system 1 - reply 1,000 - reserve 1,500 = 7,499 tokens = 29,996 characters
    assert _window_count(10_000, 14_997) == 1  # 2 x (14,997 + 1 newline) = 29,996
    assert _window_count(10_000, 14_998) == 2
    # a small context still gets 2,000 tokens (8,000 characters) per window
    assert _window_count(4_000, 3_999) == 1
    assert _window_count(4_000, 4_000) == 2


# -- parse: reply validation -------------------------------------------------------------------------


def _parse(obj: Any, n_events: int | None = None) -> ParsedReply:
    return parse_reply(json.dumps(obj), TAX, source="j", n_events=n_events)


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        ("FM-1.3", "FM-1.3"),
        ("fm-1.3", "FM-1.3"),
        ("1.3", "FM-1.3"),
        ("FM1.3", "FM-1.3"),
        ("FM_1.3", "FM-1.3"),
        ("fm 1.3 Step Repetition", "FM-1.3"),
        ("  FM-2.6  ", "FM-2.6"),
        ("9.9", None),
        ("", None),
        (13, None),
    ],
)
def test_mode_codes_as_judges_write_them(raw: Any, code: str | None) -> None:
    assert normalise_code(raw, TAX) == code


def test_a_custom_taxonomy_code_may_lead_a_label() -> None:
    tax = Taxonomy.model_validate(
        {
            "id": "t",
            "name": "T",
            "version": "1",
            "categories": [{"code": "C", "name": "c"}],
            "modes": [{"code": "LOOP", "name": "Loop", "category": "C", "definition": "d"}],
        }
    )
    assert normalise_code("loop (the agent repeats itself)", tax) == "LOOP"
    assert normalise_code("nothing", tax) is None


@pytest.mark.parametrize(
    ("raw", "verdict"),
    [
        (True, "present"),
        (False, "absent"),
        (1, "present"),
        (0, "absent"),
        (1.0, "present"),
        (0.0, "absent"),
        (2, None),
        (None, "unknown"),
        ("Yes.", "present"),
        (" TRUE ", "present"),
        ("detected", "present"),
        ("1", "present"),
        ("not present", "absent"),
        ("No", "absent"),
        ("false", "absent"),
        ("0", "absent"),
        ("unsure", "unknown"),
        ("uncertain", "unknown"),
        ("N/A", "unknown"),
        ("null", "unknown"),
        ("maybe", None),
        (["yes"], None),
    ],
)
def test_verdict_words(raw: Any, verdict: str | None) -> None:
    assert _verdict(raw) == verdict


def test_a_mode_map_with_plain_verdicts_and_the_present_field() -> None:
    parsed = _parse({"failure_modes": {"1.1": "yes", "FM-1.2": {"present": False, "confidence": 0.7}}})
    v11, v12 = parsed.verdicts[:2]
    assert (v11.verdict, v11.confidence) == ("present", None)
    assert (v12.verdict, v12.confidence) == ("absent", 0.7)


def test_entries_that_cannot_be_used_are_reported() -> None:
    parsed = _parse(
        {
            "modes": [
                "FM-1.1 yes",
                {"code": "FM-7.7", "verdict": "yes"},
                {"code": "FM-1.2", "verdict": "yes", "confidence": 0.6},
                {"code": "1.2", "verdict": "no"},
                {"code": "FM-1.3", "verdict": "yes", "reasoning": 5, "evidence": [{"seq": "x"}]},
            ]
        }
    )
    assert parsed.problems[:3] == [
        "ignored a mode entry that is not an object: 'FM-1.1 yes'",
        "ignored unknown mode code 'FM-7.7'",
        "FM-1.2 given twice; the first verdict is kept",
    ]
    assert (parsed.verdicts[1].verdict, parsed.verdicts[1].confidence) == ("present", 0.6)
    v13 = parsed.verdicts[2]
    assert (v13.verdict, v13.rationale, v13.evidence) == ("present", None, [Evidence()])


def test_no_modes_list_or_no_known_mode_is_unusable() -> None:
    with pytest.raises(ReplyError) as no_list:
        _parse({"verdicts": []})
    assert str(no_list.value) == "the reply has no 'modes' list"
    with pytest.raises(ReplyError) as no_mode:
        _parse({"modes": [{"code": "FM-9.9", "verdict": "yes"}]})
    assert str(no_mode.value) == "the reply contains no verdict for any mode of the taxonomy"


def test_evidence_spellings_and_confidence_bounds() -> None:
    parsed = _parse(
        {
            "modes": [
                {
                    "code": "FM-1.1",
                    "verdict": "present",
                    "confidence": 1.7,
                    "reason": "looped",
                    "evidence": [
                        {"seq": "2", "quote": "q one", "agent": "coder"},
                        {"step": 3, "seq_end": 4, "quote": 7, "agent": 9},
                        "a bare quote",
                        17,
                    ],
                },
                {"code": "FM-1.2", "verdict": "absent", "confidence": -0.5},
                {"code": "FM-1.3", "verdict": "absent", "confidence": True},
            ]
        },
        n_events=3,
    )
    v11, v12, v13 = parsed.verdicts[:3]
    assert (v11.confidence, v11.rationale) == (1.0, "looped")
    assert v11.evidence == [
        Evidence(seq_start=2, seq_end=2, quote="q one", agent="coder"),
        Evidence(seq_start=3, seq_end=4),
        Evidence(quote="a bare quote"),
    ]
    assert (v12.confidence, v13.confidence) == (0.0, None)
    assert parsed.problems == ["FM-1.1: evidence seq 3 is outside the trace"] + [
        f"{c}: missing from the reply; kept as unknown" for c in CODES[3:]
    ]


def test_a_negative_seq_is_outside_the_trace() -> None:
    parsed = _parse({"modes": [{"code": "FM-1.1", "verdict": "absent", "evidence": [{"seq_start": -3}]}]}, 5)
    assert parsed.verdicts[0].evidence == [Evidence()]
    parsed = _parse({"modes": [{"code": "FM-1.1", "verdict": "absent", "evidence": [{"seq_start": 0}]}]}, 1)
    assert "evidence seq 0" not in " ".join(parsed.problems)


def test_trace_level_fields_are_taken_only_when_well_typed() -> None:
    good = _parse(
        {
            "summary": "went wrong",
            "task_success": True,
            "responsible_agent": "coder",
            "responsible_step": "4",
            "modes": [{"code": "FM-1.1", "verdict": "no"}],
        }
    )
    assert (good.summary, good.task_success, good.responsible_agent, good.responsible_step) == (
        "went wrong",
        True,
        "coder",
        4,
    )
    bad = _parse(
        {
            "summary": 3,
            "task_success": "yes",
            "responsible_agent": "",
            "responsible_step": True,
            "modes": [{"code": "FM-1.1", "verdict": "no"}],
        }
    )
    assert (bad.summary, bad.task_success, bad.responsible_agent, bad.responsible_step) == (None,) * 4


def test_an_invalid_entry_keeps_its_mode_unknown_with_the_reason() -> None:
    parsed = _parse(
        {"modes": [{"code": "FM-1.1", "verdict": "yes", "evidence": [{"seq_start": 1, "quote": 5}]}]}
    )
    # quote 5 is not a string: dropped to an empty quote, which the model accepts
    assert parsed.verdicts[0].evidence == [Evidence(seq_start=1, seq_end=1)]
    many = json.loads(reply_json())
    many["modes"][0]["evidence"] = [{"seq_start": 1, "quote": "x", "agent": 5}]
    parsed = parse_reply(json.dumps(many), TAX, source="j")
    assert parsed.verdicts[0].evidence == [Evidence(seq_start=1, seq_end=1, quote="x")]


# -- parse: replies without JSON -----------------------------------------------------------------------

_NAMES = [m.name for m in TAX.modes]


def _label_lines(n: int) -> str:
    return "\n".join(
        f"{code.removeprefix('FM-')} {name}: no" for code, name in zip(CODES[:n], _NAMES[:n], strict=True)
    )


def test_label_lines_for_half_the_modes_are_enough() -> None:
    text = "A. The coder claims a fix without testing it.\nB. yes\nC.\n" + _label_lines(7)
    parsed = parse_reply(text, TAX, source="j")
    assert [v.verdict for v in parsed.verdicts] == ["absent"] * 7 + ["unknown"] * 7
    assert all(v.source == "j" for v in parsed.verdicts)
    assert [v.extra for v in parsed.verdicts[6:8]] == [{"from_text": True}, {}]
    assert {v.rationale for v in parsed.verdicts[7:]} == {"the judge returned no verdict for this mode"}
    assert parsed.problems == ["no JSON in the reply: 7/14 verdicts read from label lines"] + [
        f"{c}: missing from the reply; kept as unknown" for c in CODES[7:]
    ]
    assert (parsed.summary, parsed.task_success) == ("The coder claims a fix without testing it.", True)


def test_label_lines_for_fewer_than_half_the_modes_are_unusable() -> None:
    with pytest.raises(ReplyError, match=r"^no JSON object found in the reply$"):
        parse_reply(_label_lines(6), TAX, source="j")


def test_label_lines_of_the_reference_template_run_together_with_at_signs() -> None:
    lines = [
        f"{c.removeprefix('FM-')} {n}: {'yes' if c == 'FM-1.2' else 'no'}"
        for c, n in zip(CODES, _NAMES, strict=True)
    ]
    text = "@@ A. fine B. no C. " + " @@ ".join(lines)
    assert _text_verdicts(text, TAX) == {c: "present" if c == "FM-1.2" else "absent" for c in CODES}


def test_label_lines_keep_the_first_verdict_and_skip_unknown_codes() -> None:
    text = (
        "9.9 Something Else: yes\n"
        "1.1 Disobey Task Specification: not \t present\n"
        "1.1 Disobey Task Specification: yes\n"
        "1.2 Disobey Role Specification: yes"
    )
    assert _text_verdicts(text, TAX) == {"FM-1.1": "absent", "FM-1.2": "present"}


def test_a_prose_reply_without_summary_or_success_line() -> None:
    parsed = parse_reply(_label_lines(7), TAX, source="j")
    assert (parsed.summary, parsed.task_success) == (None, None)
    long = parse_reply("A. " + "w" * 2500 + "\nB. no\n" + _label_lines(7), TAX, source="j")
    assert (long.summary, long.task_success) == ("w" * 2000, False)


def test_reasoning_is_the_rationale() -> None:
    parsed = _parse({"modes": [{"code": "FM-1.1", "verdict": "no", "reasoning": "r", "rationale": "other"}]})
    assert parsed.verdicts[0].rationale == "r"


def test_an_unreadable_verdict_keeps_the_rest_of_its_entry() -> None:
    entry = {
        "code": "FM-1.1",
        "verdict": "maybe",
        "confidence": 0.4,
        "reasoning": "r",
        "evidence": ["a quote"],
    }
    parsed = _parse({"modes": [entry]})
    v = parsed.verdicts[0]
    assert (v.verdict, v.confidence, v.rationale, v.evidence) == (
        "unknown",
        0.4,
        "r",
        [Evidence(quote="a quote")],
    )
    assert parsed.problems[0] == "FM-1.1: unreadable verdict 'maybe'; kept as unknown"
    assert not any("invalid entry" in p for p in parsed.problems)


def test_a_label_line_without_a_readable_verdict_is_skipped() -> None:
    text = "1.1 Disobey Task Specification: see below\n1.2 Disobey Role Specification: no"
    assert _text_verdicts(text, TAX) == {"FM-1.2": "absent"}


def test_the_first_piece_is_matched_at_its_first_place() -> None:
    text = TraceText.of(
        _trace(_bare(0, "alpha checks passed then beta deploy failed, alpha checks passed again"))
    )
    assert text.find(["alpha checks passed", "beta deploy failed"]) == [0]


def test_a_long_invented_quote_is_cut_in_the_reason() -> None:
    text = TraceText.of(_trace(_bare(0, "Rollback finished cleanly")))
    quote = "q" * 100
    assert check_item(Evidence(seq_start=0, quote=quote), text) == (
        None,
        f"quote not found in the trace: {'q' * 80!r}",
    )


def test_label_lines_of_a_mode_without_a_name() -> None:
    tax = Taxonomy.model_validate(
        {
            "id": "t",
            "name": "T",
            "version": "1",
            "categories": [{"code": "C", "name": "c"}],
            "modes": [
                {"code": "1.1", "name": "", "category": "C", "definition": "d"},
                {"code": "1.2", "name": "Loop", "category": "C", "definition": "d"},
            ],
        }
    )
    assert _text_verdicts("1.1: yes\n1.2 Loop: no", tax) == {"1.1": "present", "1.2": "absent"}
