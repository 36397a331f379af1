"""Plain-text renderings of a report: Markdown (a summary for CI logs and PR comments) and JSON."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from mastkit.report.data import ReportData

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]<>|#!])")


def md_cell(value: object, limit: int = 60) -> str:
    """A value made safe for one Markdown table cell: one line, special characters escaped."""
    text = " ".join(str(value).split())
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return _MD_SPECIAL.sub(r"\\\1", text)


def _pct(x: float | None, digits: int = 1) -> str:
    return "–" if x is None else f"{100 * x:.{digits}f}%"


def _num(x: float | None, digits: int = 2) -> str:
    if x is None:
        return "–"
    if x != 0 and abs(x) < 10 ** (-digits):
        return f"{x:.1e}"
    return f"{x:.{digits}f}"


def _table(head: Sequence[str], rows: Sequence[Sequence[str]], align: str = "") -> list[str]:
    out = ["| " + " | ".join(head) + " |"]
    out.append(
        "|" + "|".join((":--" if (align[i : i + 1] or "l") == "l" else "--:") for i in range(len(head))) + "|"
    )
    out.extend("| " + " | ".join(r) + " |" for r in rows)
    return out


def _redaction_line(data: ReportData) -> str:
    if not data.redacted:
        return "Redaction was turned off for this report: trace text is shown as stored."
    found = ", ".join(f"{md_cell(k)} {n}" for k, n in data.redactions.items()) or "nothing found"
    return f"Redacted before display (secrets and e-mail addresses): {found}."


def render_markdown(data: ReportData, *, top: int = 10) -> str:
    """A short Markdown summary: counts, modes, categories, fatal modes, cascades, per-group means."""
    tax = data.taxonomy
    c = data.counts
    t = data.tables
    lines = [
        f"# mastkit failure report — run `{data.run.config_hash[:15]}`",
        "",
        f"Annotator **{md_cell(data.run.kind or '?')}**"
        + (f" ({md_cell(data.run.model)})" if data.run.model else "")
        + f" · taxonomy {md_cell(tax.name)} {md_cell(tax.version)} · generated {data.generated_at}",
        "",
        *([f"Judge: {data.calibration}", ""] if data.calibration else []),
        f"**{c.traces}** annotated traces: **{c.failed}** failed, {c.succeeded} successful, "
        f"{c.outcome_unknown} outcome unknown; {c.with_modes} with at least one failure mode."
        + (f" {c.not_annotated} trace(s) in the store are not in this run." if c.not_annotated else "")
        + (f" {c.errors} error(s) recorded." if c.errors else ""),
        "",
        _redaction_line(data),
        "",
        "## Failure categories",
        "",
    ]
    lines += _table(
        ["category", "traces with it", "prevalence", "share of flags"],
        [
            [
                md_cell(f"{r['category']} {tax.category_name(r['category'])}"),
                f"{r['with_category']}/{r['traces']}",
                _pct(r["prevalence"]),
                _pct(r["share"]),
            ]
            for r in t.category_profile
        ],
        "lrrr",
    )
    lines += ["", "## Failure modes", ""]
    profile = sorted(t.profile, key=lambda r: (-(r["present"]), r["code"]))
    lines += _table(
        ["mode", "name", "present/judged", "prevalence", "95% CI"],
        [
            [
                f"`{md_cell(r['code'])}`",
                md_cell(tax.mode_name(r["code"])),
                f"{r['present']}/{r['judged']}",
                _pct(r["prevalence"]),
                f"{_pct(r['ci'][0], 0)}–{_pct(r['ci'][1], 0)}" if r["ci"] else "–",
            ]
            for r in profile
        ],
        "llrrr",
    )
    if t.modes_per_failed:
        m = t.modes_per_failed[0]
        lines += [
            "",
            "## Modes per failed trace",
            "",
            f"Mean **{_num(m['mean_modes'])}** modes per failed trace ({m['failed_traces']} failed traces); "
            f"isolated (1–{data.isolated_max} modes): {m['isolated']}, cascading (>{data.isolated_max}): "
            f"{m['cascading']}, none: {m['none']}. Histogram: "
            + ", ".join(f"{k}: {v}" for k, v in m["histogram"].items())
            + ".",
        ]
        for field, table in t.modes_per_failed_by.items():
            if len(table) > 1:
                lines += ["", f"By {md_cell(field)}:", ""]
                lines += _table(
                    [md_cell(field), "failed", "mean modes", "isolated", "cascading"],
                    [
                        [
                            md_cell(r["group"]),
                            str(r["failed_traces"]),
                            _num(r["mean_modes"]),
                            str(r["isolated"]),
                            str(r["cascading"]),
                        ]
                        for r in table[:top]
                    ],
                    "lrrrr",
                )
    relevant = [
        r
        for r in t.fatal_vs_benign
        if r["p_value"] is not None and (r["failed_present"] or r["success_present"])
    ]
    if relevant:
        lines += ["", "## Failed vs successful traces", ""]
        relevant.sort(key=lambda r: (r["p_value"], r["code"]))
        lines += _table(
            ["mode", "in failed", "in successful", "lift", "Fisher p", "verdict"],
            [
                [
                    f"`{md_cell(r['code'])}`",
                    f"{r['failed_present']}/{r['failed_n']} ({_pct(r['p_failed'], 0)})",
                    f"{r['success_present']}/{r['success_n']} ({_pct(r['p_success'], 0)})",
                    f"{r['lift']:+.0%}" if r["lift"] is not None else "–",
                    _num(r["p_value"], 3),
                    r["verdict"],
                ]
                for r in relevant[:top]
            ],
            "lrrrrl",
        )
    if t.cascade_chains:
        lines += ["", "## Cascade chains (A before B)", ""]
        lines += _table(
            ["before", "after", "traces", "reverse"],
            [
                [f"`{md_cell(r['before'])}`", f"`{md_cell(r['after'])}`", str(r["traces"]), str(r["reverse"])]
                for r in t.cascade_chains[:top]
            ],
            "llrr",
        )
    for field, table in t.profile_by.items():
        groups = sorted({r["group"] for r in table})
        if len(groups) < 2:
            continue
        shown = groups[:8]
        lines += ["", f"## Prevalence by {md_cell(field)}", ""]
        by_cell: dict[tuple[str, str], dict[str, Any]] = {(r["code"], r["group"]): r for r in table}
        codes = [r["code"] for r in t.profile if r["present"]]
        lines += _table(
            ["mode", *[md_cell(g, 24) for g in shown]],
            [
                [f"`{md_cell(code)}`", *[_pct(by_cell[(code, g)]["prevalence"], 0) for g in shown]]
                for code in codes
            ],
            "l" + "r" * len(shown),
        )
        if len(groups) > len(shown):
            lines.append(f"\n({len(groups) - len(shown)} more group(s) in the HTML/JSON report.)")
    failed = [s for s in data.traces if s.outcome == "failed"]
    if failed:
        lines += ["", f"## Failed traces (first {min(top, len(failed))} of {len(failed)})", ""]
        lines += _table(
            ["trace", "modes present", "blamed"],
            [
                [
                    md_cell(s.trace_id, 50),
                    " ".join(f"`{md_cell(code)}`" for code in s.present) or "–",
                    md_cell(
                        f"{s.attribution.agent or '?'}@{s.attribution.step}"
                        if s.attribution and s.attribution.step is not None
                        else (s.attribution.agent or "?")
                        if s.attribution
                        else "–"
                    ),
                ]
                for s in failed[:top]
            ],
        )
    if data.verify is not None:
        v = data.verify

        def iv(x: Any) -> str:
            return f"{100 * x.value:.1f}% [{100 * x.lo:.1f}, {100 * x.hi:.1f}]"

        lines += [
            "",
            "## Best-of-N verifier",
            "",
            f"Latest `mastkit verify --eval` ({md_cell(v.label)}, {v.created_at}): {v.tasks} tasks, "
            f"{v.rollouts} rollouts; 95% bootstrap intervals over tasks; fitted scorers on held-out tasks.",
            "",
        ]
        lines += _table(
            ["scorer", "pass@1", "selected", "oracle", "gain", "scored"],
            [
                [
                    md_cell(r.scorer),
                    iv(r.pass_at_1),
                    iv(r.selected),
                    iv(r.oracle),
                    iv(r.gain),
                    md_cell(r.protocol),
                ]
                for r in v.results
            ],
        )
    return "\n".join(lines) + "\n"


def render_json(data: ReportData, *, indent: int | None = 2) -> str:
    """The whole :class:`ReportData` as JSON (tables, trace summaries and details)."""
    return data.model_dump_json(indent=indent)
