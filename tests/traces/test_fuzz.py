"""Property-based robustness: no importer may crash on hostile input.

Every failure must surface as a TraceLoadError that is *not* flagged internal (an
internal error means an importer let an unexpected exception escape: a bug).
Inputs: random bytes (every importer forced), byte-level mutations of real and
fixture files (sniffed), and JSON-structure mutations (a random subtree of a real
record replaced by a value of another type).
"""

from __future__ import annotations

import os
import random
import shutil
import tempfile
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import FIXTURES, SHARED_DATA, assert_loads_cleanly
from mastkit.traces.registry import importers

MAX_EXAMPLES = int(os.environ.get("MASTKIT_FUZZ_EXAMPLES", "40"))
IMPORTERS = [i.name for i in importers()]
FUZZ_SETTINGS = settings(
    max_examples=MAX_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def _seed_files() -> list[Path]:
    roots = [
        FIXTURES,
        SHARED_DATA / "trace_samples",
        Path(__file__).resolve().parents[2] / "src/mastkit/examples",
    ]
    files: list[Path] = []
    for root in roots:
        if root.exists():
            files += [
                p
                for p in sorted(root.rglob("*"))
                if p.is_file()
                and p.stat().st_size < 600_000
                and p.name not in ("LICENSE", "README.md")
                and p.suffix != ".md"
            ]
    ww = SHARED_DATA / "who_and_when" / "Hand-Crafted" / "1.json"
    if ww.exists():
        files.append(ww)
    return files


SEEDS = _seed_files()


def _tmp(data: bytes, suffix: str) -> Path:
    fd, name = tempfile.mkstemp(suffix=suffix)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    return Path(name)


@pytest.mark.parametrize("format", IMPORTERS)
@FUZZ_SETTINGS
@given(
    data=st.binary(max_size=2048), suffix=st.sampled_from([".json", ".jsonl", ".log", ".txt", ".traj", ""])
)
def test_random_bytes_forced_importer(format: str, data: bytes, suffix: str) -> None:
    """Random bytes as a file and, for an importer of folders, as the files of a folder in the
    shapes folder formats name their files (events/<id>.json, event-NNNNN-<id>.json, ...)."""
    imp = next(i for i in importers() if i.name == format)
    path = _tmp(data, suffix)
    folder = Path(tempfile.mkdtemp())
    try:
        if imp.accepts_files:
            assert_loads_cleanly(path, format=format)
        if imp.handles_dirs:
            ext = suffix or ".json"
            (folder / "events").mkdir()
            for name in (f"event-00000-x{ext}", f"events/0{ext}", f"1{ext}", f"metadata{ext}"):
                (folder / name).write_bytes(data)
            assert_loads_cleanly(folder, format=format)
            assert_loads_cleanly(folder / "events", format=format)
    finally:
        path.unlink()
        shutil.rmtree(folder)


def _mutate_bytes(raw: bytes, rnd: random.Random) -> bytes:
    op = rnd.randrange(5)
    n = len(raw)
    i = rnd.randrange(n + 1)
    if op == 0:
        return raw[:i]  # truncate
    if op == 1 and n:
        b = bytearray(raw)
        for _ in range(rnd.randint(1, 8)):
            b[rnd.randrange(n)] = rnd.randrange(256)
        return bytes(b)
    if op == 2:
        j = min(n, i + rnd.randint(1, 200))
        return raw[:i] + raw[j:]  # delete a range
    if op == 3:
        return (
            raw[:i]
            + rnd.choice([b"null", b"[]", b"{}", b'"', b"\x00", b"\n", b",", b"\xff\xfe", b"9" * 30])
            + raw[i:]
        )
    j = min(n, i + rnd.randint(1, 300))
    return raw[:j] + raw[i:j] + raw[j:]  # duplicate a range


@pytest.mark.skipif(not SEEDS, reason="no seed files (fixtures or ../shared/data) found")
@FUZZ_SETTINGS
@given(seed=st.integers(0, 2**32 - 1))
def test_mutated_real_files(seed: int) -> None:
    rnd = random.Random(seed)
    src = rnd.choice(SEEDS)
    path = _tmp(_mutate_bytes(src.read_bytes(), rnd), "".join(src.suffixes))
    try:
        assert_loads_cleanly(path)
    finally:
        path.unlink()


_WEIRD: list[Any] = [
    None,
    0,
    -1,
    1.5,
    True,
    "",
    "x",
    [],
    {},
    [None],
    {"": None},
    "2023-13-45",
    2**63 - 1,
    -1e308,
    [[[]]],
]


def _mutate_json(value: Any, rnd: random.Random, depth: int = 0) -> Any:
    if isinstance(value, dict) and value and (depth < 2 or rnd.random() < 0.7):
        key = rnd.choice(list(value))
        out = dict(value)
        r = rnd.random()
        if r < 0.15:
            del out[key]
        else:
            out[key] = _mutate_json(value[key], rnd, depth + 1)
        return out
    if isinstance(value, list) and value and (depth < 2 or rnd.random() < 0.7):
        idx = rnd.randrange(len(value))
        out_l = list(value)
        out_l[idx] = _mutate_json(value[idx], rnd, depth + 1)
        return out_l
    return rnd.choice(_WEIRD)


def _json_seeds() -> list[tuple[Path, Any, bool]]:
    found = []
    for p in SEEDS:
        raw = p.read_bytes()
        try:
            found.append((p, orjson.loads(raw), False))
            continue
        except orjson.JSONDecodeError:
            pass
        try:
            lines = [orjson.loads(x) for x in raw.splitlines() if x.strip()]
            found.append((p, lines, True))
        except orjson.JSONDecodeError:
            pass
    return found


JSON_SEEDS = _json_seeds()


@pytest.mark.skipif(not JSON_SEEDS, reason="no JSON seed files found")
@FUZZ_SETTINGS
@given(seed=st.integers(0, 2**32 - 1))
def test_json_structure_mutations(seed: int) -> None:
    rnd = random.Random(seed)
    src, doc, is_lines = rnd.choice(JSON_SEEDS)
    for _ in range(rnd.randint(1, 4)):
        if is_lines and doc:
            k = rnd.randrange(len(doc))
            doc = [*doc[:k], _mutate_json(doc[k], rnd), *doc[k + 1 :]]
        else:
            doc = _mutate_json(doc, rnd)
    if is_lines:
        data = b"\n".join(orjson.dumps(x) for x in doc) + b"\n"
    else:
        data = orjson.dumps(doc)
    path = _tmp(data, "".join(src.suffixes))
    try:
        assert_loads_cleanly(path)
    finally:
        path.unlink()
