"""Reports on an annotated run: one self-contained HTML file, a Markdown summary, or JSON.

::

    from mastkit.report import report
    report("mastkit.db", "report.html")              # latest run, HTML
    report(store, "summary.md", fmt="md", run="llm") # a chosen run, Markdown

:func:`build_report_data` gathers everything once; :func:`render_html`,
:func:`render_markdown` and :func:`render_json` format it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from mastkit.report.data import ReportData, build_report_data, safe_anchor
from mastkit.report.html import render_html, write_html
from mastkit.report.text import render_json, render_markdown
from mastkit.store import Store, StoreError

ReportFormat = Literal["html", "md", "json"]
FORMATS: tuple[str, ...] = ("html", "md", "json")

__all__ = [
    "FORMATS",
    "ReportData",
    "ReportFormat",
    "build_report_data",
    "render_html",
    "render_json",
    "render_markdown",
    "report",
    "safe_anchor",
    "write_html",
]


def report(
    store_or_path: Store | str | Path,
    out: str | Path,
    *,
    fmt: ReportFormat | str = "html",
    run: str | None = None,
    by: Sequence[str] = ("model", "framework", "benchmark"),
    redact: bool = True,
) -> Path:
    """Write a report of one run of ``store_or_path`` to ``out``; returns the written path.

    ``fmt`` is ``html`` (self-contained, opens offline), ``md`` (summary) or ``json`` (all data).
    ``run`` picks the run (config-hash prefix, kind or model; default: the latest).
    Secrets and e-mail addresses in trace and annotation text are redacted unless ``redact=False``.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown report format {fmt!r}: use {', '.join(FORMATS)}")
    if isinstance(store_or_path, Store):
        data = build_report_data(store_or_path, run, by=by, details=fmt != "md", redact=redact)
    else:
        if not Path(store_or_path).exists():
            raise StoreError(f"{store_or_path}: no such store file (run `mastkit annotate` first)")
        with Store(store_or_path) as store:
            data = build_report_data(store, run, by=by, details=fmt != "md", redact=redact)
    path = Path(out)
    if fmt == "html":
        text = render_html(data)
    elif fmt == "md":
        text = render_markdown(data)
    else:
        text = render_json(data)
    path.write_text(text, encoding="utf-8")
    return path
