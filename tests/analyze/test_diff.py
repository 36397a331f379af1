from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mastkit.analyze.diff import diff_annotations, diff_runs, mcnemar_exact, newcombe
from mastkit.annotate.model import Annotation, AnnotatorConfig, ModeVerdict
from mastkit.cli.main import app
from mastkit.store import Store


def _ann(
    tid: str, config: AnnotatorConfig, present: set[str], unknown: frozenset[str] = frozenset()
) -> Annotation:
    verdicts = [
        ModeVerdict(code=c, verdict="unknown" if c in unknown else ("present" if c in present else "absent"))
        for c in ("FM-1.3", "FM-3.2")
    ]
    return Annotation(trace_id=tid, config=config, config_hash=config.config_hash(), verdicts=verdicts)


A = AnnotatorConfig(kind="rules", taxonomy_version="a")
B = AnnotatorConfig(kind="rules", taxonomy_version="b")


def test_mcnemar_exact_by_hand() -> None:
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(0, 6) == pytest.approx(2 / 64)
    assert mcnemar_exact(5, 0) == pytest.approx(2 / 32)
    assert mcnemar_exact(1, 0) == 1.0
    assert mcnemar_exact(2, 8) == pytest.approx(2 * (1 + 10 + 45) / 1024)


def test_paired_runs_use_mcnemar() -> None:
    ids = [f"t{i}" for i in range(10)]
    a = [
        _ann(t, A, ({"FM-1.3"} if i < 7 else set()) | ({"FM-3.2"} if i == 0 else set()))
        for i, t in enumerate(ids)
    ]
    b = [
        _ann(t, B, ({"FM-1.3"} if i == 0 else set()) | ({"FM-3.2"} if i < 2 else set()))
        for i, t in enumerate(ids)
    ]
    d = diff_annotations(a, b)
    assert d.paired_traces == 10 and not d.only_in_a
    m13, m32 = d.modes
    assert (m13.code, m13.test, m13.lost, m13.gained) == ("FM-1.3", "mcnemar", 6, 0)
    assert m13.p_value == pytest.approx(2 / 64) and m13.direction == "fell"
    assert m13.p_a == 0.7 and m13.p_b == 0.1 and m13.delta == pytest.approx(-0.6)
    assert (m32.gained, m32.p_value, m32.direction) == (1, 1.0, "unchanged")
    changed = {c.trace_id: (c.gained, c.lost) for c in d.changes}
    assert changed["t1"] == (["FM-3.2"], ["FM-1.3"])
    assert "t9" not in changed


def test_unpaired_runs_use_fisher_and_unknowns_are_excluded() -> None:
    a = [_ann(f"a{i}", A, {"FM-1.3"} if i < 8 else set()) for i in range(10)]
    b = [_ann(f"b{i}", B, {"FM-1.3"} if i < 1 else set()) for i in range(10)]
    b.append(_ann("b10", B, set(), unknown=frozenset({"FM-1.3"})))
    d = diff_annotations(a, b)
    m13 = d.modes[0]
    assert d.paired_traces == 0 and m13.test == "fisher"
    assert (m13.b_judged, m13.b_unknown) == (10, 1)
    # [[8, 2], [1, 9]]: (495 + 11 + 495 + 11) / C(20, 10)
    assert m13.p_value == pytest.approx(1012 / 184756)
    assert m13.direction == "fell"


def test_diff_runs_from_the_store_and_cli(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    with Store(db) as store:
        for cfg, present in ((A, {"FM-1.3"}), (B, set())):
            store.register_run(cfg)
            for i in range(8):
                store.put_annotation(_ann(f"t{i}", cfg, present), f"h{i}")
        d = diff_runs(store, A.config_hash()[:12], B.config_hash()[:12])
    assert d.modes[0].lost == 8 and d.modes[0].direction == "fell"
    res = CliRunner().invoke(app, ["diff", A.config_hash()[:12], B.config_hash()[:12], "--db", str(db)])
    assert res.exit_code == 0, res.output
    assert "FM-1.3" in res.stdout and "fell" in res.stdout
    md = CliRunner().invoke(
        app, ["diff", A.config_hash()[:12], B.config_hash()[:12], "--db", str(db), "-f", "md"]
    )
    assert "| FM-1.3 | 100.0% (8/8) | 0.0% (0/8) |" in md.stdout
    assert "| FC1 Specification Issues | 100.0% (8/8) | 0.0% (0/8) | 8 | 0 |" in md.stdout
    assert "categories" in res.stdout and "FC3" in res.stdout
    js = CliRunner().invoke(
        app, ["diff", A.config_hash()[:12], B.config_hash()[:12], "--db", str(db), "-f", "json"]
    )
    assert json.loads(js.stdout)["categories"][0]["lost"] == 8


def _vec(tid: str, config: AnnotatorConfig, verdicts: dict[str, str]) -> Annotation:
    codes = ("FM-1.1", "FM-1.3", "FM-3.2")
    return Annotation(
        trace_id=tid,
        config=config,
        config_hash=config.config_hash(),
        verdicts=[
            ModeVerdict.model_validate({"code": c, "verdict": verdicts.get(c, "absent")}) for c in codes
        ],
    )


def test_category_totals_paired_by_hand() -> None:
    p, u = "present", "unknown"
    a_rows = {
        "t0": {"FM-1.1": p, "FM-1.3": p},
        "t1": {"FM-1.1": p},
        "t2": {"FM-1.3": p},
        "t3": {"FM-1.3": p},
        "t7": {"FM-3.2": p},
        "t9": {"FM-1.1": u, "FM-1.3": p},
    }
    b_rows = {
        "t3": {"FM-1.3": p},
        "t6": {"FM-1.1": p},
        "t7": {"FM-3.2": p},
        "t8": {"FM-1.1": u, "FM-1.3": u},
        "t9": {"FM-1.3": u},
    }
    ids = [f"t{i}" for i in range(10)]
    d = diff_annotations(
        [_vec(t, A, a_rows.get(t, {})) for t in ids], [_vec(t, B, b_rows.get(t, {})) for t in ids]
    )
    cats = {c.category: c for c in d.categories}
    assert set(cats) == {"FC1", "FC3"}  # categories come from the built-in MAST taxonomy
    fc1 = cats["FC1"]
    assert fc1.name == "Specification Issues" and fc1.codes == ["FM-1.1", "FM-1.3"]
    # A: t0-t3 and t9 have an FC1 mode; B: t3 and t6. t8 is all-unknown in B (not judged);
    # t9 in B has FM-1.1 absent and FM-1.3 unknown, so it counts as judged without FC1.
    assert (fc1.a_present, fc1.a_judged, fc1.a_flags) == (5, 10, 6)
    assert (fc1.b_present, fc1.b_judged, fc1.b_flags) == (2, 9, 2)
    assert fc1.p_a == 0.5 and fc1.p_b == pytest.approx(2 / 9)
    # Discordant pairs (t8 excluded): lost t0, t1, t2, t9; gained t6 -> 2 * (1 + 5) / 2**5
    assert (fc1.test, fc1.lost, fc1.gained) == ("mcnemar", 4, 1)
    assert fc1.p_value == pytest.approx(12 / 32) and fc1.direction == "unchanged"
    fc3 = cats["FC3"]
    assert (fc3.a_present, fc3.b_present, fc3.p_value, fc3.direction) == (1, 1, 1.0, "unchanged")
    m13 = next(m for m in d.modes if m.code == "FM-1.3")
    # FM-1.3 judged in both runs on 8 traces (t8, t9 unknown in B): lost t0, t2 -> 2 * 1/4
    assert (m13.b_unknown, m13.lost, m13.gained, m13.p_value) == (2, 2, 0, 0.5)


def test_category_totals_unpaired_fisher_and_custom_categories() -> None:
    a = [_vec(f"a{i}", A, {"FM-1.1": "present"} if i < 6 else {}) for i in range(7)]
    b = [_vec(f"b{i}", B, {"FM-1.3": "present"} if i < 1 else {}) for i in range(7)]
    d = diff_annotations(a, b, categories={"FM-1.1": "X", "FM-1.3": "X"})
    (x,) = d.categories
    assert (x.category, x.name, x.a_present, x.b_present, x.test) == ("X", None, 6, 1, "fisher")
    # [[6, 1], [1, 6]]: tables as or more extreme: x = 6, 7, 1, 0 -> (49 + 1 + 49 + 1) / C(14, 7)
    assert x.p_value == pytest.approx(100 / 3432)
    assert x.direction == "fell"


def test_newcombe_interval_of_the_difference() -> None:
    # 56/70 vs 48/80. Wilson: 0.8 in (0.6918, 0.8770), 0.6 in (0.4905, 0.7004); by hand:
    # 0.2 - sqrt(0.1082² + 0.1004²) = 0.0524, 0.2 + sqrt(0.0770² + 0.1095²) = 0.3339.
    ci = newcombe(48, 80, 56, 70)
    assert ci is not None and ci == pytest.approx((0.0524, 0.3339), abs=1e-4)
    assert newcombe(0, 0, 1, 2) is None
    d = diff_annotations([_vec("t0", A, {})], [_vec("t0", B, {"FM-1.1": "present"})])
    assert d.modes[0].delta_ci == newcombe(0, 1, 1, 1)


def test_diff_runs_keeps_traces_that_share_an_id_apart(tmp_path: Path) -> None:
    from mastkit.traces import Event, Trace

    def trace(text: str, path: str) -> Trace:
        events = [Event(seq=0, kind="message", actor="a", content=text)]
        return Trace(trace_id="run-1", source_format="test", source_paths=[path], events=events)

    with Store(tmp_path / "m.db") as store:
        for cfg, present in ((A, {"FM-1.3"}), (B, set())):
            store.register_run(cfg)
            for text, path in (("one", "/runs/a.json"), ("two", "/runs/b.json")):
                store.put_annotation(_ann("run-1", cfg, present), store.upsert_trace(trace(text, path)))
        d = diff_runs(store, A.config_hash()[:12], B.config_hash()[:12])
    assert (d.a_traces, d.b_traces, d.paired_traces) == (2, 2, 2)
    assert d.modes[0].lost == 2
    assert sorted(c.trace_id for c in d.changes) == ["run-1 (/runs/a.json)", "run-1 (/runs/b.json)"]


def _only(tid: str, config: AnnotatorConfig, verdicts: dict[str, str]) -> Annotation:
    """An annotation with exactly these verdicts (modes not listed are left out, i.e. unknown)."""
    return Annotation(
        trace_id=tid,
        config=config,
        config_hash=config.config_hash(),
        verdicts=[ModeVerdict.model_validate({"code": c, "verdict": v}) for c, v in verdicts.items()],
    )


def test_mcnemar_and_newcombe_stay_in_range() -> None:
    assert mcnemar_exact(1, 1) == 1.0 and mcnemar_exact(3, 3) == 1.0  # 2 * tail > 1 is capped
    # 5/5 -> 0/5: d = -1; Wilson(0, 5) reaches z²/(5 + z²) = 0.43448 -> the other end is
    # -1 + sqrt(2 * 0.43448²) = -0.38555, and the lower end (-1.61) is capped at -1.
    assert newcombe(5, 5, 0, 5) == (-1.0, pytest.approx(-0.38555, abs=1e-4))
    assert newcombe(0, 5, 5, 5) == (pytest.approx(0.38555, abs=1e-4), 1.0)


def test_a_mode_left_out_of_one_run_is_unknown_not_absent() -> None:
    ids = [f"t{i}" for i in range(4)]
    a = [_only(t, A, {"FM-1.3": "absent"}) for t in ids]  # FM-3.2 never judged in A
    b = [_only(t, B, {"FM-1.3": "absent", "FM-3.2": "present"}) for t in ids]
    d = diff_annotations(a, b)
    m32 = next(m for m in d.modes if m.code == "FM-3.2")
    assert (m32.a_judged, m32.a_unknown, m32.b_judged, m32.b_unknown) == (0, 4, 4, 0)
    assert (m32.p_a, m32.p_b, m32.delta, m32.delta_ci) == (None, 1.0, None, None)
    assert (m32.test, m32.p_value, m32.direction, m32.gained, m32.lost) == ("none", None, "n/a", 0, 0)
    assert d.changes == []  # unknown -> present is not a gain
    (_, reverse) = diff_annotations(b, a).modes  # left out of the second run instead
    assert (reverse.b_unknown, reverse.test, reverse.p_value, reverse.direction) == (4, "none", None, "n/a")
    unpaired = diff_annotations(a, [_only(f"b{i}", B, {"FM-3.2": "present"}) for i in range(4)])
    m = next(m for m in unpaired.modes if m.code == "FM-3.2")
    assert (m.test, m.p_value, m.direction) == ("none", None, "n/a")
    assert next(m for m in unpaired.modes if m.code == "FM-1.3").test == "none"  # B never judged it


def test_unpaired_runs_count_no_gains_or_losses() -> None:
    a = [_only(f"a{i}", A, {"FM-1.3": "present"}) for i in range(6)]
    b = [_only(f"b{i}", B, {"FM-1.3": "absent"}) for i in range(6)]
    (m,) = diff_annotations(a, b).modes
    assert (m.test, m.gained, m.lost, m.direction, m.a_unknown) == ("fisher", 0, 0, "fell", 0)
    assert m.p_value == pytest.approx(2 / 924)  # [[6, 0], [0, 6]]: 2 / C(12, 6)
    (up,) = diff_annotations(b, a).modes
    assert up.direction == "rose" and up.delta == 1.0


def test_direction_at_alpha_and_rising_paired_runs() -> None:
    ids = [f"t{i}" for i in range(10)]
    a = [_only(t, A, {"FM-1.3": "absent"}) for t in ids]
    b = [_only(t, B, {"FM-1.3": "present" if i < 6 else "absent"}) for i, t in enumerate(ids)]
    (m,) = diff_annotations(a, b).modes
    assert (m.gained, m.lost, m.p_value, m.direction) == (6, 0, pytest.approx(2 / 64), "rose")
    (at,) = diff_annotations(a, b, alpha=2 / 64).modes
    assert at.direction == "unchanged"  # p = alpha is not significant
    assert diff_annotations(a, b, alpha=2 / 64 + 1e-9).modes[0].direction == "rose"


def test_paired_direction_follows_the_paired_changes() -> None:
    # 10 traces in both runs: FM-1.3 present in A on t0-t5, nowhere in B (6 lost, p = 2/64).
    # 10 more traces only in A (absent) and 10 only in B (7 present): prevalence 6/20 in A, 7/20 in B.
    # The paired evidence says the mode fell, though B's prevalence is higher.
    shared = [f"t{i}" for i in range(10)]
    a = [_only(t, A, {"FM-1.3": "present" if i < 6 else "absent"}) for i, t in enumerate(shared)]
    a += [_only(f"a{i}", A, {"FM-1.3": "absent"}) for i in range(10)]
    b = [_only(t, B, {"FM-1.3": "absent"}) for t in shared]
    b += [_only(f"b{i}", B, {"FM-1.3": "present" if i < 7 else "absent"}) for i in range(10)]
    d = diff_annotations(a, b)
    (m,) = d.modes
    assert d.paired_traces == 10 and (m.p_a, m.p_b) == (0.3, 0.35)
    assert (m.test, m.lost, m.p_value, m.direction) == ("mcnemar", 6, pytest.approx(2 / 64), "fell")


def test_pairing_needs_half_of_the_larger_run() -> None:
    a = [_only(f"t{i}", A, {"FM-1.3": "present"}) for i in range(4)]
    half = [_only(f"t{i}", B, {"FM-1.3": "absent"}) for i in range(2)] + [
        _only(f"u{i}", B, {"FM-1.3": "absent"}) for i in range(2)
    ]
    d = diff_annotations(a, half)
    assert (d.paired_traces, d.modes[0].test, d.modes[0].lost) == (2, "mcnemar", 2)
    less = [_only("t0", B, {"FM-1.3": "absent"})] + [
        _only(f"u{i}", B, {"FM-1.3": "absent"}) for i in range(3)
    ]
    d = diff_annotations(a, less)
    assert (d.paired_traces, d.modes[0].test, d.modes[0].lost) == (0, "fisher", 0)
    assert (d.only_in_a, d.only_in_b) == (["t1", "t2", "t3"], ["u0", "u1", "u2"])
    assert diff_annotations(a, less, min_paired_share=0.25).paired_traces == 1


def test_changes_list_traces_that_only_gained_and_default_names() -> None:
    a = [_only("t0", A, {"FM-1.3": "absent"}), _only("t1", A, {"FM-1.3": "present"})]
    b = [_only("t0", B, {"FM-1.3": "present"}), _only("t1", B, {"FM-1.3": "present"})]
    d = diff_annotations(a, b)
    assert [(c.trace_id, c.gained, c.lost) for c in d.changes] == [("t0", ["FM-1.3"], [])]
    assert (d.run_a, d.run_b, d.alpha) == ("A", "B", 0.05)


def test_category_unknowns_are_counted() -> None:
    a = [_only("t0", A, {"FM-1.1": "unknown", "FM-1.3": "unknown"}), _only("t1", A, {"FM-1.1": "present"})]
    b = [_only("t0", B, {"FM-1.1": "absent"}), _only("t1", B, {"FM-1.3": "unknown"})]
    (fc1,) = diff_annotations(a, b).categories
    assert (fc1.a_unknown, fc1.a_judged, fc1.b_unknown, fc1.b_judged) == (1, 1, 1, 1)


def test_diff_runs_resolves_each_run_and_passes_alpha(tmp_path: Path) -> None:
    with Store(tmp_path / "m.db") as store:
        for cfg, present in ((A, {"FM-1.3"}), (B, set())):
            store.register_run(cfg)
            for i in range(2):
                store.put_annotation(_ann(f"t{i}", cfg, present), f"h{i}")
        # B is the latest run; ask for B against A so that a run resolved as "latest" would show.
        d = diff_runs(store, B.config_hash()[:12], A.config_hash()[:12])
        assert (d.run_a, d.run_b) == (B.config_hash(), A.config_hash())
        m = d.modes[0]
        assert (m.gained, m.lost, m.p_value, m.direction) == (2, 0, 0.5, "unchanged")
        assert (
            diff_runs(store, B.config_hash()[:12], A.config_hash()[:12], alpha=0.6).modes[0].direction
            == "rose"
        )
