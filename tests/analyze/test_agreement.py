"""Agreement statistics against values computed by hand."""

from __future__ import annotations

import pytest

from mastkit.analyze.agreement import Counts, agreement, cohen_kappa, cohen_kappa_counts, counts, fleiss_kappa


def test_cohen_kappa_hand_computed() -> None:
    # tp=20 fp=5 fn=10 tn=15: po=0.7, pe=0.5*0.6+0.5*0.4=0.5 -> kappa=0.4
    assert cohen_kappa_counts(Counts(20, 5, 10, 15)) == pytest.approx(0.4)


def test_cohen_kappa_sequences() -> None:
    a = [True, True, False, False, True, False]
    b = [True, False, False, False, True, True]
    # tp=2 fp=1 fn=1 tn=2: po=4/6, pe=(3/6*3/6)+(3/6*3/6)=0.5 -> kappa=1/3
    assert cohen_kappa(a, b) == pytest.approx(1 / 3)
    c = counts(a, b)
    assert (c.precision, c.recall, c.f1) == (pytest.approx(2 / 3), pytest.approx(2 / 3), pytest.approx(2 / 3))


def test_fleiss_kappa_hand_computed() -> None:
    # P_bar = (1 + 1/3 + 1)/3 = 7/9; p_yes = 4/9; Pe = 41/81 -> kappa = 22/40
    assert fleiss_kappa([[True, True, True], [True, False, False], [False, False, False]]) == pytest.approx(
        0.55
    )


def test_perfect_and_constant_raters() -> None:
    assert cohen_kappa([True, False], [True, False]) == pytest.approx(1.0)
    assert cohen_kappa([False, False], [False, False]) == 1.0


def test_agreement_report_excludes_unknown_and_gives_baselines() -> None:
    gold = {"t1": {"A": True, "B": False}, "t2": {"A": False, "B": False}, "t3": {"A": True, "B": True}}
    pred = {"t1": {"A": True, "B": False}, "t2": {"A": True, "B": None}, "t3": {"A": False, "B": True}}
    r = agreement(pred, gold, n_boot=200)
    a = next(m for m in r.modes if m.code == "A")
    b = next(m for m in r.modes if m.code == "B")
    assert (a.counts.tp, a.counts.fp, a.counts.fn, a.counts.tn) == (1, 1, 1, 0)
    assert b.unknown == 1 and b.counts.n == 2 and b.counts.f1 == 1.0
    assert r.unknown == 1 and r.items == 3
    assert r.micro.n == 5 and r.macro_f1 == pytest.approx((0.5 + 1.0) / 2)
    assert r.baseline_always_absent["f1"] == 0.0
    assert r.baseline_always_absent["accuracy"] == pytest.approx(2 / 5)
    assert r.micro_f1_ci is not None and 0 <= r.micro_f1_ci[0] <= r.micro_f1_ci[1] <= 1
