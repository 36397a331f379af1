"""The README's first command: the bundled examples, annotated offline, with a report."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from mastkit.cli.main import app
from mastkit.demo import demo
from mastkit.store import Store


def test_demo_annotates_the_examples_and_writes_reports(tmp_path: Path) -> None:
    result = demo(tmp_path / "out")
    assert result.traces >= 10
    assert result.failed_traces >= 8
    assert {"FM-1.3", "FM-2.1", "FM-3.1", "FM-3.2"} <= set(result.mode_counts)
    html = result.html.read_text(encoding="utf-8")
    assert "<svg" in html and "FM-3.2" in html and "http://" not in html.replace("http://www.w3.org", "")
    assert "FM-1.3" in result.markdown.read_text(encoding="utf-8")
    with Store(result.db) as store:
        assert len(list(store.annotations())) == result.traces
    again = demo(tmp_path / "out")  # cached: same results, no duplicates
    assert again.traces == result.traces
    with Store(result.db) as store:
        assert len(list(store.annotations())) == result.traces


def test_demo_cli_prints_where_the_report_is(tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["demo", "-o", str(tmp_path / "d")])
    assert res.exit_code == 0, res.output
    assert "report.html" in res.output and (tmp_path / "d" / "report.html").exists()
