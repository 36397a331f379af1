from __future__ import annotations

import pytest

from mastkit.analyze.profile import (
    Row,
    _bootstrap_mean,
    cascade_chains,
    category_profile,
    cooccurrence,
    failure_profile,
    fatal_vs_benign,
    first_modes,
    fisher_exact,
    modes_per_failed_trace,
    overlap,
    rows,
    wilson,
)
from mastkit.annotate.model import Annotation, AnnotatorConfig, ModeVerdict

CODES = ["A", "B", "C"]


def row(
    i: int, present: set[str], success: bool, bench: str = "x", first: dict[str, int] | None = None
) -> Row:
    return Row(
        trace_id=f"t{i}",
        present=present,
        judged=set(CODES),
        success=success,
        meta={"benchmark": bench},
        first_seq=first or {},
    )


def test_fisher_exact_lady_tasting_tea() -> None:
    assert fisher_exact(3, 1, 1, 3) == pytest.approx(0.4857, abs=1e-4)
    assert fisher_exact(4, 0, 0, 4) == pytest.approx(0.02857, abs=1e-4)


def test_wilson_interval() -> None:
    lo, hi = wilson(5, 10)  # type: ignore[misc]
    assert lo == pytest.approx(0.2366, abs=1e-3) and hi == pytest.approx(0.7634, abs=1e-3)


def test_profile_prevalence_and_share() -> None:
    data = [row(0, {"A", "B"}, False), row(1, {"A"}, False), row(2, set(), True), row(3, {"C"}, True)]
    prof = {r["code"]: r for r in failure_profile(data, CODES)}
    assert prof["A"]["prevalence"] == 0.5 and prof["A"]["share"] == 0.5
    assert prof["B"]["present"] == 1 and prof["C"]["share"] == 0.25


def test_modes_per_failed_trace_split() -> None:
    data = [row(0, {"A"}, False), row(1, {"A", "B", "C", "D", "E"}, False), row(2, {"A", "B", "C"}, True)]
    (m,) = modes_per_failed_trace(data)
    assert m["failed_traces"] == 2 and m["mean_modes"] == 3.0 and m["isolated"] == 1 and m["cascading"] == 1


def test_fatal_vs_benign_lift() -> None:
    data = [row(i, {"A"}, False) for i in range(4)] + [row(10 + i, set(), True) for i in range(4)]
    data += [row(20, {"B"}, False), row(21, {"B"}, True)]
    table = {r["code"]: r for r in fatal_vs_benign(data, CODES)}
    assert table["A"]["p_failed"] == pytest.approx(0.8) and table["A"]["p_success"] == 0.0
    assert table["A"]["verdict"] == "fatal" and table["A"]["p_value"] == pytest.approx(
        fisher_exact(4, 1, 0, 5)
    )
    assert table["B"]["lift"] == pytest.approx(0.0) and table["B"]["verdict"] == "benign"


def test_cooccurrence_and_chains() -> None:
    data = [
        row(0, {"A", "B"}, False, first={"A": 2, "B": 5}),
        row(1, {"A"}, False, first={"A": 1}),
        row(2, {"A", "B"}, False, first={"B": 1, "A": 3}),
    ]
    co = cooccurrence(data, CODES)
    assert co["counts"]["A"]["B"] == 2 and co["conditional"]["B"]["A"] == 1.0
    assert co["conditional"]["A"]["B"] == pytest.approx(2 / 3)
    chains = {(c["before"], c["after"]): c for c in cascade_chains(data)}
    assert chains[("A", "B")]["traces"] == 1 and chains[("A", "B")]["reverse"] == 1
    firsts = {f["code"]: f["first_in"] for f in first_modes(data)}
    assert firsts == {"A": 2, "B": 1}


def test_overlap_jaccard() -> None:
    data = [row(0, {"A", "B"}, False, "x"), row(1, {"B", "C"}, False, "y")]
    (o,) = overlap(data, by="benchmark")
    assert o["jaccard"] == pytest.approx(1 / 3) and o["shared"] == ["B"]


# --- against reference values ----------------------------------------------------------------


def test_fisher_exact_matches_scipy() -> None:
    stats = pytest.importorskip("scipy.stats")
    for table in [(3, 2, 1, 4), (0, 5, 5, 0), (8, 2, 1, 5), (1, 9, 11, 3), (0, 0, 3, 4), (2, 7, 2, 7)]:
        a, b, c, d = table
        _, ref = stats.fisher_exact([[a, b], [c, d]])
        assert fisher_exact(*table) == pytest.approx(ref, rel=1e-9), table


def test_fisher_exact_is_exactly_one_for_equal_proportions() -> None:
    # The observed table is then the most likely one: every table counts, the sum is exactly 1
    # (summing float probabilities gave 0.9999999999999999 for these).
    for table in [(1, 1, 1, 1), (1, 2, 2, 4), (1, 2, 3, 6), (0, 3, 0, 5), (0, 0, 0, 0)]:
        assert fisher_exact(*table) == 1.0, table
    # Ties with the observed table count: [[1, 0], [0, 1]] and [[0, 1], [1, 0]] are equally likely.
    assert fisher_exact(1, 0, 0, 1) == 1.0


def test_wilson_matches_scipy_and_the_textbook_ends() -> None:
    stats = pytest.importorskip("scipy.stats")
    for k, n in [(0, 10), (10, 10), (3, 17), (5, 10), (1, 1), (0, 1), (99, 100)]:
        ref = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
        assert wilson(k, n) == pytest.approx((ref.low, ref.high), abs=1e-12), (k, n)
    # 0/n: (0, z²/(n + z²)); n/n: (n/(n + z²), 1) — exactly 0 and 1 at the closed ends.
    z2 = 1.959964**2
    assert wilson(0, 10) == (0.0, pytest.approx(z2 / (10 + z2), abs=1e-6))
    assert wilson(10, 10) == (pytest.approx(10 / (10 + z2), abs=1e-6), 1.0)
    assert wilson(0, 0) is None
    # The closed ends are exact where the formula's rounding is not (9/9 computes to 1.0000000000000002).
    assert [wilson(n, n)[1] for n in (9, 13, 17)] == [1.0, 1.0, 1.0]  # type: ignore[index]
    with pytest.raises(ValueError, match=r"^wilson needs 0 <= k <= n, got k=3, n=2$"):
        wilson(3, 2)
    with pytest.raises(ValueError, match="k=-1"):
        wilson(-1, 2)


def test_bootstrap_mean_interval() -> None:
    stats = pytest.importorskip("scipy.stats")
    values = [float(i % 7) for i in range(60)]  # mean 2.9, sd about 2
    ci = _bootstrap_mean(values, n_boot=20000)
    np = pytest.importorskip("numpy")
    ref = stats.bootstrap(
        [values], np.mean, method="percentile", n_resamples=20000, random_state=0
    ).confidence_interval
    assert ci == pytest.approx((ref.low, ref.high), abs=0.03)
    assert ci is not None and ci[0] < sum(values) / len(values) < ci[1] and ci[1] - ci[0] > 0.5
    assert _bootstrap_mean(values, seed=1) == _bootstrap_mean(values, seed=1)
    assert _bootstrap_mean(values, seed=1) != _bootstrap_mean(values, seed=2)
    assert _bootstrap_mean(values) == _bootstrap_mean(values, n_boot=1000, seed=0)
    assert _bootstrap_mean(values) != _bootstrap_mean(values, n_boot=1001)
    assert _bootstrap_mean([]) is None
    assert _bootstrap_mean([4.0]) is None  # one trace: no interval, not (4, 4)
    assert _bootstrap_mean([1.0, 3.0], n_boot=2000) == (1.0, 3.0)  # two traces: both ends reachable
    assert _bootstrap_mean([2.0, 2.0, 2.0]) == (2.0, 2.0)  # no variation: a true zero width


# --- by hand ---------------------------------------------------------------------------------


def test_modes_per_failed_trace_by_hand() -> None:
    data = [
        row(0, set(), False),  # none
        row(1, {"A"}, False),  # isolated (1)
        row(2, {"A", "B", "C"}, False),  # isolated (3 = ISOLATED_MAX)
        row(3, {"A", "B", "C", "D"}, False),  # cascading (4)
        row(4, {"A", "B", "C", "D", "E"}, True),  # successful: not counted
        Row(trace_id="t5", present={"A"}, judged={"A"}, success=None),  # outcome unknown: not counted
        row(6, {"B"}, False, bench="y"),
    ]
    (m,) = modes_per_failed_trace(data)
    assert m["failed_traces"] == 5 and m["mean_modes"] == pytest.approx(9 / 5)
    assert m["histogram"] == {0: 1, 1: 2, 3: 1, 4: 1}
    assert (m["none"], m["isolated"], m["cascading"]) == (1, 3, 1)
    assert m["ci"] == _bootstrap_mean([0.0, 1.0, 3.0, 4.0, 1.0])
    assert m["group"] == "all"
    data.append(Row("t7", {"A"}, {"A"}, success=False))  # no benchmark: group "unknown"
    by = {g["group"]: g for g in modes_per_failed_trace(data, by="benchmark")}
    assert by["unknown"]["failed_traces"] == 1
    assert by["x"]["failed_traces"] == 4 and by["y"]["failed_traces"] == 1 and by["y"]["ci"] is None


def test_failure_profile_excludes_unknown_and_groups() -> None:
    data = [
        Row("t0", {"A", "B"}, {"A", "B", "C"}, meta={"benchmark": "x"}),
        Row("t1", {"A"}, {"A", "C"}, meta={"benchmark": "x"}),  # B unknown
        Row("t2", set(), {"A", "B", "C"}, meta={"benchmark": "y"}),
        Row("t3", {"C"}, {"C"}),  # no benchmark -> group "unknown"
    ]
    prof = {r["code"]: r for r in failure_profile(data, CODES, categories={"A": "FC1"})}
    assert {r["group"] for r in prof.values()} == {"all"}
    # A: present 2 of 3 judged; B: 1 of 2 judged (t1 unknown); C: 1 of 4. Flags: 2 + 1 + 1 = 4.
    assert (prof["A"]["present"], prof["A"]["judged"], prof["A"]["prevalence"]) == (
        2,
        3,
        pytest.approx(2 / 3),
    )
    assert (prof["B"]["present"], prof["B"]["judged"], prof["B"]["prevalence"]) == (1, 2, 0.5)
    assert prof["B"]["ci"] == wilson(1, 2) and prof["C"]["ci"] == wilson(1, 4)
    assert (prof["A"]["share"], prof["B"]["share"], prof["C"]["share"]) == (0.5, 0.25, 0.25)
    assert prof["A"]["category"] == "FC1" and prof["B"]["category"] is None and prof["A"]["traces"] == 4
    grouped = {(r["group"], r["code"]): r for r in failure_profile(data, CODES, by="benchmark")}
    assert grouped[("x", "A")]["prevalence"] == 1.0 and grouped[("x", "B")]["judged"] == 1
    assert grouped[("y", "A")]["share"] is None  # no flag in the group
    assert grouped[("unknown", "C")]["present"] == 1 and grouped[("unknown", "C")]["traces"] == 1


def test_category_profile_by_hand() -> None:
    cats = {"A": "FC1", "B": "FC1", "C": "FC2"}
    data = [
        row(0, {"A", "B"}, False),
        row(1, {"C"}, False),
        row(2, set(), True),
        row(3, {"B", "C", "Z"}, True),
        row(4, {"A"}, True, bench="y"),
    ]
    prof = {r["category"]: r for r in category_profile(data, cats)}
    # FC1 in t0, t3, t4 (t0 counts once), FC2 in t1 and t3. Flags: FC1 4, FC2 2 (Z has no category).
    assert (prof["FC1"]["with_category"], prof["FC1"]["prevalence"], prof["FC1"]["share"]) == (3, 0.6, 4 / 6)
    assert (prof["FC2"]["with_category"], prof["FC2"]["share"]) == (2, 2 / 6)
    assert prof["FC1"]["ci"] == wilson(3, 5) and prof["FC1"]["traces"] == 5 and prof["FC1"]["group"] == "all"
    by = {(r["group"], r["category"]): r for r in category_profile(data, cats, by="benchmark")}
    assert by[("y", "FC1")]["with_category"] == 1 and by[("y", "FC2")]["share"] == 0.0
    assert by[("x", "FC2")]["prevalence"] == 0.5
    nothing = category_profile([row(0, set(), False)], cats)
    assert [(r["with_category"], r["share"]) for r in nothing] == [(0, None), (0, None)]
    no_meta = category_profile([Row("t", {"C"}, {"C"})], cats, by="benchmark")
    assert {r["group"] for r in no_meta} == {"unknown"}


def test_fatal_vs_benign_by_hand() -> None:
    data = [row(i, {"A"} if i < 3 else set(), False) for i in range(5)]  # A in 3 of 5 failures
    data += [row(10 + i, {"A", "B"} if i < 1 else {"B"}, True) for i in range(5)]  # A in 1 of 5 successes
    data.append(Row("u", {"A"}, set(), success=False))  # A not judged: excluded
    data.append(Row("v", {"A"}, {"A"}, success=None))  # outcome unknown: excluded
    table = {r["code"]: r for r in fatal_vs_benign(data, CODES)}
    a = table["A"]
    assert (a["failed_n"], a["failed_present"], a["success_n"], a["success_present"]) == (5, 3, 5, 1)
    # p_failed 3/5, p_success 1/5: lift (0.6 - 0.2) / 0.2 = 2, ratio 3; Fisher [[3, 2], [1, 4]] = 0.5238
    assert (a["p_failed"], a["p_success"]) == (0.6, 0.2)
    assert a["lift"] == pytest.approx(2.0) and a["ratio"] == pytest.approx(3.0)
    assert a["p_value"] == pytest.approx(0.52381, abs=1e-5) and a["verdict"] == "benign"
    assert a["ci_failed"] == wilson(3, 5) and a["ci_success"] == wilson(1, 5)
    assert {r["code"]: r for r in fatal_vs_benign(data, CODES, alpha=0.6)}["A"]["verdict"] == "fatal"
    at_p = {r["code"]: r for r in fatal_vs_benign(data, CODES, alpha=a["p_value"])}["A"]
    assert at_p["verdict"] == "benign"  # p = alpha is not significant
    b = table["B"]  # only in successes: significantly more frequent there -> neither fatal nor benign
    assert (b["p_failed"], b["p_success"], b["lift"], b["ratio"]) == (0.0, 1.0, -1.0, 0.0)
    assert b["p_value"] == pytest.approx(2 / 252) and b["verdict"] == "neutral"
    c = table["C"]  # never present: p = 1, p_success = 0 -> no lift, neutral
    assert (c["lift"], c["ratio"], c["p_value"], c["verdict"]) == (None, None, 1.0, "neutral")
    only_failed = fatal_vs_benign([row(0, {"A"}, False)], ["A"])[0]
    assert (only_failed["p_value"], only_failed["verdict"], only_failed["p_success"]) == (None, "n/a", None)
    assert (only_failed["p_failed"], only_failed["lift"], only_failed["ratio"]) == (1.0, None, None)
    only_ok = fatal_vs_benign([row(0, {"A"}, True), row(1, set(), True)], ["A"])[0]
    assert (only_ok["p_failed"], only_ok["p_success"], only_ok["p_value"], only_ok["verdict"]) == (
        None,
        0.5,
        None,
        "n/a",
    )
    assert (only_ok["ci_failed"], only_ok["lift"]) == (None, None)
    # Equal prevalence, nothing significant at alpha = 1 (p = 1 is not < 1): never fatal.
    same = fatal_vs_benign([row(0, {"A"}, False), row(1, {"A"}, True)], ["A"], alpha=1.0)[0]
    assert (same["p_value"], same["verdict"]) == (1.0, "benign")


def test_cooccurrence_by_hand() -> None:
    data = [
        row(0, {"A", "B"}, False),
        row(1, {"A"}, False),
        row(2, {"B", "C"}, False),
        row(3, {"A", "B", "C", "Z"}, True),
    ]
    co = cooccurrence(data, CODES)
    assert co["codes"] == CODES
    assert co["counts"]["A"] == {"A": 3, "B": 2, "C": 1}
    assert co["counts"]["B"] == {"A": 2, "B": 3, "C": 2}
    assert co["counts"]["C"] == {"A": 1, "B": 2, "C": 2}
    cond = co["conditional"]
    assert cond["A"]["C"] == pytest.approx(1 / 3) and cond["C"]["A"] == 0.5 and cond["C"]["C"] == 1.0
    assert cooccurrence([row(0, {"A"}, False)], CODES)["conditional"]["B"]["A"] is None


def test_first_modes_and_cascade_chains_by_hand() -> None:
    data = [
        row(0, {"A", "B", "C"}, False, first={"A": 2, "B": 5, "C": 2}),  # A and C tie at 2
        row(1, {"A", "B"}, False, first={"A": 1, "B": 4}),
        row(2, {"A", "B"}, False, first={"B": 1, "A": 3}),
        row(3, set(), False),
    ]
    # First: t0 A (tie broken by code), t1 A, t2 B.
    assert first_modes(data) == [
        {"code": "A", "first_in": 2, "share": pytest.approx(2 / 3)},
        {"code": "B", "first_in": 1, "share": pytest.approx(1 / 3)},
    ]
    chains = {(c["before"], c["after"]): c for c in cascade_chains(data)}
    # A->B in t0, t1; B->A in t2; C->B in t0; A and C tie in t0: no order either way.
    assert chains[("A", "B")] == {
        "before": "A",
        "after": "B",
        "traces": 2,
        "reverse": 1,
        "direction": pytest.approx(2 / 3),
    }
    assert chains[("B", "A")]["traces"] == 1 and chains[("C", "B")]["direction"] == 1.0
    assert ("A", "C") not in chains and ("C", "A") not in chains
    assert {(c["before"], c["after"]) for c in cascade_chains(data, min_count=2)} == {("A", "B")}
    three = cascade_chains([row(0, {"A", "B", "C"}, False, first={"C": 1, "A": 2, "B": 3})])
    assert {(c["before"], c["after"]) for c in three} == {("C", "A"), ("C", "B"), ("A", "B")}


def test_overlap_without_modes() -> None:
    data = [row(0, set(), False, "x"), row(1, set(), False, "y"), row(2, {"A"}, False, "z")]
    table = {(o["a"], o["b"]): o for o in overlap(data, by="benchmark")}
    assert table[("x", "y")]["jaccard"] is None and table[("x", "z")]["jaccard"] == 0.0
    assert len(table) == 3


def test_overlap_pools_the_rows_of_a_group() -> None:
    data = [row(0, {"A"}, False, "x"), row(1, {"B"}, False, "x"), row(2, {"B", "C"}, True, "y")]
    data.append(Row("t3", {"C"}, {"C"}))  # no benchmark: group "unknown"
    table = {(o["a"], o["b"]): o for o in overlap(data, by="benchmark")}
    # x saw {A, B}, y {B, C}, unknown {C}.
    assert table[("x", "y")]["jaccard"] == pytest.approx(1 / 3) and table[("x", "y")]["shared"] == ["B"]
    assert table[("unknown", "y")]["jaccard"] == 0.5 and table[("unknown", "x")]["jaccard"] == 0.0


def test_rows_from_annotations() -> None:
    cfg = AnnotatorConfig(kind="rules")

    def verdict(code: str, v: str, *seqs: int | None) -> ModeVerdict:
        return ModeVerdict.model_validate(
            {"code": code, "verdict": v, "evidence": [{"seq_start": s} for s in seqs]}
        )

    anns = [
        Annotation(
            trace_id="t1",
            config=cfg,
            config_hash=cfg.config_hash(),
            verdicts=[
                verdict("A", "present", 7, None, 3),  # first evidence at 3
                verdict("B", "present"),  # present without evidence: no position
                verdict("C", "absent", 1),  # absent: its evidence does not order anything
                verdict("D", "unknown"),
            ],
        ),
        Annotation(
            trace_id="t2", config=cfg, config_hash=cfg.config_hash(), verdicts=[verdict("A", "absent")]
        ),
    ]
    r1, r2 = rows(anns, {"t1": {"success": 0, "framework": "ag2"}})
    assert (r1.trace_id, r1.present, r1.judged) == ("t1", {"A", "B"}, {"A", "B", "C"})
    assert r1.first_seq == {"A": 3}
    assert r1.success is False and r1.meta == {"framework": "ag2"}
    assert (r2.present, r2.judged, r2.success, r2.meta, r2.first_seq) == (set(), {"A"}, None, {}, {})
    assert rows(anns)[0].success is None
    assert rows(anns, {"t2": {"success": 1}})[1].success is True
