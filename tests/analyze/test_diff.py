from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from mastkit.analyze.diff import diff_annotations, diff_runs, mcnemar_exact
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
