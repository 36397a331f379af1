"""Load taxonomies: the built-in ones by name, custom ones from YAML/JSON, AdaMAST/ATLAS JSON.

``load_taxonomy("mast")`` returns the built-in MAST. A path loads a file in mastkit's own
schema (the fields of :class:`~mastkit.taxonomy.model.Taxonomy`, YAML or JSON) or, when the
document looks like one, an AdaMAST taxonomy (``{"codes": [{"id", "name", "description",
"category", ...}]}``) or a layered ATLAS taxonomy (``category_a`` / ``category_b`` /
``category_c``, possibly under ``full_layer``). Every problem is a
:class:`~mastkit.errors.TaxonomyError` naming the file and what is wrong.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from mastkit.errors import TaxonomyError
from mastkit.taxonomy.model import Category, FailureMode, Taxonomy

_ATLAS_LAYERS = {"category_a": "A", "category_b": "B", "category_c": "C"}
_ATLAS_NAMES = {"A": "System-level", "B": "Role-specific", "C": "Domain-specific"}


def builtin_taxonomies() -> list[str]:
    """Names accepted by :func:`load_taxonomy` without a path."""
    data = resources.files("mastkit.taxonomy") / "data"
    return sorted(p.name.rsplit(".", 1)[0] for p in data.iterdir() if p.name.endswith((".yaml", ".yml")))


@cache
def _builtin(name: str) -> Taxonomy:
    res = resources.files("mastkit.taxonomy") / "data" / f"{name}.yaml"
    return taxonomy_from_document(yaml.safe_load(res.read_text(encoding="utf-8")), origin=f"built-in {name}")


def load_taxonomy(ref: str | Path | Taxonomy = "mast") -> Taxonomy:
    """A taxonomy by built-in name (``mast``), or from a YAML/JSON file."""
    if isinstance(ref, Taxonomy):
        return ref
    if isinstance(ref, str) and ref in builtin_taxonomies():
        return _builtin(ref)
    path = Path(ref)
    if not path.exists():
        known = ", ".join(builtin_taxonomies())
        raise TaxonomyError(f"{ref}: no such file, and not a built-in taxonomy (built-in: {known})")
    if path.is_dir():
        raise TaxonomyError(f"{path}: is a folder, expected a taxonomy YAML or JSON file")
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise TaxonomyError(f"{path}: cannot read: {exc}") from exc
    try:
        if path.suffix.lower() == ".json":
            doc = json.loads(text)
        else:
            doc = yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise TaxonomyError(
            f"{path}: not valid {'JSON' if path.suffix.lower() == '.json' else 'YAML'}: {exc}"
        ) from exc
    return taxonomy_from_document(doc, origin=str(path), default_id=path.stem)


def taxonomy_from_document(doc: Any, *, origin: str = "<document>", default_id: str = "custom") -> Taxonomy:
    """Build a taxonomy from a parsed document in any supported shape."""
    if not isinstance(doc, dict):
        raise TaxonomyError(
            f"{origin}: a taxonomy must be a mapping at the top level, got {type(doc).__name__}"
        )
    try:
        if "modes" in doc:
            return Taxonomy.model_validate(doc)
        if isinstance(doc.get("codes"), list):
            return _from_adamast(doc, default_id)
        layer = _atlas_layer(doc)
        if layer is not None:
            return _from_atlas(doc, layer, default_id)
    except TaxonomyError as exc:
        raise TaxonomyError(f"{origin}: {exc}") from None
    except ValidationError as exc:
        raise TaxonomyError(f"{origin}: {_explain(exc)}") from None
    raise TaxonomyError(
        f"{origin}: not a taxonomy: expected 'modes' (mastkit), 'codes' (AdaMAST) or "
        "'category_a/b/c' (ATLAS) at the top level"
    )


def _explain(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:8]:
        loc = ".".join(str(x) for x in err["loc"]) or "(top level)"
        parts.append(f"{loc}: {err['msg']}")
    more = len(exc.errors()) - 8
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


def _text(raw: dict[str, Any], *keys: str) -> str:
    for k in keys:
        v = raw.get(k)
        if isinstance(v, str) and v.strip():
            return v.strip()
    return ""


def _strings(v: Any) -> list[str]:
    if isinstance(v, str):
        return [v]
    if isinstance(v, list):
        return [str(x) for x in v if isinstance(x, (str, int, float))]
    return []


def _mode(raw: dict[str, Any], *, code: str, category: str) -> FailureMode:
    known = {
        "id", "code", "name", "label", "description", "definition", "category", "when_to_use",
        "when_not_to_use", "detection_heuristics", "cues", "examples", "severity", "fix_hints",
        "recovery_hint", "aliases",
    }  # fmt: skip
    name = _text(raw, "name", "label") or code
    return FailureMode(
        code=code,
        name=name.replace("_", " ") if " " not in name else name,
        category=category,
        definition=_text(raw, "definition", "description") or name,
        when_to_use=_text(raw, "when_to_use"),
        when_not_to_use=_text(raw, "when_not_to_use"),
        cues=_strings(raw.get("detection_heuristics")) + _strings(raw.get("cues")),
        examples=_strings(raw.get("examples")),
        fix_hints=_strings(raw.get("fix_hints")) + _strings(raw.get("recovery_hint")),
        aliases=_strings(raw.get("aliases")),
        severity=_text(raw, "severity") or None,
        extra={k: v for k, v in raw.items() if k not in known},
    )


def _categories(codes: list[FailureMode], names: dict[str, str] | None = None) -> list[Category]:
    seen: list[str] = []
    for m in codes:
        if m.category not in seen:
            seen.append(m.category)
    names = names or {}
    return [Category(code=c, name=names.get(c, c)) for c in seen]


def _from_adamast(doc: dict[str, Any], default_id: str) -> Taxonomy:
    modes: list[FailureMode] = []
    for i, raw in enumerate(doc["codes"]):
        if not isinstance(raw, dict):
            raise TaxonomyError(f"codes[{i}] is not an object")
        code = str(raw.get("id") or raw.get("code") or "").strip()
        if not code:
            raise TaxonomyError(f"codes[{i}] has no 'id' or 'code'")
        category = str(raw.get("category") or "").strip() or (
            code.split(".", 1)[0] if "." in code else "uncategorised"
        )
        modes.append(_mode(raw, code=code, category=category))
    names = _ATLAS_NAMES if {m.category for m in modes} <= set(_ATLAS_NAMES) else None
    return Taxonomy(
        id=str(doc.get("taxonomy_id") or doc.get("id") or default_id),
        name=str(doc.get("display_name") or doc.get("name") or doc.get("taxonomy_id") or default_id),
        version=str(doc.get("schema_version") or doc.get("version") or "1"),
        source=f"AdaMAST taxonomy ({doc.get('domain') or 'unspecified domain'})",
        description=str(doc.get("summary") or ""),
        categories=_categories(modes, names),
        modes=modes,
        extra={k: v for k, v in doc.items() if k != "codes"},
    )


def _atlas_layer(doc: dict[str, Any]) -> dict[str, Any] | None:
    for layer in (doc.get("full_layer"), doc.get("annotation_layer"), doc):
        if isinstance(layer, dict) and any(k in layer for k in _ATLAS_LAYERS):
            return layer
    return None


def _from_atlas(doc: dict[str, Any], layer: dict[str, Any], default_id: str) -> Taxonomy:
    modes: list[FailureMode] = []
    for key, cat in _ATLAS_LAYERS.items():
        values = layer.get(key)
        items: list[tuple[str, Any]]
        if isinstance(values, dict):
            items = [(str(k), v) for k, v in values.items()]
        elif isinstance(values, list):
            items = [("", v) for v in values]
        else:
            continue
        for fallback, raw in items:
            if not isinstance(raw, dict):
                raise TaxonomyError(f"{key}.{fallback or '?'} is not an object")
            code = str(raw.get("code") or raw.get("id") or fallback).strip()
            if not code:
                raise TaxonomyError(f"a code in {key} has no 'code'")
            modes.append(_mode(raw, code=code, category=cat))
    return Taxonomy(
        id=str(doc.get("taxonomy_id") or doc.get("id") or default_id),
        name=str(doc.get("name") or doc.get("domain") or default_id),
        version=str(doc.get("version") or "1"),
        source="ATLAS layered taxonomy",
        categories=_categories(modes, _ATLAS_NAMES),
        modes=modes,
        extra={k: v for k, v in doc.items() if k not in ("full_layer", "annotation_layer", *_ATLAS_LAYERS)},
    )
