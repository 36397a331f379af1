"""Who&When records: both folders of the shared data set and a hand-written fixture."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from conftest import shared_path
from mastkit.traces import load_traces
from mastkit.traces.registry import get_importer
from mastkit.traces.source import Source

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "who_and_when" / "hc_small.json"


def test_hand_crafted_roles_split_into_actor_subtype_recipients() -> None:
    (t,) = list(load_traces(FIX))
    assert t.source_format == "who_and_when" and t.trace_id == "who_and_when/who_and_when/hc_small"
    assert t.framework == "Magentic-One" and t.benchmark == "GAIA" and t.task_id == "q-17"
    assert [(e.seq, e.actor, e.subtype, e.recipients, e.role) for e in t.events] == [
        (0, "human", None, None, "user"),
        (1, "Orchestrator", "thought", None, "assistant"),
        (2, "Orchestrator", None, ["WebSurfer"], "assistant"),
        (3, "WebSurfer", None, None, "assistant"),
        (4, "Orchestrator", "final answer", None, "assistant"),
    ]
    assert t.events[3].source is not None and t.events[3].source.pointer == "/history/3"
    assert t.events[3].raw == {"content": "I typed 'Mars moons' into the search box.", "role": "WebSurfer"}
    (label,) = t.labels
    assert (label.kind, label.agent, label.step, label.source) == ("attribution", "WebSurfer", 3, "human")
    assert t.events[label.step].actor == label.agent  # the step is an event seq
    assert t.outcome is not None and t.outcome.success is False and t.outcome.ground_truth == "2"
    assert "history" not in t.raw and t.raw["mistake_reason"] == "Read a wrong number from the page."


def test_sniff_claims_only_who_and_when_records(tmp_path: Path) -> None:
    imp = get_importer("who_and_when")
    assert imp.sniff(Source(FIX)) >= 0.9
    other = tmp_path / "chat.json"
    other.write_text('{"history": [{"role": "user", "content": "hi"}]}')
    assert imp.sniff(Source(other)) == 0


def test_both_shared_folders_load_with_their_labels() -> None:
    root = shared_path("who_and_when")
    traces = list(load_traces(root))
    assert len(traces) == 184
    frameworks = Counter(t.framework for t in traces)
    assert frameworks == {"AG2 CaptainAgent": 126, "Magentic-One": 58}
    for t in traces:
        assert [e.seq for e in t.events] == list(range(len(t.events)))
        (label,) = [lb for lb in t.labels if lb.kind == "attribution"]
        assert label.agent
        if label.step is not None and label.step < len(t.events):
            assert t.events[label.step].source is not None
    hc_blamed = Counter(
        lb.agent
        for t in traces
        if t.framework == "Magentic-One"
        for lb in t.labels
        if lb.kind == "attribution"
    )
    assert hc_blamed == {"WebSurfer": 33, "Orchestrator": 18, "Assistant": 4, "FileSurfer": 3}
