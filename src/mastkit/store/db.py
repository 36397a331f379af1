"""The annotation store: one SQLite file (stdlib, WAL) holding runs, trace metadata, annotations,
per-mode verdicts, every model call, a content-addressed response cache and per-trace errors.

Why SQLite: no server, no dependency, one file users can copy; WAL mode lets several
processes (Ray workers, a report reading while a run writes) share it, and each trace's
result is committed in one transaction — a run killed at any moment resumes with nothing
lost and nothing duplicated (annotations are keyed by trace content hash + configuration
hash). Heavy analytics can attach the file from DuckDB or read the Parquet export.

Schema changes are append-only migrations (``_MIGRATIONS``); a shipped one is never edited.
"""

from __future__ import annotations

import csv
import json
import sqlite3
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mastkit.annotate.model import Annotation, AnnotatorConfig, Attribution
from mastkit.errors import MastkitError, MissingDependencyError
from mastkit.traces.model import Trace


class StoreError(MastkitError):
    """The store file cannot be opened or written."""


def trace_hash(trace: Trace) -> str:
    """Content hash of a trace (its canonical JSON): unchanged input ⇒ same hash ⇒ cache hit."""
    return trace.content_hash()


_M001 = """
        CREATE TABLE runs (
            config_hash TEXT PRIMARY KEY, kind TEXT NOT NULL, model TEXT, taxonomy_id TEXT, taxonomy_version TEXT,
            config_json TEXT NOT NULL, created_at REAL NOT NULL);
        CREATE TABLE traces (
            trace_id TEXT PRIMARY KEY, trace_hash TEXT NOT NULL, source_format TEXT, framework TEXT, model TEXT,
            benchmark TEXT, task_id TEXT, n_events INTEGER, success INTEGER, path TEXT, meta_json TEXT,
            added_at REAL NOT NULL, trace_zjson BLOB);
        CREATE TABLE annotations (
            trace_hash TEXT NOT NULL, config_hash TEXT NOT NULL, trace_id TEXT NOT NULL,
            annotation_json TEXT NOT NULL, created_at REAL NOT NULL, PRIMARY KEY (trace_hash, config_hash));
        CREATE INDEX annotations_trace ON annotations (trace_id, config_hash);
        CREATE TABLE verdicts (
            trace_hash TEXT NOT NULL, config_hash TEXT NOT NULL, trace_id TEXT NOT NULL, code TEXT NOT NULL,
            verdict TEXT NOT NULL, confidence REAL, first_seq INTEGER, agent TEXT,
            PRIMARY KEY (trace_hash, config_hash, code));
        CREATE INDEX verdicts_config ON verdicts (config_hash, code, verdict);
        CREATE TABLE calls (
            id INTEGER PRIMARY KEY AUTOINCREMENT, trace_id TEXT, config_hash TEXT, provider TEXT, model TEXT,
            request_hash TEXT, input_tokens INTEGER, output_tokens INTEGER, cost_usd REAL, latency_s REAL,
            attempts INTEGER, status TEXT, error TEXT, cached INTEGER NOT NULL DEFAULT 0, created_at REAL NOT NULL);
        CREATE INDEX calls_config ON calls (config_hash);
        CREATE TABLE responses (
            request_hash TEXT PRIMARY KEY, model TEXT, text TEXT NOT NULL, input_tokens INTEGER,
            output_tokens INTEGER, cost_usd REAL, created_at REAL NOT NULL);
        CREATE TABLE attributions (
            trace_hash TEXT NOT NULL, trace_id TEXT NOT NULL, method TEXT NOT NULL, method_hash TEXT NOT NULL,
            agent TEXT, step INTEGER, mode TEXT, confidence REAL, reason TEXT, created_at REAL NOT NULL,
            PRIMARY KEY (trace_hash, method_hash));
        CREATE TABLE errors (
            id INTEGER PRIMARY KEY AUTOINCREMENT, stage TEXT NOT NULL, path TEXT, trace_id TEXT, config_hash TEXT,
            reason TEXT NOT NULL, created_at REAL NOT NULL);
"""

_MIGRATIONS: list[str] = [_M001]
"""Append-only: each entry is the SQL of one schema version."""


@dataclass(frozen=True)
class CachedResponse:
    text: str
    model: str | None
    input_tokens: int
    output_tokens: int
    cost_usd: float


class Store:
    """A mastkit database file. Safe to share between threads (one lock) and processes (WAL)."""

    def __init__(self, path: str | Path = "mastkit.db") -> None:
        self.path = str(path)
        try:
            self._db = sqlite3.connect(self.path, timeout=30.0, check_same_thread=False, isolation_level=None)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open store {self.path}: {exc}") from None
        self._lock = threading.RLock()
        self._db.execute("PRAGMA busy_timeout = 30000")
        if self.path != ":memory:":
            self._retry_locked(lambda: self._db.execute("PRAGMA journal_mode = WAL"))
        self._db.execute("PRAGMA synchronous = NORMAL")
        self._migrate()

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
                    raise StoreError(f"cannot open store {self.path}: {exc}") from None
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
            for i, sql in enumerate(_MIGRATIONS[version:], start=version + 1):
                self._db.execute(
                    "BEGIN IMMEDIATE"
                )  # the write lock: another process may have migrated meanwhile
                try:
                    row = self._db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
                    if row is None or int(row[0]) < i:
                        for statement in sql.split(";"):
                            if statement.strip():
                                self._db.execute(statement)
                        self._db.execute(
                            "INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", (str(i),)
                        )
                    self._db.execute("COMMIT")
                except BaseException:
                    self._db.execute("ROLLBACK")
                    raise

    def _tx(self, fn: Callable[[sqlite3.Connection], Any]) -> Any:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                out = fn(self._db)
                self._db.execute("COMMIT")
                return out
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def _query(self, sql: str, params: Iterable[Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            cur = self._db.execute(sql, tuple(params))
            cur.row_factory = sqlite3.Row
            return cur.fetchall()

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
        h = t_hash or trace_hash(trace)
        success = (
            None if trace.outcome is None or trace.outcome.success is None else int(trace.outcome.success)
        )
        meta = {
            "agents": [a.name for a in trace.agents] or trace.actors(),
            "task": (trace.task or "")[:500],
            "termination": trace.termination.reason if trace.termination else None,
        }
        # The canonical trace without native records: enough for timelines and evidence in reports.
        slim = trace.model_copy(update={"raw": None, "events": [e.replace(raw=None) for e in trace.events]})
        blob = zlib.compress(slim.model_dump_json().encode(), 6)
        self._tx(
            lambda db: db.execute(
                "INSERT OR REPLACE INTO traces VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    trace.trace_id,
                    h,
                    trace.source_format,
                    trace.framework,
                    trace.model,
                    trace.benchmark,
                    trace.task_id,
                    len(trace.events),
                    success,
                    trace.source_paths[0] if trace.source_paths else None,
                    json.dumps(meta),
                    time.time(),
                    blob,
                ),
            )
        )
        return h

    def get_trace(self, trace_id: str) -> Trace | None:
        """The stored canonical trace (native ``raw`` records are not kept in the store)."""
        rows = self._query("SELECT trace_zjson FROM traces WHERE trace_id = ?", (trace_id,))
        if not rows or rows[0][0] is None:
            return None
        return Trace.model_validate_json(zlib.decompress(rows[0][0]))

    def runs(self) -> list[dict[str, Any]]:
        rows = self._query(
            "SELECT r.*, (SELECT COUNT(*) FROM annotations a WHERE a.config_hash = r.config_hash) AS annotations "
            "FROM runs r ORDER BY created_at"
        )
        return [dict(r) for r in rows]

    def traces(self) -> list[dict[str, Any]]:
        """Trace metadata rows (without the stored trace body)."""
        cols = (
            "trace_id, trace_hash, source_format, framework, model, benchmark, task_id, n_events, success, path, "
            "meta_json, added_at"
        )
        return [dict(r) for r in self._query(f"SELECT {cols} FROM traces ORDER BY trace_id")]

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

    def annotations(self, config_hash: str | None = None) -> Iterator[Annotation]:
        """Stored annotations (latest per trace id and configuration), optionally of one run."""
        sql = (
            "SELECT annotation_json FROM annotations a WHERE created_at = (SELECT MAX(created_at) FROM annotations "
            "b WHERE b.trace_id = a.trace_id AND b.config_hash = a.config_hash)"
        )
        params: tuple[Any, ...] = ()
        if config_hash is not None:
            sql += " AND config_hash = ?"
            params = (config_hash,)
        for row in self._query(sql + " ORDER BY trace_id", params):
            yield Annotation.model_validate_json(row[0])

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
        self._tx(
            lambda db: db.execute(
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
        )

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

    def attributions(self, method: str | None = None) -> dict[str, Attribution]:
        """Latest attribution per trace id (of one method, e.g. ``rules``, when given)."""
        sql = "SELECT trace_id, agent, step, mode, confidence, reason, method FROM attributions"
        params: tuple[Any, ...] = ()
        if method:
            sql += " WHERE method = ?"
            params = (method,)
        out = {}
        for r in self._query(sql + " ORDER BY created_at", params):
            out[r[0]] = Attribution(
                agent=r[1], step=r[2], mode=r[3], confidence=r[4], reason=r[5], method=r[6]
            )
        return out

    # -- errors --------------------------------------------------------------------------

    def log_error(
        self,
        stage: str,
        reason: str,
        *,
        path: str | None = None,
        trace_id: str | None = None,
        config_hash: str | None = None,
    ) -> None:
        self._tx(
            lambda db: db.execute(
                "INSERT INTO errors (stage, path, trace_id, config_hash, reason, created_at) VALUES (?,?,?,?,?,?)",
                (stage, path, trace_id, config_hash, reason, time.time()),
            )
        )

    def errors(self, config_hash: str | None = None) -> list[dict[str, Any]]:
        if config_hash:
            return [
                dict(r)
                for r in self._query(
                    "SELECT * FROM errors WHERE config_hash = ? OR config_hash IS NULL ORDER BY id",
                    (config_hash,),
                )
            ]
        return [dict(r) for r in self._query("SELECT * FROM errors ORDER BY id")]

    # -- export --------------------------------------------------------------------------

    def verdict_rows(self, config_hash: str | None = None) -> list[dict[str, Any]]:
        """Flat per-(trace, mode) rows joined with trace metadata, for CSV/Parquet and analysis."""
        sql = (
            "SELECT v.trace_id, v.config_hash, r.kind, r.model AS annotator_model, v.code, v.verdict, v.confidence, "
            "v.first_seq, v.agent, t.source_format, t.framework, t.model, t.benchmark, t.success "
            "FROM verdicts v JOIN runs r ON r.config_hash = v.config_hash "
            "LEFT JOIN traces t ON t.trace_id = v.trace_id"
        )
        params: tuple[Any, ...] = ()
        if config_hash:
            sql += " WHERE v.config_hash = ?"
            params = (config_hash,)
        return [dict(r) for r in self._query(sql + " ORDER BY v.trace_id, v.code", params)]

    def export(
        self, out: str | Path, fmt: str | None = None, config_hash: str | None = None, *, redact: bool = True
    ) -> int:
        """Write annotations as JSONL (one Annotation per line), or verdict rows as CSV / Parquet.

        Secrets and e-mail addresses in the text (summaries, rationales, evidence quotes, agent
        names) are redacted unless ``redact=False``. Returns the number of records written.
        Parquet needs ``pip install 'mastkit[parquet]'``.
        """
        from mastkit.llm.redact import Scrubber

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
