"""The best-of-N verifier table as a standalone HTML section (``mastkit verify --eval --html``).
The main report renders the latest table kept in the store from its own template
(:func:`mastkit.report.data.verify_view`).

:func:`verify_section` returns one ``<section>`` element, every value escaped, with no script
and no external resource; :func:`verify_page` wraps it into a small self-contained page.
"""

from __future__ import annotations

from markupsafe import escape

from mastkit.verify.evaluate import Evaluation, Interval

__all__ = ["verify_page", "verify_section"]


def _cell(iv: Interval) -> str:
    return f'<td class="num">{iv.value:.1%}<br><small>[{iv.lo:.1%}, {iv.hi:.1%}]</small></td>'


def verify_section(ev: Evaluation, *, title: str = "Best-of-N verifier") -> str:
    """The pass@1 / selected / oracle table of ``ev`` as an HTML ``<section>``."""
    rows = "\n".join(
        f"<tr><th>{escape(r.scorer)}</th>{_cell(r.pass_at_1)}{_cell(r.selected)}{_cell(r.oracle)}"
        f"{_cell(r.gain)}<td>{escape(r.protocol)}</td></tr>"
        for r in ev.results
    )
    note = (
        f"{ev.tasks} tasks, {ev.rollouts} rollouts ({ev.skipped} left out). 95% percentile bootstrap "
        f"intervals over tasks ({ev.n_boot} resamples, seed {ev.seed}). Selected counts a tie for first "
        "as a uniform pick among the tied rollouts; gain = selected − pass@1. Fitted scorers are scored on "
        "held-out tasks only."
    )
    if ev.comparisons:
        diffs = "; ".join(
            f"{c.versus} {100 * c.difference.value:+.1f} [{100 * c.difference.lo:+.1f}, {100 * c.difference.hi:+.1f}]"
            for c in ev.comparisons
        )
        note += (
            f" Highest selected: {ev.comparisons[0].scorer}; its selected minus each other row's, paired over "
            f"tasks (95% bootstrap interval, points): {diffs}."
        )
    return (
        f'<section id="verify"><h2>{escape(title)}</h2>\n<table class="verify">\n'
        "<thead><tr><th>scorer</th><th>pass@1</th><th>selected</th><th>oracle</th><th>gain</th>"
        "<th>scored</th></tr></thead>\n"
        f"<tbody>\n{rows}\n</tbody></table>\n<p>{escape(note)}</p></section>"
    )


_STYLE = (
    "body{font-family:system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse}"
    "td,th{padding:.3em .8em;border-bottom:1px solid #ddd;text-align:left}td.num{text-align:right}"
    "small{color:#666}"
)


def verify_page(ev: Evaluation) -> str:
    """A self-contained HTML page holding :func:`verify_section`."""
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
        f"<title>mastkit verify</title><style>{_STYLE}</style></head><body>\n"
        f"{verify_section(ev)}\n</body></html>\n"
    )
