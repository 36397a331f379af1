"""``evaluate``: verdicts against gold, unknown handling, the gold's own Fleiss kappa, table rows."""

from __future__ import annotations

import random

import pytest

from mastkit.analyze.agreement import Counts, agreement, fleiss_kappa
from mastkit.analyze.evaluate import as_rows, evaluate
from mastkit.analyze.gold import Gold
from mastkit.annotate.model import Annotation, AnnotatorConfig, ModeVerdict

CFG = AnnotatorConfig(kind="rules")


def _ann(tid: str, verdicts: dict[str, str]) -> Annotation:
    return Annotation(
        trace_id=tid,
        config=CFG,
        config_hash=CFG.config_hash(),
        verdicts=[ModeVerdict.model_validate({"code": c, "verdict": v}) for c, v in verdicts.items()],
    )


def _gold() -> Gold:
    g = Gold()
    # Three annotators per (trace, mode) for A; one for B.
    g.add("t1", "A", [True, True, False])  # majority present
    g.add("t2", "A", [False, False, False])
    g.add("t3", "A", [True, True, True])
    g.add("t4", "A", [False, True, False])
    g.add("t1", "B", [True])
    g.add("t2", "B", [False])
    return g


def test_evaluate_by_hand() -> None:
    anns = [
        _ann("t1", {"A": "present", "B": "present"}),
        _ann("t2", {"A": "present", "B": "unknown"}),
        _ann("t3", {"A": "absent"}),  # B has no gold here; A absent vs gold present
        _ann("t4", {"A": "unknown"}),
        _ann("t9", {"A": "present"}),  # no gold
    ]
    res = evaluate(anns, _gold(), n_boot=50)
    a, b = res.agreement.modes
    # A: t1 tp, t2 fp, t3 fn, t4 unknown -> P 1/2, R 1/2, F1 1/2
    assert (a.code, a.counts, a.unknown) == ("A", Counts(1, 1, 1, 0), 1)
    # B: t1 tp, t2 unknown (never scored as absent)
    assert (b.code, b.counts, b.unknown) == ("B", Counts(1, 0, 0, 0), 1)
    assert (res.agreement.items, res.agreement.unknown, res.agreement.missing) == (4, 2, 0)
    # Fleiss on A's 4 items x 3 raters: P_i = 1/3, 1, 1, 1/3 -> P_bar 2/3; p_yes 6/12 -> Pe 1/2 -> 1/3.
    # B has one rater per item: no Fleiss.
    assert res.human_fleiss == {"A": pytest.approx(1 / 3), "B": None}
    rows = {r["code"]: r for r in as_rows(res)}
    assert rows["A"] == {
        "code": "A",
        "n": 3,
        "unknown": 1,
        "tp": 1,
        "fp": 1,
        "fn": 1,
        "tn": 0,
        "precision": 0.5,
        "recall": 0.5,
        "f1": 0.5,
        "f1_ci": a.f1_ci,
        "kappa": pytest.approx(a.counts.kappa),
        "kappa_ci": a.kappa_ci,
        "gold_prevalence": pytest.approx(2 / 3),
        "baseline_random_f1": pytest.approx(2 / 3),
        "human_fleiss": pytest.approx(1 / 3),
    }
    assert rows["B"]["human_fleiss"] is None and rows["B"]["unknown"] == 1


def test_evaluate_codes_and_mixed_rater_counts() -> None:
    g = _gold()
    g.add("t5", "A", [True, False])  # two raters where the others have three: Fleiss is not defined
    res = evaluate([_ann("t1", {"A": "present", "B": "absent"})], g, ["B"], n_boot=10)
    assert [m.code for m in res.agreement.modes] == ["B"]
    assert res.agreement.modes[0].counts == Counts(fn=1)
    assert res.agreement.missing == 4  # t2-t5 have gold but no annotation
    assert evaluate([_ann("t1", {"A": "present"})], g, n_boot=10).human_fleiss["A"] is None


def test_evaluate_passes_n_boot_and_scores_two_annotators() -> None:
    g = Gold()
    for i in range(12):
        g.add(f"t{i}", "A", [i % 3 == 0, i % 2 == 0])  # two annotators per item
    anns = [_ann(f"t{i}", {"A": "present" if i % 4 == 0 else "absent"}) for i in range(12)]
    pred: dict[str, dict[str, bool | None]] = {f"t{i}": {"A": i % 4 == 0} for i in range(12)}
    res = evaluate(anns, g, n_boot=40)
    assert res.agreement.modes[0].f1_ci == agreement(pred, g.labels, n_boot=40).modes[0].f1_ci
    rnd = random.Random(4)
    big = Gold()
    for i in range(40):
        big.add(f"t{i}", "A", [rnd.random() < 0.5])
    guesses = {f"t{i}": {"A": rnd.random() < 0.5} for i in range(40)}
    big_anns = [_ann(t, {"A": "present" if v["A"] else "absent"}) for t, v in guesses.items()]
    assert evaluate(big_anns, big).agreement.modes[0].f1_ci == agreement(guesses, big.labels).modes[0].f1_ci
    assert (
        agreement(guesses, big.labels).modes[0].f1_ci
        != agreement(guesses, big.labels, n_boot=1001).modes[0].f1_ci
    )
    assert res.human_fleiss["A"] == pytest.approx(fleiss_kappa([g.raters[t]["A"] for t in g.raters]))
    assert res.human_fleiss["A"] is not None
