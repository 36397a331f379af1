"""The report's data, field for field, on the hand-checked store of ``_build``.

``build_report_data`` gathers many small decisions (which events are shown, how long each text
may be, which anchors link where, what is redacted, how the caps are spread over traces). The
other report tests check them one by one; here the whole :class:`ReportData` of a few
configurations is compared with ``golden/<name>.json`` so that any change shows up in review.
Time stamps, the store path and the package version are replaced by placeholders. A deliberate
change regenerates the files with ``MASTKIT_UPDATE_GOLDEN=1``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mastkit.annotate.model import Annotation, AnnotatorConfig, Evidence, ModeVerdict
from mastkit.attribute.model import Attribution
from mastkit.report import build_report_data
from mastkit.store import Store
from mastkit.traces.model import Event, Outcome, Termination, ToolResult, Trace

from ._build import build_store

GOLDEN = Path(__file__).parent / "golden"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = build_store(tmp_path / "m.db")
    _add_judge_run(s)
    _add_edge_runs(s)
    yield s
    s.close()


def _add_judge_run(store: Store) -> None:
    """A second run (kind llm): coverage notes, a secret, an unknown code, a blamed step, a
    termination seq, evidence ranges that run backwards or past the end, an id shared by two
    traces."""
    cfg = AnnotatorConfig(kind="llm", model="fake:m", taxonomy_id="mast", taxonomy_version="test")
    store.register_run(cfg)
    events = [
        Event(
            seq=i, kind="message", actor=("planner", "coder")[i % 2], content=f"event {i} " + "w" * (i * 40)
        )
        for i in range(40)
    ]
    events[7] = Event(
        seq=7, kind="error", actor="coder", content="Traceback: key sk-ant-api03-" + "A1b2" * 20
    )
    events[9] = Event(
        seq=9, kind="message", actor="coder", content="x" * 500 + " the quoted words are here " + "y" * 900
    )
    trace = Trace(
        trace_id="judge/1",
        source_format="test",
        framework="AG2",
        model="gpt",
        task="Find the bug. contact: alice@example.org",
        termination=Termination(reason="max_steps", by="limit", at_seq=30),
        events=events,
    )
    twin = trace.model_copy(
        update={"trace_id": "judge/2", "events": events[:5], "termination": None, "task": None}
    )
    for t, extra in ((twin, False), (trace, True)):
        h = store.upsert_trace(t)
        verdicts = [
            ModeVerdict(
                code="FM-1.3",
                verdict="present",
                confidence=0.8,
                evidence=[
                    Evidence(seq_start=9, seq_end=9, quote="the quoted words are here", agent="coder"),
                    Evidence(seq_start=12, seq_end=11, quote="backwards"),
                    Evidence(seq_start=38, seq_end=99, note="past the end"),
                    Evidence(quote="no seq"),
                ],
                rationale="r" * 400,
                source="judge:fake:m",
            ),
            ModeVerdict(code="FM-9.9", verdict="present", evidence=[Evidence(seq_start=2, seq_end=3)]),
            ModeVerdict(code="FM-2.2", verdict="unknown", rationale="cannot tell"),
            ModeVerdict(code="FM-3.1", verdict="absent"),
        ]
        store.put_annotation(
            Annotation(
                trace_id=t.trace_id,
                config=cfg,
                config_hash=cfg.config_hash(),
                verdicts=verdicts,
                summary="s" * 600,
                errors=["window 2: " + "e" * 400] * 12 if extra else [],
                extra={"coverage": {"windows": 3, "events_omitted_by_window_cap": 4}} if extra else {},
            ),
            h,
        )
        store.put_attribution(
            t.trace_id,
            h,
            "all-at-once",
            "m2",
            Attribution(agent="coder", step=20, reason="q" * 500, method="x"),
        )
    store.log_error(
        "annotate", "failed: token sk-ant-api03-" + "Z9y8" * 20, trace_id="t7", config_hash=cfg.config_hash()
    )


def _add_edge_runs(store: Store) -> None:
    """Two more runs: one naming no taxonomy (the default, MAST, is used) with every length limit
    of the detail view reached, one naming a taxonomy that cannot be loaded."""
    cfg = AnnotatorConfig(kind="hybrid", model="fake:edge", taxonomy_id="", taxonomy_version="test")
    store.register_run(cfg)
    events = [
        Event(seq=0, kind="message", actor="A" * 90, role="assistant", subtype="S" * 90, content="start"),
        Event(seq=1, kind="error", actor="runner", content="Traceback: boom"),
        Event(
            seq=2,
            kind="tool_result",
            actor="tool",
            role="tool",
            tool_result=ToolResult(name="N" * 90, output="out " * 200 + "needle in the hay", is_error=True),
        ),
        *[Event(seq=i, kind="message", actor="b", content=f"filler {i}") for i in range(3, 8)],
    ]
    n = len(events)
    trace = Trace(
        trace_id="edge",
        source_format="test",
        task="T" * 450,
        outcome=Outcome(success=False, final_output="F" * 450),
        termination=Termination(by="agent"),
        events=events,
    )
    h = store.upsert_trace(trace)
    many = [Evidence(seq_start=3, seq_end=3, quote=f"q{i}") for i in range(22)]
    verdicts = [
        ModeVerdict(
            code="FM-1.1",
            verdict="present",
            confidence=0.5,
            evidence=[
                Evidence(quote="no seq first"),
                Evidence(seq_start=n, seq_end=n, quote="at the end"),
                Evidence(seq_start=-1, seq_end=-1, quote="before the start"),
                Evidence(seq_start=2, seq_end=2, quote="needle in the hay", note="n" * 320, agent="g" * 90),
                Evidence(seq_start=4, seq_end=4, quote="Q" * 320),
            ],
            rationale="x" * 320,
            source="s" * 130,
        ),
        ModeVerdict(code="FM-1.2", verdict="present", evidence=many),
        ModeVerdict(code="FM-2.1", verdict="present", evidence=[Evidence(seq_start=n - 1, seq_end=n)]),
    ]
    ann = Annotation(
        trace_id="edge",
        config=cfg,
        config_hash=cfg.config_hash(),
        verdicts=verdicts,
        extra={
            "coverage": {"chars_elided": 10, "events_omitted_by_window_cap": 1},
            "redactions": {},
        },
    )
    store.put_annotation(ann, h)
    store.put_attribution(
        "edge", h, "rules", "m3", Attribution(agent="b", step=n, confidence=0.25, method="rules")
    )
    lost = AnnotatorConfig(
        kind="llm", model="fake:lost", taxonomy_id="no-such-taxonomy", taxonomy_version="1"
    )
    store.register_run(lost)
    store.put_annotation(
        Annotation(
            trace_id="edge",
            config=lost,
            config_hash=lost.config_hash(),
            verdicts=[ModeVerdict(code="X-1", verdict="present"), ModeVerdict(code="X-2", verdict="absent")],
            attribution=Attribution(agent="b", step=0, confidence=0.75, reason="r"),
        ),
        h,
    )


def _normalised(data: Any) -> str:
    d = json.loads(data.model_dump_json())
    d["generated_at"] = "<generated_at>"
    d["mastkit_version"] = "<version>"
    d["store_path"] = "<store>"
    for r in [d["run"], *d["runs"]]:
        r["created_at"] = "<created_at>"
    for e in d["errors"]:
        e["created_at"] = "<created_at>"
    return json.dumps(d, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


CASES: dict[str, tuple[str | None, dict[str, Any]]] = {
    "rules_run": ("rules", {"max_events": 8, "char_budget": 40_000, "event_budget": 200}),
    "rules_run_plain": (
        "rules",
        {
            "details": False,
            "by": ("framework",),
            "redact": False,
            "attribution_method": "rules",
            "max_errors": 0,
        },
    ),
    "judge_run": (
        "llm",
        {"max_events": 14, "max_event_chars": 300, "min_event_chars": 50, "char_budget": 6_000},
    ),
    "judge_run_small": ("llm", {"max_events": 40, "event_budget": 10, "max_errors": 1, "by": ()}),
    "edge_run": (
        "hybrid",
        {"max_events": 6, "max_event_chars": 100, "min_event_chars": 10, "char_budget": 500},
    ),
    "lost_taxonomy_run": ("fake:lost", {"attribution_method": "none"}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_report_data_matches_the_golden_json(store: Store, name: str) -> None:
    run, kw = CASES[name]
    text = _normalised(build_report_data(store, run, **kw))
    path = GOLDEN / f"{name}.json"
    if os.environ.get("MASTKIT_UPDATE_GOLDEN"):
        GOLDEN.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8"), f"report data {name} changed"
