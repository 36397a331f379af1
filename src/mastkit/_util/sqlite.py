"""Opening SQLite files someone else wrote (trace databases), read-only and without trusting them."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from mastkit.errors import FormatError

SQLITE_MAGIC = b"SQLite format 3\x00"
"""The first 16 bytes of every SQLite 3 database file."""

DB_ERRORS = (sqlite3.Error, UnicodeDecodeError)
"""What opening or reading a damaged file raises: SQLite's errors, and its messages when they quote
bytes of the file that are not UTF-8 (Python cannot decode the message)."""


def _text(raw: bytes) -> str:
    """TEXT cells: invalid UTF-8 (a damaged file) is replaced, not an error that ends the query."""
    return raw.decode("utf-8", "replace")


def connect_ro(path: Path) -> sqlite3.Connection:
    """A read-only connection to the database at ``path``.

    ``mode=ro``: the database and its WAL are never written (SQLite may create the ``-shm`` index of
    a WAL that has none); ``query_only`` on; ``trusted_schema`` off, so no SQL function runs from a
    view or trigger of the file; TEXT that is not UTF-8 is read with replacement characters; a
    locked database is waited for up to 5 s. Raises ``DB_ERRORS`` or OSError (a path that cannot be
    made a URI).
    """
    try:
        uri = path.resolve().as_uri() + "?mode=ro"
    except (ValueError, RuntimeError) as exc:  # not absolute / symlink loop
        raise OSError(str(exc)) from None
    con = sqlite3.connect(uri, uri=True, timeout=5.0)
    try:
        con.text_factory = _text
        con.execute("PRAGMA query_only = ON")
        con.execute("PRAGMA trusted_schema = OFF")
    except DB_ERRORS:
        con.close()
        raise
    return con


def schema(con: sqlite3.Connection) -> dict[str, set[str]]:
    """Every table of the database and its columns (raises ``DB_ERRORS``). Table names read from
    the file are passed as parameters, never put into SQL text."""
    tables: dict[str, set[str]] = {}
    for (name,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
        tables[str(name)] = {str(c) for (c,) in con.execute("SELECT name FROM pragma_table_info(?)", (name,))}
    return tables


def open_ro(path: Path) -> tuple[sqlite3.Connection, dict[str, set[str]]]:
    """:func:`connect_ro` and :func:`schema` for an importer: the connection and the tables of the
    database, or FormatError saying why the file cannot be read as one (the connection closed)."""
    try:
        con = connect_ro(path)
    except DB_ERRORS as exc:
        raise FormatError(f"cannot open the SQLite database: {exc}") from None
    except OSError as exc:
        raise FormatError(f"cannot open the SQLite database: {exc.strerror or exc}") from None
    try:
        return con, schema(con)
    except DB_ERRORS as exc:
        con.close()
        raise FormatError(f"not a readable SQLite database: {exc}") from None
