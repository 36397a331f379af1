"""One meaning of "the" trace in every reader: a stored trace is its content hash; a trace key
(trace_id, first source path) has versions; readers show the latest annotated version per key."""

from __future__ import annotations

import csv
import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from mastkit.annotate import annotate
from mastkit.annotate.factory import make_annotator
from mastkit.annotate.model import Annotation, AnnotatorConfig, ModeVerdict
from mastkit.attribute.model import Attribution
from mastkit.store import Store, StoreError, db
from mastkit.traces import Event, Outcome, Trace, load_traces

CONFIG = AnnotatorConfig(kind="rules", prompt_version="rules-1", taxonomy_id="mast", taxonomy_version="1.0")
OTHER = AnnotatorConfig(kind="rules", prompt_version="rules-2", taxonomy_id="mast", taxonomy_version="1.0")
EXAMPLE = Path(__file__).resolve().parents[2] / "src" / "mastkit" / "examples" / "01_sre_cart_oomkilled.json"


def trace(text: str, *, trace_id: str = "run-1", path: str = "/runs/a.jsonl") -> Trace:
    return Trace(
        trace_id=trace_id,
        source_format="test",
        source_paths=[path],
        outcome=Outcome(success=False),
        events=[Event(seq=0, kind="message", actor="a", content=text)],
    )


def annotation(t: Trace, present: bool, config: AnnotatorConfig = CONFIG) -> Annotation:
    verdict = "present" if present else "absent"
    return Annotation(
        trace_id=t.trace_id,
        config=config,
        config_hash=config.config_hash(),
        verdicts=[ModeVerdict(code=c, verdict=verdict, source="rule:x") for c in ("FM-1.3", "FM-3.2")],
    )


def judged(store: Store, t: Trace, present: bool, config: AnnotatorConfig = CONFIG) -> str:
    store.register_run(config)
    h = store.upsert_trace(t)
    store.put_annotation(annotation(t, present, config), h)
    return h


# -- the same content from two folders is one trace --------------------------------------------


def test_same_trace_from_two_folders_is_one_trace(tmp_path: Path) -> None:
    for folder in ("a", "moved/later"):
        (tmp_path / folder).mkdir(parents=True)
        shutil.copy(EXAMPLE, tmp_path / folder / EXAMPLE.name)
    with Store(tmp_path / "m.db") as store:
        annotator = make_annotator("rules")
        for folder in ("a", "moved/later"):  # the second run finds it annotated already
            report = annotate(load_traces([tmp_path / folder]), annotator, store=store)
        assert report.progress.cached == 1 and report.progress.done == 0
        assert len(store.traces()) == 1 and len(list(store.annotations())) == 1
        assert store.traces()[0]["path"] == str(tmp_path / "moved/later" / EXAMPLE.name)
        assert store.export(tmp_path / "v.csv") == 14
        rows = list(csv.DictReader((tmp_path / "v.csv").open()))
        assert len(rows) == 14 and len({r["code"] for r in rows}) == 14
        assert store.runs()[0]["annotations"] == 1


# -- a changed trace: only the latest version is read -------------------------------------------


def test_readers_return_only_the_latest_version(tmp_path: Path) -> None:
    with Store(tmp_path / "m.db") as store:
        old = judged(store, trace("first"), present=True)
        new = judged(store, trace("second"), present=False)
        assert old != new
        (rec,) = store.annotation_records(CONFIG.config_hash())
        assert rec.trace_hash == new and rec.annotation.verdict("FM-1.3").verdict == "absent"  # type: ignore[union-attr]
        rows = store.verdict_rows()
        assert [(r["trace_hash"], r["verdict"]) for r in rows] == [(new, "absent")] * 2
        assert store.export(tmp_path / "v.csv") == 2
        assert {r["verdict"] for r in csv.DictReader((tmp_path / "v.csv").open())} == {"absent"}
        assert store.export(tmp_path / "a.jsonl") == 1
        assert store.runs()[0]["annotations"] == 1
        assert [r["trace_hash"] for r in store.traces()] == [new]
        assert {r["trace_hash"] for r in store.traces(all_versions=True)} == {old, new}
        back = store.get_trace("run-1")
        assert back is not None and back.events[0].content == "second"
        # Going back to the first content makes it the latest again (cached, no new annotation).
        store.upsert_trace(trace("first"))
        assert [r["trace_hash"] for r in store.verdict_rows()] == [old] * 2


def test_latest_is_per_run_the_latest_version_that_run_annotated(tmp_path: Path) -> None:
    with Store(tmp_path / "m.db") as store:
        v1 = judged(store, trace("first"), present=True)
        judged(store, trace("first"), present=True, config=OTHER)
        v2 = judged(store, trace("second"), present=False, config=OTHER)
        # CONFIG never saw the second version: its latest annotation is still the first's
        assert [r.trace_hash for r in store.annotation_records(CONFIG.config_hash())] == [v1]
        assert [r.trace_hash for r in store.annotation_records(OTHER.config_hash())] == [v2]
        assert {(r["config_hash"], r["trace_hash"]) for r in store.verdict_rows()} == {
            (CONFIG.config_hash(), v1),
            (OTHER.config_hash(), v2),
        }
        assert len(list(store.annotations())) == 2


def test_a_third_version_wins_over_both_older_ones(tmp_path: Path) -> None:
    # Three versions tell "latest" from "not the oldest": MIN and MAX differ, and so do 2nd and 3rd.
    with Store(tmp_path / "m.db") as store:
        hashes = [judged(store, trace(text), present=i == 1) for i, text in enumerate(("a", "b", "c"))]
        assert [r.trace_hash for r in store.annotation_records()] == [hashes[2]]
        assert {r["trace_hash"] for r in store.verdict_rows()} == {hashes[2]}


# -- same trace_id, different traces ------------------------------------------------------------


def test_two_traces_sharing_an_id_are_both_kept(tmp_path: Path) -> None:
    with Store(tmp_path / "m.db") as store:
        h1 = judged(store, trace("one", path="/runs/a.jsonl"), present=True)
        h2 = judged(store, trace("two", path="/runs/b.jsonl"), present=False)
        assert {r["trace_hash"] for r in store.traces()} == {h1, h2}
        assert {r.trace_hash for r in store.annotation_records()} == {h1, h2}
        assert len(store.verdict_rows()) == 4
        one, two = store.get_trace(trace_hash=h1), store.get_trace(trace_hash=h2)
        assert one is not None and one.events[0].content == "one"
        assert two is not None and two.events[0].content == "two"


def test_attributions_latest_per_trace_and_by_hash(tmp_path: Path) -> None:
    with Store(tmp_path / "m.db") as store:
        a_old = store.upsert_trace(trace("x"))
        store.put_attribution("run-1", a_old, "rules", "m1", Attribution(agent="old", method="rules"))
        a_new = store.upsert_trace(trace("y"))
        store.put_attribution("run-1", a_new, "rules", "m1", Attribution(agent="new", method="rules"))
        other = store.upsert_trace(trace("z", path="/runs/other.jsonl"))
        store.put_attribution("run-1", other, "rules", "m1", Attribution(agent="other", method="rules"))
        assert {h: a.agent for h, a in store.attributions_by_hash("rules").items()} == {
            a_old: "old",
            a_new: "new",
            other: "other",
        }
        # by trace id: the latest version of each key; of two keys sharing the id, the later one
        assert {t: a.agent for t, a in store.attributions("rules").items()} == {"run-1": "other"}
        store.upsert_trace(trace("y"))  # the first key's latest version again, upserted last
        assert {t: a.agent for t, a in store.attributions("rules").items()} == {"run-1": "new"}
        assert store.attributions("llm") == {}
        # A newer version attributed by another method: each method keeps its own latest; of one
        # version and method, the attribution stored last wins.
        newest = store.upsert_trace(trace("w"))
        store.put_attribution("run-1", newest, "llm", "m2", Attribution(agent="llm", method="llm"))
        store.put_attribution("run-1", a_new, "rules", "m3", Attribution(agent="newer", method="rules"))
        assert store.attributions_by_hash("rules")[a_new].agent == "newer"
        assert store.attributions_by_hash()[newest].agent == "llm"
        assert {t: a.agent for t, a in store.attributions("rules").items()} == {"run-1": "newer"}
        assert {t: a.agent for t, a in store.attributions().items()} == {"run-1": "llm"}


# -- errors and failed traces ---------------------------------------------------------------------


def test_failed_traces_of_a_run(tmp_path: Path) -> None:
    with Store(tmp_path / "m.db") as store:
        c = store.register_run(CONFIG)
        store.register_run(OTHER)
        t1, t2 = trace("one"), trace("two", trace_id="run-2", path="/runs/b.jsonl")
        h1, h2 = t1.content_hash(), t2.content_hash()
        store.log_error(
            "annotate", "timeout", trace_id="run-1", trace_hash=h1, config_hash=c, path="/runs/a.jsonl"
        )
        store.log_error("annotate", "bad json", trace_id="run-2", trace_hash=h2, config_hash=c)
        store.log_error("annotate", "other run", trace_id="run-3", config_hash=OTHER.config_hash())
        store.log_error("load", "unreadable", path="/runs/c.jsonl")
        assert [(f["trace_id"], f["reason"], f["path"]) for f in store.failed_traces(c)] == [
            ("run-1", "timeout", "/runs/a.jsonl"),
            ("run-2", "bad json", None),
        ]
        store.put_annotation(annotation(t1, True), store.upsert_trace(t1))  # the retry succeeded
        assert [f["trace_id"] for f in store.failed_traces(c)] == ["run-2"]
        # an annotation of another run does not clear it, nor does one of another trace
        store.put_annotation(annotation(t2, True, OTHER), store.upsert_trace(t2))
        assert [f["trace_id"] for f in store.failed_traces(c)] == ["run-2"]
        store.log_error("annotate", "again", trace_id="run-1", trace_hash=h1, config_hash=c)  # failed later
        assert [(f["trace_id"], f["reason"]) for f in store.failed_traces(c)] == [
            ("run-2", "bad json"),
            ("run-1", "again"),
        ]
        assert [f["trace_id"] for f in store.failed_traces(OTHER.config_hash())] == ["run-3"]
        assert len(store.errors(c)) == 4 and len(store.errors()) == 5


def test_failed_trace_without_a_hash_is_cleared_by_its_id(tmp_path: Path) -> None:
    with Store(tmp_path / "m.db") as store:
        c = store.register_run(CONFIG)
        store.log_error("annotate", "boom", trace_id="run-1", config_hash=c)
        store.log_error("annotate", "boom", trace_id="run-2", config_hash=c)
        t = trace("one")
        store.put_annotation(annotation(t, True), store.upsert_trace(t))
        assert [f["trace_id"] for f in store.failed_traces(c)] == ["run-2"]


# -- the fence secret -------------------------------------------------------------------------


def test_fence_secret_is_per_file_and_stable(tmp_path: Path) -> None:
    with Store(tmp_path / "a.db") as a, Store(tmp_path / "b.db") as b:
        sa, sb = a.fence_secret(), b.fence_secret()
        assert len(sa) == 32 and len(sb) == 32 and sa != sb
        assert a.fence_secret() == sa
    with Store(tmp_path / "a.db") as again:
        assert again.fence_secret() == sa
    assert Store.memory().fence_secret() != Store.memory().fence_secret()


# -- migrations -------------------------------------------------------------------------------


def test_a_migration_is_not_split_on_semicolons(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    extra = (
        "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL, n INTEGER NOT NULL DEFAULT 0)",
        "INSERT INTO notes (text) VALUES ('one; two; three')",
        """CREATE TRIGGER notes_count AFTER INSERT ON notes BEGIN
               UPDATE notes SET n = n + 1 WHERE id = NEW.id;
               UPDATE notes SET text = text || ';' WHERE id = NEW.id;
           END""",
    )
    monkeypatch.setattr(db, "_MIGRATIONS", [*db._MIGRATIONS, extra])
    with Store(tmp_path / "m.db") as store:
        store._tx(lambda con: con.execute("INSERT INTO notes (text) VALUES ('a;b')"))
        assert [tuple(r) for r in store._query("SELECT text, n FROM notes ORDER BY id")] == [
            ("one; two; three", 0),
            ("a;b;", 1),
        ]
        assert store._query("SELECT value FROM meta WHERE key = 'schema_version'")[0][0] == str(
            len(db._MIGRATIONS)
        )
    note = (
        sqlite3.connect(tmp_path / "m.db").execute("SELECT value FROM meta WHERE key = 'schema_2'").fetchone()
    )
    assert note is not None and ";" in note[0]


def test_a_failed_migration_leaves_the_file_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    Store(tmp_path / "m.db").close()
    broken = ("CREATE TABLE half (x INTEGER)", "INSERT INTO nowhere VALUES (1)")
    monkeypatch.setattr(db, "_MIGRATIONS", [*db._MIGRATIONS, broken])
    with pytest.raises(StoreError, match="nowhere"):
        Store(tmp_path / "m.db")
    con = sqlite3.connect(tmp_path / "m.db")
    assert con.execute("SELECT name FROM sqlite_master WHERE name = 'half'").fetchone() is None
    assert con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (
        str(len(db._MIGRATIONS) - 1),
    )


# The schema 1 DDL as shipped (one script), and rows as schema 1 code wrote them.
_V1 = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
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
INSERT INTO meta VALUES ('schema_version', '1');
"""


def _v1_file(path: Path) -> None:
    import zlib

    con = sqlite3.connect(path)
    con.executescript(_V1)
    c = CONFIG.config_hash()
    con.execute(
        "INSERT INTO runs VALUES (?, 'rules', NULL, 'mast', '1.0', ?, 1.0)", (c, CONFIG.model_dump_json())
    )
    # run-1 was annotated at t1:old (time 10), changed, and annotated again at t1:new (time 20); run-2 once.
    for i, (tid, h, text, present, at) in enumerate(
        [
            ("run-1", "t1:old", "first", True, 10.0),
            ("run-1", "t1:new", "second", False, 20.0),
            ("run-2", "t1:two", "x", True, 15.0),
        ]
    ):
        t = trace(text, trace_id=tid, path=f"/runs/{tid}.jsonl")
        a = annotation(t, present)
        con.execute("INSERT INTO annotations VALUES (?, ?, ?, ?, ?)", (h, c, tid, a.model_dump_json(), at))
        for v in a.verdicts:
            con.execute(
                "INSERT INTO verdicts VALUES (?, ?, ?, ?, ?, NULL, NULL, NULL)",
                (h, c, tid, v.code, v.verdict),
            )
        if h != "t1:old":  # schema 1 kept only the last upserted version of each trace id
            body = zlib.compress(t.model_dump_json().encode())
            con.execute(
                "INSERT OR REPLACE INTO traces VALUES (?, ?, 'test', 'fw', NULL, NULL, NULL, 1, 0, ?, '{}', ?, ?)",
                # upserted before the older version's annotation time (two files of one id
                # annotated concurrently): still the trace row's version is run-1's latest
                (tid, h, f"/runs/{tid}.jsonl", at - 15 + i, body),
            )
    con.execute(
        "INSERT INTO attributions VALUES ('t1:new', 'run-1', 'rules', 'm1', 'coder', 0, NULL, NULL, NULL, 21.0)"
    )
    con.execute(
        "INSERT INTO errors (stage, trace_id, config_hash, reason, created_at) VALUES ('annotate', 'run-3', ?, 'x', 5)",
        (c,),
    )
    con.commit()
    con.close()


def test_schema_1_file_is_upgraded_in_place(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    _v1_file(path)
    with Store(path) as store:
        records = store.annotation_records(CONFIG.config_hash())
        assert [(r.trace_id, r.trace_hash, r.path) for r in records] == [
            ("run-1", "t1:new", "/runs/run-1.jsonl"),
            ("run-2", "t1:two", "/runs/run-2.jsonl"),
        ]
        assert records[0].annotation.verdict("FM-1.3").verdict == "absent"  # type: ignore[union-attr]
        assert {(r["trace_id"], r["trace_hash"]) for r in store.verdict_rows()} == {
            ("run-1", "t1:new"),
            ("run-2", "t1:two"),
        }
        assert all(r["framework"] == "fw" for r in store.verdict_rows())
        assert [r["trace_hash"] for r in store.traces()] == ["t1:new", "t1:two"]
        body = store.get_trace("run-1")
        assert body is not None and body.events[0].content == "second"
        assert store.get_trace(trace_hash="t1:old") is None  # schema 1 had dropped that body
        assert store.attributions("rules")["run-1"].agent == "coder"
        assert store.runs()[0]["annotations"] == 2
        assert [f["trace_id"] for f in store.failed_traces(CONFIG.config_hash())] == ["run-3"]
        # New results go on top: the same trace read again (t2: hash) becomes run-1's latest version.
        h = judged(store, trace("second", path="/runs/run-1.jsonl"), present=True)
        assert [r.trace_hash for r in store.annotation_records() if r.trace_id == "run-1"] == [h]
    con = sqlite3.connect(path)
    assert con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (
        str(len(db._MIGRATIONS)),
    )
    assert con.execute("SELECT name FROM sqlite_master WHERE name = 'traces'").fetchone() is None
    assert json.loads(json.dumps(con.execute("PRAGMA integrity_check").fetchone())) == ["ok"]
