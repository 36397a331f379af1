"""HTML / Markdown / JSON rendering, the report() entry point and the CLI command."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from mastkit.report import build_report_data, render_html, render_json, render_markdown, report
from mastkit.report.data import ReportData
from mastkit.store import Store, StoreError

from ._build import HOSTILE_ID, HOSTILE_TEXTS, IMG, TITLE_SCRIPT, build_store


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "m.db"
    build_store(path).close()
    return path


@pytest.fixture
def store(db: Path) -> Iterator[Store]:
    s = Store(db)
    yield s
    s.close()


@pytest.fixture
def data(store: Store) -> ReportData:
    return build_report_data(store)


@pytest.fixture
def html(data: ReportData) -> str:
    return render_html(data)


class _Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: list[str] = []
        self.attrs: list[tuple[str, str, str]] = []
        self.scripts: list[dict[str, str | None]] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        for k, v in attrs:
            self.attrs.append((tag, k, v or ""))
            if k == "id" and v:
                self.ids.append(v)
        if tag == "script":
            self.scripts.append(dict(attrs))


def _parse(html: str) -> _Collect:
    p = _Collect()
    p.feed(html)
    p.close()
    return p


def test_html_is_self_contained(html: str) -> None:
    p = _parse(html)
    for tag, k, v in p.attrs:
        if k in ("src", "href", "action", "srcset", "poster", "data", "xlink:href"):
            assert not re.match(r"\s*(https?:|//|javascript:|data:)", v, re.I), (tag, k, v)
        assert not k.startswith("on"), f"inline event handler {k} on <{tag}>"
    assert not any(t in ("link", "img", "iframe", "object", "embed", "base", "form") for t in p.tags)
    assert "@import" not in html and "url(" not in html.split("<body", 1)[0]
    # exactly one script: ours, inline
    assert p.scripts == [{}]
    assert "Content-Security-Policy" in html and "default-src 'none'" in html.replace("&#39;", "'")


def test_html_escapes_hostile_text(html: str) -> None:
    for text in [*HOSTILE_TEXTS, HOSTILE_ID]:
        if any(ch in text for ch in "<>\"'&"):
            assert text not in html, text
    assert "&lt;script&gt;document.title=&#39;pwned&#39;&lt;/script&gt;" in html
    assert "&#34;&gt;&lt;img src=x onerror" in html
    assert "javascript:alert(document.domain)" in html  # as text content only ...
    assert 'href="javascript' not in html.lower()  # ... never as a link
    assert "<textarea" not in html and "</textarea>" not in html
    assert html.count("<script") == 1 and html.count("</script>") == 1


def test_html_ids_and_links(html: str) -> None:
    p = _parse(html)
    ids = p.ids
    assert len(ids) == len(set(ids)), "duplicate ids"
    for _tag, k, v in p.attrs:
        if k == "href":
            assert v.startswith("#") and v[1:] in ids, f"dangling link {v}"
        if k == "id":
            assert re.fullmatch(r"[A-Za-z0-9_-]+", v), v
    assert "trace-t1" in ids and "trace-t1-e2" in ids and "trace-t2-e50" in ids


def test_html_contents(html: str, data: ReportData) -> None:
    for section in (
        "overview",
        "modes",
        "groups",
        "per-trace",
        "lift",
        "cooc",
        "cascades",
        "traces",
        "glossary",
    ):
        assert f'id="{section}"' in html
    assert html.count("<svg") >= 6  # categories, modes, 3 heatmaps, histogram, lift, co-occurrence
    assert "Step Repetition" in html and "blamed step" in html and "… [+" in html
    assert "event(s) not shown" in html
    assert html.count('class="trace"') == len(data.details)
    assert 'data-outcome="failed"' in html and 'data-modes="FM-1.3 FM-3.2"' in html


def test_html_csp_hash_matches_script(html: str) -> None:
    import base64
    import hashlib

    script = html.split("<script>", 1)[1].split("</script>", 1)[0]
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    assert f"sha256-{digest}" in html


def test_markdown(data: ReportData) -> None:
    md = render_markdown(data)
    assert md.startswith("# mastkit failure report")
    assert "**6** annotated traces: **4** failed" in md
    assert "| `FM-3.2` | No or Incomplete Verification | 3/6 | 50.0% |" in md
    assert "Mean **2.00** modes per failed trace" in md and "cascading (>3): 1" in md
    assert "| `FM-1.3` | `FM-3.2` | 2 | 0 |" in md
    # hostile text cannot open HTML: every < is backslash-escaped
    assert re.search(r"(?<!\\)<", md) is None


def test_markdown_table_rows_have_consistent_columns(data: ReportData) -> None:
    md = render_markdown(data)
    blocks: list[list[str]] = [[]]
    for line in md.splitlines():
        if line.startswith("|"):
            blocks[-1].append(line)
        elif blocks[-1]:
            blocks.append([])
    for block in (b for b in blocks if b):
        widths = {len(re.findall(r"(?<!\\)\|", line)) for line in block}
        assert len(widths) == 1, block


def test_json(data: ReportData) -> None:
    doc = json.loads(render_json(data))
    assert doc["counts"]["failed"] == 4 and doc["report_schema"] == "1.0"
    assert {t["trace_id"] for t in doc["traces"]} >= {"t1", HOSTILE_ID}
    hist = doc["tables"]["modes_per_failed"][0]["histogram"]
    assert hist == {"0": 1, "1": 1, "2": 1, "5": 1}
    t1 = next(d for d in doc["details"] if d["trace_id"] == "t1")
    assert t1["events"][1]["text"] == TITLE_SCRIPT  # JSON keeps the text verbatim (it is data)


@pytest.mark.parametrize("fmt", ["html", "md", "json"])
def test_report_entry_point(db: Path, tmp_path: Path, fmt: str) -> None:
    out = report(db, tmp_path / f"r.{fmt}", fmt=fmt)
    text = out.read_text(encoding="utf-8")
    assert out.exists() and len(text) > 500
    if fmt == "html":
        assert text.startswith("<!DOCTYPE html>")
    with Store(db) as s:
        assert report(s, tmp_path / f"s.{fmt}", fmt=fmt, run="rules").exists()


def test_report_entry_point_errors(db: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown report format"):
        report(db, tmp_path / "x", fmt="pdf")
    with pytest.raises(StoreError, match="no such store"):
        report(tmp_path / "missing.db", tmp_path / "x.html")
    assert not (tmp_path / "missing.db").exists()


def _cli() -> typer.Typer:
    from mastkit.cli.report import report_cmd

    app = typer.Typer()
    app.command()(report_cmd)
    return app


def test_cli(db: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "r.html"
    res = runner.invoke(_cli(), ["--db", str(db), "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>") and "written to" in res.output
    res = runner.invoke(_cli(), ["--db", str(db), "-o", "-", "-f", "md"])
    assert res.exit_code == 0 and "# mastkit failure report" in res.output
    res = runner.invoke(_cli(), ["--db", str(db), "-o", str(tmp_path / "r.json")])
    assert res.exit_code == 0 and json.loads((tmp_path / "r.json").read_text())["counts"]["traces"] == 6
    res = runner.invoke(_cli(), ["--db", str(db), "-f", "pdf"])
    assert res.exit_code == 2
    res = runner.invoke(_cli(), ["--db", str(tmp_path / "none.db")])
    assert res.exit_code == 3
    res = runner.invoke(_cli(), ["--db", str(db), "--run", "nope", "-o", str(tmp_path / "n.html")])
    assert res.exit_code == 3


def test_size_is_bounded_for_long_traces(store: Store) -> None:
    d = build_report_data(store, max_events=10, char_budget=1000)
    assert all(len(t.events) <= 10 + 8 for t in d.details)  # cap plus must-show events
    assert d.limits.event_chars == d.limits.min_event_chars
    assert IMG not in render_html(d)
