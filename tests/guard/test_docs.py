"""docs/guard.md's examples run: the framework-free example and the full spec."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

import pytest

from mastkit.guard import load_spec

DOC = Path(__file__).resolve().parents[2] / "docs" / "guard.md"


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", DOC.read_text(), re.S)


def test_the_framework_free_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    monkeypatch.chdir(tmp_path)
    script = tmp_path / "example.py"
    script.write_text(_blocks("python")[0])
    runpy.run_path(str(script))
    assert capsys.readouterr().out.startswith("allow")
    assert (tmp_path / "run.jsonl").exists()


def test_the_full_spec_example_is_valid(tmp_path: Path) -> None:
    full = max(_blocks("yaml"), key=len)
    path = tmp_path / "guards.yaml"
    path.write_text(full)
    names = [g.name for g in load_spec(path).build_guards()]
    assert len(names) == 6
