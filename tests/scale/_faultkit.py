"""Helpers for the fault and soak tests: synthetic trace files, the ``mastkit`` command as a
subprocess, judge replies, and making a path read-only for real (also when running as root)."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


def load_bench(name: str) -> ModuleType:
    """A script of bench/ as a module (the soak harness is shared with ``bench/soak.py``)."""
    spec = importlib.util.spec_from_file_location(f"_bench_{name}", BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


soak = load_bench("soak")
make_trace = soak.make_trace
verdict_json = soak.verdict_json


def write_traces(path: Path, n: int, start: int = 0) -> list[str]:
    """``n`` synthetic traces as canonical JSONL at ``path``; returns their ids."""
    traces = [make_trace(i) for i in range(start, start + n)]
    path.write_text("".join(t.model_dump_json() + "\n" for t in traces), encoding="utf-8")
    return [t.trace_id for t in traces]


def env(**extra: str) -> dict[str, str]:
    """The environment without the user's provider keys and mastkit settings."""
    out = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "MASTKIT_"))}
    out["NO_COLOR"] = "1"
    out.update(extra)
    return out


def mastkit_cmd(*args: str) -> list[str]:
    return [sys.executable, "-c", "from mastkit.cli.main import main; main()", *args]


def run_mastkit(*args: str, timeout: float = 120, **extra_env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        mastkit_cmd(*args), env=env(**extra_env), capture_output=True, text=True, timeout=timeout
    )


def judge_args(src: Path, db: Path, base_url: str, *more: str) -> list[str]:
    return [
        "annotate", str(src), "--annotator", "llm", "--model", "openai:x", "--base-url", base_url,
        "--db", str(db), "--yes", *more,
    ]  # fmt: skip


def query(db: Path, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Rows of ``sql`` on the store, read through a read-only connection."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
    try:
        return list(con.execute(sql, params).fetchall())
    finally:
        con.close()


def integrity(db: Path) -> str:
    con = sqlite3.connect(db, timeout=10)
    try:
        return str(con.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        con.close()


def assert_clean_error(proc: subprocess.CompletedProcess[str], *needles: str) -> None:
    """A failed run that said what went wrong in one message: no traceback, exit code 4."""
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 4, (proc.returncode, proc.stderr)
    lines = [x for x in proc.stderr.splitlines() if x.startswith("error: ")]
    assert len(lines) == 1, proc.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


@contextlib.contextmanager
def read_only(path: Path) -> Iterator[None]:
    """Make ``path`` (a file or a folder) read-only for this user while the block runs.

    Permission bits do not stop root, so as root the file is made immutable (``chattr +i``);
    the test is skipped when that is not possible (no chattr, or a file system without it).
    """
    if os.geteuid() != 0:
        mode = path.stat().st_mode
        path.chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
        try:
            yield
        finally:
            path.chmod(mode)
        return
    chattr = shutil.which("chattr")
    if chattr is None:
        pytest.skip("running as root without chattr: cannot make a file read-only")
    done = subprocess.run([chattr, "+i", str(path)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"running as root and chattr +i failed: {done.stderr.strip()}")
    try:
        yield
    finally:
        subprocess.run([chattr, "-i", str(path)], check=True)
