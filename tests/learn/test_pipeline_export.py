"""learn_taxonomy end to end offline: resume from the notes file, YAML and AdaMAST round trips,
--update keeping codes stable, and the CLI (learn, taxonomy compare, annotate with the result)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.learn._kit import tool_trace
from typer.testing import CliRunner

from mastkit.cli.main import app
from mastkit.learn.export import to_adamast, to_yaml
from mastkit.learn.notes import Note
from mastkit.learn.pipeline import learn_taxonomy
from mastkit.learn.update import update_taxonomy
from mastkit.taxonomy import load_taxonomy, overlap_matrix
from mastkit.traces.model import Trace


def _traces() -> list[Trace]:
    out = [tool_trace(f"p{i}", [f"PermissionError: denied on /srv/{i}/cfg"]) for i in range(5)]
    out += [
        tool_trace(f"t{i}", [f"TimeoutError: request timed out after {i + 3} seconds"], repeat=3)
        for i in range(4)
    ]
    return out


def test_notes_are_kept_and_a_rerun_makes_none(tmp_path: Path) -> None:
    path = tmp_path / "notes.jsonl"
    calls: list[list[str]] = []

    def maker(traces: list[Trace]) -> dict[str, list[Note]]:
        calls.append([t.trace_id for t in traces])
        return {t.trace_id: [Note(trace_id=t.trace_id, text="claimed success without checking", signal="llm")]
                for t in traces}  # fmt: skip

    traces = _traces()
    r1 = learn_taxonomy(traces[:6], notes_path=path, note_maker=maker, maker_version="m1")
    r2 = learn_taxonomy(traces, notes_path=path, note_maker=maker, maker_version="m1")
    assert calls == [[t.trace_id for t in traces[:6]], [t.trace_id for t in traces[6:]]]
    assert r1.notes == 6 and r2.notes == 9
    learn_taxonomy(traces, notes_path=path, note_maker=maker, maker_version="m2")  # another maker: all again
    assert len(calls[-1]) == 9
    # a line cut short by a killed run is done again, the others are not
    path.write_text(path.read_text().splitlines()[0] + "\n" + '{"hash": "x", "ma', encoding="utf-8")
    learn_taxonomy(traces[:2], notes_path=path, note_maker=maker, maker_version="m1")
    assert calls[-1] == ["p1"]


def test_yaml_and_adamast_round_trip(tmp_path: Path) -> None:
    tax = learn_taxonomy(_traces()).taxonomy
    y = tmp_path / "t.yaml"
    y.write_text(to_yaml(tax))
    assert load_taxonomy(y) == tax
    j = tmp_path / "t.json"
    j.write_text(json.dumps(to_adamast(tax)))
    back = load_taxonomy(j)
    assert back.source.startswith("AdaMAST taxonomy")
    for a, b in zip(tax.modes, back.modes, strict=True):
        assert (a.code, a.name, a.category, a.definition, a.when_to_use, a.when_not_to_use, a.cues, a.severity,
                a.examples) == (b.code, b.name, b.category, b.definition, b.when_to_use, b.when_not_to_use, b.cues,
                                b.severity, b.examples)  # fmt: skip
        assert b.extra["mast_match"] == a.extra["mast_match"]
    assert to_adamast(back)["codes"] == to_adamast(tax)["codes"]


def test_update_keeps_codes_adds_new_ones_and_aliases_merged() -> None:
    old = learn_taxonomy(_traces()).taxonomy
    assert old.codes == ["L-01", "L-02", "L-03", "L-04", "L-05"]
    more = _traces() + [tool_trace(f"n{i}", ["disk quota exceeded"]) for i in range(6)]
    new = learn_taxonomy(more).taxonomy
    assert new.modes[1].definition == "Tool call failed with error: disk quota exceeded."
    assert new.modes[1].code == "L-02"  # learned alone, the new mode would take an old mode's code
    up = update_taxonomy(old, new)
    by_name = {m.definition: m for m in up.modes}
    for m in old.modes:
        assert by_name[m.definition].code == m.code
    (fresh,) = [m for m in up.modes if m.extra["update"] == "new"]
    assert fresh.code == "L-06" and "quota" in fresh.definition
    assert up.version == "2"
    # two old modes matching one new mode: the best keeps its code, the other becomes an alias
    merged_old = old.model_copy(
        update={"modes": [old.modes[0], old.modes[0].model_copy(update={"code": "L-07"})]}
    )
    up2 = update_taxonomy(merged_old, new)
    (kept,) = [m for m in up2.modes if m.code in ("L-01", "L-07")]
    assert kept.aliases in (["L-07"], ["L-01"]) and load_taxonomy(up2).mode(kept.aliases[0]) == kept


def test_overlap_matrix_is_symmetric_and_one_on_the_diagonal() -> None:
    a = learn_taxonomy(_traces()).taxonomy
    mast = load_taxonomy("mast")
    m = overlap_matrix([mast, a])
    assert m[0][0] == m[1][1] == 1.0 and m[0][1] == m[1][0] and m[0][1] < 0.5


def test_cli_learn_compare_and_annotate(tmp_path: Path) -> None:
    src = tmp_path / "traces.jsonl"
    src.write_text("\n".join(t.model_dump_json() for t in _traces()) + "\n")
    out = tmp_path / "learned.yaml"
    runner = CliRunner()
    res = runner.invoke(
        app, ["learn", str(src), "-o", str(out), "--id", "ops", "--adamast", str(tmp_path / "a.json")]
    )
    assert res.exit_code == 0, res.output
    assert "gate coverage             PASS 1.000" in res.output and "OPS-01" in res.output
    assert (tmp_path / "learned.yaml.notes.jsonl").exists()
    tax = load_taxonomy(out)
    assert tax.id == "ops" and load_taxonomy(tmp_path / "a.json").codes == tax.codes
    res = runner.invoke(app, ["learn", str(src), "-o", str(out), "--min-support", "10"])
    assert res.exit_code == 3 and "minimum support" in res.output
    res = runner.invoke(app, ["learn", str(src), "-o", str(out), "--update", str(out), "--id", "ops"])
    assert res.exit_code == 0 and load_taxonomy(out).codes == tax.codes and load_taxonomy(out).version == "2"
    res = runner.invoke(app, ["taxonomy", "compare", "mast", str(out), "--json"])
    data = json.loads(res.output)
    assert data["taxonomies"] == ["mast", "ops"] and data["jaccard"][0][0] == 1.0
    res = runner.invoke(app, ["taxonomy", "show", str(out)])
    assert res.exit_code == 0 and "OPS-01" in res.output
    assert runner.invoke(app, ["taxonomy", "validate", str(tmp_path / "nope.yaml")]).exit_code == 2
    # a learned taxonomy drives annotate: the rule annotator has no detector for its modes
    db = tmp_path / "m.db"
    res = runner.invoke(app, ["annotate", str(src), "--taxonomy", str(out), "--db", str(db)])
    assert res.exit_code == 0, res.output
    from mastkit.store import Store

    with Store(db) as store:
        (a, *_rest) = list(store.annotations())
    assert {v.verdict for v in a.verdicts} == {"unknown"} and a.config.taxonomy_id == "ops"


@pytest.mark.parametrize("part", ["Hand-Crafted"])
def test_shared_who_and_when_magentic_one(part: str) -> None:
    from tests.conftest import shared_path

    from mastkit.traces.load import load_traces

    r = learn_taxonomy(load_traces(shared_path("who_and_when", part)))
    assert r.failed_traces == 58 and r.passed and len(r.taxonomy.modes) >= 3
