"""The shipped set: built deterministically from the shared data, small, licensed, in the wheel."""

from __future__ import annotations

import importlib.util
import zipfile
from pathlib import Path

import pytest
from tests.conftest import shared_path

from mastkit.calibration.dataset import DATA_FILE, LICENSE_FILES

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "src" / "mastkit" / "calibration"


def _builder() -> object:
    spec = importlib.util.spec_from_file_location(
        "build_calibration_set", ROOT / "scripts" / "build_calibration_set.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_shipped_file_is_what_the_builder_makes_from_the_shared_data() -> None:
    shared = shared_path()
    shared_path("mast_mad_human")
    shared_path("who_and_when")
    build = _builder().build  # type: ignore[attr-defined]
    data = build(shared)
    assert data == build(shared)  # deterministic
    assert data == (DATA / DATA_FILE).read_bytes()  # and the shipped copy is up to date


def test_the_set_is_small_and_carries_its_licenses() -> None:
    assert (DATA / DATA_FILE).stat().st_size < 1_000_000
    for name in LICENSE_FILES:
        assert (DATA / name).is_file(), name
    assert "Creative Commons" in (DATA / "data/LICENSE-CC-BY-4.0.txt").read_text()
    assert "MIT License" in (DATA / "data/LICENSE-MIT.txt").read_text()
    readme = (DATA / "data/README.md").read_text()
    assert "Cemri" in readme and "Ming Yin" in readme and "What was changed" in readme


def test_the_wheel_includes_the_data_and_licenses(tmp_path: Path) -> None:
    wheel = pytest.importorskip("hatchling.builders.wheel")
    (path,) = wheel.WheelBuilder(str(ROOT)).build(directory=str(tmp_path), versions=["standard"])
    names = set(zipfile.ZipFile(path).namelist())
    for name in (DATA_FILE, *LICENSE_FILES):
        assert f"mastkit/calibration/{name}" in names
