from __future__ import annotations

import pytest

from mastkit.analyze.profile import (
    Row,
    cascade_chains,
    cooccurrence,
    failure_profile,
    fatal_vs_benign,
    first_modes,
    fisher_exact,
    modes_per_failed_trace,
    overlap,
    wilson,
)

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
