from __future__ import annotations

from pathlib import Path

import pytest

from mastkit.analyze.gold import Gold, GoldError, gold_from_jsonl, gold_from_traces
from mastkit.traces.model import Label, Trace


def test_majority_from_trace_labels() -> None:
    labels = [
        Label(code="FM-1.3", present=p, annotator=f"a{i}", source="human", taxonomy="mast")
        for i, p in enumerate([True, True, False])
    ]
    labels += [
        Label(code="FM-3.2", present=p, annotator=f"a{i}", source="human")
        for i, p in enumerate([True, False])
    ]
    labels.append(Label(code="FM-2.1", present=True, source="llm"))
    t = Trace(trace_id="x", source_format="t", labels=labels)
    g = gold_from_traces([t])
    assert g.labels == {"x": {"FM-1.3": True, "FM-3.2": False}}
    assert g.raters["x"]["FM-1.3"] == [True, True, False] and g.ties == 1


def test_jsonl_gold(tmp_path: Path) -> None:
    p = tmp_path / "gold.jsonl"
    p.write_text(
        '{"trace_id": "a", "labels": {"FM-1.3": true, "FM-3.3": [true, false, false]}}\n\n'
        '{"trace_id": "b", "labels": {"FM-1.3": false}}\n'
    )
    g = gold_from_jsonl(p)
    assert g.labels == {"a": {"FM-1.3": True, "FM-3.3": False}, "b": {"FM-1.3": False}}


@pytest.mark.parametrize(
    ("text", "msg"),
    [
        ("{not json}\n", ":1: invalid JSON"),
        ('{"trace_id": 3, "labels": {}}\n', ":1: expected"),
        ('{"trace_id": "a", "labels": {"X": "yes"}}\n', "must be true/false"),
    ],
)
def test_bad_gold_files(tmp_path: Path, text: str, msg: str) -> None:
    p = tmp_path / "g.jsonl"
    p.write_text(text)
    with pytest.raises(GoldError, match=msg):
        gold_from_jsonl(p)


def test_ties_are_counted_and_scored_absent() -> None:
    g = Gold()
    g.add("t", "A", [True, False])  # tie
    g.add("t", "B", [True, True, False, False])  # tie
    g.add("t", "C", [True, True, False])  # majority present, no tie
    g.add("t", "D", [])  # no votes: nothing recorded
    assert g.ties == 2
    assert g.labels == {"t": {"A": False, "B": False, "C": True}}
    assert g.raters["t"]["B"] == [True, True, False, False] and "D" not in g.raters["t"]


def test_unreadable_gold_file(tmp_path: Path) -> None:
    with pytest.raises(GoldError, match=r"^cannot read gold file .*missing\.jsonl: No such file"):
        gold_from_jsonl(tmp_path / "missing.jsonl")
