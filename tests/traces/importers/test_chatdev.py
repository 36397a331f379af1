"""ChatDev 1.0 run logs: the real sample, the bundled example, and hand-written variants."""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from pathlib import Path

import pytest

import mastkit
from conftest import shared_path
from mastkit.errors import FormatError
from mastkit.traces import Source, Trace, get_importer, load_traces

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "chatdev"
EXAMPLE = Path(mastkit.__file__).resolve().parent / "examples" / "11_chatdev_reviewer_writes_code.log"


def _check(t: Trace) -> Trace:
    assert t.source_format == "chatdev"
    assert Trace.model_validate_json(t.model_dump_json()) == t
    return t


def _one(path: Path) -> Trace:
    traces = list(load_traces(path))
    assert len(traces) == 1
    assert isinstance(traces[0], Trace), traces[0]
    return _check(traces[0])


def test_shared_sample_counts() -> None:
    path = shared_path(
        "trace_samples", "chatdev_log", "RGB_Color_Picker_DefaultOrganization_20231015003723.log"
    )
    assert get_importer("chatdev").sniff(Source(path)) >= 0.9
    t = _one(path)
    assert t.trace_id == "RGB_Color_Picker_DefaultOrganization_20231015003723"
    assert t.framework == "ChatDev"
    assert t.task is not None and t.task.startswith("Desgin a basic RGB color picker")
    # 201 log blocks: 200 INFO + 1 WARNING (100 of them flask noise, not events)
    assert t.extra["blocks"] == 201
    assert t.extra["block_levels"] == {"INFO": 200, "WARNING": 1}
    assert t.extra["noise_blocks"] == 100
    assert sum(1 for e in t.events if e.raw is not None) == 201 - 100
    turns = [e for e in t.events if e.subtype == "chat_turn"]
    assert len(turns) == 12 and all(e.kind == "message" for e in turns)
    assert all(e.recipients and len(e.recipients) == 1 for e in turns)
    calls = [e for e in t.events if e.kind == "llm_call"]
    assert len(calls) == 12 and all(e.usage is not None for e in calls)
    # every usage record is paired with the turn it paid for
    assert all(t.events[c.seq + 1].llm_call_id == c.llm_call_id is not None for c in calls)
    assert all(e.usage is None for e in t.events if e.kind != "llm_call")
    assert set(t.actors()) == {
        "Chief Executive Officer",
        "Chief Product Officer",
        "Chief Technology Officer",
        "Programmer",
        "Code Reviewer",
        "Counselor",
        "System",
    }
    assert {e.phase for e in turns} == {
        "DemandAnalysis",
        "LanguageChoose",
        "Coding",
        "CodeReviewComment",
        "CodeReviewModification",
        "EnvironmentDoc",
        "Reflection",
        "Manual",
    }
    assert len(t.kind_counts()) and t.kind_counts()["error"] == 1  # the timeout WARNING
    [warn] = [e for e in t.events if e.kind == "error"]
    assert warn.subtype == "warning" and "Request timed out" in (warn.content or "")
    # first Software Info: num_utterances=6; Post Info at the end carries the run totals
    infos = [e for e in t.events if e.subtype == "software_info"]
    assert infos[0].extra["metrics"]["num_utterances"] == 6
    assert t.termination is not None and t.termination.by == "harness"
    assert t.termination.native == "ChatDev Ends (20231015005517)"
    assert t.events[t.termination.at_seq or 0].kind == "termination"
    assert t.outcome is not None and t.outcome.success is None
    assert t.outcome.metrics["num_utterances"] == 24
    assert (
        t.usage is not None and t.usage.total_tokens == 16190 and t.usage.cost_usd == pytest.approx(0.052769)
    )
    # %Y-%d-%m: 2023-15-10 is 15 October
    assert t.started_at == datetime(2023, 10, 15, 0, 37, 23)
    assert t.events[0].started_at == datetime(2023, 10, 15, 0, 37, 23)
    assert t.model == "GPT_3_5_TURBO"


def test_bundled_example_loads_as_one_trace() -> None:
    t = _one(EXAMPLE)
    assert t.trace_id == "TipSplit_DefaultOrganization_20260310110214"
    turns = [e for e in t.events if e.subtype == "chat_turn"]
    assert len(turns) == 6
    review = next(e for e in turns if e.phase == "CodeReviewComment")
    assert review.actor == "Code Reviewer" and review.recipients == ["Programmer"]
    assert review.extra["turn"] == 0
    assert t.started_at == datetime(2026, 3, 10, 11, 2, 14)
    assert t.termination is not None and t.termination.reason == "completed"
    assert t.total_usage().cost_usd is not None


def test_multi_turn_fixture_cut_off_by_error() -> None:
    t = _one(FIX / "multi_turn_cut_off.log")
    assert t.trace_id == "TodoJson_AcmeOrg_20240207091501"  # Windows path in Log File
    assert t.model == "GPT_4"
    start = next(e for e in t.events if e.subtype == "start_chat")
    assert start.actor == "Chief Executive Officer" and start.recipients == ["Chief Product Officer"]
    assert start.content == "Which product modality fits a to-do list that saves to JSON?"
    assert start.extra["system_message"].startswith("You are Chief Product Officer.")
    turns = [e for e in t.events if e.subtype == "chat_turn"]
    assert [(e.actor, e.extra["turn"]) for e in turns] == [
        ("Chief Product Officer", 0),
        ("Chief Executive Officer", 1),
    ]
    # content lines starting with "[" do not split blocks
    assert turns[0].content == "I suggest a desktop application.\n[Note] A website would also work."
    calls = [e for e in t.events if e.kind == "llm_call"]
    assert [c.usage.cost_usd for c in calls if c.usage] == [0.0042, 0.00558]
    assert calls[1].actor == "Chief Executive Officer"
    assert t.total_usage().input_tokens == 290
    errors = [e for e in t.events if e.kind == "error"]
    assert [e.subtype for e in errors] == ["warning", "error"]
    assert "Traceback" in (errors[1].content or "")
    assert errors[1].source is not None and errors[1].source.end_line == errors[1].source.line + 2
    assert t.termination is not None and t.termination.by == "error"
    assert t.termination.at_seq == errors[1].seq
    agents = {a.name: a for a in t.agents}
    assert agents["Chief Product Officer"].system_prompt == (
        "You are Chief Product Officer.\nYou decide the product modality."
    )


def test_crlf_and_no_header(tmp_path: Path) -> None:
    text = (FIX / "multi_turn_cut_off.log").read_text(encoding="utf-8")
    body = text[text.index("[2024-07-02 09:15:01 INFO] System: **[chatting]**") :]
    p = tmp_path / "run.txt"  # not .log: detection is by content
    p.write_bytes(body.replace("\n", "\r\n").encode())
    t = _one(p)
    assert t.task is None and t.trace_id.startswith("run-")
    assert len([e for e in t.events if e.subtype == "chat_turn"]) == 2
    assert all("\r" not in (e.content or "") for e in t.events)


def test_not_chatdev(tmp_path: Path) -> None:
    imp = get_importer("chatdev")
    plain = tmp_path / "app.log"
    plain.write_text("[2024-01-02 10:00:00 INFO] server started\n[2024-01-02 10:00:01 INFO] ok\n")
    assert imp.sniff(Source(plain)) == 0.0
    with pytest.raises(FormatError):
        list(imp.load(Source(plain)))
    prose = tmp_path / "notes.log"
    prose.write_text("hello\n[2024-01-02 10:00:00 INFO] **[Start Chat]**\n")
    assert imp.sniff(Source(prose)) == 0.0
    with pytest.raises(FormatError):
        list(imp.load(Source(prose)))
    js = tmp_path / "x.json"
    js.write_text('[{"role": "user", "content": "hi"}]')
    assert imp.sniff(Source(js)) == 0.0


def test_levels_counted() -> None:
    t = _one(FIX / "multi_turn_cut_off.log")
    assert t.extra["block_levels"] == dict(Counter({"INFO": 8, "WARNING": 1, "ERROR": 1}))
