"""Shared fixtures. Tests that read ../shared/data skip with a clear message when it is absent."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mastkit.errors import TraceLoadError
    from mastkit.store import Store
    from mastkit.traces import Trace

import pytest

# Importers build events on a fast path; in tests each one is also validated and compared.
os.environ.setdefault("MASTKIT_STRICT_EVENTS", "1")

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("MASTKIT_SHARED_DATA", ROOT.parent / "shared" / "data"))
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def shared_path(*parts: str) -> Path:
    """A path under ../shared/data; skips the calling test when it does not exist."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(
            f"shared data not available: {path} (set MASTKIT_SHARED_DATA or put shared/ beside the repo)"
        )
    return path


@pytest.fixture
def shared_data() -> Path:
    """The ../shared/data folder (skips when absent)."""
    return shared_path()


@pytest.fixture
def fixtures_dir() -> Path:
    """tests/fixtures: small hand-written traces."""
    return FIXTURES


def assert_loads_cleanly(path: Path | str, format: str | None = None) -> None:
    """Whatever ``path`` holds, loading it never crashes an importer (bad input is a reported
    error), and every trace that loads serialises and loads back identical (fuzz tests)."""
    # imported here: mastkit reads MASTKIT_STRICT_EVENTS (set above) when it is first imported
    from mastkit.errors import TraceLoadError
    from mastkit.traces import Trace, iter_load

    for item in iter_load(path, format=format):
        if isinstance(item, TraceLoadError):
            assert not item.internal, f"importer crashed: {item}"
        else:
            assert isinstance(item, Trace)
            assert Trace.model_validate_json(item.model_dump_json()) == item


def load_split(path: Path | str) -> tuple[list[Trace], list[TraceLoadError]]:
    """``(traces, errors)`` of loading ``path`` with errors inline (``iter_load``)."""
    from mastkit.errors import TraceLoadError
    from mastkit.traces import iter_load

    traces: list[Trace] = []
    errors: list[TraceLoadError] = []
    for item in iter_load(path):
        if isinstance(item, TraceLoadError):
            errors.append(item)
        else:
            traces.append(item)
    return traces, errors


def sqlite_file(path: Path, *statements: str) -> Path:
    """A small SQLite database at ``path`` made by running ``statements`` (tests of database sniffing)."""
    import sqlite3

    con = sqlite3.connect(path)
    try:
        for sql in statements:
            con.execute(sql)
        con.commit()
    finally:
        con.close()
    return path


def call_rows(store: Store) -> list[dict[str, Any]]:
    """The store's call log, oldest first, without the row id and timestamp (tests of the rows a
    model call writes, from the judge and from the attributor)."""
    rows = store._query("SELECT * FROM calls ORDER BY id")
    return [{k: v for k, v in dict(r).items() if k not in ("id", "created_at")} for r in rows]


# The rows one model call writes (llm/call.cached_call, which the judge and the LLM
# attributor both use). ``who`` is the caller's labels: trace_id, config_hash and provider.


def assert_call_and_cached_rerun_rows(
    store: Store,
    who: dict[str, Any],
    *,
    asked: str,
    served: str,
    input_tokens: int,
    output_tokens: int,
    cost_usd: float,
) -> None:
    """One answered call, then the same request answered from the cache: two call log rows and
    one cached response. ``asked`` is the model requested, ``served`` the one the server named."""
    ok, hit = call_rows(store)
    assert ok["request_hash"].startswith("p1:") and ok["latency_s"] > 0
    who = {**who, "request_hash": ok["request_hash"]}
    assert ok == {
        **who,
        "model": served,
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cost_usd": cost_usd,
        "latency_s": ok["latency_s"],
        "attempts": 1,
        "status": "ok",
        "error": None,
        "cached": 0,
    }
    assert hit == {
        **who,
        "model": asked,
        "input_tokens": 0,
        "output_tokens": 0,
        "cost_usd": None,
        "latency_s": None,
        "attempts": 1,
        "status": "ok",
        "error": None,
        "cached": 1,
    }
    (resp,) = store._query("SELECT request_hash, model, input_tokens, output_tokens, cost_usd FROM responses")
    assert tuple(resp) == (ok["request_hash"], served, input_tokens, output_tokens, cost_usd)


def assert_failed_call_row(store: Store, who: dict[str, Any], *, model: str, attempts: int) -> str:
    """One call the provider failed: one error row (nothing cached). Returns the row's error text
    (``"<exception class>: <message>"``) for the caller to compare with what it reported."""
    (row,) = call_rows(store)
    assert row["request_hash"].startswith("p1:") and row["latency_s"] > 0
    assert row == {
        **row,
        **who,
        "model": model,
        "input_tokens": 0,
        "output_tokens": 0,
        "cost_usd": None,
        "attempts": attempts,
        "status": "error",
        "cached": 0,
    }
    assert not store._query("SELECT * FROM responses")
    return str(row["error"])
