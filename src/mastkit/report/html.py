"""The self-contained HTML report: one file, no network, charts as inline SVG.

Safety: templates autoescape everything; trace text only ever lands in element content or
quoted attribute values (escaped), never in ``href``/``src``/event handlers, and anchors come
from :func:`mastkit.report.data.safe_anchor`. A Content-Security-Policy with ``default-src
'none'`` and a hash for the one inline script blocks any network access and any script the
report did not ship, even if escaping were ever missed.
"""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from mastkit.report import svg
from mastkit.report.data import ReportData

MAX_HEATMAP_COLUMNS = 24
"""Heatmaps show the groups with most traces; the rest are listed as left out."""


def _env() -> Environment:
    env = Environment(
        loader=PackageLoader("mastkit.report", "templates"),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=StrictUndefined,
    )
    env.filters["pct"] = svg.pct
    env.filters["num"] = _num
    return env


def _num(x: Any, digits: int = 2) -> str:
    if x is None:
        return "–"
    if isinstance(x, float):
        if digits == 0:
            return f"{x:.0f}"
        if abs(x) < 10 ** (-digits) and x != 0:
            return f"{x:.1e}"
        return f"{x:.{digits}f}"
    return str(x)


def _asset(env: Environment, name: str) -> str:
    assert env.loader is not None
    source, _, _ = env.loader.get_source(env, name)
    return source


def _csp_hash(script: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode()


def _charts(data: ReportData) -> dict[str, Any]:
    tax = data.taxonomy
    cat_codes = [c.code for c in tax.categories]
    cat_of = tax.category_of()
    t = data.tables
    charts: dict[str, Any] = {}

    charts["categories"] = svg.hbar_chart(
        [
            svg.Bar(
                label=f"{r['category']} {tax.category_name(r['category'])}",
                value=r["prevalence"],
                colour=svg.colour_for(r["category"], cat_codes),
                ci=tuple(r["ci"]) if r["ci"] else None,
                note=f"{r['with_category']} of {r['traces']} traces; share of flags {svg.pct(r['share'])}",
            )
            for r in t.category_profile
        ],
        label="Traces with at least one mode of each category",
    )
    charts["modes"] = svg.hbar_chart(
        [
            svg.Bar(
                label=f"{r['code']} {tax.mode_name(r['code'])}",
                value=r["prevalence"],
                colour=svg.colour_for(cat_of.get(r["code"], "?"), cat_codes),
                ci=tuple(r["ci"]) if r["ci"] else None,
                note=f"{r['present']} of {r['judged']} judged traces",
            )
            for r in t.profile
        ],
        label="Prevalence of each failure mode",
    )

    heatmaps = []
    for field, table in t.profile_by.items():
        sizes: dict[str, int] = {}
        for r in table:
            sizes[r["group"]] = r["traces"]
        groups = sorted(sizes, key=lambda g: (-sizes[g], g))
        shown, left_out = groups[:MAX_HEATMAP_COLUMNS], groups[MAX_HEATMAP_COLUMNS:]
        cell = {(r["code"], r["group"]): r for r in table}
        codes = [m.code for m in tax.modes]
        values = [[cell[(c, g)]["prevalence"] if (c, g) in cell else None for g in shown] for c in codes]
        tips = [
            [
                f"{c} in {field}={g}: {cell[(c, g)]['present']}/{cell[(c, g)]['judged']} ({svg.pct(cell[(c, g)]['prevalence'], 1)})"
                if (c, g) in cell
                else f"{c} in {field}={g}: no data"
                for g in shown
            ]
            for c in codes
        ]
        heatmaps.append(
            {
                "field": field,
                "svg": svg.heatmap(
                    [f"{c} {tax.mode_name(c)}" for c in codes],
                    [f"{g} ({sizes[g]})" for g in shown],
                    values,
                    label=f"Mode prevalence by {field}",
                    tips=tips,
                ),
                "left_out": left_out,
                "groups": len(groups),
            }
        )
    charts["heatmaps"] = heatmaps

    lift_rows = [r for r in t.fatal_vs_benign if (r["failed_present"] or r["success_present"])]
    charts["lift"] = svg.paired_bars(
        [
            (
                f"{r['code']} {tax.mode_name(r['code'])}",
                r["p_failed"],
                r["p_success"],
                (
                    f"lift {r['lift']:+.0%}"
                    if r["lift"] is not None
                    else ("only in failed" if r["p_success"] == 0 and r["p_failed"] else "lift –")
                )
                + (f", p={_num(r['p_value'], 3)}" if r["p_value"] is not None else "")
                + (f" {r['verdict']}" if r["verdict"] in ("fatal", "benign") else ""),
            )
            for r in lift_rows
        ],
        label="Prevalence in failed vs successful traces",
    )

    co = t.cooccurrence
    seen = [c for c in co.get("codes", []) if co["counts"][c][c] > 0]
    charts["cooccurrence"] = svg.heatmap(
        seen,
        seen,
        [[co["conditional"][a][b] for b in seen] for a in seen],
        label="Co-occurrence: P(column mode | row mode)",
        cell_text=[[str(co["counts"][a][b]) for b in seen] for a in seen],
        tips=[
            [
                f"{co['counts'][a][b]} trace(s) have both {a} and {b}; P({b} | {a}) = {svg.pct(co['conditional'][a][b], 1)}"
                for b in seen
            ]
            for a in seen
        ],
        scale_max=1.0,
    )

    hist = t.modes_per_failed[0]["histogram"] if t.modes_per_failed else {}
    charts["histogram"] = svg.histogram(
        {int(k): int(v) for k, v in hist.items()},
        label="Modes per failed trace",
        isolated_max=data.isolated_max,
    )
    return charts


def render_html(data: ReportData) -> str:
    """The report as one self-contained HTML document."""
    env = _env()
    script = _asset(env, "report.js")
    style = _asset(env, "report.css")
    csp = (
        "default-src 'none'; "
        f"script-src '{_csp_hash(script)}'; "
        "style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"
    )
    groups: dict[str, list[str]] = {}
    for field in ("model", "framework", "benchmark"):
        groups[field] = sorted({getattr(s, field) or "unknown" for s in data.traces})
    template = env.get_template("report.html.j2")
    return template.render(
        d=data,
        tax=data.taxonomy,
        charts=_charts(data),
        groups=groups,
        style=Markup(style),
        script=Markup(script),
        csp=csp,
        mode_names={m.code: m.name for m in data.taxonomy.modes},
        summaries={t.trace_id: t for t in data.traces},
    )


def write_html(data: ReportData, path: str | Path) -> Path:
    """Render and write the report; returns the path."""
    out = Path(path)
    out.write_text(render_html(data), encoding="utf-8")
    return out
