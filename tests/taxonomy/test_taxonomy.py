from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from mastkit._util import mast_legacy
from mastkit.errors import TaxonomyError
from mastkit.taxonomy import builtin_taxonomies, compare_taxonomies, load_taxonomy


def test_builtin_mast_has_the_papers_14_modes_in_3_categories() -> None:
    tax = load_taxonomy("mast")
    assert "mast" in builtin_taxonomies()
    assert [c.code for c in tax.categories] == ["FC1", "FC2", "FC3"]
    assert tax.codes == list(mast_legacy.MAST14_NAMES)
    for m in tax.modes:
        assert m.name == mast_legacy.MAST14_NAMES[m.code]
        assert m.definition and m.when_to_use and m.when_not_to_use and m.cues
    # Paper numbering, not the repository's swapped one.
    assert tax.mode("FM-3.2").name == "No or Incomplete Verification"
    assert tax.mode("FM-3.3").name == "Incorrect Verification"
    assert [m.code for m in tax.modes_in("FC3")] == ["FM-3.1", "FM-3.2", "FM-3.3"]
    assert "2503.13657" in tax.source


def test_legacy_maps_agree_with_the_label_remapper() -> None:
    tax = load_taxonomy("mast")
    assert tax.legacy_codes["round1"] == mast_legacy.ROUND1_CODES
    assert tax.legacy_codes["round2_3"] == mast_legacy.ROUND23_CODES
    assert tax.map_legacy("2.2", "round1") == "FM-1.3"
    assert tax.map_legacy("1.5", "round2_3") == "FM-1.3"
    assert tax.map_legacy("1.4", "round2_3") is None
    with pytest.raises(KeyError):
        tax.map_legacy("9.9", "round1")
    with pytest.raises(KeyError):
        tax.map_legacy("1.1", "round7")


def test_mode_lookup_by_alias() -> None:
    tax = load_taxonomy("mast")
    assert tax.mode("2.6").code == "FM-2.6"
    assert tax.mode("Action-Reasoning Mismatch").code == "FM-2.6"
    with pytest.raises(KeyError):
        tax.mode("FM-9.9")


def _custom(tmp_path: Path, doc: object, name: str = "tax.yaml") -> Path:
    p = tmp_path / name
    p.write_text(yaml.safe_dump(doc) if name.endswith(".yaml") else json.dumps(doc))
    return p


GOOD = {
    "id": "sre",
    "name": "SRE agent failures",
    "version": "0.1",
    "categories": [{"code": "D", "name": "Diagnosis"}, {"code": "R", "name": "Remediation"}],
    "modes": [
        {
            "code": "D1",
            "name": "Wrong root cause",
            "category": "D",
            "definition": "Blames the wrong component.",
        },
        {
            "code": "R1",
            "name": "Unsafe action",
            "category": "R",
            "definition": "Acts destructively.",
            "cues": ["rm -rf"],
        },
    ],
}


def test_custom_yaml_and_json_load(tmp_path: Path) -> None:
    for name in ("tax.yaml", "tax.json"):
        tax = load_taxonomy(_custom(tmp_path, GOOD, name))
        assert tax.id == "sre" and tax.codes == ["D1", "R1"]
        assert tax.category_of("R1") == "R"


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d["modes"].append(dict(d["modes"][0])), "duplicate mode codes: D1"),
        (lambda d: d["modes"][0].update(category="X"), "unknown category 'X'"),
        (lambda d: d["categories"].append({"code": "D", "name": "again"}), "duplicate category codes: D"),
        (lambda d: d["modes"][0].update(definition="  "), "empty definition"),
        (lambda d: d["modes"][0].pop("name"), "modes.0.name: Field required"),
        (lambda d: d["modes"][0].update(colour="red"), "modes.0.colour: Extra inputs are not permitted"),
        (lambda d: d.update(modes=[]), "no failure modes"),
    ],
)
def test_invalid_taxonomies_give_clear_errors(tmp_path: Path, mutate: object, message: str) -> None:
    doc = json.loads(json.dumps(GOOD))
    mutate(doc)  # type: ignore[operator]
    path = _custom(tmp_path, doc)
    with pytest.raises(TaxonomyError) as err:
        load_taxonomy(path)
    assert message in str(err.value)
    assert str(path) in str(err.value)


def test_unreadable_inputs(tmp_path: Path) -> None:
    with pytest.raises(TaxonomyError, match="not a built-in taxonomy"):
        load_taxonomy("nope")
    bad = tmp_path / "bad.yaml"
    bad.write_text("modes: [unclosed")
    with pytest.raises(TaxonomyError, match="not valid YAML"):
        load_taxonomy(bad)
    lst = tmp_path / "list.json"
    lst.write_text("[1, 2]")
    with pytest.raises(TaxonomyError, match="mapping at the top level"):
        load_taxonomy(lst)
    other = tmp_path / "other.json"
    other.write_text('{"hello": 1}')
    with pytest.raises(TaxonomyError, match="not a taxonomy"):
        load_taxonomy(other)
    with pytest.raises(TaxonomyError, match="is a folder"):
        load_taxonomy(tmp_path)


def test_adamast_taxonomy_json_imports(tmp_path: Path) -> None:
    doc = {
        "schema_version": 1,
        "status": "accepted",
        "display_name": "Data pipeline agents",
        "domain": "ETL",
        "codes": [
            {"id": "A.1", "name": "Schema_Drift_Ignored", "description": "Loads rows despite a schema change.",
             "category": "A", "when_to_use": "a column changed type", "detection_heuristics": ["cast error"],
             "severity": "major"},
            {"id": "C.1", "name": "Timezone conflation", "description": "Mixes UTC and local timestamps.",
             "examples": ["joins 09:00 UTC with 09:00 CET"], "recovery_hint": "normalise to UTC"},
        ],
    }  # fmt: skip
    tax = load_taxonomy(_custom(tmp_path, doc, "ada.json"))
    assert tax.codes == ["A.1", "C.1"]
    assert [c.name for c in tax.categories] == ["System-level", "Domain-specific"]
    a1 = tax.mode("A.1")
    assert a1.name == "Schema Drift Ignored" and a1.cues == ["cast error"] and a1.severity == "major"
    assert tax.mode("C.1").fix_hints == ["normalise to UTC"]
    assert tax.extra["status"] == "accepted"


def test_atlas_layered_taxonomy_imports(tmp_path: Path) -> None:
    doc = {
        "full_layer": {
            "category_a": {"A.1": {"name": "Looping", "definition": "Repeats the same call."}},
            "category_b": [
                {"code": "B.1", "name": "Checker rubber-stamps", "definition": "Approves unchecked work."}
            ],
        }
    }
    tax = load_taxonomy(_custom(tmp_path, doc, "atlas.json"))
    assert tax.codes == ["A.1", "B.1"]
    assert tax.category_of("B.1") == "B"
    dup = {
        "category_a": {"A.1": {"name": "x", "definition": "y"}},
        "category_c": [{"code": "A.1", "definition": "z"}],
    }
    with pytest.raises(TaxonomyError, match=r"duplicate mode codes: A\.1"):
        load_taxonomy(_custom(tmp_path, dup, "dup.json"))


def test_compare_taxonomies_lines_up_codes_and_reports_gaps(tmp_path: Path) -> None:
    mast = load_taxonomy("mast")
    same = compare_taxonomies(mast, mast)
    assert same.coverage == 1.0 and not same.only_in_a and not same.only_in_b
    custom = load_taxonomy(_custom(tmp_path, GOOD))
    cmp = compare_taxonomies(custom, mast)
    assert cmp.a == "sre" and cmp.b == "mast"
    assert len(cmp.matches) == 2
    assert set(cmp.only_in_b) <= set(mast.codes)
