"""Pattern B offline: items from the failure vector, severity order, budget truncation, the store."""

from __future__ import annotations

from pathlib import Path

from tests.annotate._judgekit import EXAMPLES

from mastkit.annotate.model import Annotation, AnnotatorConfig, Evidence, ModeVerdict
from mastkit.attribute.model import Attribution
from mastkit.feedback import reflect, reflection_for
from mastkit.feedback.reflection import quote_text
from mastkit.providers import estimate_tokens
from mastkit.store import Store
from mastkit.taxonomy import load_taxonomy
from mastkit.traces.load import load_traces

TAX = load_taxonomy("mast")


def _annotation(present: dict[str, tuple[int, float]]) -> Annotation:
    """An LLM-like annotation with ``present`` codes -> (step, confidence); the rest absent."""
    config = AnnotatorConfig(kind="llm", model="openai:x")
    verdicts = [
        ModeVerdict(
            code=m.code,
            verdict="present" if m.code in present else "absent",
            confidence=present[m.code][1] if m.code in present else 0.9,
            evidence=[Evidence(quote=f"quote for {m.code}", seq_start=present[m.code][0], agent="coder")]
            if m.code in present
            else [],
            rationale=f"Why {m.code} happened here." if m.code in present else None,
        )
        for m in TAX.modes
    ]
    return Annotation(trace_id="t", config=config, config_hash=config.config_hash(), verdicts=verdicts)


def test_items_are_ordered_by_severity_then_category_then_confidence() -> None:
    ann = _annotation(
        {"FM-1.3": (2, 0.9), "FM-2.1": (1, 0.9), "FM-3.2": (7, 0.9), "FM-3.3": (9, 0.6), "FM-2.6": (3, 0.95),
         "FM-1.1": (4, 0.7), "FM-2.2": (5, 0.8)}
    )  # fmt: skip
    codes = [it.code for it in reflect(ann, TAX).items]
    # fatal: FM-3.3 (FC3) before FM-1.1 (FC1); high: FM-3.2 (FC3) before FM-2.6 (FC2);
    # medium: FM-1.3 (FC1) before FM-2.2 (FC2); low: FM-2.1
    assert codes == ["FM-3.3", "FM-1.1", "FM-3.2", "FM-2.6", "FM-1.3", "FM-2.2", "FM-2.1"]


def test_confidence_then_step_break_ties() -> None:
    ann = _annotation({"FM-1.3": (8, 0.6), "FM-1.2": (1, 0.9)})
    doc = ann.model_dump()
    # FM-1.2 and FM-1.3 differ in severity; give both the same to test the tie-break
    tax = type(TAX).model_validate({**TAX.model_dump(), "modes": [
        {**m, "severity": "medium"} if m["code"] in ("FM-1.2", "FM-1.3") else m for m in TAX.model_dump()["modes"]
    ]})  # fmt: skip
    assert [it.code for it in reflect(Annotation.model_validate(doc), tax).items] == ["FM-1.2", "FM-1.3"]
    same_conf = _annotation({"FM-1.3": (8, 0.9), "FM-1.2": (1, 0.9)})
    assert [it.code for it in reflect(same_conf, tax).items] == ["FM-1.2", "FM-1.3"]
    later_first = _annotation({"FM-1.3": (1, 0.9), "FM-1.2": (8, 0.9)})
    assert [it.code for it in reflect(later_first, tax).items] == ["FM-1.3", "FM-1.2"]


def test_render_has_where_evidence_and_instead() -> None:
    ann = _annotation({"FM-3.3": (9, 0.8)})
    att = Attribution(agent="coder", step=9, mode="FM-3.3", method="rules")
    text = reflect(ann, TAX, attribution=att).render(None)
    assert text.splitlines() == [
        "A review of your previous attempt found 1 problem. The decisive mistake was at step 9 by coder.",
        "1. FM-3.3 Incorrect Verification [fatal] at step 9 (coder). What went wrong: Why FM-3.3 happened here. "
        'Evidence: "quote for FM-3.3". Instead: Check the claim itself: the check must fail before the fix and '
        "pass after it; a status probe or a check that failed is not proof.",
    ]


def test_budget_drops_lowest_severity_first_and_never_cuts_a_sentence() -> None:
    ann = _annotation({"FM-1.3": (2, 0.9), "FM-3.1": (5, 0.9), "FM-2.1": (1, 0.9), "FM-3.2": (6, 0.9)})
    r = reflect(ann, TAX)
    full = r.render(None)
    sentences = {s for line in full.splitlines() for s in line.split(". ")}
    for budget in (400, 200, 150, 100, 70, 50, 30):
        text = r.render(budget)
        assert estimate_tokens(text) <= budget, budget
        for line in text.splitlines():
            if line.startswith("("):
                continue
            for s in line.split(". "):
                assert s in sentences, (budget, s)  # whole sentences of the full text only
    assert [ln[:9] for ln in full.splitlines()[1:]] == ["1. FM-3.1", "2. FM-3.2", "3. FM-1.3", "4. FM-2.1"]
    two = r.render(200).splitlines()
    assert [ln[:9] for ln in two[1:]] == ["1. FM-3.1", "2. FM-3.2", "(2 less s"]
    one = r.render(100).splitlines()
    assert [ln[:9] for ln in one[1:]] == ["1. FM-3.1", "(3 less s"] and "Evidence" in one[1]
    no_quote = r.render(90)
    assert "What went wrong" in no_quote and "Evidence" not in no_quote
    bare = r.render(80)
    assert "Instead:" in bare and "What went wrong" not in bare
    assert r.render(70) == "A review of your previous attempt found 4 problems, most severe first."
    assert r.render(3) == ""


def test_no_present_mode() -> None:
    assert (
        reflect(_annotation({}), TAX).render() == "A review of your previous attempt found no failure modes."
    )


def test_quotes_are_redacted_and_flat() -> None:
    q = quote_text('key "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD"\n next line')
    assert "sk-proj" not in q and "\n" not in q and '"' not in q


def test_reflection_for_annotates_on_the_fly_then_reuses_the_store(tmp_path: Path) -> None:
    (trace,) = load_traces(EXAMPLES / "04_taubench_retail_gives_up.json")
    with Store(tmp_path / "m.db") as store:
        first = reflection_for(trace, TAX, store=store)
        assert [it.code for it in first.items] == ["FM-3.1"]
        assert len(store.runs()) == 1 and len(list(store.annotations())) == 1
        # another annotator's stored failure vector is used as it is
        other = _annotation({"FM-2.6": (3, 0.9)}).model_copy(update={"trace_id": trace.trace_id})
        store.register_run(other.config)
        store.put_annotation(other, trace.content_hash())
        assert [it.code for it in reflection_for(trace, TAX, store=store).items] == ["FM-2.6"]
        assert [it.code for it in reflection_for(trace, TAX, store=store, run="rules").items] == ["FM-3.1"]
        assert len(list(store.annotations())) == 2
