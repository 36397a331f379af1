"""The verifier table in the main report: `mastkit verify --eval` keeps its table in the store,
and `mastkit report` renders the latest one as a section (real store, real renderer)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.verify._rollouts import rollout
from typer.testing import CliRunner

from mastkit.cli.main import app
from mastkit.report import build_report_data, render_html, render_json, render_markdown
from mastkit.store import Store
from mastkit.traces.ops import dump_trace

from ._build import build_store
from .test_report_render import _parse

runner = CliRunner()


def _eval_into(db: Path, tmp_path: Path, name: str = "runs.jsonl") -> dict[str, object]:
    traces = []
    for i in range(6):
        traces.append(rollout(f"t{i}", 0, success=i % 2 == 0, turns=1))
        traces.append(rollout(f"t{i}", 1, success=False, turns=3, handoff=True))
    f = tmp_path / name
    f.write_bytes(b"".join(dump_trace(t) for t in traces))
    res = runner.invoke(
        app,
        [
            "verify",
            str(f),
            "--eval",
            "--json",
            "--scorer",
            "shortest",
            "--scorer",
            "consensus",
            "--db",
            str(db),
        ],
    )
    assert res.exit_code == 0, res.output
    doc: dict[str, object] = json.loads(res.stdout)
    return doc


def test_no_stored_evaluation_no_section(tmp_path: Path) -> None:
    with build_store(tmp_path / "m.db") as store:
        data = build_report_data(store)
    assert data.verify is None
    html = render_html(data)
    assert 'id="verify"' not in html and 'href="#verify"' not in html


def test_report_shows_the_latest_stored_evaluation(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    build_store(db).close()
    _eval_into(db, tmp_path, "old.jsonl")
    doc = _eval_into(db, tmp_path, "<b>new&.jsonl")
    with Store(db) as store:
        data = build_report_data(store)
    assert data.verify is not None and data.verify.label == "<b>new&.jsonl"
    html = render_html(data)
    section = html.split('<section id="verify">', 1)[1].split("</section>", 1)[0]
    assert "&lt;b&gt;new&amp;.jsonl" in section and "<b>new" not in section
    rows = re.findall(r"<tr><td class=\"l\"><code>([^<]+)</code>", section)
    assert rows == ["shortest", "consensus"]
    results = doc["results"]
    assert isinstance(results, list)
    for r in results:
        sel = r["selected"]
        assert (
            f"{100 * sel['value']:.1f}%<br><small>[{100 * sel['lo']:.1f}%, {100 * sel['hi']:.1f}%]" in section
        )
    assert "12 rollouts" in section and "6 tasks" in section
    best = max(results, key=lambda r: r["selected"]["value"])
    assert f"Highest selected: <code>{best['scorer']}</code>" in section
    p = _parse(html)
    assert 'href="#verify"' in html and len(p.ids) == len(set(p.ids))
    assert json.loads(render_json(data))["verify"]["results"][0]["scorer"] == "shortest"
    md = render_markdown(data)
    assert "## Best-of-N verifier" in md and "| consensus |" in md


def test_report_cli_writes_the_section(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    build_store(db).close()
    _eval_into(db, tmp_path)
    out = tmp_path / "r.html"
    res = runner.invoke(app, ["report", "--db", str(db), "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert '<section id="verify">' in out.read_text(encoding="utf-8")


def test_unreadable_stored_evaluation_is_left_out(tmp_path: Path) -> None:
    with build_store(tmp_path / "m.db") as store:
        store.put_verify_eval('{"results": "not a table"}', label="x")
        assert store.latest_verify_eval() is not None
        assert build_report_data(store).verify is None
