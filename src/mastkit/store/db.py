"""The annotation store: one SQLite file (stdlib, WAL) holding runs, traces, annotations,
per-mode verdicts, every model call, a content-addressed response cache and per-trace errors.

Why SQLite: no server, no dependency, one file users can copy; WAL mode lets several
processes (Ray workers, a report reading while a run writes) share it, and each trace's
result is committed in one transaction — a run killed at any moment resumes with nothing
lost and nothing duplicated (annotations are keyed by trace content hash + configuration
hash). Heavy analytics can attach the file from DuckDB or read the Parquet export.

What "a trace" is here (schema 2):

* A stored trace is its content: ``Trace.content_hash()`` (which leaves out where the file
  was). Its body and metadata are kept once per hash (``trace_bodies``); annotations,
  verdicts and attributions are keyed by it. The trace_id is a label two traces may share.
* A *trace key* is (trace_id, first source path). Each upsert makes its hash the latest
  version of its key (``trace_versions``, ordered by ``seq``): a file edited and annotated
  again supersedes its old results; the same content read from two folders stays one trace;
  two files holding different traces with the same id stay two.
* Every reader (annotations, verdict rows, exports, attributions, the trace list, run counts)
  takes, for each trace key and run, the result on the most recently upserted version that
  has one: :func:`_latest` is the only definition.

Schema changes are append-only migrations (``_MIGRATIONS``); a shipped one is never edited.
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import secrets
import sqlite3
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mastkit.annotate.model import Annotation, AnnotatorConfig
from mastkit.attribute.model import Attribution
from mastkit.errors import MissingDependencyError, StoreError
from mastkit.traces.model import Trace

DEFAULT_TIMEOUT_S = 30.0
"""Seconds a write waits for another process's lock on the file before giving up."""

TIMEOUT_ENV = "MASTKIT_DB_TIMEOUT"
"""Environment variable overriding :data:`DEFAULT_TIMEOUT_S` (seconds)."""


def _default_timeout() -> float:
    raw = os.environ.get(TIMEOUT_ENV, "").strip()
    if not raw:
        return DEFAULT_TIMEOUT_S
    try:
        value = float(raw)
    except ValueError:
        raise StoreError(f"{TIMEOUT_ENV}={raw!r}: expected a number of seconds") from None
    if value < 0:
        raise StoreError(f"{TIMEOUT_ENV}={raw!r}: expected a number of seconds >= 0")
    return value


def _explain(path: str, exc: sqlite3.Error, timeout: float) -> StoreError:
    """A :class:`StoreError` saying in plain words what went wrong with the file and what to do.

    SQLite's own message ("attempt to write a readonly database", "database or disk is full",
    "database is locked") is kept in brackets; the error code picks the advice.
    """
    code = str(getattr(exc, "sqlite_errorname", "") or "")
    text = str(exc)
    name = Path(path).name
    if code.startswith("SQLITE_READONLY") or "readonly" in text:
        why = (
            f"cannot write the store {path}: it is read-only [{text}]. Check the permissions of the file "
            f"and of its folder (SQLite also writes {name}-wal and {name}-shm next to it), or pick "
            "another file with --db"
        )
    elif code.startswith("SQLITE_FULL") or "disk is full" in text:
        why = (
            f"cannot write the store {path}: the disk is full [{text}]. Free some space and run again: "
            "what was stored is kept and is not redone"
        )
    elif code.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in text:
        why = (
            f"the store {path} is locked by another process; gave up after waiting {timeout:g} s [{text}]. "
            f"Run again when it is done, or set {TIMEOUT_ENV} (seconds) to wait longer"
        )
    elif code.startswith("SQLITE_CANTOPEN") or "unable to open" in text:
        why = (
            f"cannot open the store {path} [{text}]: does its folder exist, and may this user create "
            "files in it?"
        )
    elif code.startswith(("SQLITE_NOTADB", "SQLITE_CORRUPT")):
        why = f"{path} is not a mastkit store, or it is damaged [{text}]"
    elif code.startswith("SQLITE_IOERR"):
        why = f"cannot read or write the store {path}: input/output error [{text}]; is the disk full or failing?"
    else:
        why = f"store {path}: {text}"
    return StoreError(why)


def trace_hash(trace: Trace) -> str:
    """Content hash of a trace (see ``Trace.content_hash``): unchanged content ⇒ same hash ⇒ cache hit."""
    return trace.content_hash()


_M001: tuple[str, ...] = (
    """CREATE TABLE runs (
        config_hash TEXT PRIMARY KEY, kind TEXT NOT NULL, model TEXT, taxonomy_id TEXT, taxonomy_version TEXT,
        config_json TEXT NOT NULL, created_at REAL NOT NULL)""",
    """CREATE TABLE traces (
        trace_id TEXT PRIMARY KEY, trace_hash TEXT NOT NULL, source_format TEXT, framework TEXT, model TEXT,
        benchmark TEXT, task_id TEXT, n_events INTEGER, success INTEGER, path TEXT, meta_json TEXT,
        added_at REAL NOT NULL, trace_zjson BLOB)""",
    """CREATE TABLE annotations (
        trace_hash TEXT NOT NULL, config_hash TEXT NOT NULL, trace_id TEXT NOT NULL,
        annotation_json TEXT NOT NULL, created_at REAL NOT NULL, PRIMARY KEY (trace_hash, config_hash))""",
    "CREATE INDEX annotations_trace ON annotations (trace_id, config_hash)",
    """CREATE TABLE verdicts (
        trace_hash TEXT NOT NULL, config_hash TEXT NOT NULL, trace_id TEXT NOT NULL, code TEXT NOT NULL,
        verdict TEXT NOT NULL, confidence REAL, first_seq INTEGER, agent TEXT,
        PRIMARY KEY (trace_hash, config_hash, code))""",
    "CREATE INDEX verdicts_config ON verdicts (config_hash, code, verdict)",
    """CREATE TABLE calls (
        id INTEGER PRIMARY KEY AUTOINCREMENT, trace_id TEXT, config_hash TEXT, provider TEXT, model TEXT,
        request_hash TEXT, input_tokens INTEGER, output_tokens INTEGER, cost_usd REAL, latency_s REAL,
        attempts INTEGER, status TEXT, error TEXT, cached INTEGER NOT NULL DEFAULT 0, created_at REAL NOT NULL)""",
    "CREATE INDEX calls_config ON calls (config_hash)",
    """CREATE TABLE responses (
        request_hash TEXT PRIMARY KEY, model TEXT, text TEXT NOT NULL, input_tokens INTEGER,
        output_tokens INTEGER, cost_usd REAL, created_at REAL NOT NULL)""",
    """CREATE TABLE attributions (
        trace_hash TEXT NOT NULL, trace_id TEXT NOT NULL, method TEXT NOT NULL, method_hash TEXT NOT NULL,
        agent TEXT, step INTEGER, mode TEXT, confidence REAL, reason TEXT, created_at REAL NOT NULL,
        PRIMARY KEY (trace_hash, method_hash))""",
    """CREATE TABLE errors (
        id INTEGER PRIMARY KEY AUTOINCREMENT, stage TEXT NOT NULL, path TEXT, trace_id TEXT, config_hash TEXT,
        reason TEXT NOT NULL, created_at REAL NOT NULL)""",
)
"""Schema 1 (shipped as one ';'-separated script; the same statements, now one per entry)."""

_M002: tuple[str, ...] = (
    # A stored trace is its content: one body and one metadata row per content hash.
    """CREATE TABLE trace_bodies (
        trace_hash TEXT PRIMARY KEY, trace_id TEXT NOT NULL, source_format TEXT, framework TEXT, model TEXT,
        benchmark TEXT, task_id TEXT, n_events INTEGER, success INTEGER, meta_json TEXT, zjson BLOB)""",
    # Where each content was seen: a trace key (trace_id, first source path) and the versions
    # (content hashes) upserted under it; seq orders the upserts of the whole file.
    """CREATE TABLE trace_versions (
        trace_id TEXT NOT NULL, path TEXT NOT NULL, trace_hash TEXT NOT NULL, seq INTEGER NOT NULL,
        added_at REAL NOT NULL, PRIMARY KEY (trace_id, path, trace_hash))""",
    "CREATE INDEX trace_versions_hash ON trace_versions (trace_hash)",
    "CREATE UNIQUE INDEX trace_versions_seq ON trace_versions (seq)",
    """INSERT INTO trace_bodies
        SELECT trace_hash, trace_id, source_format, framework, model, benchmark, task_id, n_events, success,
               meta_json, trace_zjson
        FROM traces""",
    # Schema 1 kept one row per trace id (the last upserted version) and annotations of older
    # versions: those older versions go first, in the order they were annotated, so the trace
    # row's version is the latest of its key, as it was.
    """INSERT INTO trace_versions (trace_id, path, trace_hash, seq, added_at)
        SELECT trace_id, path, trace_hash, ROW_NUMBER() OVER (ORDER BY current, at, trace_hash), at FROM (
            SELECT o.trace_id, COALESCE(t.path, '') AS path, o.trace_hash, MIN(o.at) AS at, 0 AS current
            FROM (SELECT trace_id, trace_hash, created_at AS at FROM annotations
                  UNION ALL SELECT trace_id, trace_hash, created_at FROM attributions) o
            LEFT JOIN traces t ON t.trace_id = o.trace_id
            WHERE o.trace_hash NOT IN (SELECT trace_hash FROM traces)
            GROUP BY o.trace_hash
            UNION ALL
            SELECT trace_id, COALESCE(path, ''), trace_hash, added_at, 1 FROM traces)""",
    "DROP TABLE traces",
    "ALTER TABLE errors ADD COLUMN trace_hash TEXT",
    "CREATE INDEX errors_config ON errors (config_hash, trace_id)",
    "CREATE INDEX attributions_method ON attributions (method)",
    """INSERT OR REPLACE INTO meta VALUES ('schema_2',
        'a stored trace is its content hash; trace_id is a label; bodies are kept per hash')""",
)
"""Schema 2: traces identified by content hash, versions per trace key, bodies per hash."""

_M003: tuple[str, ...] = (
    # One row per calibration run of an annotator configuration (mastkit.calibration); the
    # result is a JSON document; model, prompt and taxonomy are columns for the nearest-match lookup.
    """CREATE TABLE calibrations (
        id INTEGER PRIMARY KEY AUTOINCREMENT, config_hash TEXT NOT NULL, kind TEXT, model TEXT,
        prompt_version TEXT, taxonomy_id TEXT, taxonomy_version TEXT, set_version TEXT,
        result_json TEXT NOT NULL, created_at REAL NOT NULL)""",
    "CREATE INDEX calibrations_config ON calibrations (config_hash)",
)
"""Schema 3: measured agreement of annotator configurations on the calibration set."""

_M004: tuple[str, ...] = (
    # One row per `mastkit verify --eval`: the table (mastkit.verify.Evaluation.as_dict) as JSON,
    # with a label (what was evaluated); the report shows the latest.
    """CREATE TABLE verify_evals (
        id INTEGER PRIMARY KEY AUTOINCREMENT, label TEXT NOT NULL, result_json TEXT NOT NULL,
        created_at REAL NOT NULL)""",
)
"""Schema 4: best-of-N verifier evaluations."""

_MIGRATIONS: list[tuple[str, ...]] = [_M001, _M002, _M003, _M004]
"""Append-only: entry i holds the statements that take a file from schema i to schema i + 1.
Each statement is run on its own (never split on ';', which string literals and triggers contain),
all of one migration in one transaction."""


def _latest(table: str, keep: str, per: str = "", tiebreak: str = "") -> str:
    """The one definition of "the latest" for per-trace results, as a CTE named ``latest``.

    A trace key is (trace_id, first source path); its versions are the content hashes upserted
    under it, ordered by ``trace_versions.seq``. For each trace key and each value of ``per``
    (e.g. ``config_hash``), the row of ``table`` on the most recently upserted version that has
    such a row wins; ``tiebreak`` orders rows of one version. A content seen under several keys
    (the same trace read from two folders) is one trace: its row appears once. ``keep`` lists
    the columns of ``table`` the CTE returns (with ``trace_hash``).
    """
    cols = ", ".join(f"x.{c.strip()}" for c in keep.split(","))
    partition = "v.trace_id, v.path" + "".join(f", x.{c.strip()}" for c in per.split(",") if c.strip())
    order = "v.seq DESC" + (f", {tiebreak}" if tiebreak else "")
    return (
        f"latest AS (SELECT DISTINCT trace_hash, {keep} FROM ("
        f"SELECT x.trace_hash, {cols}, ROW_NUMBER() OVER (PARTITION BY {partition} ORDER BY {order}) AS rn "
        f"FROM {table} x JOIN trace_versions v ON v.trace_hash = x.trace_hash) WHERE rn = 1)"
    )


_LATEST_ANNOTATIONS = _latest("annotations", "config_hash", per="config_hash")
_LATEST_VERSIONS = _latest("trace_bodies", "trace_id")
"""Per trace key, the most recently upserted version whose body the store holds."""


_ATTRIBUTION_ORDER = "x.created_at DESC, x.rowid DESC"
"""Of several attributions of one trace version (methods, options), the one stored last first."""


def _attribution(r: Sequence[Any]) -> Attribution:
    """An Attribution from (agent, step, mode, confidence, reason, method) columns."""
    return Attribution(agent=r[0], step=r[1], mode=r[2], confidence=r[3], reason=r[4], method=r[5])


@dataclass(frozen=True)
class StoredAnnotation:
    """An annotation with the identity of the trace version it was made on."""

    trace_hash: str
    """Content hash of the judged trace (its identity in the store)."""
    trace_id: str
    """The trace's own id: a label, which two different traces may share."""
    path: str | None
    """The file the judged version was last read from ('' or None when unknown)."""
    annotation: Annotation


@dataclass(frozen=True)
class CachedResponse:
    text: str
    model: str | None
    input_tokens: int
    output_tokens: int
    cost_usd: float


class Store:
    """A mastkit database file. Safe to share between threads (one lock) and processes (WAL)."""

    def __init__(self, path: str | Path = "mastkit.db", *, timeout: float | None = None) -> None:
        """Open (or create) the store at ``path``.

        ``timeout``: seconds a write waits while another process holds the file's write lock
        (default: ``MASTKIT_DB_TIMEOUT`` or 30). Past it, and whenever the file cannot be
        written (read-only, disk full), the store raises :class:`StoreError` with what to do.
        """
        self.path = str(path)
        self.timeout = _default_timeout() if timeout is None else max(0.0, timeout)
        try:
            self._db = sqlite3.connect(
                self.path, timeout=self.timeout, check_same_thread=False, isolation_level=None
            )
        except sqlite3.Error as exc:
            raise _explain(self.path, exc, self.timeout) from None
        self._lock = threading.RLock()
        self._fence: bytes | None = None
        try:
            self._db.execute(f"PRAGMA busy_timeout = {int(self.timeout * 1000)}")
            if self.path != ":memory:":
                self._retry_locked(lambda: self._db.execute("PRAGMA journal_mode = WAL"), self.timeout)
            self._db.execute("PRAGMA synchronous = NORMAL")
            self._migrate()
        except sqlite3.Error as exc:
            self._db.close()
            raise _explain(self.path, exc, self.timeout) from None
        except BaseException:
            self._db.close()
            raise

    @classmethod
    def memory(cls) -> Store:
        return cls(":memory:")

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- plumbing ------------------------------------------------------------------------

    def _retry_locked(self, step: Callable[[], object], seconds: float = 30.0) -> None:
        """Run ``step``, retrying while the file is locked. SQLite answers "database is locked" at
        once, without waiting for the busy timeout, when waiting could deadlock: e.g. several
        processes opening a new file together and each switching it to WAL."""
        deadline = time.monotonic() + seconds
        delay = 0.005
        while True:
            try:
                step()
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() + delay > deadline:
                    raise
            time.sleep(delay)
            delay = min(delay * 2, 0.25)

    def _migrate(self) -> None:
        with self._lock:
            self._db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
            row = self._db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            version = int(row[0]) if row else 0
            if version > len(_MIGRATIONS):
                raise StoreError(
                    f"{self.path} was written by a newer mastkit (schema {version}); upgrade mastkit"
                )
            for i, statements in enumerate(_MIGRATIONS[version:], start=version + 1):
                self._db.execute(
                    "BEGIN IMMEDIATE"
                )  # the write lock: another process may have migrated meanwhile
                try:
                    row = self._db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
                    if row is None or int(row[0]) < i:
                        for statement in statements:
                            self._db.execute(statement)
                        self._db.execute(
                            "INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", (str(i),)
                        )
                    self._db.execute("COMMIT")
                except BaseException:
                    self._rollback()
                    raise

    def _rollback(self) -> None:
        """Roll back the open transaction, if SQLite has not already done so itself (it does on
        some errors, e.g. a full disk; a second ROLLBACK would then hide the real error)."""
        if self._db.in_transaction:
            with contextlib.suppress(sqlite3.Error):  # the error being raised says more than this one
                self._db.execute("ROLLBACK")

    def _tx(self, fn: Callable[[sqlite3.Connection], Any]) -> Any:
        """Run ``fn`` in one write transaction; SQLite errors become a :class:`StoreError`."""
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    out = fn(self._db)
                    self._db.execute("COMMIT")
                    return out
                except BaseException:
                    self._rollback()
                    raise
            except sqlite3.Error as exc:
                raise _explain(self.path, exc, self.timeout) from None

    def _query(self, sql: str, params: Iterable[Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            try:
                cur = self._db.execute(sql, tuple(params))
                cur.row_factory = sqlite3.Row
                return cur.fetchall()
            except sqlite3.Error as exc:
                raise _explain(self.path, exc, self.timeout) from None

    # -- runs and traces -----------------------------------------------------------------

    def register_run(self, config: AnnotatorConfig) -> str:
        h = config.config_hash()
        self._tx(
            lambda db: db.execute(
                "INSERT OR IGNORE INTO runs VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    h,
                    config.kind,
                    config.model,
                    config.taxonomy_id,
                    config.taxonomy_version,
                    config.model_dump_json(),
                    time.time(),
                ),
            )
        )
        return h

    def upsert_trace(self, trace: Trace, t_hash: str | None = None) -> str:
        """Store a trace version: its body and metadata under its content hash, and the hash as the
        latest version of its trace key (trace_id, first source path). Returns the hash.

        The same content read from another folder is the same stored trace (one body, one
        annotation); a changed file gives a new version that supersedes the old one in every
        reader; two different traces that share a trace_id are kept apart (different hashes,
        and different keys when they come from different files).
        """
        h = t_hash or trace_hash(trace)
        success = (
            None if trace.outcome is None or trace.outcome.success is None else int(trace.outcome.success)
        )
        meta = {
            "agents": trace.agent_names(),
            "task": (trace.task or "")[:500],
            "termination": trace.termination.reason if trace.termination else None,
        }
        # The canonical trace without native records: enough for timelines and evidence in reports.
        slim = trace.model_copy(update={"raw": None, "events": [e.replace(raw=None) for e in trace.events]})
        blob = zlib.compress(slim.model_dump_json().encode(), 6)
        path = trace.source_paths[0] if trace.source_paths else ""

        def write(db: sqlite3.Connection) -> None:
            # same hash, same content: replacing only refreshes the provenance kept in the body
            db.execute(
                "INSERT OR REPLACE INTO trace_bodies VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    h,
                    trace.trace_id,
                    trace.source_format,
                    trace.framework,
                    trace.model,
                    trace.benchmark,
                    trace.task_id,
                    len(trace.events),
                    success,
                    json.dumps(meta),
                    blob,
                ),
            )
            self._add_version(db, trace.trace_id, path, h)

        self._tx(write)
        return h

    @staticmethod
    def _add_version(db: sqlite3.Connection, trace_id: str, path: str, t_hash: str) -> None:
        """Make ``t_hash`` the most recently upserted version of the key (trace_id, path)."""
        db.execute(
            "INSERT INTO trace_versions (trace_id, path, trace_hash, seq, added_at) "
            "VALUES (?, ?, ?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM trace_versions), ?) "
            "ON CONFLICT (trace_id, path, trace_hash) DO UPDATE SET seq = excluded.seq, added_at = excluded.added_at",
            (trace_id, path, t_hash, time.time()),
        )

    @staticmethod
    def _ensure_version(db: sqlite3.Connection, trace_id: str, t_hash: str) -> None:
        """A result stored for a hash never upserted still needs a version row to be read back."""
        if db.execute("SELECT 1 FROM trace_versions WHERE trace_hash = ?", (t_hash,)).fetchone() is None:
            Store._add_version(db, trace_id, "", t_hash)

    def get_trace(self, trace_id: str | None = None, *, trace_hash: str | None = None) -> Trace | None:
        """A stored canonical trace (native ``raw`` records are not kept in the store): the version
        with content hash ``trace_hash``, or else the most recently upserted version with id
        ``trace_id``. None when the store has no such body."""
        if trace_hash is not None:
            rows = self._query("SELECT zjson FROM trace_bodies WHERE trace_hash = ?", (trace_hash,))
        elif trace_id is not None:
            rows = self._query(
                "SELECT b.zjson FROM trace_versions v JOIN trace_bodies b ON b.trace_hash = v.trace_hash "
                "WHERE v.trace_id = ? ORDER BY v.seq DESC LIMIT 1",
                (trace_id,),
            )
        else:
            raise ValueError("get_trace needs a trace_id or a trace_hash")
        if not rows or rows[0][0] is None:
            return None
        return Trace.model_validate_json(zlib.decompress(rows[0][0]))

    def runs(self) -> list[dict[str, Any]]:
        """Registered runs, oldest first, each with its number of (latest) annotations."""
        rows = self._query(
            f"WITH {_LATEST_ANNOTATIONS} SELECT r.*, (SELECT COUNT(*) FROM latest l "
            "WHERE l.config_hash = r.config_hash) AS annotations FROM runs r ORDER BY created_at"
        )
        return [dict(r) for r in rows]

    def traces(self, *, all_versions: bool = False) -> list[dict[str, Any]]:
        """Trace metadata rows (without the stored body), one per stored trace: the latest version
        of each trace key, a content seen under several keys once. ``all_versions`` lists every
        stored version instead. ``path`` is where the version was last read from."""
        cols = (
            "b.trace_id, b.trace_hash, b.source_format, b.framework, b.model, b.benchmark, b.task_id, "
            "b.n_events, b.success, b.meta_json, "
            "(SELECT v.path FROM trace_versions v WHERE v.trace_hash = b.trace_hash ORDER BY v.seq DESC LIMIT 1) "
            "AS path, "
            "(SELECT MAX(v.added_at) FROM trace_versions v WHERE v.trace_hash = b.trace_hash) AS added_at"
        )
        if all_versions:
            sql = f"SELECT {cols} FROM trace_bodies b"
        else:
            sql = (
                f"WITH {_LATEST_VERSIONS} SELECT {cols} FROM latest l JOIN trace_bodies b USING (trace_hash)"
            )
        return [dict(r) for r in self._query(sql + " ORDER BY b.trace_id, path, b.trace_hash")]

    # -- annotations ---------------------------------------------------------------------

    def get_annotation(self, t_hash: str, config_hash: str) -> Annotation | None:
        rows = self._query(
            "SELECT annotation_json FROM annotations WHERE trace_hash = ? AND config_hash = ?",
            (t_hash, config_hash),
        )
        return Annotation.model_validate_json(rows[0][0]) if rows else None

    def put_annotation(self, annotation: Annotation, t_hash: str) -> None:
        """Store one trace's annotation and its per-mode verdicts atomically (replacing an older one)."""
        payload = annotation.model_dump_json()

        def write(db: sqlite3.Connection) -> None:
            self._ensure_version(db, annotation.trace_id, t_hash)
            db.execute(
                "INSERT OR REPLACE INTO annotations VALUES (?, ?, ?, ?, ?)",
                (t_hash, annotation.config_hash, annotation.trace_id, payload, time.time()),
            )
            db.execute(
                "DELETE FROM verdicts WHERE trace_hash = ? AND config_hash = ?",
                (t_hash, annotation.config_hash),
            )
            db.executemany(
                "INSERT INTO verdicts VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        t_hash,
                        annotation.config_hash,
                        annotation.trace_id,
                        v.code,
                        v.verdict,
                        v.confidence,
                        v.evidence[0].seq_start if v.evidence else None,
                        v.evidence[0].agent if v.evidence else None,
                    )
                    for v in annotation.verdicts
                ],
            )

        self._tx(write)

    def annotation_records(self, config_hash: str | None = None) -> list[StoredAnnotation]:
        """The latest annotation of each stored trace (see :func:`_latest`) per run, or of one run,
        with the hash of the trace version it was made on; ordered by trace id, path, hash."""
        sql = (
            f"WITH {_LATEST_ANNOTATIONS} SELECT a.trace_hash, a.trace_id, a.annotation_json, "
            "(SELECT v.path FROM trace_versions v WHERE v.trace_hash = a.trace_hash ORDER BY v.seq DESC LIMIT 1) "
            "AS path FROM latest l JOIN annotations a USING (trace_hash, config_hash)"
        )
        params: tuple[Any, ...] = ()
        if config_hash is not None:
            sql += " WHERE a.config_hash = ?"
            params = (config_hash,)
        rows = self._query(sql + " ORDER BY a.trace_id, path, a.trace_hash, a.config_hash", params)
        return [StoredAnnotation(r[0], r[1], r[3], Annotation.model_validate_json(r[2])) for r in rows]

    def verdict_counts(self, config_hash: str) -> dict[str, dict[str, int]]:
        """Mode code -> verdict -> how many of the run's latest annotations (see :func:`_latest`)
        give it; counted in SQL, so a run of millions of traces is summed without loading them."""
        rows = self._query(
            f"WITH {_LATEST_ANNOTATIONS} SELECT v.code, v.verdict, COUNT(*) FROM latest l "
            "JOIN verdicts v USING (trace_hash, config_hash) WHERE l.config_hash = ? GROUP BY v.code, v.verdict",
            (config_hash,),
        )
        counts: dict[str, dict[str, int]] = {}
        for code, verdict, n in rows:
            counts.setdefault(str(code), {})[str(verdict)] = int(n)
        return counts

    def annotations(self, config_hash: str | None = None) -> Iterator[Annotation]:
        """Stored annotations (the latest of each trace per run, see :meth:`annotation_records`),
        optionally of one run."""
        for record in self.annotation_records(config_hash):
            yield record.annotation

    def resolve_run(self, ref: str | None = None) -> str:
        """A run's config hash from a prefix, a kind (``rules``/``llm``/``hybrid``) or None (the latest run)."""
        runs = self.runs()
        if not runs:
            raise StoreError(f"{self.path} holds no annotation run yet: run `mastkit annotate` first")
        if ref is None:
            return str(runs[-1]["config_hash"])
        hits = [
            r for r in runs if str(r["config_hash"]).startswith(ref) or r["kind"] == ref or r["model"] == ref
        ]
        if not hits:
            known = ", ".join(f"{r['config_hash'][:12]} ({r['kind']} {r['model'] or ''})" for r in runs)
            raise StoreError(f"no run matches {ref!r}; runs: {known}")
        return str(hits[-1]["config_hash"])

    # -- calibrations ------------------------------------------------------------------

    def put_calibration(self, config: AnnotatorConfig, result_json: str, *, set_version: str) -> None:
        """Store one calibration result (a JSON document) of the annotator configuration ``config``."""
        self._tx(
            lambda db: db.execute(
                "INSERT INTO calibrations (config_hash, kind, model, prompt_version, taxonomy_id, "
                "taxonomy_version, set_version, result_json, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    config.config_hash(),
                    config.kind,
                    config.model,
                    config.prompt_version,
                    config.taxonomy_id,
                    config.taxonomy_version,
                    set_version,
                    result_json,
                    time.time(),
                ),
            )
        )

    def calibration(self, config: AnnotatorConfig) -> tuple[str, bool] | None:
        """The latest calibration result JSON for ``config`` and whether it is an exact match.

        Exact: the same configuration hash. Otherwise the latest calibration of the same kind,
        model, prompt version and taxonomy (id and version), whose other options (samples,
        window size...) differ: returned with ``False``. None when there is neither.
        """
        rows = self._query(
            "SELECT result_json FROM calibrations WHERE config_hash = ? ORDER BY created_at DESC, id DESC LIMIT 1",
            (config.config_hash(),),
        )
        if rows:
            return str(rows[0][0]), True
        rows = self._query(
            "SELECT result_json FROM calibrations WHERE kind IS ? AND model IS ? AND prompt_version IS ? "
            "AND taxonomy_id IS ? AND taxonomy_version IS ? ORDER BY created_at DESC, id DESC LIMIT 1",
            (config.kind, config.model, config.prompt_version, config.taxonomy_id, config.taxonomy_version),
        )
        return (str(rows[0][0]), False) if rows else None

    # -- verifier evaluations ----------------------------------------------------------

    def put_verify_eval(self, result_json: str, *, label: str) -> int:
        """Store one verifier evaluation (a JSON document, see
        :meth:`mastkit.verify.Evaluation.as_dict`); returns its id."""

        def write(db: sqlite3.Connection) -> int:
            cur = db.execute(
                "INSERT INTO verify_evals (label, result_json, created_at) VALUES (?, ?, ?)",
                (label, result_json, time.time()),
            )
            return int(cur.lastrowid or 0)

        return int(self._tx(write))

    def latest_verify_eval(self) -> dict[str, Any] | None:
        """The latest verifier evaluation: ``id``, ``label``, ``result_json``, ``created_at``
        (seconds since the epoch); None when the store holds none."""
        rows = self._query(
            "SELECT id, label, result_json, created_at FROM verify_evals ORDER BY created_at DESC, id DESC LIMIT 1"
        )
        return dict(rows[0]) if rows else None

    # -- model calls and the response cache ----------------------------------------------

    def cached_response(self, r_hash: str) -> CachedResponse | None:
        rows = self._query(
            "SELECT text, model, input_tokens, output_tokens, cost_usd FROM responses WHERE request_hash = ?",
            (r_hash,),
        )
        if not rows:
            return None
        r = rows[0]
        return CachedResponse(r[0], r[1], r[2] or 0, r[3] or 0, r[4] or 0.0)

    def put_response(
        self,
        r_hash: str,
        text: str,
        *,
        model: str | None,
        input_tokens: int,
        output_tokens: int,
        cost_usd: float | None,
    ) -> None:
        self._tx(
            lambda db: db.execute(
                "INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?, ?, ?)",
                (r_hash, model, text, input_tokens, output_tokens, cost_usd, time.time()),
            )
        )

    def log_call(
        self,
        *,
        trace_id: str | None,
        config_hash: str | None,
        provider: str | None,
        model: str | None,
        request_hash: str | None,
        input_tokens: int = 0,
        output_tokens: int = 0,
        cost_usd: float | None = None,
        latency_s: float | None = None,
        attempts: int = 1,
        status: str = "ok",
        error: str | None = None,
        cached: bool = False,
    ) -> None:
        """Record one model call (never the API key or the prompt text: only its hash)."""
        self._tx(
            lambda db: db.execute(
                "INSERT INTO calls (trace_id, config_hash, provider, model, request_hash, input_tokens, output_tokens, "
                "cost_usd, latency_s, attempts, status, error, cached, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    trace_id,
                    config_hash,
                    provider,
                    model,
                    request_hash,
                    input_tokens,
                    output_tokens,
                    cost_usd,
                    latency_s,
                    attempts,
                    status,
                    error,
                    int(cached),
                    time.time(),
                ),
            )
        )

    def call_stats(self, config_hash: str | None = None) -> dict[str, Any]:
        where, params = ("WHERE config_hash = ?", (config_hash,)) if config_hash else ("", ())
        row = self._query(
            "SELECT COUNT(*) AS calls, SUM(cached) AS cached, SUM(status != 'ok') AS failed, "
            "COALESCE(SUM(input_tokens), 0) AS input_tokens, COALESCE(SUM(output_tokens), 0) AS output_tokens, "
            f"COALESCE(SUM(cost_usd), 0) AS cost_usd FROM calls {where}",
            params,
        )[0]
        return dict(row)

    # -- attributions --------------------------------------------------------------------

    def put_attribution(
        self, trace_id: str, t_hash: str, method: str, method_hash: str, a: Attribution
    ) -> None:
        def write(db: sqlite3.Connection) -> None:
            self._ensure_version(db, trace_id, t_hash)
            db.execute(
                "INSERT OR REPLACE INTO attributions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    t_hash,
                    trace_id,
                    method,
                    method_hash,
                    a.agent,
                    a.step,
                    a.mode,
                    a.confidence,
                    a.reason,
                    time.time(),
                ),
            )

        self._tx(write)

    def get_attribution(self, t_hash: str, method_hash: str) -> Attribution | None:
        rows = self._query(
            "SELECT agent, step, mode, confidence, reason, method FROM attributions "
            "WHERE trace_hash = ? AND method_hash = ?",
            (t_hash, method_hash),
        )
        if not rows:
            return None
        r = rows[0]
        return Attribution(agent=r[0], step=r[1], mode=r[2], confidence=r[3], reason=r[4], method=r[5])

    def attributions_by_hash(self, method: str | None = None) -> dict[str, Attribution]:
        """Each stored trace version's own attribution, keyed by its content hash: of one method
        (e.g. ``rules``) when given, the one stored last. Versions that are no longer the latest
        of their trace are included: a report shows the attribution made on the body it shows."""
        where, params = ("WHERE method = ?", (method,)) if method else ("", ())
        rows = self._query(
            "SELECT trace_hash, agent, step, mode, confidence, reason, method FROM (SELECT *, ROW_NUMBER() OVER "
            f"(PARTITION BY trace_hash ORDER BY {_ATTRIBUTION_ORDER}) AS rn FROM attributions x {where}) "
            "WHERE rn = 1",
            params,
        )
        return {r[0]: _attribution(r[1:]) for r in rows}

    def attributions(self, method: str | None = None) -> dict[str, Attribution]:
        """The latest attribution of each stored trace (see :func:`_latest`; of one method when
        given), keyed by trace id. Two different traces sharing an id share a key here (the most
        recently upserted wins): :meth:`attributions_by_hash` keeps them apart."""
        latest = _latest(
            "attributions", "method_hash", per="method" if method else "", tiebreak=_ATTRIBUTION_ORDER
        )
        sql = (
            f"WITH {latest} SELECT a.trace_id, a.agent, a.step, a.mode, a.confidence, a.reason, a.method, "
            "(SELECT MAX(v.seq) FROM trace_versions v WHERE v.trace_hash = a.trace_hash) AS seq "
            "FROM latest l JOIN attributions a USING (trace_hash, method_hash)"
        )
        params: tuple[Any, ...] = ()
        if method:
            sql += " WHERE a.method = ?"
            params = (method,)
        return {r[0]: _attribution(r[1:7]) for r in self._query(sql + " ORDER BY seq", params)}

    # -- errors --------------------------------------------------------------------------

    def log_error(
        self,
        stage: str,
        reason: str,
        *,
        path: str | None = None,
        trace_id: str | None = None,
        config_hash: str | None = None,
        trace_hash: str | None = None,
    ) -> None:
        """Record a failure: a file that did not load (``stage='load'``, a path), or a trace a run
        could not annotate (``stage='annotate'``, its id, run and, when known, content hash)."""
        self._tx(
            lambda db: db.execute(
                "INSERT INTO errors (stage, path, trace_id, config_hash, reason, created_at, trace_hash) "
                "VALUES (?,?,?,?,?,?,?)",
                (stage, path, trace_id, config_hash, reason, time.time(), trace_hash),
            )
        )

    def errors(self, config_hash: str | None = None) -> list[dict[str, Any]]:
        """Every recorded error, oldest first; with ``config_hash``, those of that run plus the
        ones of no run (load errors)."""
        if config_hash:
            return [
                dict(r)
                for r in self._query(
                    "SELECT * FROM errors WHERE config_hash = ? OR config_hash IS NULL ORDER BY id",
                    (config_hash,),
                )
            ]
        return [dict(r) for r in self._query("SELECT * FROM errors ORDER BY id")]

    def failed_traces(self, config_hash: str) -> list[dict[str, Any]]:
        """The traces run ``config_hash`` failed on and has not annotated since: for each trace
        (its content hash when the error recorded one, else its trace id) the latest error of the
        run, unless an annotation of that trace under the run was stored at or after it. A trace
        that failed and then succeeded is not listed; one that failed again later is.

        Rows (oldest first) are error rows: ``trace_id``, ``trace_hash`` (may be None), ``path``
        (to reload the trace from), ``stage``, ``reason``, ``created_at``, ``id``.
        """
        sql = (
            "SELECT e.* FROM errors e WHERE e.config_hash = ? AND e.trace_id IS NOT NULL "
            "AND e.id = (SELECT MAX(f.id) FROM errors f WHERE f.config_hash = e.config_hash "
            "AND f.trace_id = e.trace_id AND f.trace_hash IS e.trace_hash) "
            "AND NOT EXISTS (SELECT 1 FROM annotations a WHERE a.config_hash = e.config_hash "
            "AND a.created_at >= e.created_at "
            "AND (a.trace_hash = e.trace_hash OR (e.trace_hash IS NULL AND a.trace_id = e.trace_id))) "
            "ORDER BY e.id"
        )
        return [dict(r) for r in self._query(sql, (config_hash,))]

    # -- secrets -------------------------------------------------------------------------

    def fence_secret(self) -> bytes:
        """A random 32-byte secret made once per database file (kept in ``meta``).

        For deriving prompt fence nonces: trace authors cannot predict them, while reruns on the
        same database derive the same ones (same prompts, so cached responses still hit). Another
        file (or ``:memory:`` store) has another secret. Keep it out of logs and exports.
        """

        def get_or_make(db: sqlite3.Connection) -> str:
            db.execute("INSERT OR IGNORE INTO meta VALUES ('fence_secret', ?)", (secrets.token_hex(32),))
            row = db.execute("SELECT value FROM meta WHERE key = 'fence_secret'").fetchone()
            return str(row[0])

        with self._lock:
            if self._fence is None:
                self._fence = bytes.fromhex(self._tx(get_or_make))
            return self._fence

    # -- export --------------------------------------------------------------------------

    def verdict_rows(self, config_hash: str | None = None) -> list[dict[str, Any]]:
        """Flat per-(trace, mode) rows of the latest annotations (see :meth:`annotation_records`)
        joined with the judged version's metadata, for CSV/Parquet and analysis. ``trace_hash``
        tells apart different traces that share a ``trace_id``."""
        sql = (
            f"WITH {_LATEST_ANNOTATIONS} "
            "SELECT v.trace_id, v.trace_hash, v.config_hash, r.kind, r.model AS annotator_model, v.code, v.verdict, "
            "v.confidence, v.first_seq, v.agent, t.source_format, t.framework, t.model, t.benchmark, t.success "
            "FROM latest l JOIN verdicts v USING (trace_hash, config_hash) "
            "JOIN runs r ON r.config_hash = v.config_hash "
            "LEFT JOIN trace_bodies t ON t.trace_hash = v.trace_hash"
        )
        params: tuple[Any, ...] = ()
        if config_hash:
            sql += " WHERE v.config_hash = ?"
            params = (config_hash,)
        return [
            dict(r)
            for r in self._query(sql + " ORDER BY v.trace_id, v.trace_hash, v.config_hash, v.code", params)
        ]

    def export(
        self, out: str | Path, fmt: str | None = None, config_hash: str | None = None, *, redact: bool = True
    ) -> int:
        """Write annotations as JSONL (one Annotation per line), or verdict rows as CSV / Parquet.

        Secrets and e-mail addresses in the text (summaries, rationales, evidence quotes, agent
        names) are redacted unless ``redact=False``. Returns the number of records written.
        Parquet needs ``pip install 'mastkit[parquet]'``.
        """
        from mastkit.annotate.redact import ResultScrubber as Scrubber

        scrub = Scrubber() if redact else None
        path = Path(out)
        fmt = (fmt or path.suffix.lstrip(".") or "jsonl").lower()
        if fmt == "jsonl":
            n = 0
            with path.open("w", encoding="utf-8") as fh:
                for a in self.annotations(config_hash):
                    if scrub is not None:
                        a = scrub.annotation(a)
                    fh.write(a.model_dump_json() + "\n")
                    n += 1
            return n
        rows = self.verdict_rows(config_hash)
        if scrub is not None:  # ids and codes identify; the free text (agent names) is redacted
            keep = {"trace_id", "config_hash", "code", "verdict"}
            rows = [{k: (v if k in keep else scrub.value(v)) for k, v in r.items()} for r in rows]
        if fmt == "csv":
            with path.open("w", newline="", encoding="utf-8") as fh:
                fields = list(rows[0]) if rows else ["trace_id", "code", "verdict"]
                writer = csv.DictWriter(fh, fieldnames=fields)
                writer.writeheader()
                writer.writerows(rows)
            return len(rows)
        if fmt == "parquet":
            try:
                import pyarrow as pa
                import pyarrow.parquet as pq
            except ImportError:
                raise MissingDependencyError("Parquet export", "parquet") from None
            pq.write_table(pa.Table.from_pylist(rows), path)
            return len(rows)
        raise StoreError(f"unknown export format {fmt!r}: use jsonl, csv or parquet")
