"""The report reads the store's one notion of a trace: the judged version's body, and every
stored trace even when two share an id."""

from __future__ import annotations

from pathlib import Path

from mastkit.annotate.model import Annotation, AnnotatorConfig, Evidence, ModeVerdict
from mastkit.attribute.model import Attribution
from mastkit.report import build_report_data, render_html
from mastkit.store import Store
from mastkit.traces import Event, Outcome, Trace

CONFIG = AnnotatorConfig(kind="rules", prompt_version="rules-1", taxonomy_id="mast", taxonomy_version="1.0")


def _trace(texts: list[str], path: str, trace_id: str = "run-1") -> Trace:
    return Trace(
        trace_id=trace_id,
        source_format="test",
        source_paths=[path],
        outcome=Outcome(success=False),
        events=[Event(seq=i, kind="message", actor="coder", content=t) for i, t in enumerate(texts)],
    )


def _judge(store: Store, trace: Trace, quote: str) -> str:
    h = store.upsert_trace(trace)
    verdict = ModeVerdict(
        code="FM-3.2",
        verdict="present",
        evidence=[Evidence(seq_start=1, seq_end=1, quote=quote)],
        source="rule:x",
    )
    ann = Annotation(
        trace_id=trace.trace_id, config=CONFIG, config_hash=CONFIG.config_hash(), verdicts=[verdict]
    )
    store.put_annotation(ann, h)
    return h


def test_the_report_shows_the_body_that_was_judged(tmp_path: Path) -> None:
    with Store(tmp_path / "m.db") as store:
        store.register_run(CONFIG)
        judged = _judge(store, _trace(["task", "tests pass, done"], "/runs/a.json"), "tests pass")
        # The file changed and was loaded again (e.g. by `mastkit attribute`), not re-annotated.
        later = store.upsert_trace(_trace(["task", "rewritten history", "more"], "/runs/a.json"))
        store.put_attribution(
            "run-1", later, "rules", "m1", Attribution(agent="later", step=2, method="rules")
        )
        store.put_attribution(
            "run-1", judged, "rules", "m1", Attribution(agent="judged", step=1, method="rules")
        )
        data = build_report_data(store)
    (detail,) = data.details
    assert detail.trace_hash == judged and detail.events_total == 2
    assert [e.text for e in detail.events] == ["task", "tests pass, done"]
    assert detail.events[1].cited_by == ["FM-3.2"]
    assert detail.attribution is not None and detail.attribution.agent == "judged"
    (summary,) = data.traces
    assert summary.n_events == 2 and summary.attribution is not None and summary.attribution.agent == "judged"
    # the store's trace list has the later version; this run did not annotate it
    assert data.counts.store_traces == 1 and data.counts.not_annotated == 1


def test_two_traces_sharing_an_id_are_both_reported(tmp_path: Path) -> None:
    with Store(tmp_path / "m.db") as store:
        store.register_run(CONFIG)
        h1 = _judge(store, _trace(["task", "one"], "/runs/a/trace.json"), "one")
        h2 = _judge(store, _trace(["task", "two", "end"], "/runs/b/trace.json"), "two")
        h3 = _judge(store, _trace(["task", "solo"], "/runs/c.json", trace_id="run-2"), "solo")
        data = build_report_data(store)
        html = render_html(data)
    labels = {t.trace_hash: t.trace_id for t in data.traces}
    assert labels == {h1: f"run-1 ({h1[3:11]})", h2: f"run-1 ({h2[3:11]})", h3: "run-2"}
    assert data.counts.traces == 3 and data.counts.store_traces == 3 and data.counts.not_annotated == 0
    bodies = {d.trace_hash: [e.text for e in d.events] for d in data.details}
    assert bodies[h1] == ["task", "one"] and bodies[h2] == ["task", "two", "end"]
    assert len({d.anchor for d in data.details}) == 3
    prof = {r["code"]: r for r in data.tables.profile}
    assert prof["FM-3.2"]["present"] == 3 and prof["FM-3.2"]["judged"] == 3
    assert labels[h1] in html and labels[h2] in html


def test_the_same_trace_from_two_folders_is_reported_once(tmp_path: Path) -> None:
    with Store(tmp_path / "m.db") as store:
        store.register_run(CONFIG)
        h = _judge(store, _trace(["task", "one"], "/runs/a/trace.json"), "one")
        assert store.upsert_trace(_trace(["task", "one"], "/moved/a/trace.json")) == h
        data = build_report_data(store)
    assert [t.trace_id for t in data.traces] == ["run-1"] and data.counts.traces == 1
    assert data.counts.store_traces == 1 and data.counts.not_annotated == 0
