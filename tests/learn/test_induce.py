"""Clustering notes into modes, the gates and the rounds."""

from __future__ import annotations

import pytest
from tests.learn._kit import notes

from mastkit.learn import LearnOptions, induce_taxonomy
from mastkit.learn.cluster import cluster_labels, embed, stability


def _ids(*groups: tuple[str, range]) -> list[str]:
    return [f"{k}{i}" for k, r in groups for i in r]


def test_two_kinds_of_failure_become_two_modes_with_evidence_and_gates() -> None:
    ns = notes("perm", range(6)) + notes("loop", range(4))
    r = induce_taxonomy(ns, _ids(("perm", range(6)), ("loop", range(4))))
    assert [m.extra["support_failed_traces"] for m in r.taxonomy.modes] == [6, 4]
    perm, loop = r.taxonomy.modes
    assert perm.code == "L-01" and perm.category == "E" and loop.category == "P"
    assert "permission" in perm.name and perm.definition.startswith("Tool call failed")
    assert perm.severity == "high" and perm.extra["share_of_failed"] == 0.6
    assert len(perm.examples) == 3 and perm.extra["evidence"][0]["trace_id"].startswith("perm")
    assert r.assignments["loop2"] == ["L-02"]
    gates = {g.name: g for g in r.gates}
    assert gates["coverage"].value == 1.0 and gates["coverage"].passed
    assert gates["distinctness"].passed and gates["distinctness"].value < 0.6
    assert gates["stability"].value == 1.0
    assert gates["annotator_agreement"].passed is None and r.passed
    assert r.taxonomy.extra["gates"][0]["name"] == "coverage"


def test_coverage_counts_failed_traces_without_a_mode() -> None:
    ns = notes("perm", range(3)) + notes("stop", range(1))  # one trace alone: below min_support
    failed = _ids(("perm", range(3)), ("stop", range(1)), ("none", range(4)))
    r = induce_taxonomy(ns, failed, LearnOptions(max_rounds=1))
    (g,) = [g for g in r.gates if g.name == "coverage"]
    assert g.value == 0.375 and g.passed is False and g.detail == "3/8 failed traces"
    assert [m.extra["support_failed_traces"] for m in r.taxonomy.modes] == [3]


def test_a_cluster_as_common_in_successes_is_no_failure_mode() -> None:
    ns = notes("perm", range(3)) + notes("loop", range(2)) + notes("loop", range(10, 14), failed=False)
    r = induce_taxonomy(ns, _ids(("perm", range(3)), ("loop", range(2))))
    assert [m.name for m in r.taxonomy.modes if "loop" in m.name] == []
    assert len(r.taxonomy.modes) == 1


def test_distinctness_fails_for_near_duplicate_modes_and_rounds_coarsen_the_cut() -> None:
    a = [
        n.model_copy(update={"text": "tool call failed: permission denied reading the config"})
        for n in notes("perm", range(3))
    ]
    b = [
        n.model_copy(update={"text": "tool call failed: permission denied writing the config"})
        for n in notes("loop", range(3))
    ]
    opts = LearnOptions(distance_threshold=0.05, merge_similarity=0.99, max_mode_similarity=0.5, max_rounds=1)
    r = induce_taxonomy(a + b, _ids(("perm", range(3)), ("loop", range(3))), opts)
    (g,) = [g for g in r.gates if g.name == "distinctness"]
    assert len(r.taxonomy.modes) == 2 and g.passed is False and g.value is not None and g.value > 0.5
    # more rounds: the cut coarsens until the two merge and every gate passes
    r2 = induce_taxonomy(
        a + b, _ids(("perm", range(3)), ("loop", range(3))), opts.model_copy(update={"max_rounds": 6})
    )
    assert len(r2.taxonomy.modes) == 1 and r2.passed and len(r2.rounds) > 1
    assert r2.rounds[1].distance_threshold == pytest.approx(0.15)


def test_near_duplicate_clusters_are_merged() -> None:
    a = [
        n.model_copy(update={"text": "tool call failed: permission denied reading the config"})
        for n in notes("perm", range(3))
    ]
    b = [
        n.model_copy(update={"text": "tool call failed: permission denied writing the config"})
        for n in notes("loop", range(3))
    ]
    opts = LearnOptions(distance_threshold=0.05, max_rounds=1)
    assert (
        len(induce_taxonomy(a + b, [], opts.model_copy(update={"merge_similarity": 0.5})).taxonomy.modes) == 1
    )
    assert (
        len(induce_taxonomy(a + b, [], opts.model_copy(update={"merge_similarity": 0.99})).taxonomy.modes)
        == 2
    )


def test_stability_is_low_for_an_arbitrary_cut() -> None:
    texts = [
        "alpha beta",
        "beta gamma",
        "gamma delta",
        "delta epsilon",
        "epsilon zeta",
        "zeta eta",
        "eta theta",
        "theta alpha",
    ]
    m = embed(texts * 2).matrix
    labels = cluster_labels(m, 0.5)
    assert stability(m, labels, 0.5) == 1.0  # identical copies: subsamples agree
    shuffled = [i % 3 for i in range(len(labels))]
    assert stability(m, shuffled, 0.5) < 0.5


def test_mast_mapping_marks_new_modes() -> None:
    ns = [
        n.model_copy(update={"text": "step repetition: the same step repeated without progress"})
        for n in notes("loop", range(3))
    ]
    ns += [n.model_copy(update={"text": "quux frobnicated zorblax"}) for n in notes("perm", range(3))]
    r = induce_taxonomy(ns, _ids(("perm", range(3)), ("loop", range(3))))
    by = {m.extra["support_failed_traces"]: m for m in r.taxonomy.modes}
    matches = {m.extra["mast_match"] for m in r.taxonomy.modes}
    assert matches == {"FM-1.3", "new"}
    assert all(isinstance(m.extra["mast_similarity"], float) for m in by.values())


def test_no_failure_notes_is_an_error() -> None:
    with pytest.raises(ValueError, match="no failure notes"):
        induce_taxonomy(notes("perm", range(3), failed=False), [])


def test_a_mode_made_of_detector_findings_maps_to_their_mast_mode() -> None:
    ns = [
        n.model_copy(update={"text": "<n> repeated step(s) without a change of state", "signal": "detector",
                             "mast_code": "FM-1.3"})
        for n in notes("loop", range(3))
    ]  # fmt: skip
    (m,) = induce_taxonomy(ns, _ids(("loop", range(3)))).taxonomy.modes
    assert (m.extra["mast_match"], m.extra["mast_similarity"]) == ("FM-1.3", 1.0)
    assert m.extra["detector_modes"] == {"FM-1.3": 3}
