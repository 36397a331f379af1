"""``macro_f1_ci``: the macro F1 of ``agreement`` resampled by trace, like the per-mode intervals."""

from __future__ import annotations

import pytest

from mastkit.analyze.agreement import agreement, bootstrap_ci, macro_f1_ci

GOLD = {f"t{i}": {"A": i % 2 == 0, "B": i % 3 == 0} for i in range(12)}
PRED = {f"t{i}": {"A": i % 4 == 0, "B": (i % 3 == 0) != (i == 3)} for i in range(12)}


def test_with_one_mode_it_is_that_modes_f1_interval() -> None:
    one = {t: {"A": v["A"]} for t, v in PRED.items()}
    clusters = [[(one[t]["A"], GOLD[t]["A"])] for t in sorted(GOLD)]
    assert macro_f1_ci(one, GOLD, ["A"], n_boot=500, seed=3) == bootstrap_ci(
        clusters, "f1", n_boot=500, seed=3
    )


def test_it_brackets_the_macro_f1_and_is_seeded() -> None:
    ag = agreement(PRED, GOLD)
    ci = macro_f1_ci(PRED, GOLD, n_boot=500, seed=1)
    assert ci is not None and ag.macro_f1 is not None
    assert ci[0] <= ag.macro_f1 <= ci[1] and ci[0] < ci[1]
    assert ci == macro_f1_ci(PRED, GOLD, n_boot=500, seed=1)
    # the mean over modes of each sample lies between the modes' own intervals
    a = agreement(PRED, GOLD, n_boot=500, seed=1)
    lows = [m.f1_ci[0] for m in a.modes if m.f1_ci]
    highs = [m.f1_ci[1] for m in a.modes if m.f1_ci]
    assert min(lows) <= ci[0] and ci[1] <= max(highs)


def test_perfect_and_degenerate_inputs() -> None:
    assert macro_f1_ci(GOLD, GOLD, n_boot=200) == (1.0, 1.0)  # type: ignore[arg-type]
    assert macro_f1_ci({"t0": PRED["t0"]}, GOLD) is None  # one trace: nothing to resample
    unknown = {t: {"A": None, "B": None} for t in GOLD}
    assert macro_f1_ci(unknown, GOLD) is None
    with pytest.raises(ValueError):
        macro_f1_ci(PRED, GOLD, alpha=0)


def test_a_mode_without_f1_is_left_out_of_each_sample_as_macro_f1_leaves_it_out() -> None:
    gold = {t: {**v, "C": False} for t, v in GOLD.items()}
    pred = {t: {**v, "C": False} for t, v in PRED.items()}  # C: no positive anywhere, F1 undefined
    assert agreement(pred, gold).macro_f1 == agreement(PRED, GOLD).macro_f1
    assert macro_f1_ci(pred, gold, n_boot=300, seed=2) == macro_f1_ci(PRED, GOLD, n_boot=300, seed=2)
