"""``Store.verdict_counts``: the per-mode summary of a run, counted in SQL over the latest versions."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from mastkit.annotate import annotate
from mastkit.annotate.factory import make_annotator
from mastkit.store import Store
from mastkit.traces.model import Event, Trace


def _trace(tid: str, texts: list[str]) -> Trace:
    events = [Event(seq=i, kind="message", actor="user" if i % 2 == 0 else "coder", content=t)
              for i, t in enumerate(texts)]  # fmt: skip
    return Trace(trace_id=tid, source_format="test", source_paths=[f"{tid}.json"], events=events)


def test_counts_match_the_latest_annotations(tmp_path: Path) -> None:
    with Store(tmp_path / "m.db") as store:
        ann = make_annotator("rules")
        traces = [_trace(f"t{i}", ["fix it", "done"]) for i in range(3)]
        traces.append(_trace("t9", ["fix it", "Error: failed", "I give up"]))
        report = annotate(traces, ann, store=store)
        # a new version of t0 supersedes the old one: counted once, with its new verdicts
        annotate([_trace("t0", ["fix it", "Error: boom", "error again", "stop"])], ann, store=store)
        want: dict[str, Counter[str]] = {}
        for a in store.annotations(report.config_hash):
            for v in a.verdicts:
                want.setdefault(v.code, Counter())[v.verdict] += 1
        got = store.verdict_counts(report.config_hash)
        assert got == {code: dict(c) for code, c in want.items()}
        assert all(sum(by.values()) == 4 for by in got.values()) and len(got) == 14
        assert store.verdict_counts("a1:unknown") == {}
