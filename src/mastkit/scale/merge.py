"""Merge the stores of a sharded run (``--shard i/N``, one store per job) into one.

Every table keyed by content (traces, runs, annotations, verdicts, attributions, cached replies)
is copied with ``INSERT OR IGNORE``: the same trace annotated under the same configuration in
two stores is the same result, so the order of the sources does not matter and merging a store
twice adds no result twice. Logs (calls, errors, calibrations) are appended, so merge each
shard once for true call counts and spending. The target keeps its own fence secret.

    python -m mastkit.scale.merge all.db shard-0.db shard-1.db ...
"""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Sequence
from pathlib import Path

from mastkit.errors import MastkitError
from mastkit.store import Store

__all__ = ["TABLES", "merge_stores"]

_BY_CONTENT = ("runs", "trace_bodies", "annotations", "verdicts", "attributions", "responses")
"""Tables whose primary key says what the row is: a row already in the target is kept."""
_LOGS = ("calls", "errors", "calibrations", "verify_evals")
"""Append-only tables with an ``id`` the target numbers anew."""
TABLES = (*_BY_CONTENT, "trace_versions", *_LOGS, "meta")
"""Every table of the store: a new table must be added here (a test checks), or merging drops it.
``meta`` is the target's own (schema version, fence secret)."""


def _columns(db: sqlite3.Connection, table: str) -> list[str]:
    return [r[1] for r in db.execute(f"PRAGMA main.table_info({table})")]


def _schema(db: sqlite3.Connection, schema: str) -> str | None:
    row = db.execute(f"SELECT value FROM {schema}.meta WHERE key = 'schema_version'").fetchone()
    return None if row is None else str(row[0])


def merge_stores(target: str | Path, sources: Sequence[str | Path]) -> dict[str, int]:
    """Copy every source store into ``target`` (created when missing); the rows added per table.

    Raises:
        MastkitError: a source is missing or was written by another schema version.
    """
    Store(target).close()  # create or migrate the target
    added: dict[str, int] = {}
    db = sqlite3.connect(str(target), timeout=30.0, isolation_level=None)
    try:
        for source in sources:
            if not Path(source).is_file():
                raise MastkitError(f"merge: no store at {source}")
            db.execute("ATTACH DATABASE ? AS src", (str(source),))
            try:
                if _schema(db, "src") != _schema(db, "main"):
                    raise MastkitError(
                        f"merge: {source} has schema {_schema(db, 'src')}, the target {_schema(db, 'main')}: "
                        "open it with this mastkit first (it migrates on open)"
                    )
                db.execute("BEGIN IMMEDIATE")
                try:
                    for table, n in _copy(db).items():
                        added[table] = added.get(table, 0) + n
                    db.execute("COMMIT")
                except BaseException:
                    db.execute("ROLLBACK")
                    raise
            finally:
                db.execute("DETACH DATABASE src")
    finally:
        db.close()
    return added


def _copy(db: sqlite3.Connection) -> dict[str, int]:
    added: dict[str, int] = {}

    def run(table: str, sql: str) -> None:
        before = db.total_changes
        db.execute(sql)
        added[table] = db.total_changes - before

    for table in _BY_CONTENT:
        every = ", ".join(_columns(db, table))
        run(table, f"INSERT OR IGNORE INTO main.{table} ({every}) SELECT {every} FROM src.{table}")
    # versions: the source's upsert order kept, after everything the target already holds
    names = ", ".join(c for c in _columns(db, "trace_versions") if c != "seq")
    offset = db.execute("SELECT COALESCE(MAX(seq), 0) FROM main.trace_versions").fetchone()[0]
    run(
        "trace_versions",
        f"INSERT OR IGNORE INTO main.trace_versions ({names}, seq) "
        f"SELECT {names}, seq + {int(offset)} FROM src.trace_versions ORDER BY seq",
    )
    for table in _LOGS:
        logged = ", ".join(c for c in _columns(db, table) if c != "id")
        run(table, f"INSERT INTO main.{table} ({logged}) SELECT {logged} FROM src.{table} ORDER BY id")
    return added


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) < 2:
        print("usage: python -m mastkit.scale.merge TARGET.db SOURCE.db [SOURCE.db ...]", file=sys.stderr)
        return 2
    try:
        added = merge_stores(args[0], args[1:])
    except MastkitError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(", ".join(f"{n} {table}" for table, n in added.items() if n) or "nothing new", "added to", args[0])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
