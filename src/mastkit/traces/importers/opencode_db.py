"""OpenCode's SQLite database (``~/.local/share/opencode/opencode.db``, OpenCode 1.2.0 and later).

OpenCode keeps its sessions in ``<data>/opencode.db`` (``opencode-<channel>.db`` on other release
channels), written through drizzle with WAL journaling. The tables read here (created by the
migration ``20260127222353_familiar_lady_ursula``)::

    session  (id, project_id, parent_id, slug, directory, title, version, share_url,
              summary_additions, summary_deletions, summary_files, summary_diffs, revert,
              permission, time_created, time_updated, time_compacting, time_archived, ...)
    message  (id, session_id, time_created, time_updated, data)      data = message info
    part     (id, message_id, session_id, time_created, time_updated, data)   data = part
    project  (id, worktree, vcs, name, icon_url, icon_color, time_*, sandboxes, commands)
    todo     (session_id, content, status, priority, position, time_created, time_updated)

``message.data`` / ``part.data`` hold the same JSON objects as the files of the old storage folder,
without their ids, which are columns (OpenCode reads a message as ``{...data, id, sessionID}`` and a
part as ``{...data, id, sessionID, messageID}``). A session is columns only; its info object is put
back together the way OpenCode's ``fromRow`` does. From there the reading is the storage folder's
(:class:`~mastkit.traces.importers.opencode_storage.StoredSessionsMapping`): one trace per root
session with its child sessions merged, records placed by the time in their ids (a migrated part's
``time_created`` is the time of the migration, not of the part), a finished tool's result where it
ended -- so a session gives the same events from the database as from the storage folder or
``opencode export``.

The file is opened read-only (``mode=ro``), inside one read transaction; only fixed ``SELECT``
statements on the tables above are run, with ``trusted_schema`` off. Bad input: a file that is not
a readable SQLite database, or lacks a table or column read here, is one error naming the file; a
message or part row whose ``data`` is not a JSON object of the expected kind is a
:class:`~mastkit.errors.TraceLoadError` naming the file, the table and the row id, and the rest
loads.

Given the OpenCode data folder (the database beside ``storage/``, ``log/``, ``auth.json``, ...),
every database in it is read (``opencode.db`` first), then the ``storage/`` folder for the sessions
no database holds: OpenCode imports ``storage/`` into a new database once and leaves it in place,
and that import skips sessions (orphans, unreadable files), so a session is loaded from the first
place that holds it and never twice.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from mastkit._util.sqlite import DB_ERRORS, SQLITE_MAGIC, open_ro
from mastkit.errors import FormatError, TraceLoadError
from mastkit.traces.importers.opencode import _Recording, _str
from mastkit.traces.importers.opencode_storage import (
    _DB_NAME,
    OpenCodeStorageImporter,
    StoredSessionsMapping,
    Where,
    _is_data_folder,
    _is_storage,
    data_dbs,
)
from mastkit.traces.model import Trace
from mastkit.traces.registry import Importer, register
from mastkit.traces.source import Source

# the tables a trace is read from, and the columns of each without which it cannot be
_REQUIRED: dict[str, tuple[str, ...]] = {
    "session": ("id", "parent_id"),
    "message": ("id", "session_id", "data"),
    "part": ("id", "message_id", "data"),
}
# session columns put into the session info (the rest are kept in Trace.raw["database"])
_SESSION_INFO_COLUMNS = frozenset(
    (
        "id", "project_id", "workspace_id", "parent_id", "slug", "directory", "path", "title", "version",
        "agent", "model", "share_url", "summary_additions", "summary_deletions", "summary_files",
        "summary_diffs", "revert", "permission", "time_created", "time_updated", "time_compacting",
        "time_archived",
    )
)  # fmt: skip

Schema = dict[str, set[str]]  # table -> its columns (see mastkit._util.sqlite.schema)


def _missing(schema: Schema) -> list[str]:
    """What a database lacks of the tables and columns read here (``table`` or ``table.column``)."""
    out: list[str] = []
    for table, columns in _REQUIRED.items():
        if table not in schema:
            out.append(table)
        else:
            out += [f"{table}.{c}" for c in columns if c not in schema[table]]
    return out


def _cell(value: Any) -> Any:
    """A column value as JSON can hold it (a BLOB as text, a non-finite REAL as None)."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _json_cell(value: Any) -> Any:
    """A drizzle ``mode: "json"`` column: parsed; text that is not JSON is kept as it is."""
    value = _cell(value)
    if isinstance(value, str):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return value
    return value


def _data(value: Any) -> tuple[Any, str | None]:
    """``(object, None)`` for a ``data`` cell, or ``(None, why it is not one)``."""
    value = _cell(value)
    if not isinstance(value, str):
        return None, f"data is {'NULL' if value is None else type(value).__name__}, not JSON text"
    try:
        doc = orjson.loads(value)
    except orjson.JSONDecodeError as exc:
        return None, f"data is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
    if not isinstance(doc, dict):
        return None, f"data is a JSON {type(doc).__name__}, not an object"
    return doc, None


def _session_info(row: dict[str, Any]) -> dict[str, Any]:
    """A session row as the session info OpenCode builds from it (``fromRow``); unset fields are
    left out, as ``JSON.stringify`` leaves out ``undefined``."""

    def col(name: str) -> Any:
        return _cell(row.get(name))

    summary = None
    if any(col(c) is not None for c in ("summary_additions", "summary_deletions", "summary_files")):
        summary = {
            "additions": col("summary_additions") or 0,
            "deletions": col("summary_deletions") or 0,
            "files": col("summary_files") or 0,
            "diffs": _json_cell(row.get("summary_diffs")),
        }
    time = {
        "created": col("time_created"),
        "updated": col("time_updated"),
        "compacting": col("time_compacting"),
        "archived": col("time_archived"),
    }
    info: dict[str, Any] = {
        "id": row["id"],
        "slug": col("slug"),
        "projectID": col("project_id"),
        "workspaceID": col("workspace_id"),
        "directory": col("directory"),
        "path": col("path"),
        "parentID": col("parent_id"),
        "title": col("title"),
        "version": col("version"),
        "agent": col("agent"),
        "model": _json_cell(row.get("model")),
        "summary": summary and {k: v for k, v in summary.items() if v is not None},
        "share": {"url": col("share_url")} if col("share_url") else None,
        "revert": _json_cell(row.get("revert")),
        "permission": _json_cell(row.get("permission")),
        "time": {k: v for k, v in time.items() if v is not None},
    }
    return {k: v for k, v in info.items() if v is not None}


def _project_info(row: dict[str, Any]) -> dict[str, Any]:
    """A project row in the shape of the old ``storage/project/<id>.json`` (the reverse of
    OpenCode's JSON -> SQLite import); columns it does not know are kept under their own names."""
    known = {"id", "worktree", "vcs", "name", "icon_url", "icon_color", "time_created", "time_updated",
             "time_initialized", "sandboxes", "commands"}  # fmt: skip
    icon = {"url": _cell(row.get("icon_url")), "color": _cell(row.get("icon_color"))}
    time = {
        "created": _cell(row.get("time_created")),
        "updated": _cell(row.get("time_updated")),
        "initialized": _cell(row.get("time_initialized")),
    }
    info: dict[str, Any] = {
        "id": _cell(row.get("id")),
        "worktree": _cell(row.get("worktree")),
        "vcs": _cell(row.get("vcs")),
        "name": _cell(row.get("name")),
        "icon": {k: v for k, v in icon.items() if v is not None} or None,
        "time": {k: v for k, v in time.items() if v is not None},
        "sandboxes": _json_cell(row.get("sandboxes")),
        "commands": _json_cell(row.get("commands")),
    }
    info.update({k: _json_cell(v) for k, v in row.items() if k not in known})
    return {k: v for k, v in info.items() if v is not None}


@dataclass
class _Group:
    """What one trace is read from: records in session order, and what goes to Trace.raw."""

    records: list[tuple[str, dict[str, Any], Where]] = field(default_factory=list)
    errors: list[TraceLoadError] = field(default_factory=list)
    todos: dict[str, Any] = field(default_factory=dict)
    no_parts: list[str] = field(default_factory=list)


@register
class OpenCodeDbImporter(StoredSessionsMapping, Importer):
    name = "opencode_db"
    description = (
        "OpenCode's SQLite database (~/.local/share/opencode/opencode.db: session, message, part "
        "tables; OpenCode >= 1.2), or the data folder holding it; one trace per root session"
    )
    handles_dirs = True
    handles_files = True

    # -- sniffing ------------------------------------------------------------------------

    def sniff(self, src: Source) -> float:
        if src.is_dir:
            return self._sniff_data_folder(src.path)
        if not src.head.startswith(SQLITE_MAGIC):
            return 0.0
        schema = src.sqlite_schema
        if schema is None:
            # a damaged database whose name is OpenCode's: claimed weakly, so that loading it says
            # what is wrong instead of "no importer recognises this file"
            return 0.3 if _DB_NAME.match(src.path.name) else 0.0
        if any(t not in schema for t in _REQUIRED):
            return 0.0
        # session, message and part tables: OpenCode's when they have the columns read here
        # (ag2_runtime claims only databases with its chat_completions table)
        return 0.4 if _missing(schema) else 0.96

    def _sniff_data_folder(self, folder: Path) -> float:
        """The OpenCode data folder: an OpenCode database beside ``storage/``, ``log/``, ... (a
        folder that merely holds an ``opencode.db`` among other traces is walked, not taken whole).
        Above opencode_storage's 0.95 for the same folder: the database is the current store. The
        databases are not opened here: loading reports one that is damaged or not OpenCode's and
        still reads ``storage/``."""
        if not _is_data_folder(folder):
            return 0.0
        for db in data_dbs(folder):
            try:
                if Source(db).head.startswith(SQLITE_MAGIC):
                    return 0.97
            except OSError:
                continue
        return 0.0

    # -- loading -------------------------------------------------------------------------

    def load(self, src: Source) -> Iterator[Trace | TraceLoadError]:
        if src.is_dir:
            yield from self._load_data_folder(src)
            return
        yield from self._load_db(src, src.path, set())

    def _load_data_folder(self, src: Source) -> Iterator[Trace | TraceLoadError]:
        folder = src.path
        dbs = data_dbs(folder)
        if not dbs:
            raise FormatError("not an OpenCode data folder (no opencode.db)")
        seen: set[str] = set()  # sessions already read: each is loaded from the first place holding it
        for db in dbs:
            try:
                yield from self._load_db(src, db, seen)
            except FormatError as exc:
                yield TraceLoadError(db, exc.reason)
        storage = folder / "storage"
        if _is_storage(storage):
            try:
                yield from OpenCodeStorageImporter().load_storage(src, storage, None, frozenset(seen))
            except FormatError as exc:  # no session files in storage/
                if not seen:  # not news when a database gave the sessions
                    yield TraceLoadError(storage, exc.reason)

    def _open(self, path: Path) -> tuple[sqlite3.Connection, Schema]:
        con, schema = open_ro(path)
        missing = _missing(schema)
        if missing:
            con.close()
            raise FormatError(f"not an OpenCode database: no {', '.join(missing)}")
        con.row_factory = sqlite3.Row  # rows by column name as well as by position
        return con, schema

    def _load_db(self, src: Source, path: Path, seen: set[str]) -> Iterator[Trace | TraceLoadError]:
        """The traces of one database, without the sessions in ``seen``; the sessions it loads
        are added to ``seen`` (not those it could not read: another store may hold them)."""
        con, schema = self._open(path)
        try:
            try:
                con.execute("BEGIN")  # one snapshot, while OpenCode may be writing
                index, extras, errors = self._sessions(con, path)
            except DB_ERRORS as exc:
                raise FormatError(f"unreadable OpenCode database: {exc}") from None
            yield from errors
            for root, members in self._session_groups(index, seen):
                try:
                    group = self._read_group(con, schema, path, members)
                except DB_ERRORS as exc:
                    yield TraceLoadError(path, f"OpenCode database: cannot read session {root}: {exc}")
                    continue
                yield from group.errors
                st = _Recording()
                infos = [(index.sessions[s].info, (str(path), f"/session/{s}")) for s in members]
                self._place(st, infos, group.records)
                project = index.sessions[root].info.get("projectID")
                try:
                    project_info = self._project(con, schema, project)
                except DB_ERRORS as exc:  # the trace still loads, without its project
                    yield TraceLoadError(
                        path, f"OpenCode database: cannot read project {project} (session {root}): {exc}"
                    )
                    project_info = None
                st.raw_extra["database"] = {
                    "file": str(path),
                    "project": project_info,
                    "todos": group.todos,
                    "messages_without_parts": group.no_parts,
                    "session_columns": {s: extras[s] for s in members if s in extras},
                }
                yield from self._traces(src, st)
                seen.update(members)
        finally:
            con.close()

    def _sessions(
        self, con: sqlite3.Connection, path: Path
    ) -> tuple[_Recording, dict[str, dict[str, Any]], list[TraceLoadError]]:
        """Every session row as a session info (an index of sessions, no records), the columns of
        each that the info has no place for (set ones only), and the rows that have no id."""
        index = _Recording()
        extras: dict[str, dict[str, Any]] = {}
        errors: list[TraceLoadError] = []
        for session_row in con.execute('SELECT * FROM "session"'):
            row = dict(session_row)
            sid = _cell(row.get("id"))
            if not isinstance(sid, str) or not sid:
                errors.append(TraceLoadError(path, "OpenCode database: a session row has no id"))
                continue
            row["id"] = sid
            index.session(sid, 0).info = _session_info(row)
            extra = {k: _cell(v) for k, v in row.items() if k not in _SESSION_INFO_COLUMNS and v is not None}
            if extra:
                extras[sid] = extra
        return index, extras, errors

    def _read_group(self, con: sqlite3.Connection, schema: Schema, path: Path, members: list[str]) -> _Group:
        """The message, part and todo rows of the sessions of one trace (raises ``DB_ERRORS``)."""
        group = _Group()
        db = str(path)

        def bad(reason: str) -> None:
            group.errors.append(TraceLoadError(path, f"OpenCode database: {reason}"))

        for sid in members:
            messages: list[tuple[str, dict[str, Any]]] = []
            # in id order, as storage/ lists its files: the records are then placed by the time in
            # their ids, and those whose ids carry none keep this order in both stores
            query = 'SELECT id, data FROM "message" WHERE session_id = ? ORDER BY id'
            for mid, data in con.execute(query, (sid,)):
                mid = _cell(mid)
                if not isinstance(mid, str) or not mid:
                    bad(f"a message row of session {sid} has no id")
                    continue
                info, why = _data(data)
                role = info.get("role") if info is not None else None
                if info is not None and role not in ("user", "assistant"):
                    info, why = None, f"not a message info (role {role!r})"
                if info is None:
                    bad(f"message {mid} (session {sid}): {why}")
                    continue
                messages.append((mid, {**info, "id": mid, "sessionID": sid}))
            # parts by their message (what OpenCode lists for a message), in id order
            parts: dict[str, list[tuple[Any, Any]]] = {}
            query = (
                'SELECT p.id, p.message_id, p.data FROM "part" AS p JOIN "message" AS m ON m.id = p.message_id '
                "WHERE m.session_id = ? ORDER BY p.message_id, p.id"
            )
            for pid, mid, data in con.execute(query, (sid,)):
                parts.setdefault(str(_cell(mid)), []).append((_cell(pid), data))
            for mid, msg in messages:
                group.records.append(("message", msg, (db, f"/message/{mid}")))
                if mid not in parts:
                    group.no_parts.append(mid)  # OpenCode writes the message before its parts; none came
                for pid, data in parts.get(mid, []):
                    if not isinstance(pid, str) or not pid:
                        bad(f"a part row of message {mid} has no id")
                        continue
                    part, why = _data(data)
                    if part is not None and not _str(part.get("type")):
                        part, why = None, "not a part object (no type)"
                    if part is None:
                        bad(f"part {pid} (message {mid}): {why}")
                        continue
                    part = {**part, "id": pid, "sessionID": sid, "messageID": mid}
                    group.records.append(("part", part, (db, f"/part/{pid}")))
            todo = schema.get("todo")
            if todo is not None and {"session_id", "position"} <= todo:
                query = 'SELECT * FROM "todo" WHERE session_id = ? ORDER BY position'
                skip = ("session_id", "time_created", "time_updated")
                items = [
                    {k: _cell(v) for k, v in dict(row).items() if k not in skip}
                    for row in con.execute(query, (sid,))
                ]
                if items:
                    group.todos[sid] = items
        return group

    def _project(self, con: sqlite3.Connection, schema: Schema, pid: Any) -> dict[str, Any] | None:
        """The project row of a trace's root session (as a project info), None when there is none
        (raises ``DB_ERRORS``)."""
        if "id" not in schema.get("project", set()) or not isinstance(pid, str):
            return None
        row = con.execute('SELECT * FROM "project" WHERE id = ?', (pid,)).fetchone()
        return None if row is None else _project_info(dict(row))
