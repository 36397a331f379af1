"""docs/guard.md's integration section: its examples compile and name real APIs, and its
Claude Code spec example is a valid spec."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mastkit.guard import load_spec

DOC = Path(__file__).resolve().parents[2] / "docs" / "guard.md"


def _section() -> str:
    text = DOC.read_text()
    return text[text.index("## Integrations") : text.index("## For integrations")]


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", _section(), re.S)


def test_python_examples_compile_and_import_real_names() -> None:
    blocks = _blocks("python")
    assert len(blocks) == 3
    for code in blocks:
        compile(code, "guard.md", "exec")
        for module, names in re.findall(r"^from (mastkit\.integrations\.\w+) import (.+)$", code, re.M):
            mod = pytest.importorskip(module)
            for name in names.split(","):
                assert hasattr(mod, name.strip()), (module, name)


def test_claude_code_spec_example_is_valid(tmp_path: Path) -> None:
    [spec] = [b for b in _blocks("yaml") if "Bash" in b]
    path = tmp_path / "guards.yaml"
    path.write_text(spec)
    assert [g.name for g in load_spec(path).build_guards()][-1] == "verification"
