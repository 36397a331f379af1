"""OpenCode's SQLite database (``opencode.db``, OpenCode 1.2.0 and later).

No database file is committed: :func:`write_opencode_db` builds one in each test from

* the schema OpenCode's drizzle migrations create -- ``20260127222353_familiar_lady_ursula`` (the
  tables) and ``20260211171708_add_project_commands`` (``project.commands``), both older than the
  1.2.0 release, written out below (:data:`MIGRATIONS`) from OpenCode's ``packages/opencode/migration/``;
* the rows OpenCode's one-time import (``src/storage/json-migration.ts``) makes of the storage folder
  fixture ``tests/fixtures/opencode/storage`` (read by ``test_opencode_storage.py``): ids from the
  file paths, ``message.data`` / ``part.data`` = the JSON object without its ids, session and
  project objects spread over columns, ``time_created`` from ``time.created`` or else the time of the
  import, todos one row per item with its position.

So the same sessions can be read from both stores and compared. The storage fixture's truncated part
file goes into the database as its text: a row whose ``data`` is not JSON.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import random
import shutil
import sqlite3
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from _opencode_fixture import FIX, NO_PARTS, PROJECT, SES_A, SES_B, SES_C, STORAGE, assert_same_trace
from _opencode_fixture import load as _load
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import assert_loads_cleanly, sqlite_file
from mastkit.errors import TraceLoadError
from mastkit.traces import Source, Trace, get_importer, iter_load, load_traces
from mastkit.traces.load import walk

BAD_PART = "prt_9c82cd78e001iAX1DyyXN9iYw1"  # truncated file in the storage fixture
IMPORT_TIME = 1771000000000  # "now" of the simulated JSON -> SQLite import (Feb 2026)

# The migrations of OpenCode 1.2.0 that create what mastkit reads (drizzle runs each folder's
# migration.sql, statements split at "--> statement-breakpoint").
MIGRATIONS: list[tuple[str, str]] = [
    (
        "20260127222353_familiar_lady_ursula",
        """
CREATE TABLE `project` (
  `id` text PRIMARY KEY,
  `worktree` text NOT NULL,
  `vcs` text,
  `name` text,
  `icon_url` text,
  `icon_color` text,
  `time_created` integer NOT NULL,
  `time_updated` integer NOT NULL,
  `time_initialized` integer,
  `sandboxes` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `message` (
  `id` text PRIMARY KEY,
  `session_id` text NOT NULL,
  `time_created` integer NOT NULL,
  `time_updated` integer NOT NULL,
  `data` text NOT NULL,
  CONSTRAINT `fk_message_session_id_session_id_fk` FOREIGN KEY (`session_id`) REFERENCES `session`(`id`) ON DELETE CASCADE
);
--> statement-breakpoint
CREATE TABLE `part` (
  `id` text PRIMARY KEY,
  `message_id` text NOT NULL,
  `session_id` text NOT NULL,
  `time_created` integer NOT NULL,
  `time_updated` integer NOT NULL,
  `data` text NOT NULL,
  CONSTRAINT `fk_part_message_id_message_id_fk` FOREIGN KEY (`message_id`) REFERENCES `message`(`id`) ON DELETE CASCADE
);
--> statement-breakpoint
CREATE TABLE `permission` (
  `project_id` text PRIMARY KEY,
  `time_created` integer NOT NULL,
  `time_updated` integer NOT NULL,
  `data` text NOT NULL,
  CONSTRAINT `fk_permission_project_id_project_id_fk` FOREIGN KEY (`project_id`) REFERENCES `project`(`id`) ON DELETE CASCADE
);
--> statement-breakpoint
CREATE TABLE `session` (
  `id` text PRIMARY KEY,
  `project_id` text NOT NULL,
  `parent_id` text,
  `slug` text NOT NULL,
  `directory` text NOT NULL,
  `title` text NOT NULL,
  `version` text NOT NULL,
  `share_url` text,
  `summary_additions` integer,
  `summary_deletions` integer,
  `summary_files` integer,
  `summary_diffs` text,
  `revert` text,
  `permission` text,
  `time_created` integer NOT NULL,
  `time_updated` integer NOT NULL,
  `time_compacting` integer,
  `time_archived` integer,
  CONSTRAINT `fk_session_project_id_project_id_fk` FOREIGN KEY (`project_id`) REFERENCES `project`(`id`) ON DELETE CASCADE
);
--> statement-breakpoint
CREATE TABLE `todo` (
  `session_id` text NOT NULL,
  `content` text NOT NULL,
  `status` text NOT NULL,
  `priority` text NOT NULL,
  `position` integer NOT NULL,
  `time_created` integer NOT NULL,
  `time_updated` integer NOT NULL,
  CONSTRAINT `todo_pk` PRIMARY KEY(`session_id`, `position`),
  CONSTRAINT `fk_todo_session_id_session_id_fk` FOREIGN KEY (`session_id`) REFERENCES `session`(`id`) ON DELETE CASCADE
);
--> statement-breakpoint
CREATE TABLE `session_share` (
  `session_id` text PRIMARY KEY,
  `id` text NOT NULL,
  `secret` text NOT NULL,
  `url` text NOT NULL,
  `time_created` integer NOT NULL,
  `time_updated` integer NOT NULL,
  CONSTRAINT `fk_session_share_session_id_session_id_fk` FOREIGN KEY (`session_id`) REFERENCES `session`(`id`) ON DELETE CASCADE
);
--> statement-breakpoint
CREATE INDEX `message_session_idx` ON `message` (`session_id`);--> statement-breakpoint
CREATE INDEX `part_message_idx` ON `part` (`message_id`);--> statement-breakpoint
CREATE INDEX `part_session_idx` ON `part` (`session_id`);--> statement-breakpoint
CREATE INDEX `session_project_idx` ON `session` (`project_id`);--> statement-breakpoint
CREATE INDEX `session_parent_idx` ON `session` (`parent_id`);--> statement-breakpoint
CREATE INDEX `todo_session_idx` ON `todo` (`session_id`);
""",
    ),
    ("20260211171708_add_project_commands", "ALTER TABLE `project` ADD `commands` text;"),
]
# a later one (OpenCode 1.2.x): a column the session info picks up when present
ADD_WORKSPACE = (
    "ALTER TABLE `session` ADD `workspace_id` text;--> statement-breakpoint\n"
    "CREATE INDEX `session_workspace_idx` ON `session` (`workspace_id`);"
)


def _apply(con: sqlite3.Connection, migration: str) -> None:
    for statement in migration.split("--> statement-breakpoint"):
        if statement.strip():
            con.execute(statement)


def _read(path: Path) -> tuple[Any, str]:
    """A storage file: its JSON (None when it does not parse) and its text."""
    text = path.read_text()
    try:
        return json.loads(text), text
    except json.JSONDecodeError:
        return None, text


def _without(doc: dict[str, Any], *keys: str) -> str:
    return json.dumps({k: v for k, v in doc.items() if k not in keys})


def write_opencode_db(
    path: Path,
    storage: Path = STORAGE,
    *,
    sessions: Iterable[str] | None = None,
    reverse_rows: bool = False,
    wal: bool = False,
    extra_migrations: Iterable[str] = (),
) -> Path:
    """An ``opencode.db`` holding the sessions of a storage folder (or those listed), as OpenCode's
    JSON -> SQLite import writes them. ``reverse_rows`` inserts the rows of each table last first
    (a table scan then gives them in the reverse of their id order); ``wal`` leaves the database in
    WAL mode, as OpenCode does."""
    only = set(sessions) if sessions is not None else None
    con = sqlite3.connect(path)
    if wal:
        con.execute("PRAGMA journal_mode = WAL")
    for _name, migration in MIGRATIONS:
        _apply(con, migration)
    for migration in extra_migrations:
        _apply(con, migration)
    rows: dict[str, list[tuple[Any, ...]]] = {
        "project": [],
        "session": [],
        "message": [],
        "part": [],
        "todo": [],
    }
    for f in sorted((storage / "project").glob("*.json")):
        doc, _text = _read(f)
        t = doc.get("time", {})
        icon = doc.get("icon", {})
        rows["project"].append((
            f.stem, doc.get("worktree", "/"), doc.get("vcs"), doc.get("name"), icon.get("url"), icon.get("color"),
            t.get("created", IMPORT_TIME), t.get("updated", IMPORT_TIME), t.get("initialized"),
            json.dumps(doc.get("sandboxes", [])), json.dumps(doc["commands"]) if "commands" in doc else None,
        ))  # fmt: skip
    kept: set[str] = set()
    for f in sorted((storage / "session").glob("*/*.json")):
        doc, _text = _read(f)
        if only is not None and f.stem not in only:
            continue
        kept.add(f.stem)
        t, summary = doc.get("time", {}), doc.get("summary", {})
        diffs = summary.get("diffs")
        rows["session"].append((
            f.stem, f.parent.name, doc.get("parentID"), doc.get("slug", ""), doc.get("directory", ""),
            doc.get("title", ""), doc.get("version", ""), (doc.get("share") or {}).get("url"),
            summary.get("additions"), summary.get("deletions"), summary.get("files"),
            json.dumps(diffs) if diffs is not None else None,
            json.dumps(doc["revert"]) if "revert" in doc else None,
            json.dumps(doc["permission"]) if "permission" in doc else None,
            t.get("created", IMPORT_TIME), t.get("updated", IMPORT_TIME), t.get("compacting"), t.get("archived"),
        ))  # fmt: skip
    message_session: dict[str, str] = {}
    for f in sorted((storage / "message").glob("*/*.json")):
        if f.parent.name not in kept:
            continue
        doc, _text = _read(f)
        message_session[f.stem] = f.parent.name
        t = doc.get("time", {})
        rows["message"].append((
            f.stem, f.parent.name, t.get("created", IMPORT_TIME), t.get("updated", IMPORT_TIME),
            _without(doc, "id", "sessionID"),
        ))  # fmt: skip
    for f in sorted((storage / "part").glob("*/*.json")):
        sid = message_session.get(f.parent.name)
        if sid is None:
            continue
        doc, text = _read(f)
        t = doc.get("time", {}) if isinstance(doc, dict) else {}
        data = _without(doc, "id", "sessionID", "messageID") if isinstance(doc, dict) else text
        rows["part"].append((
            f.stem, f.parent.name, sid, t.get("created", IMPORT_TIME), t.get("updated", IMPORT_TIME), data,
        ))  # fmt: skip
    for f in sorted((storage / "todo").glob("*.json")):
        if f.stem not in kept:
            continue
        doc, _text = _read(f)
        for position, todo in enumerate(doc):
            rows["todo"].append((
                f.stem, todo["content"], todo["status"], todo["priority"], position, IMPORT_TIME, IMPORT_TIME,
            ))  # fmt: skip
    columns = {
        "project": "id, worktree, vcs, name, icon_url, icon_color, time_created, time_updated, "
        "time_initialized, sandboxes, commands",
        "session": "id, project_id, parent_id, slug, directory, title, version, share_url, "
        "summary_additions, summary_deletions, summary_files, summary_diffs, revert, permission, "
        "time_created, time_updated, time_compacting, time_archived",
        "message": "id, session_id, time_created, time_updated, data",
        "part": "id, message_id, session_id, time_created, time_updated, data",
        "todo": "session_id, content, status, priority, position, time_created, time_updated",
    }
    for table, values in rows.items():
        marks = ", ".join("?" * len(columns[table].split(",")))
        for row in reversed(values) if reverse_rows else values:
            con.execute(f"INSERT INTO `{table}` ({columns[table]}) VALUES ({marks})", row)
    con.commit()
    con.close()
    return path


def _digest(path: Path) -> tuple[str, int]:
    return hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns


# -- reading ---------------------------------------------------------------------------------


def test_one_trace_per_root_session_and_the_bad_row(tmp_path: Path) -> None:
    db = write_opencode_db(tmp_path / "opencode.db")
    traces, errors = _load(db)  # sniffed: no format given
    assert list(traces) == [SES_A, SES_B]  # C is merged into A; roots oldest first
    assert {t.source_format for t in traces.values()} == {"opencode_db"}
    # the part whose data is not JSON: one error naming the file, the table and the row
    assert [e.path for e in errors] == [str(db)]
    assert f"part {BAD_PART}" in errors[0].reason and "not valid JSON" in errors[0].reason
    assert traces[SES_A].source_paths == [str(db)]


def test_session_with_child_tools_usage_and_abort(tmp_path: Path) -> None:
    db = write_opencode_db(tmp_path / "opencode.db")
    t = next(iter(load_traces(db, on_error=lambda e: None)))
    assert t.trace_id == SES_A and t.framework == "OpenCode" and t.framework_version == "1.1.10"
    assert t.task == "Find why checkout totals are off by one cent and fix it"
    assert t.model == "claude-sonnet-4-5" and t.extra["projectID"] == PROJECT
    assert t.kind_counts() == {"message": 5, "reasoning": 1, "tool_call": 4, "tool_result": 4, "error": 1}
    # every call has its result, matched by call id, after the call
    pairs = list(t.tool_calls())
    assert len(pairs) == 4
    for call, result in pairs:
        assert call.tool_call is not None and result is not None and result.tool_result is not None
        assert result.tool_result.call_id == call.tool_call.call_id and result.seq > call.seq
    results = {
        c.tool_call.name: r.tool_result.is_error for c, r in pairs if c.tool_call and r and r.tool_result
    }
    assert results == {"bash": False, "read": True, "task": False, "grep": False}
    # the child session is merged in: its thread, the sub-agent as actor, placed inside the task call
    sub = [e for e in t.events if e.thread_id == SES_C]
    assert {e.actor for e in sub if e.role == "assistant"} == {"general"} and len(sub) == 4
    assert next(a for a in t.agents if a.name == "general").parent == "build"
    task_call, task_res = next((c, r) for c, r in pairs if c.tool_call and c.tool_call.name == "task")
    assert task_res is not None
    assert task_call.seq < min(e.seq for e in sub) and task_res.seq > max(e.seq for e in sub)
    # step-finish tokens and cost: usage on the first event of each model call
    with_usage = [e for e in t.events if e.usage is not None]
    assert len(with_usage) == 3 and len({e.llm_call_id for e in with_usage}) == 3
    first = with_usage[0].usage
    assert first is not None
    assert (first.input_tokens, first.output_tokens, first.cached_input_tokens, first.cost_usd) == (
        1200 + 8000 + 500,
        300 + 40,
        8000,
        0.0123,
    )
    assert t.total_usage().cost_usd == pytest.approx(0.0123 + 0.002 + 0.004)
    assert t.termination is not None
    assert (t.termination.reason, t.termination.native) == ("aborted", "MessageAbortedError")
    # what is not an event: the project row, the todo rows, the message with no part rows
    database = t.raw["database"]
    assert database["file"] == str(db) and database["messages_without_parts"] == [NO_PARTS]
    assert database["project"]["worktree"] == "/home/dev/shop" and database["project"]["vcs"] == "git"
    assert database["todos"][SES_A] == [
        {"content": "Find rounding bug", "status": "completed", "priority": "high", "position": 0}
    ]
    # every event points at its row
    assert all(e.source is not None and e.source.path == str(db) and e.source.pointer for e in t.events)
    read = next(c for c, _r in pairs if c.tool_call and c.tool_call.name == "read")
    assert read.source is not None and read.source.pointer == f"/part/{read.id}"


@pytest.mark.parametrize("reverse_rows", [False, True])
def test_same_events_as_the_storage_folder(tmp_path: Path, reverse_rows: bool) -> None:
    # (the storage folder gives the same events as `opencode export`: test_opencode_storage.py)
    db = write_opencode_db(tmp_path / "opencode.db", reverse_rows=reverse_rows)
    from_db, _ = _load(db)
    from_storage, _ = _load(STORAGE)
    assert list(from_db) == list(from_storage)
    for sid in (SES_A, SES_B):
        # the session info put back together from the columns is the session file
        assert_same_trace(from_db[sid], from_storage[sid])


def _id(prefix: str, ms: int) -> str:
    """An OpenCode id made at ``ms``: the prefix, the time in 12 hex digits, random characters."""
    return f"{prefix}_{ms * 0x1000:012x}abcdefXYZ"


def test_records_placed_by_the_time_in_their_ids(tmp_path: Path) -> None:
    # rows written in the reverse of the order they must come out in, so neither the table order
    # nor the order the rows were inserted in can pass for the right one
    db = tmp_path / "opencode.db"
    con = sqlite3.connect(db)
    for _name, migration in MIGRATIONS:
        _apply(con, migration)

    def rows(table: str, *values: tuple[Any, ...]) -> None:
        for row in reversed(values):
            con.execute(f"INSERT INTO `{table}` VALUES ({', '.join('?' * len(row))})", row)

    def session(sid: str, parent: str | None, created: int) -> tuple[Any, ...]:
        return (sid, "global", parent, "", "", "", "", None, None, None, None, None, None, None, created,
                created, None, None)  # fmt: skip

    def text(pid: str, mid: str, sid: str, content: str) -> tuple[Any, ...]:
        return (pid, mid, sid, 1, 1, json.dumps({"type": "text", "text": content}))

    # ids that carry no time (the twin of test_opencode_storage's hand-made files): id order
    user, assistant = json.dumps({"role": "user"}), json.dumps({"role": "assistant"})
    rows("session", session("s1", None, 1))
    rows("message", ("m1", "s1", 1, 1, user), ("m2", "s1", 1, 1, assistant))
    rows(
        "part", text("p0", "m1", "s1", "one"), text("p1", "m1", "s1", "two"), text("p2", "m2", "s1", "three")
    )
    # ids that carry their time, across a session and its child: the child's work goes between
    # the task call and its result (the tool ended after it)
    root, child = _id("ses", 2000), _id("ses", 2003)
    ask, run, sub = _id("msg", 2001), _id("msg", 2002), _id("msg", 2003)
    task = {"type": "tool", "callID": "c1", "tool": "task", "state": {"status": "completed", "input": {},
            "output": "done", "time": {"start": 2002, "end": 2005}}}  # fmt: skip
    rows("session", session(root, None, 2000), session(child, root, 2003))
    rows("message", (ask, root, 1, 1, user), (run, root, 1, 1, assistant), (sub, child, 1, 1, assistant))
    rows("part", text(_id("prt", 2001), ask, root, "go"), (_id("prt", 2002), run, root, 1, 1, json.dumps(task)),
         text(_id("prt", 2004), sub, child, "sub-agent work"))  # fmt: skip
    con.commit()
    con.close()
    traces, errors = _load(db)
    assert errors == [] and list(traces) == ["s1", root]
    assert [e.content for e in traces["s1"].events] == ["one", "two", "three"]
    events = [(e.kind, e.thread_id == child) for e in traces[root].events]
    assert events == [("message", False), ("tool_call", False), ("message", True), ("tool_result", False)]


def test_later_session_columns(tmp_path: Path) -> None:
    db = write_opencode_db(tmp_path / "opencode.db", extra_migrations=[ADD_WORKSPACE])
    con = sqlite3.connect(db)
    con.execute("UPDATE `session` SET workspace_id = 'wrk_1' WHERE id = ?", (SES_B,))
    con.execute("ALTER TABLE `session` ADD `cost` real DEFAULT 0 NOT NULL")
    con.execute("UPDATE `session` SET cost = 0.5 WHERE id = ?", (SES_B,))
    con.commit()
    con.close()
    traces, _ = _load(db)
    b = traces[SES_B]
    assert b.raw["session"]["workspaceID"] == "wrk_1" and "workspaceID" not in traces[SES_A].raw["session"]
    assert b.raw["database"]["session_columns"] == {SES_B: {"cost": 0.5}}


# -- sniffing and folders ----------------------------------------------------------------------


def test_sniff_by_tables_not_by_name(tmp_path: Path) -> None:
    imp, ag2 = get_importer("opencode_db"), get_importer("ag2_runtime")
    renamed = write_opencode_db(tmp_path / "sessions.sqlite")
    assert imp.sniff(Source(renamed)) >= 0.9  # any name
    assert ag2.sniff(Source(renamed)) == 0.0
    [fmt] = {t.source_format for t in load_traces(renamed, on_error=lambda e: None)}
    assert fmt == "opencode_db"
    # a database named opencode.db without OpenCode's tables is not claimed
    other = tmp_path / "opencode.db"
    sqlite_file(other, "CREATE TABLE notes (id text, body text)")
    assert imp.sniff(Source(other)) == 0.0
    # an AG2 runtime-logging database is AG2's
    logs = tmp_path / "logs.db"
    sqlite_file(
        logs,
        "CREATE TABLE chat_completions (id integer, invocation_id text, request text, response text)",
        "CREATE TABLE agents (id integer, name text)",
    )
    assert imp.sniff(Source(logs)) == 0.0 and ag2.sniff(Source(logs)) > 0.9
    # JSON files, the storage folder and its session folders are not claimed
    assert imp.sniff(Source(FIX / "export_storage_session_b.json")) == 0.0
    assert imp.sniff(Source(STORAGE)) == 0.0 and imp.sniff(Source(FIX)) == 0.0


def test_folder_walk_with_opencode_db_among_other_files(tmp_path: Path) -> None:
    write_opencode_db(tmp_path / "opencode.db")
    shutil.copy(FIX / "bus_events.jsonl", tmp_path / "bus_events.jsonl")
    (tmp_path / "README.md").write_text("# notes")
    sqlite_file(
        tmp_path / "app.db", "CREATE TABLE kv (k text, v text)"
    )  # an unrelated database: passed over silently
    (tmp_path / "opencode.db-wal").write_bytes(b"")  # SQLite side files are never loaded
    names = sorted(s.path.name for s in walk([tmp_path]))
    assert names == ["bus_events.jsonl", "opencode.db"]  # the folder is walked, not taken whole
    traces, errors = _load(tmp_path)
    formats = sorted(t.source_format for t in traces.values())
    assert formats == ["opencode", "opencode_db", "opencode_db"]
    assert [e.path for e in errors] == [str(tmp_path / "opencode.db")]  # the bad part row


def test_data_folder_reads_the_database_then_sessions_only_in_storage(tmp_path: Path) -> None:
    # after the upgrade: opencode.db beside the storage/ folder OpenCode left in place; session B
    # did not make it into the database (as when the import skips or fails on some files)
    data = tmp_path / "opencode"
    shutil.copytree(STORAGE, data / "storage")
    (data / "log").mkdir()
    db = write_opencode_db(data / "opencode.db", sessions=[SES_A, SES_C])
    assert get_importer("opencode_db").sniff(Source(data)) > get_importer("opencode_storage").sniff(
        Source(data)
    )
    assert [s.path for s in walk([data])] == [data]
    traces, errors = _load(data)
    assert list(traces) == [SES_A, SES_B]  # each once
    assert traces[SES_A].source_format == "opencode_db" and traces[SES_B].source_format == "opencode_storage"
    assert traces[SES_A].source_paths == [str(data), str(db)]
    assert [e.path for e in errors] == [str(db)]  # the bad part, read from the database only
    # every session in the database: storage/ adds nothing
    write_opencode_db(db.with_name("full.db"))
    os.replace(db.with_name("full.db"), db)
    traces, errors = _load(data)
    assert {t.source_format for t in traces.values()} == {"opencode_db"} and len(errors) == 1


@pytest.mark.parametrize("in_db", [[SES_C], [SES_A]])
def test_data_folder_split_session_tree_loses_nothing(tmp_path: Path, in_db: list[str]) -> None:
    """The database holds only the child session C, or only its root A, and storage/ holds both:
    every session loads once, from the first store holding it (before, the root A or the child C
    was dropped with no error)."""
    data = tmp_path / "opencode"
    shutil.copytree(STORAGE, data / "storage")
    (data / "log").mkdir()
    write_opencode_db(data / "opencode.db", sessions=in_db)
    traces, _errors = _load(data)
    assert set(traces) == {SES_A, SES_B, SES_C}
    assert {s for s, t in traces.items() if t.source_format == "opencode_db"} == set(in_db)


def test_data_folder_without_storage_and_channel_databases(tmp_path: Path) -> None:
    data = tmp_path / "opencode"
    (data / "log").mkdir(parents=True)
    write_opencode_db(data / "opencode.db", sessions=[SES_B])
    write_opencode_db(data / "opencode-dev.db")  # another channel's database, holding B too
    assert [s.path for s in walk([data])] == [data]
    traces, _errors = _load(data)
    assert list(traces) == [SES_B, SES_A]  # B from opencode.db (read first), A from opencode-dev.db
    assert traces[SES_B].raw["database"]["file"] == str(data / "opencode.db")
    assert traces[SES_A].raw["database"]["file"] == str(data / "opencode-dev.db")
    # a folder with opencode.db but no sign of being OpenCode's data folder is not taken whole
    plain = tmp_path / "plain"
    plain.mkdir()
    shutil.copy(data / "opencode.db", plain / "opencode.db")
    assert get_importer("opencode_db").sniff(Source(plain)) == 0.0


def test_data_folder_sniffed_without_opening_its_databases(tmp_path: Path) -> None:
    # a data folder with a database that is not OpenCode's: claimed from the names and the SQLite
    # magic alone; loading reports the database and reads storage/
    data = tmp_path / "opencode"
    shutil.copytree(STORAGE, data / "storage")
    (data / "auth.json").write_text("{}")
    sqlite_file(data / "opencode.db", "CREATE TABLE notes (id text)")
    assert get_importer("opencode_db").sniff(Source(data)) == 0.97
    traces, errors = _load(data)
    assert list(traces) == [SES_A, SES_B]
    assert {t.source_format for t in traces.values()} == {"opencode_storage"}
    [db_error] = [e for e in errors if e.path == str(data / "opencode.db")]
    assert "not an OpenCode database: no session, message, part" in db_error.reason
    # an opencode.db that is not SQLite at all: the folder is storage/'s
    (data / "opencode.db").write_text("not a database")
    assert get_importer("opencode_db").sniff(Source(data)) == 0.0
    assert get_importer("opencode_storage").sniff(Source(data)) == 0.95


def test_storage_without_sessions_beside_a_database(tmp_path: Path) -> None:
    # storage/ left with empty session/ and message/ folders: not an error when the database has
    # sessions; an error when nothing has any
    data = tmp_path / "opencode"
    (data / "storage" / "session").mkdir(parents=True)
    (data / "storage" / "message").mkdir()
    write_opencode_db(data / "opencode.db", sessions=[SES_B])
    traces, errors = _load(data)
    assert list(traces) == [SES_B] and errors == []
    write_opencode_db(data / "empty.db", sessions=[])
    os.replace(data / "empty.db", data / "opencode.db")
    [error] = list(iter_load(data))
    assert isinstance(error, TraceLoadError) and "no OpenCode session files" in error.reason
    assert error.path == str(data / "storage")


def test_sniffing_opens_a_database_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # ag2_runtime and opencode_db read one schema per Source, shared by the walk and the loader;
    # a data folder is sniffed without opening its databases
    walked = tmp_path / "walked"
    walked.mkdir()
    db = write_opencode_db(walked / "opencode.db")
    shutil.copy(FIX / "bus_events.jsonl", walked / "bus_events.jsonl")
    data = tmp_path / "data"
    (data / "log").mkdir(parents=True)
    write_opencode_db(data / "opencode.db", sessions=[SES_B])
    write_opencode_db(data / "opencode-dev.db")
    opened: list[str] = []
    real = sqlite3.connect

    def connect(database: str, *args: Any, **kwargs: Any) -> sqlite3.Connection:
        opened.append(database)
        return real(database, *args, **kwargs)

    monkeypatch.setattr(sqlite3, "connect", connect)
    # one sniff and one load for the file, given or walked; one load per database for the folder
    for path, connects in ((db, 2), (walked, 2), (data, 2)):
        opened.clear()
        assert any(isinstance(i, Trace) for i in list(iter_load(path)))
        assert len(opened) == connects, (path, opened)


# -- read-only -------------------------------------------------------------------------------


def test_rows_still_in_the_wal_are_read_and_nothing_is_written(tmp_path: Path) -> None:
    # OpenCode running: WAL mode, a connection open, the last rows only in opencode.db-wal
    db = write_opencode_db(tmp_path / "opencode.db", sessions=[SES_A, SES_C], wal=True)
    writer = sqlite3.connect(db)
    try:
        writer.execute("PRAGMA wal_autocheckpoint = 0")
        writer.execute(
            "INSERT INTO `session` (id, project_id, slug, directory, title, version, time_created, time_updated) "
            "VALUES ('ses_live', 'global', 'live', '/tmp', 'live one', '1.2.0', 1771000000000, 1771000000000)"
        )
        writer.execute(
            "INSERT INTO `message` VALUES ('msg_live', 'ses_live', 1771000000001, 1771000000001, ?)",
            (json.dumps({"role": "user", "time": {"created": 1771000000001}, "agent": "build"}),),
        )
        writer.execute(
            "INSERT INTO `part` VALUES ('prt_live', 'msg_live', 'ses_live', 1771000000002, 1771000000002, ?)",
            (json.dumps({"type": "text", "text": "still running"}),),
        )
        writer.commit()
        wal = db.with_name("opencode.db-wal")
        assert wal.stat().st_size > 0
        before = (_digest(db), _digest(wal))
        traces, _errors = _load(db)
        assert traces["ses_live"].task == "still running"
        assert (_digest(db), _digest(wal)) == before
        # OpenCode killed: its WAL left behind, no other connection. A connection that could
        # write would fold the WAL into the database when it closes; a read-only one leaves both
        # (this checks every connection a load makes: the sniff's and the load's)
        crashed = tmp_path / "crashed"
        crashed.mkdir()
        shutil.copy(db, crashed / "opencode.db")
        shutil.copy(wal, crashed / "opencode.db-wal")
    finally:
        writer.close()
    files = [crashed / "opencode.db", crashed / "opencode.db-wal"]
    before = [_digest(f) for f in files]
    traces, _errors = _load(crashed / "opencode.db")
    assert traces["ses_live"].task == "still running" and SES_A in traces
    assert [_digest(f) for f in files] == before


def test_one_snapshot_while_opencode_writes(tmp_path: Path) -> None:
    # rows OpenCode commits while a load is under way are not read: the load is one read transaction
    db = write_opencode_db(tmp_path / "opencode.db", wal=True)
    items = get_importer("opencode_db").load(Source(db))
    first = next(i for i in items if isinstance(i, Trace))
    assert first.trace_id == SES_A
    writer = sqlite3.connect(db)
    try:
        writer.execute(
            "INSERT INTO `message` VALUES ('msg_zzz', ?, 1, 1, ?)", (SES_B, json.dumps({"role": "user"}))
        )
        writer.execute(
            "INSERT INTO `part` VALUES ('prt_zzz', 'msg_zzz', ?, 1, 1, ?)",
            (SES_B, json.dumps({"type": "text", "text": "written during the load"})),
        )
        writer.commit()
    finally:
        writer.close()
    [rest] = [i for i in items if isinstance(i, Trace)]
    assert rest.trace_id == SES_B and "written during the load" not in [e.content for e in rest.events]
    traces, _errors = _load(db)  # the next load reads it
    assert "written during the load" in [e.content for e in traces[SES_B].events]


# -- bad input -------------------------------------------------------------------------------


def test_bad_rows_are_reported_and_the_rest_loads(tmp_path: Path) -> None:
    db = write_opencode_db(tmp_path / "opencode.db")
    con = sqlite3.connect(db)
    con.execute(
        "UPDATE `message` SET data = '{\"role\": \"user\", ' WHERE id = 'msg_9c82e4704001dr0UwfMpf5rg7w'"
    )
    con.execute("INSERT INTO `message` VALUES ('msg_zzz', ?, 1, 1, '{\"role\": \"robot\"}')", (SES_A,))
    con.execute("INSERT INTO `message` VALUES ('msg_arr', ?, 1, 1, '[1, 2]')", (SES_A,))
    con.execute(
        "INSERT INTO `part` VALUES ('prt_zzz', 'msg_9c82cc0c80016baeCN6Zj4a3dD', ?, 1, 1, '{\"text\": \"no type\"}')",
        (SES_A,),
    )
    con.execute("INSERT INTO `session` (id, project_id, slug, directory, title, version, time_created, time_updated) "
                "VALUES (NULL, 'global', '', '', '', '', 1, 1)")  # fmt: skip
    con.commit()
    con.close()
    traces, errors = _load(db)
    assert list(traces) == [SES_A, SES_B]
    reasons = sorted(e.reason for e in errors)
    assert all(e.path == str(db) for e in errors) and len(reasons) == 6
    expected = [
        "message msg_9c82e4704001dr0UwfMpf5rg7w (session ses_637d1b95fffeMzN5E6EUCLDUdv): data is not valid JSON",
        "message msg_arr (session ses_637d33fffffeKy9Pf34qY6Nb3w): data is a JSON list, not an object",
        "message msg_zzz (session ses_637d33fffffeKy9Pf34qY6Nb3w): not a message info (role 'robot')",
        f"part {BAD_PART} (message msg_9c82cd770001c360a9Y6yNd14t): data is not valid JSON",
        "part prt_zzz (message msg_9c82cc0c80016baeCN6Zj4a3dD): not a part object (no type)",
        "a session row has no id",
    ]
    for text in expected:
        assert sum(text in r for r in reasons) == 1, (text, reasons)
    # B lost its user message (and its parts with it); A is unchanged
    assert traces[SES_B].kind_counts() == {"tool_call": 1, "tool_result": 1, "message": 1}
    assert traces[SES_A].kind_counts()["tool_call"] == 4


def test_text_that_is_not_utf8_is_read_with_replacement_characters(tmp_path: Path) -> None:
    # a damaged file: TEXT cells whose bytes are not UTF-8 (the default text factory fails the query,
    # and with it the whole session)
    db = write_opencode_db(tmp_path / "opencode.db", sessions=[SES_B])
    con = sqlite3.connect(db)
    con.execute(
        "INSERT INTO `message` VALUES ('msg_zzz', ?, 1, 1, CAST(? AS TEXT))",
        (SES_B, b'{"role": "user", "agent": "b\xffuild"}'),
    )
    con.execute(
        "INSERT INTO `part` VALUES ('prt_zzz', 'msg_zzz', ?, 1, 1, CAST(? AS TEXT))",
        (SES_B, b'{"type": "text", "text": "caf\xe9 au lait"}'),
    )
    con.commit()
    con.close()
    traces, errors = _load(db)
    assert list(traces) == [SES_B] and errors == []
    assert "caf\ufffd au lait" in [e.content for e in traces[SES_B].events]


def test_project_row_that_cannot_be_read(tmp_path: Path) -> None:
    # a project table SQLite fails on (a generated column calling a function only the writer had):
    # each trace says so and still loads, without its project
    db = write_opencode_db(tmp_path / "opencode.db")
    con = sqlite3.connect(db)
    con.create_function("shout", 1, str.upper, deterministic=True)
    con.execute("ALTER TABLE `project` ADD `loud` text GENERATED ALWAYS AS (shout(worktree)) VIRTUAL")
    con.commit()
    con.close()
    traces, errors = _load(db)
    assert list(traces) == [SES_A, SES_B]
    assert all(t.raw["database"]["project"] is None for t in traces.values())
    assert [e.reason for e in errors if "project" in e.reason] == [
        f"OpenCode database: cannot read project {PROJECT} (session {SES_A}): unknown function: shout()",
        f"OpenCode database: cannot read project global (session {SES_B}): unknown function: shout()",
    ]


@pytest.mark.parametrize("cut", [0.5, 0.1])
def test_truncated_database(tmp_path: Path, cut: float) -> None:
    db = write_opencode_db(tmp_path / "opencode.db")
    data = db.read_bytes()
    db.write_bytes(data[: int(len(data) * cut)])
    items = list(iter_load(db))
    errors = [i for i in items if isinstance(i, TraceLoadError)]
    assert errors and all(e.path == str(db) and not e.internal for e in errors)
    assert any("opencode_db" in e.tried for e in errors)
    assert [e.reason for e in errors] == ["not a readable SQLite database: database disk image is malformed"]


def test_not_a_database_and_missing_tables_or_columns(tmp_path: Path) -> None:
    garbage = tmp_path / "opencode.db"
    garbage.write_bytes(b"SQLite format 3\x00" + bytes(range(256)) * 8)
    [err] = list(iter_load(garbage))
    assert isinstance(err, TraceLoadError) and err.tried == ["opencode_db"] and not err.internal
    assert err.path == str(garbage) and err.reason.startswith("not a readable SQLite database: ")
    # OpenCode's tables without a column read here: sniffed weakly, loading names what is missing
    odd = tmp_path / "odd.db"
    sqlite_file(
        odd,
        "CREATE TABLE session (id text, parent_id text)",
        "CREATE TABLE message (id text, session_id text, data text)",
        "CREATE TABLE part (id text, message_id text)",
    )
    [err] = list(iter_load(odd))
    assert isinstance(err, TraceLoadError) and "not an OpenCode database: no part.data" in err.reason
    # a table missing: not claimed; forced, the error says which
    few = tmp_path / "few.db"
    sqlite_file(few, "CREATE TABLE session (id text, parent_id text)")
    assert get_importer("opencode_db").sniff(Source(few)) == 0.0
    [err] = list(iter_load(few, format="opencode_db"))
    assert isinstance(err, TraceLoadError) and "no message, part" in err.reason
    # a data folder whose database is damaged: reported, and storage/ still loads
    data = tmp_path / "data"
    shutil.copytree(STORAGE, data / "storage")
    (data / "log").mkdir()
    shutil.copy(garbage, data / "opencode.db")
    traces, errors = _load(data)
    assert list(traces) == [SES_A, SES_B] and {t.source_format for t in traces.values()} == {
        "opencode_storage"
    }
    assert str(data / "opencode.db") in [e.path for e in errors]


FUZZ = settings(
    max_examples=int(os.environ.get("MASTKIT_FUZZ_EXAMPLES", "40")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)


@functools.cache
def _seed_db() -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        return write_opencode_db(Path(tmp) / "opencode.db").read_bytes()


def _mutate(raw: bytes, rnd: random.Random) -> bytes:
    n = len(raw)
    i = rnd.randrange(n)
    op = rnd.randrange(4)
    if op == 0:
        return raw[:i]  # truncated
    if op == 1:
        b = bytearray(raw)
        for _ in range(rnd.randint(1, 16)):
            b[rnd.randrange(100, n)] = rnd.randrange(256)  # damaged pages, header intact
        return bytes(b)
    if op == 2:
        j = min(n, i + rnd.randint(1, 4096))
        return raw[:i] + raw[j:]  # a range gone
    b = bytearray(raw)
    b[i : i + 8] = rnd.randbytes(8)  # anywhere, the header too
    return bytes(b)


@FUZZ
@given(seed=st.integers(0, 2**32 - 1))
def test_damaged_databases_never_crash(seed: int) -> None:
    rnd = random.Random(seed)
    folder = Path(tempfile.mkdtemp())
    try:
        path = folder / "opencode.db"
        path.write_bytes(_mutate(_seed_db(), rnd))
        for fmt in (None, "opencode_db"):
            assert_loads_cleanly(path, format=fmt)
    finally:
        shutil.rmtree(folder)
