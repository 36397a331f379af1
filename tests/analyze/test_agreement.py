"""Agreement statistics against values computed by hand, and the trace-cluster bootstrap."""

from __future__ import annotations

import math
import random
import warnings

import pytest

import mastkit.analyze.agreement as agreement_module
from mastkit.analyze.agreement import (
    Counts,
    Pair,
    _resampled_totals,
    _stat_values,
    agreement,
    bootstrap_ci,
    cohen_kappa,
    cohen_kappa_counts,
    counts,
    fleiss_kappa,
)

# --- 2x2 tables -------------------------------------------------------------------------------

# tp=6 fp=2 fn=3 tn=10 (n=21), every margin different so a swapped cell changes every score:
#   precision = 6/8, recall = 6/9, F1 = 2*6 / (2*6 + 2 + 3) = 12/17, accuracy = 16/21
#   kappa: p_o = 16/21; predicted yes 8, gold yes 9 -> p_e = (8*9 + 13*12) / 21² = 228/441
#          kappa = (16*21 - 228) / (441 - 228) = 108/213
TABLE = Counts(tp=6, fp=2, fn=3, tn=10)


def test_counts_scores_hand_computed() -> None:
    assert TABLE.n == 21
    assert TABLE.precision == pytest.approx(6 / 8)
    assert TABLE.recall == pytest.approx(6 / 9)
    assert TABLE.f1 == pytest.approx(12 / 17)
    assert TABLE.accuracy == pytest.approx(16 / 21)
    assert TABLE.kappa == pytest.approx(108 / 213)
    assert TABLE + Counts(1, 2, 3, 4) == Counts(7, 4, 6, 14)


def test_counts_from_sequences_fill_each_cell() -> None:
    pred = [True, True, True, False, False, False, False, True]
    gold = [True, True, False, True, True, True, False, False]
    # tp: 0, 1 -> 2; fp: 2, 7 -> 2; fn: 3, 4, 5 -> 3; tn: 6 -> 1
    assert counts(pred, gold) == Counts(2, 2, 3, 1)
    with pytest.raises(ValueError):
        counts([True], [True, False])


def test_scores_without_positives_are_undefined_not_zero() -> None:
    nothing = Counts(tn=5)  # no gold and no predicted positive
    assert (nothing.precision, nothing.recall, nothing.f1) == (None, None, None)
    assert nothing.accuracy == 1.0
    only_fp = Counts(fp=3, tn=2)  # predicted positives, no gold positive
    assert (only_fp.precision, only_fp.recall, only_fp.f1) == (0.0, None, 0.0)
    only_fn = Counts(fn=2, tn=3)  # gold positives, none predicted
    assert (only_fn.precision, only_fn.recall, only_fn.f1) == (None, 0.0, 0.0)
    assert Counts().accuracy is None and Counts().kappa is None


def test_cohen_kappa_hand_computed() -> None:
    # tp=20 fp=5 fn=10 tn=15: po=0.7, pe=0.5*0.6+0.5*0.4=0.5 -> kappa=0.4
    assert cohen_kappa_counts(Counts(20, 5, 10, 15)) == pytest.approx(0.4)
    # Worse than chance: tp=1 fp=4 fn=4 tn=1: po=0.2, pe=0.5 -> kappa=-0.6
    assert cohen_kappa_counts(Counts(1, 4, 4, 1)) == pytest.approx(-0.6)


def test_cohen_kappa_sequences() -> None:
    a = [True, True, False, False, True, False]
    b = [True, False, False, False, True, True]
    # tp=2 fp=1 fn=1 tn=2: po=4/6, pe=(3/6*3/6)+(3/6*3/6)=0.5 -> kappa=1/3
    assert cohen_kappa(a, b) == pytest.approx(1 / 3)
    c = counts(a, b)
    assert (c.precision, c.recall, c.f1) == (pytest.approx(2 / 3), pytest.approx(2 / 3), pytest.approx(2 / 3))


def test_kappa_of_constant_raters() -> None:
    assert cohen_kappa([True, False], [True, False]) == pytest.approx(1.0)
    # Both raters give one label to everything: p_e = 1, kappa = 0/0 -> None (not 1.0, not NaN).
    assert cohen_kappa([False, False], [False, False]) is None
    assert cohen_kappa([True, True, True], [True, True, True]) is None
    # Only one rater constant: p_o = p_e, so kappa is exactly 0 (defined).
    assert cohen_kappa([True, True, True, True], [True, False, True, False]) == 0.0
    assert cohen_kappa([True, False, False], [False, False, False]) == 0.0
    # Both constant on opposite labels: p_o = 0 = p_e -> 0.
    assert cohen_kappa([True, True], [False, False]) == 0.0


def test_fleiss_kappa_hand_computed() -> None:
    # P_bar = (1 + 1/3 + 1)/3 = 7/9; p_yes = 4/9; Pe = 41/81 -> kappa = 22/40
    assert fleiss_kappa([[True, True, True], [True, False, False], [False, False, False]]) == pytest.approx(
        0.55
    )
    # Two raters on 4 items (one disagreement): P_bar = 3/4, p_yes = 3/8, Pe = 34/64 -> kappa = (48 - 34) / (64 - 34) = 7/15
    assert fleiss_kappa([[True, True], [True, False], [False, False], [False, False]]) == pytest.approx(
        7 / 15
    )
    # Items rated once are skipped.
    assert fleiss_kappa([[True], [True, True], [False, False]]) == pytest.approx(1.0)


def test_fleiss_kappa_undefined_cases() -> None:
    assert fleiss_kappa([]) is None
    assert fleiss_kappa([[True], [False]]) is None
    assert fleiss_kappa([[True, True], [True, True]]) is None  # every rating the same: 0/0
    assert fleiss_kappa([[False, False, False]]) is None
    with pytest.raises(ValueError, match=r"^Fleiss' kappa needs the same number of raters for every item$"):
        fleiss_kappa([[True, False], [True, False, True]])


# --- agreement report ---------------------------------------------------------------------------


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


def test_agreement_hand_computed_report() -> None:
    # Four traces, modes A and B. Pairs (pred, gold):
    #   t1: A (T,T) B (F,F)      t2: A (T,F) B (unknown)
    #   t3: A (F,T) B (T,T)      t4: A (F,F) B missing from pred -> unknown
    # A: tp1 fp1 fn1 tn1 -> P = R = F1 = 1/2, kappa: p_o 1/2, p_e 1/2 -> 0, prevalence 2/4
    # B: tp1 tn1 -> F1 = 1, kappa = 1, prevalence 1/2; 2 unknown, coverage 2/4
    # micro: tp2 fp1 fn1 tn2 (n=6): F1 = 4/6, p_o = 4/6, p_e = (3*3 + 3*3)/36 = 1/2 -> kappa 1/3
    gold = {
        "t1": {"A": True, "B": False},
        "t2": {"A": False, "B": True},
        "t3": {"A": True, "B": True},
        "t4": {"A": False, "B": False},
        "t5": {"A": True},  # no prediction: missing, not scored
    }
    pred: dict[str, dict[str, bool | None]] = {
        "t1": {"A": True, "B": False},
        "t2": {"A": True, "B": None},
        "t3": {"A": False, "B": True},
        "t4": {"A": False},
        "t9": {"A": True},  # no gold: ignored
    }
    r = agreement(pred, gold, n_boot=100)
    a, b = r.modes
    assert (a.code, a.counts, a.unknown, a.coverage) == ("A", Counts(1, 1, 1, 1), 0, 1.0)
    assert (a.counts.f1, a.counts.kappa, a.prevalence, a.baseline_random_f1) == (0.5, 0.0, 0.5, 0.5)
    assert (b.code, b.counts, b.unknown, b.coverage) == ("B", Counts(1, 0, 0, 1), 2, 0.5)
    assert (b.counts.f1, b.counts.kappa) == (1.0, 1.0)
    assert r.micro == Counts(2, 1, 1, 2)
    assert r.micro.f1 == pytest.approx(4 / 6) and r.kappa == pytest.approx(1 / 3)
    assert r.macro_f1 == pytest.approx(0.75)
    assert (r.items, r.unknown, r.missing) == (4, 2, 1)
    assert r.coverage == pytest.approx(6 / 8)
    # Always absent on 3 gold positives of 6: accuracy 3/6, F1 0, kappa 0 (one constant rater).
    assert r.baseline_always_absent == {"accuracy": 0.5, "f1": 0.0, "kappa": 0.0}
    # Random at prevalence 1/2: accuracy 1/4 + 1/4, F1 1/2, kappa 0.
    assert r.baseline_random == {"accuracy": 0.5, "f1": 0.5, "kappa": 0.0}
    # Restricting the codes restricts every total.
    only_b = agreement(pred, gold, ["B"], n_boot=100)
    assert [m.code for m in only_b.modes] == ["B"] and only_b.micro == Counts(1, 0, 0, 1)


def test_agreement_baselines_when_gold_has_no_positive() -> None:
    r = agreement({"t1": {"A": False}, "t2": {"A": True}}, {"t1": {"A": False}, "t2": {"A": False}})
    assert r.baseline_always_absent == {"accuracy": 1.0, "f1": None, "kappa": None}
    assert r.baseline_random == {"accuracy": 1.0, "f1": 0.0, "kappa": None}
    assert r.macro_f1 == 0.0 and r.kappa == 0.0


def test_empty_agreement_is_all_none() -> None:
    r = agreement({}, {"t1": {"A": True}})
    assert (r.items, r.missing, r.micro.n, r.macro_f1, r.kappa, r.coverage) == (0, 1, 0, None, None, None)
    assert r.micro_f1_ci is None and r.kappa_ci is None


# --- bootstrap -----------------------------------------------------------------------------------


def _correlated_traces(
    n_traces: int = 40, n_modes: int = 10
) -> tuple[dict[str, dict[str, bool | None]], dict[str, dict[str, bool]]]:
    """Traces whose modes agree or disagree together: even traces all right, odd traces all wrong.

    Gold alternates by mode, so every trace has positives and negatives. Pooled accuracy is 1/2;
    its standard error is 0.5/sqrt(traces) when traces are resampled but 0.5/sqrt(pairs) when
    pairs are, sqrt(n_modes) ≈ 3.2 times smaller."""
    pred: dict[str, dict[str, bool | None]] = {}
    gold: dict[str, dict[str, bool]] = {}
    for i in range(n_traces):
        t = f"t{i:02d}"
        gold[t] = {f"M{j}": j % 2 == 0 for j in range(n_modes)}
        pred[t] = {code: (g if i % 2 == 0 else not g) for code, g in gold[t].items()}
    return pred, gold


def _pair_bootstrap_width(pairs: list[Pair], stat: str, n_boot: int = 1000, seed: int = 1) -> float:
    """Width of the 95% interval from resampling pairs: the wrong design, computed independently."""
    rnd = random.Random(seed)
    values = []
    for _ in range(n_boot):
        sample = [pairs[rnd.randrange(len(pairs))] for _ in pairs]
        v = getattr(counts([p for p, _ in sample], [g for _, g in sample]), stat)
        if v is not None:
            values.append(v)
    values.sort()
    return values[int(0.975 * (len(values) - 1))] - values[int(0.025 * (len(values) - 1))]


def _clusters(pred: dict[str, dict[str, bool | None]], gold: dict[str, dict[str, bool]]) -> list[list[Pair]]:
    return [[(bool(pred[t][c]), g) for c, g in sorted(gold[t].items())] for t in sorted(gold)]


def test_agreement_intervals_resample_traces_not_pairs() -> None:
    pred, gold = _correlated_traces()
    r = agreement(pred, gold, n_boot=1000)
    pairs = [p for cl in _clusters(pred, gold) for p in cl]
    assert r.micro_f1_ci is not None and r.kappa_ci is not None
    f1_width = r.micro_f1_ci[1] - r.micro_f1_ci[0]
    kappa_width = r.kappa_ci[1] - r.kappa_ci[0]
    assert f1_width > 2 * _pair_bootstrap_width(pairs, "f1")
    assert kappa_width > 2 * _pair_bootstrap_width(pairs, "kappa")


def test_cluster_bootstrap_width_matches_the_trace_level_standard_error() -> None:
    pred, gold = _correlated_traces(n_traces=100, n_modes=10)
    ci = bootstrap_ci(_clusters(pred, gold), "accuracy", n_boot=4000)
    assert ci is not None
    # Accuracy is the mean of 100 trace-level values 0/1 at 1/2: 95% width ≈ 2 * 1.96 * 0.05 = 0.196.
    assert ci[1] - ci[0] == pytest.approx(2 * 1.96 * 0.5 / math.sqrt(100), rel=0.15)
    # The same pairs, each its own cluster, give the pair bootstrap: sqrt(10) times narrower.
    flat = [[p] for cl in _clusters(pred, gold) for p in cl]
    pair_ci = bootstrap_ci(flat, "accuracy", n_boot=4000)
    assert pair_ci is not None
    assert pair_ci[1] - pair_ci[0] == pytest.approx(2 * 1.96 * 0.5 / math.sqrt(1000), rel=0.15)


def test_bootstrap_interval_has_width_and_holds_the_estimate() -> None:
    rnd = random.Random(7)
    clusters = [[(rnd.random() < 0.5, rnd.random() < 0.4) for _ in range(3)] for _ in range(30)]
    flat = [p for cl in clusters for p in cl]
    point = counts([p for p, _ in flat], [g for _, g in flat])
    for stat in ("f1", "kappa", "precision", "recall", "accuracy"):
        ci = bootstrap_ci(clusters, stat, n_boot=1000)
        value = getattr(point, stat)
        assert ci is not None and value is not None, stat
        assert ci[1] - ci[0] > 0.1, stat
        assert ci[0] < value < ci[1], stat


def test_bootstrap_is_deterministic_by_seed() -> None:
    rnd = random.Random(5)
    clusters = [
        [(rnd.random() < 0.5, rnd.random() < 0.5) for _ in range(rnd.randint(1, 4))] for _ in range(40)
    ]
    pred, gold = _correlated_traces(n_traces=12, n_modes=3)
    assert bootstrap_ci(clusters, "f1", seed=3) == bootstrap_ci(clusters, "f1", seed=3)
    assert bootstrap_ci(clusters, "f1", seed=3) != bootstrap_ci(clusters, "f1", seed=4)
    assert agreement(pred, gold, seed=5).kappa_ci == agreement(pred, gold, seed=5).kappa_ci


def test_bootstrap_matches_scipy_on_trace_level_data() -> None:
    stats = pytest.importorskip("scipy.stats")
    np = pytest.importorskip("numpy")
    rnd = random.Random(11)
    clusters = [
        [(rnd.random() < 0.6, rnd.random() < 0.5) for _ in range(rnd.randint(1, 5))] for _ in range(60)
    ]
    tables = [counts([p for p, _ in cl], [g for _, g in cl]) for cl in clusters]
    cols = [np.array([getattr(c, k) for c in tables], dtype=float) for k in ("tp", "fp", "fn", "tn")]

    def f1(tp: object, fp: object, fn: object, tn: object, axis: int = -1) -> object:
        s_tp, s_fp, s_fn = (np.sum(x, axis=axis) for x in (tp, fp, fn))
        return 2 * s_tp / (2 * s_tp + s_fp + s_fn)

    ref = stats.bootstrap(
        cols, f1, paired=True, vectorized=True, method="percentile", n_resamples=5000, random_state=0
    ).confidence_interval
    ours = bootstrap_ci(clusters, "f1", n_boot=5000)
    assert ours == pytest.approx((ref.low, ref.high), abs=0.015)


def test_bootstrap_returns_none_when_it_cannot_resample() -> None:
    assert bootstrap_ci([], "f1") is None
    # One trace, however many pairs, gives no interval (not a zero-width one).
    assert bootstrap_ci([[(True, True), (False, True), (True, False), (False, False)]], "f1") is None
    # Empty clusters (all verdicts unknown) do not count as traces with data.
    assert bootstrap_ci([[(True, True)], [], []], "accuracy") is None
    # A statistic undefined in every resample (no positive anywhere) has no interval.
    assert bootstrap_ci([[(False, False)], [(False, False)], [(False, False)]], "f1") is None
    assert bootstrap_ci([[(False, False)], [(False, False)]], "kappa") is None
    assert bootstrap_ci([[(True, True)], [(False, True)]], "f1", n_boot=0) is None
    with pytest.raises(ValueError, match="unknown statistic"):
        bootstrap_ci([[(True, True)], [(False, True)]], "auc")
    with pytest.raises(ValueError, match="alpha"):
        bootstrap_ci([[(True, True)], [(False, True)]], "f1", alpha=1.5)


def test_bootstrap_of_two_traces_by_hand() -> None:
    # Two traces, accuracy 1 and 0. A resample holds both traces twice (mean 1 or 0, 1/4 each) or one
    # of each (1/2, probability 1/2): the 2.5% and 97.5% quantiles are 0 and 1.
    assert bootstrap_ci([[(True, True)], [(True, False)]], "accuracy", n_boot=2000) == (0.0, 1.0)
    # alpha widens or narrows: at 60% the quantiles 20% and 80% both fall on 1/2.
    assert bootstrap_ci([[(True, True)], [(True, False)]], "accuracy", n_boot=2000, alpha=0.6) == (0.5, 0.5)


def test_bootstrap_drops_undefined_resamples() -> None:
    # Trace 1 has the only positive. Resamples without it have no F1 and are dropped; every
    # resample with it has F1 = 1, so the interval is (1, 1) rather than reaching down to 0.
    assert bootstrap_ci([[(True, True)], [(False, False)], [(False, False)]], "f1", n_boot=500) == (1.0, 1.0)


def test_per_mode_intervals_use_the_traces_of_the_mode() -> None:
    pred, gold = _correlated_traces(n_traces=20, n_modes=4)
    pred["t00"]["M0"] = None  # unknown: t00 then has no M0 pair, but is still a trace to draw
    r = agreement(pred, gold, n_boot=300, seed=2)
    m0 = next(m for m in r.modes if m.code == "M0")
    clusters = [[] if pred[t]["M0"] is None else [(bool(pred[t]["M0"]), gold[t]["M0"])] for t in sorted(gold)]
    assert m0.f1_ci == bootstrap_ci(clusters, "f1", n_boot=300, seed=2)
    assert m0.kappa_ci == bootstrap_ci(clusters, "kappa", n_boot=300, seed=2)
    assert m0.f1_ci is not None and m0.f1_ci[1] - m0.f1_ci[0] > 0.2
    everything = [
        [(bool(pred[t][c]), gold[t][c]) for c in sorted(gold[t]) if pred[t][c] is not None]
        for t in sorted(gold)
    ]
    assert r.micro_f1_ci == bootstrap_ci(everything, "f1", n_boot=300, seed=2)


def test_statistics_of_resampled_tables_by_hand() -> None:
    np = pytest.importorskip("numpy")
    rows = np.array(
        [
            [6, 2, 3, 10],  # TABLE
            [1, 0, 0, 0],  # every denominator is 1
            [0, 1, 0, 0],
            [0, 0, 0, 1],
            [0, 0, 0, 0],  # nothing: all undefined
        ]
    )
    nan = float("nan")
    expected = {
        "f1": [12 / 17, 1.0, 0.0, nan, nan],
        "precision": [6 / 8, 1.0, 0.0, nan, nan],
        "recall": [6 / 9, 1.0, nan, nan, nan],
        "accuracy": [16 / 21, 1.0, 0.0, 1.0, nan],
        "kappa": [108 / 213, nan, 0.0, nan, nan],  # one fp: constant raters on opposite labels -> 0
    }
    for stat, want in expected.items():
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # 0/0 is NaN without a RuntimeWarning reaching the caller
            got = _stat_values(rows, stat)
        assert np.allclose(got, want, equal_nan=True), (stat, got)


def test_resampled_totals_draw_whole_traces_in_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    np = pytest.importorskip("numpy")
    table = np.array([[1, 0, 0, 2], [0, 1, 1, 0], [2, 0, 1, 1]])
    totals = _resampled_totals(table, 50, 3)
    assert totals.shape == (50, 4)
    # Each resample holds 3 traces, so its pair count is a sum of 3 of the traces' sizes (3, 2, 4).
    sizes = {a + b + c for a in (3, 2, 4) for b in (3, 2, 4) for c in (3, 2, 4)}
    assert set(totals.sum(axis=1).tolist()) <= sizes and len(set(totals.sum(axis=1).tolist())) > 3
    # Drawing in blocks of two resamples (the last block holds one) gives the same draws as all at once.
    odd = _resampled_totals(table, 51, 3)
    monkeypatch.setattr(agreement_module, "_BLOCK_CELLS", 7)
    assert (_resampled_totals(table, 50, 3) == totals).all()
    blocked = _resampled_totals(table, 51, 3)
    assert blocked.shape == (51, 4) and (blocked == odd).all()


def test_bootstrap_defaults_and_arguments() -> None:
    rnd = random.Random(3)
    clusters = [[(rnd.random() < 0.5, rnd.random() < 0.5) for _ in range(3)] for _ in range(25)]
    default = bootstrap_ci(clusters)
    assert default == bootstrap_ci(clusters, "f1", n_boot=1000, alpha=0.05, seed=0)
    assert default != bootstrap_ci(clusters, "f1", n_boot=1001)
    assert default != bootstrap_ci(clusters, "f1", seed=1)
    narrow = bootstrap_ci(clusters, "f1", alpha=0.5)
    assert default is not None and narrow is not None
    assert default[0] < narrow[0] < narrow[1] < default[1]
    assert bootstrap_ci(clusters, "f1", n_boot=1) is None  # one resample is no interval
    assert bootstrap_ci(clusters, "f1", n_boot=2) is not None
    for alpha in (0.0, 1.0):
        with pytest.raises(ValueError, match=r"^alpha must be between 0 and 1$"):
            bootstrap_ci(clusters, "f1", alpha=alpha)
    with pytest.raises(ValueError, match=r"^unknown statistic 'auc'; expected one of f1, kappa, precision"):
        bootstrap_ci(clusters, "auc")


def test_agreement_passes_its_resampling_settings_to_every_interval() -> None:
    rnd = random.Random(8)
    gold = {f"t{i}": {c: rnd.random() < 0.4 for c in "ABC"} for i in range(30)}
    pred: dict[str, dict[str, bool | None]] = {
        t: {c: (g if rnd.random() < 0.7 else not g) for c, g in labels.items()} for t, labels in gold.items()
    }
    ids = sorted(gold)
    by_trace = [[(bool(pred[t][c]), gold[t][c]) for c in "ABC"] for t in ids]
    r = agreement(pred, gold, n_boot=300, seed=2)
    assert r.micro_f1_ci == bootstrap_ci(by_trace, "f1", n_boot=300, seed=2)
    assert r.kappa_ci == bootstrap_ci(by_trace, "kappa", n_boot=300, seed=2)
    for m in r.modes:
        per_mode = [[(bool(pred[t][m.code]), gold[t][m.code])] for t in ids]
        assert m.f1_ci == bootstrap_ci(per_mode, "f1", n_boot=300, seed=2)
        assert m.kappa_ci == bootstrap_ci(per_mode, "kappa", n_boot=300, seed=2)
    default = agreement(pred, gold)
    assert default.kappa_ci == bootstrap_ci(by_trace, "kappa", n_boot=1000, seed=0)
    assert default.modes[0].kappa_ci == bootstrap_ci([[p[0]] for p in by_trace], "kappa", n_boot=1000, seed=0)


def test_random_baseline_kappa_is_undefined_when_gold_is_all_positive() -> None:
    r = agreement({"t1": {"A": True}, "t2": {"A": False}}, {"t1": {"A": True}, "t2": {"A": True}})
    assert r.baseline_random == {"accuracy": 1.0, "f1": 1.0, "kappa": None}
    # Always absent against always present: p_o = 0 = p_e, kappa 0.
    assert r.baseline_always_absent == {"accuracy": 0.0, "f1": 0.0, "kappa": 0.0}
