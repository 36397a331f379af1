"""OpenCode's on-disk storage folder (``~/.local/share/opencode/storage``), one JSON file per record.

Layout (OpenCode up to 1.1.x; ``Storage.write(key)`` writes ``<storage>/<key...>.json``)::

    storage/
      project/<projectID>.json                 {id, worktree, vcs, time}
      session/<projectID>/<sessionID>.json     session info {id, parentID?, projectID, version, title, time, ...}
      message/<sessionID>/<messageID>.json     message info {id, sessionID, role, agent/mode, modelID, tokens, ...}
      part/<messageID>/<partID>.json           part {id, sessionID, messageID, type, ...}
      todo/<sessionID>.json                    [{content, status, priority, id}]
      session_diff/<sessionID>.json, session_share/, permission/, migration, quarantine/

Ids carry their creation time: ``<prefix>_`` + 12 hex digits (the low 48 bits of ``ms * 0x1000 +
counter``) + random characters; message and part ids ascend (OpenCode lists them sorted by id),
session ids descend. Given the storage folder, the OpenCode data folder holding it, or one
``session/<projectID>`` folder, this importer gives one trace per root session, its child sessions
(``parentID``) merged into it, with the mapping of :class:`~mastkit.traces.importers.opencode.
OpenCodeMapping` -- the same events as ``opencode export`` of that session. Records are placed in
id order across the sessions of a trace, and a finished tool's result at its ``state.time.end``
(so a ``task`` result follows the sub-agent's work). A file that cannot be read is a
:class:`~mastkit.errors.TraceLoadError` naming it, and the rest loads.

OpenCode 1.2.0 moved to a SQLite database (``<data>/opencode.db``) and imports the JSON files once;
the folder then stays as a frozen copy of the sessions made before the upgrade. The database is read
by :mod:`~mastkit.traces.importers.opencode_db`, which takes the data folder when it holds one and
reads from ``storage/`` only the sessions no database holds. What both readers share (which
sessions make one trace, the order records are placed in) is :class:`StoredSessionsMapping`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from mastkit.errors import FormatError, TraceLoadError
from mastkit.traces._build import read_json_file
from mastkit.traces.importers.opencode import OpenCodeMapping, _Recording, _str, tool_finished
from mastkit.traces.model import Trace
from mastkit.traces.registry import Importer, register
from mastkit.traces.source import Source

_ID_TIME = re.compile(r"^[a-z]{3}_([0-9a-f]{12})")
_MASK48 = (1 << 48) - 1
# storage sub-folders read only through their session (never loaded file by file)
_READ_VIA_SESSION = frozenset(
    ("message", "part", "todo", "session_diff", "project", "session_share", "permission", "quarantine")
)


# what OpenCode keeps in its data folder (<XDG_DATA_HOME>/opencode) besides its databases
_DATA_MARKERS = ("storage", "auth.json", "log", "snapshot", "bin")
# opencode.db, or opencode-<channel>.db (Database.Path: every channel but latest/beta has its own)
_DB_NAME = re.compile(r"^opencode(?:-[A-Za-z0-9._-]+)?\.db$")


def _is_data_folder(folder: Path) -> bool:
    """OpenCode's data folder: two of what OpenCode keeps there (the entries of ``_DATA_MARKERS``,
    an ``opencode.db`` / ``opencode-<channel>.db``). One alone -- a ``storage/`` folder or an
    ``opencode.db`` next to other traces -- is not enough: such a folder is walked, not taken whole."""
    found = sum((folder / m).exists() for m in _DATA_MARKERS)
    return found > 1 or (found == 1 and bool(data_dbs(folder)))


def data_dbs(folder: Path) -> list[Path]:
    """The OpenCode databases of a data folder: ``opencode.db`` first, then the channel databases."""
    try:
        with os.scandir(folder) as it:
            names = [e.name for e in it if _DB_NAME.match(e.name) and e.is_file()]
    except OSError:
        return []
    return [folder / n for n in sorted(names, key=lambda n: (n != "opencode.db", n))]


def _is_storage(folder: Path) -> bool:
    return (folder / "session").is_dir() and (folder / "message").is_dir()


def _layout(folder: Path) -> tuple[Path, str | None] | None:
    """``(storage folder, project id or None)`` for a storage folder, the data folder holding one,
    or a ``session/<projectID>`` folder; None otherwise."""
    if _is_storage(folder):
        return folder, None
    if _is_storage(folder / "storage") and _is_data_folder(folder):
        return folder / "storage", None
    if folder.parent.name == "session" and _is_storage(folder.parent.parent):
        return folder.parent.parent, folder.name
    return None


def _is_record_file(name: str) -> bool:
    """A record file's name: ``<id>.json`` (dotfiles -- editor and OS leftovers -- are not records)."""
    return name.endswith(".json") and not name.startswith(".")


def _json_files(folder: Path) -> list[Path]:
    """The ``*.json`` files of ``folder``, sorted by name (= by id); [] when it does not exist."""
    try:
        with os.scandir(folder) as it:
            names = [e.name for e in it if _is_record_file(e.name)]
    except OSError:
        return []
    return [folder / n for n in sorted(names)]


def _has_json(folder: Path) -> bool:
    try:
        with os.scandir(folder) as it:
            return any(_is_record_file(e.name) for e in it)
    except OSError:
        return False


def _session_files(storage: Path, project: str | None) -> list[Path]:
    sessions = storage / "session"
    if project is not None:
        return _json_files(sessions / project)
    try:
        projects = sorted(p for p in sessions.iterdir() if p.is_dir())
    except OSError:
        return []
    return [f for p in projects for f in _json_files(p)]


def _id_key(rid: Any) -> int | None:
    """The creation-time bits of an OpenCode id (comparable across ids of one process)."""
    m = _ID_TIME.match(rid) if isinstance(rid, str) else None
    return int(m.group(1), 16) if m else None


def _ms_key(ms: Any) -> int | None:
    """A time in ms as the last id that could be made in that ms (see ``_id_key``)."""
    if not isinstance(ms, (int, float)) or isinstance(ms, bool):
        return None
    return (int(ms) * 0x1000 + 0xFFF) & _MASK48


# where a stored record came from: (file, pointer inside it or None)
Where = tuple[str, str | None]


class StoredSessionsMapping(OpenCodeMapping):
    """The reading rules shared by OpenCode's stores of finished records -- the storage folder and
    the SQLite database: which sessions make one trace, and where each record is placed."""

    def _session_groups(
        self, index: _Recording, skip: frozenset[str] | set[str] = frozenset()
    ) -> list[tuple[str, list[str]]]:
        """``(root, members)`` for the sessions of ``index`` (session infos only): a root and its
        child sessions (``parentID``) make one trace; roots oldest first, each root before its
        children, children oldest first. Sessions in ``skip`` (loaded from another store) are left
        out of their group, so none is loaded twice and none is lost: a group left empty is dropped,
        one that lost its root is led by its oldest remaining session."""
        groups: dict[str, list[str]] = {}
        for sid in index.sessions:
            groups.setdefault(self._root(index, sid), []).append(sid)

        def created(sid: str) -> tuple[float, str]:
            t = index.sessions[sid].info.get("time")
            c = t.get("created") if isinstance(t, dict) else None
            return (float(c) if isinstance(c, (int, float)) else 0.0, sid)

        out: list[tuple[str, list[str]]] = []
        for root in sorted(groups, key=created):
            members = [
                s for s in sorted(groups[root], key=lambda s: (s != root, created(s))) if s not in skip
            ]
            if members:
                out.append((members[0], members))
        return out

    def _place(
        self,
        st: _Recording,
        sessions: Sequence[tuple[dict[str, Any], Where]],
        records: Sequence[tuple[str, dict[str, Any], Where]],
    ) -> None:
        """Fill ``st`` with the session infos, then the ``message`` / ``part`` records of every
        session of one trace (given session by session, each message followed by its parts), placed
        by the creation time in their ids across the sessions; a finished tool's result goes where
        the tool ended (``state.time.end``). Records whose ids carry no time keep their order."""
        for info, (path, pointer) in sessions:
            self._event(st, "session.updated", {"info": info}, None, st.at(path, pointer))
        ops: list[tuple[int, str, dict[str, Any], Where]] = []
        key = 0
        for kind, rec, where in records:
            key = _id_key(rec.get("id")) or key
            ops.append((key, kind, rec, where))
            if kind == "part" and tool_finished(rec):
                times = rec["state"].get("time")
                end = times.get("end") if isinstance(times, dict) else None
                ops.append((max(key, _ms_key(end) or key), "result", rec, where))
        ops.sort(key=lambda op: op[0])  # stable: records with no id time keep their order
        for _key, kind, rec, (path, pointer) in ops:
            ln = st.at(path, pointer)
            if kind == "message":
                self._event(st, "message.updated", {"info": rec}, rec, ln)
            elif kind == "part":
                st.put_part(rec, ln, defer_result=True)
            else:
                st.put_result(rec["id"], rec["sessionID"], ln)
        st.events.clear()


@register
class OpenCodeStorageImporter(StoredSessionsMapping, Importer):
    name = "opencode_storage"
    description = (
        "OpenCode storage folders (~/.local/share/opencode/storage: session/, message/, part/ JSON "
        "files; OpenCode <= 1.1), one trace per root session"
    )
    handles_dirs = True

    def consumes(self, path: Path) -> bool:
        # message/<sessionID>, part/<messageID>, todo/... of a storage folder being walked are read
        # through their session, never one by one
        parent = path.parent
        return parent.name in _READ_VIA_SESSION and _is_storage(parent.parent)

    def sniff(self, src: Source) -> float:
        if not src.is_dir:
            return 0.0
        layout = _layout(src.path)
        if layout is None:
            return 0.0
        if layout[1] is not None:
            return 0.9 if _has_json(src.path) else 0.0
        return 0.95

    def load(self, src: Source) -> Iterator[Trace | TraceLoadError]:
        layout = _layout(src.path) if src.is_dir else None
        if layout is None:
            raise FormatError("not an OpenCode storage folder (no session/ and message/ folders)")
        storage, project = layout
        yield from self.load_storage(src, storage, project)

    def load_storage(
        self, src: Source, storage: Path, project: str | None, skip: frozenset[str] = frozenset()
    ) -> Iterator[Trace | TraceLoadError]:
        """The traces of a storage folder (of one project when ``project`` is given), without the
        sessions in ``skip`` (already read from a database). Raises
        FormatError when no session file could be read (the caller decides whether that matters)."""
        index = _Recording()  # session infos only: which sessions make one trace
        files: dict[str, Path] = {}
        for path in _session_files(storage, project):
            info = read_json_file(path, "OpenCode session file")
            if isinstance(info, TraceLoadError):
                yield info
                continue
            if not isinstance(info, dict):
                yield TraceLoadError(path, "OpenCode session file: not a session info object")
                continue
            sid = path.stem
            if info.get("id") != sid:
                info = {**info, "id": sid}
            index.session(sid, 0).info = info
            files[sid] = path
        if not files:
            where = f"session/{project}" if project is not None else "session/<projectID>"
            raise FormatError(f"no OpenCode session files ({where}/<sessionID>.json)")
        projects: dict[str, Any] = {}  # project file contents, read once for all its sessions
        for root, members in self._session_groups(index, skip):
            yield from self._group(src, storage, root, members, index, files, projects)

    def _group(
        self,
        src: Source,
        storage: Path,
        root: str,
        members: list[str],
        index: _Recording,
        files: dict[str, Path],
        projects: dict[str, Any],
    ) -> Iterator[Trace | TraceLoadError]:
        st = _Recording()
        records: list[tuple[str, dict[str, Any], Where]] = []
        no_parts: list[str] = []
        todos: dict[str, Any] = {}
        for sid in members:
            for mpath in _json_files(storage / "message" / sid):
                msg = read_json_file(mpath, f"OpenCode message file (session {sid})")
                if isinstance(msg, TraceLoadError):
                    yield msg
                    continue
                if not isinstance(msg, dict) or msg.get("role") not in ("user", "assistant"):
                    yield TraceLoadError(mpath, f"OpenCode message file (session {sid}): not a message info")
                    continue
                # ids come from the paths, as OpenCode's own JSON -> SQLite import takes them
                mid = mpath.stem
                if msg.get("id") != mid or msg.get("sessionID") != sid:
                    msg = {**msg, "id": mid, "sessionID": sid}
                records.append(("message", msg, (str(mpath), None)))
                part_dir = storage / "part" / mid
                if not part_dir.is_dir():
                    no_parts.append(mid)  # OpenCode writes the message before its parts; none came
                    continue
                for ppath in _json_files(part_dir):
                    part = read_json_file(ppath, f"OpenCode part file (message {mid})")
                    if isinstance(part, TraceLoadError):
                        yield part
                        continue
                    if not isinstance(part, dict) or not _str(part.get("type")):
                        yield TraceLoadError(ppath, f"OpenCode part file (message {mid}): not a part object")
                        continue
                    ids = {"id": ppath.stem, "sessionID": sid, "messageID": mid}
                    if any(part.get(k) != v for k, v in ids.items()):
                        part = {**part, **ids}
                    records.append(("part", part, (str(ppath), None)))
            todo_path = storage / "todo" / f"{sid}.json"
            if todo_path.is_file():
                todo = read_json_file(todo_path, "OpenCode todo file")
                if isinstance(todo, TraceLoadError):
                    yield todo
                else:
                    todos[sid] = todo
        self._place(st, [(index.sessions[sid].info, (str(files[sid]), None)) for sid in members], records)
        project_id = _str(index.sessions[root].info.get("projectID")) or files[root].parent.name
        if project_id not in projects:
            project_info = None
            project_path = storage / "project" / f"{project_id}.json"
            if project_path.is_file():
                project_info = read_json_file(project_path, "OpenCode project file")
                if isinstance(project_info, TraceLoadError):
                    yield project_info  # reported once, with the first of its sessions
                    project_info = None
            projects[project_id] = project_info
        project_info = projects[project_id]
        st.raw_extra["storage"] = {
            "folder": str(storage),
            "project": project_info,
            "todos": todos,
            "messages_without_parts": no_parts,
        }
        yield from self._traces(src, st)
