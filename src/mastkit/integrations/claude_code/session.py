"""Per-session state of the Claude Code hooks: one small JSON file per ``session_id``.

Each hook call is its own process, so the guarded run lives on disk between calls:
``<state dir>/sessions/<session>.json`` holds the current turn's canonical events (guard events
included) and when the turn started. A call takes an exclusive lock on
``<session>.lock`` (``fcntl.flock``; none on systems without it), reads the file, and writes it
back atomically (a temporary file in the same folder, then ``os.replace``), so parallel hook
calls of one session do not lose events and a killed call leaves the old file whole.

Finished turns are appended as canonical traces to ``<state dir>/traces/<session>.jsonl``, which
``mastkit annotate`` and ``mastkit report`` read like any other trace file.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from pydantic import TypeAdapter

from mastkit.traces.model import Event

_EVENTS = TypeAdapter(list[Event])
_SAFE = re.compile(r"[^A-Za-z0-9._-]")


def default_state_dir() -> Path:
    """``$MASTKIT_HOOK_STATE_DIR``, else ``$XDG_STATE_HOME/mastkit/hooks``, else
    ``~/.local/state/mastkit/hooks``."""
    env = os.environ.get("MASTKIT_HOOK_STATE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "mastkit" / "hooks"


def session_key(session_id: str) -> str:
    """A file name for a session id: the id itself when it is safe, else a cleaned id plus a hash."""
    cleaned = _SAFE.sub("_", session_id)[:80]
    if cleaned == session_id and cleaned not in ("", ".", ".."):
        return cleaned
    return f"{cleaned}-{hashlib.sha256(session_id.encode()).hexdigest()[:12]}"


@dataclass
class SessionRecord:
    """What is kept of one session between hook calls."""

    session_id: str
    turn: int = 1
    """Number of the current turn (a user prompt and the work it starts)."""
    started_at: float = field(default_factory=time.time)
    """Wall-clock start of the turn (the run clock of the budgets)."""
    ended: bool = False
    """True once Claude was let stop (the next tool call or prompt starts a new turn)."""
    saved: bool = False
    """True once the turn was written to the traces file."""
    events: list[Event] = field(default_factory=list)

    def to_json(self) -> bytes:
        head = {
            "version": 1,
            "session_id": self.session_id,
            "turn": self.turn,
            "started_at": self.started_at,
            "ended": self.ended,
            "saved": self.saved,
        }
        events = _EVENTS.dump_json(self.events, exclude_none=True, exclude_defaults=True)
        return orjson.dumps(head)[:-1] + b',"events":' + events + b"}"

    @classmethod
    def from_json(cls, data: bytes) -> SessionRecord:
        doc: dict[str, Any] = orjson.loads(data)
        return cls(
            session_id=str(doc["session_id"]),
            turn=int(doc.get("turn", 1)),
            started_at=float(doc.get("started_at", time.time())),
            ended=bool(doc.get("ended", False)),
            saved=bool(doc.get("saved", False)),
            events=_EVENTS.validate_python(doc.get("events") or []),
        )


class SessionStore:
    """The session files under one state folder."""

    def __init__(self, root: str | Path | None = None) -> None:
        self.root = Path(root) if root is not None else default_state_dir()
        self.sessions = self.root / "sessions"
        self.traces = self.root / "traces"

    def path(self, session_id: str) -> Path:
        return self.sessions / f"{session_key(session_id)}.json"

    def trace_path(self, session_id: str) -> Path:
        return self.traces / f"{session_key(session_id)}.jsonl"

    @contextlib.contextmanager
    def locked(self, session_id: str) -> Iterator[None]:
        """Hold the session's lock for the block (parallel calls of one session wait)."""
        self.sessions.mkdir(parents=True, exist_ok=True)
        lock_path = self.sessions / f"{session_key(session_id)}.lock"
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            try:
                import fcntl
            except ImportError:  # pragma: no cover - Windows: no lock
                fcntl = None  # type: ignore[assignment]
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing releases the lock

    def load(self, session_id: str) -> SessionRecord | None:
        """The stored record, or None when there is none (or it cannot be read)."""
        try:
            data = self.path(session_id).read_bytes()
        except FileNotFoundError:
            return None
        record = SessionRecord.from_json(data)
        return record

    def save(self, record: SessionRecord) -> None:
        """Write the record atomically."""
        path = self.path(record.session_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(record.to_json())
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    def append_trace(self, session_id: str, line: bytes) -> Path:
        """Append one canonical trace line to the session's traces file."""
        path = self.trace_path(session_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("ab") as fh:
            fh.write(line.rstrip(b"\n") + b"\n")
        return path
