"""The package's layers depend one way (docs/architecture.md): every import in src/mastkit,
at module level or inside a function, goes to the same layer or a lower one."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "mastkit"

LAYERS: dict[str, int] = {
    # 0: the foundations, independent of each other's callers
    "errors": 0,
    "_util": 0,
    "traces": 0,
    "taxonomy": 0,
    "providers": 0,
    "testing": 0,
    "examples": 0,
    # 1: an LLM over a trace; runtime guards (which import only traces and taxonomy)
    "llm": 1,
    "guard": 1,
    # 2: per-trace features
    "annotate": 2,
    "attribute": 2,
    # 3: results and statistics
    "store": 3,
    "analyze": 3,
    "scale": 3,  # runs over shards and Ray workers: the per-trace features and the store
    # 4: what is built on results
    "report": 4,
    "export": 4,
    "verify": 4,
    "feedback": 4,
    "learn": 4,
    "doctor": 4,
    "integrations": 4,
    "demo": 4,
    "calibration": 4,
    # 5: the command line
    "cli": 5,
}
GUARD_MAY_IMPORT = {"guard", "traces", "taxonomy", "errors", "_util"}
"""``mastkit.guard`` runs inside users' agents: the trace model and the taxonomy only."""


def _package(path: Path) -> str:
    rel = path.relative_to(SRC)
    return rel.parts[0].removesuffix(".py") if len(rel.parts) > 1 or rel.stem != "__init__" else ""


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        for name in names:
            if name == "mastkit" or name.startswith("mastkit."):
                parts = name.split(".")
                out.append((node.lineno, parts[1] if len(parts) > 1 else ""))
    return out


def test_every_package_has_a_layer() -> None:
    packages = {p.name.removesuffix(".py") for p in SRC.iterdir() if p.name != "__pycache__"}
    packages -= {"__init__", "py.typed", "__main__"}
    assert packages - set(LAYERS) == set()


@pytest.mark.parametrize("path", sorted(SRC.rglob("*.py")), ids=lambda p: str(p.relative_to(SRC)))
def test_imports_go_down_the_layers(path: Path) -> None:
    pkg = _package(path)
    if not pkg:
        return  # mastkit/__init__.py re-exports the public API
    bad = []
    for line, target in _imports(path):
        if not target or target == pkg:
            continue
        if pkg == "guard":
            ok = target in GUARD_MAY_IMPORT
        else:
            ok = LAYERS.get(target, 99) <= LAYERS[pkg]
        if not ok:
            bad.append(f"line {line}: mastkit.{pkg} imports mastkit.{target}")
    assert not bad, bad
