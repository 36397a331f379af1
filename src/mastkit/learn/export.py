"""Write a learned taxonomy: mastkit's YAML, and the AdaMAST JSON shape (``{"codes": [...]}``)
that :func:`mastkit.taxonomy.load_taxonomy` imports back."""

from __future__ import annotations

from typing import Any

import yaml

from mastkit.taxonomy import Taxonomy

__all__ = ["to_adamast", "to_yaml"]


def to_yaml(taxonomy: Taxonomy) -> str:
    """The taxonomy as YAML in mastkit's own schema."""
    return yaml.safe_dump(taxonomy.model_dump(mode="json"), sort_keys=False, allow_unicode=True, width=110)


def to_adamast(taxonomy: Taxonomy) -> dict[str, Any]:
    """The taxonomy in the AdaMAST taxonomy-file shape."""
    codes = []
    for m in taxonomy.modes:
        row: dict[str, Any] = {
            "id": m.code,
            "name": m.name,
            "category": m.category,
            "definition": m.definition,
            "when_to_use": m.when_to_use,
            "when_not_to_use": m.when_not_to_use,
            "detection_heuristics": list(m.cues),
            "severity": m.severity or "medium",
            "evidence": "observed" if m.examples else "theoretical",
            "examples": list(m.examples),
        }
        if m.aliases:
            row["aliases"] = list(m.aliases)
        if m.fix_hints:
            row["fix_hints"] = list(m.fix_hints)
        row.update({k: v for k, v in m.extra.items() if k not in row})
        codes.append(row)
    return {
        "taxonomy_id": taxonomy.id,
        "display_name": taxonomy.name,
        "schema_version": taxonomy.version,
        "summary": taxonomy.description,
        "codes": codes,
    }
