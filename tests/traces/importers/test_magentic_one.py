"""Magentic-One event logs (autogen-magentic-one ``log.jsonl``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mastkit.errors import TraceLoadError
from mastkit.traces import Source, Trace, get_importer, iter_load, load_traces

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "magentic_one"


def test_log_jsonl_events_agents_and_bad_line() -> None:
    path = FIX / "log.jsonl"
    assert get_importer("magentic_one").sniff(Source(path)) == 0.9
    items = list(iter_load(path))
    errors = [i for i in items if isinstance(i, TraceLoadError)]
    [t] = [i for i in items if isinstance(i, Trace)]
    assert len(errors) == 1 and errors[0].line == 9  # the cut-off line; the rest loads
    assert Trace.model_validate_json(t.model_dump_json()) == t
    assert t.source_format == "magentic_one" and t.framework == "magentic-one"
    assert t.kind_counts() == {"message": 5, "llm_call": 2, "reasoning": 2, "plan": 1, "tool_call": 1}
    assert [a.name for a in t.agents] == ["Orchestrator", "WebSurfer"]
    assert t.task == "What is the opening time of the Louvre on Fridays?"
    assert t.events[4].recipients == ["WebSurfer"] and t.events[2].kind == "plan"
    call = t.events[6]
    assert call.tool_call is not None and (call.tool_call.name, call.tool_call.arguments) == (
        "web_search", {"query": "Louvre opening hours Friday"},
    )  # fmt: skip
    assert call.actor == "WebSurfer" and call.extra["url"] == "https://www.bing.com/"
    assert t.total_usage().input_tokens == 612 + 1450 and t.total_usage().output_tokens == 220
    assert t.outcome is not None and t.outcome.final_output == "The Louvre opens at 9:00 on Fridays."
    assert t.termination is not None and (t.termination.native, t.termination.at_seq) == (
        "No agent selected.",
        10,
    )
    assert t.started_at is not None and t.started_at.isoformat() == "2024-11-05T10:00:00.100000"
    assert [e.source.line for e in t.events[:3] if e.source] == [1, 2, 3]


def test_logs_list_dumped_as_json_array(tmp_path: Path) -> None:
    events = [
        {
            "timestamp": "2024-11-05T10:00:00",
            "source": "human",
            "message": "hi",
            "type": "OrchestrationEvent",
        },
        {"timestamp": "2024-11-05T10:00:01", "source": "Coder", "message": "print(1)", "type": "AgentEvent"},
    ]
    path = tmp_path / "logs.json"
    path.write_text(json.dumps(events))
    [t] = load_traces(path)
    assert t.source_format == "magentic_one"
    assert [(e.kind, e.actor) for e in t.events] == [("message", "user"), ("message", "Coder")]


def test_line_that_is_not_an_event_says_why(tmp_path: Path) -> None:
    good = {
        "timestamp": "2024-11-05T10:00:00",
        "source": "human",
        "message": "hi",
        "type": "OrchestrationEvent",
    }
    path = tmp_path / "log.jsonl"
    path.write_text(
        json.dumps(good) + "\n" + json.dumps({"type": "OrchestrationEvent", "message": "x"}) + "\n"
    )
    [err] = [i for i in iter_load(path) if isinstance(i, TraceLoadError)]
    assert err.line == 2 and "no 'timestamp'" in err.reason


def test_not_claimed_without_event_type(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_text(json.dumps({"timestamp": "2024-11-05T10:00:00", "type": "Other", "message": "x"}) + "\n")
    assert get_importer("magentic_one").sniff(Source(path)) == 0.0
    with pytest.raises(TraceLoadError):
        list(load_traces(path, format="magentic_one"))
