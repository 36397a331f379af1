"""Small inline-SVG charts, generated in Python (no JavaScript, no network).

Every label goes through :func:`markupsafe.escape`; the functions return :class:`Markup`
so Jinja templates embed them as is. Numbers are formatted here, never taken from input text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#9c755f"]
CHAR_W = 6.4
"""Approximate width of a 11px sans-serif character, for layout."""


def _e(text: object) -> str:
    return str(escape(str(text)))


def _short(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def pct(x: float | None, digits: int = 0) -> str:
    return "–" if x is None else f"{100 * x:.{digits}f}%"


def nice_max(x: float) -> float:
    """A round upper bound for a rate axis (ticks at quarters stay readable)."""
    for top in (0.04, 0.08, 0.2, 0.4, 0.6, 0.8, 1.0):
        if x <= top + 1e-12:
            return top
    return x


def colour_for(key: str, keys: Sequence[str]) -> str:
    try:
        return PALETTE[list(keys).index(key) % len(PALETTE)]
    except ValueError:
        return "#999999"


def _svg(width: float, height: float, body: list[str], label: str) -> Markup:
    return Markup(
        f'<svg class="chart" viewBox="0 0 {width:.0f} {height:.0f}" '
        f'width="{width:.0f}" height="{height:.0f}" role="img" aria-label="{_e(label)}">'
        + "".join(body)
        + "</svg>"
    )


@dataclass
class Bar:
    label: str
    value: float | None
    """0..1 (a rate)."""
    colour: str = PALETTE[0]
    ci: tuple[float, float] | None = None
    note: str = ""
    """Tooltip text."""
    text: str | None = None
    """Value label; defaults to the percentage."""


def hbar_chart(
    bars: Sequence[Bar], *, label: str, width: int = 720, max_value: float | None = None
) -> Markup:
    """Horizontal bars of rates (with optional 95% CI whiskers)."""
    if not bars:
        return Markup('<p class="empty">No data.</p>')
    left = min(300, max(80, int(max(len(b.label) for b in bars) * CHAR_W) + 12))
    right = 70
    row = 20
    top = 6
    height = top + row * len(bars) + 22
    top_value = max_value or nice_max(
        max([b.value or 0 for b in bars] + [b.ci[1] for b in bars if b.ci] + [0.01])
    )
    span = width - left - right
    body = []
    for i in range(5):  # grid
        x = left + span * i / 4
        body.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{height - 20}" class="grid"/>')
        body.append(
            f'<text x="{x:.1f}" y="{height - 6}" class="axis" text-anchor="middle">{pct(top_value * i / 4)}</text>'
        )
    for i, b in enumerate(bars):
        y = top + i * row
        w = span * (b.value or 0) / top_value
        tip = f"{b.label}: {b.text or pct(b.value, 1)}" + (f" — {b.note}" if b.note else "")
        body.append(
            f"<g><title>{_e(tip)}</title>"
            f'<text x="{left - 6}" y="{y + 14}" class="lbl" text-anchor="end">{_e(_short(b.label, int(left / CHAR_W)))}</text>'
            f'<rect x="{left}" y="{y + 3}" width="{max(w, 0):.1f}" height="{row - 6}" fill="{b.colour}"/>'
        )
        if b.ci is not None:
            x0, x1 = left + span * b.ci[0] / top_value, left + span * b.ci[1] / top_value
            body.append(f'<line x1="{x0:.1f}" y1="{y + 10}" x2="{x1:.1f}" y2="{y + 10}" class="ci"/>')
        body.append(
            f'<text x="{left + w + 4:.1f}" y="{y + 14}" class="val">{_e(b.text or pct(b.value, 1))}</text></g>'
        )
    return _svg(width, height, body, label)


def paired_bars(
    items: Sequence[tuple[str, float | None, float | None, str]],
    *,
    label: str,
    names: tuple[str, str] = ("failed", "successful"),
    width: int = 720,
) -> Markup:
    """Two bars per item (e.g. prevalence in failed vs successful traces) plus a note (lift)."""
    if not items:
        return Markup('<p class="empty">No data.</p>')
    left = min(300, max(80, int(max(len(i[0]) for i in items) * CHAR_W) + 12))
    right = 150
    group = 26
    top = 24
    height = top + group * len(items) + 22
    top_value = nice_max(max([v or 0 for _, a, b, _ in items for v in (a, b)] + [0.01]))
    span = width - left - right
    colours = ("#e15759", "#59a14f")
    body = [
        f'<rect x="{left}" y="4" width="10" height="10" fill="{colours[0]}"/>'
        f'<text x="{left + 14}" y="13" class="axis">{_e(names[0])}</text>'
        f'<rect x="{left + 90}" y="4" width="10" height="10" fill="{colours[1]}"/>'
        f'<text x="{left + 104}" y="13" class="axis">{_e(names[1])}</text>'
    ]
    for i in range(5):
        x = left + span * i / 4
        body.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{height - 20}" class="grid"/>')
        body.append(
            f'<text x="{x:.1f}" y="{height - 6}" class="axis" text-anchor="middle">{pct(top_value * i / 4)}</text>'
        )
    for i, (name, a, b, note) in enumerate(items):
        y = top + i * group
        tip = f"{name}: {names[0]} {pct(a, 1)}, {names[1]} {pct(b, 1)}" + (f"; {note}" if note else "")
        body.append(
            f"<g><title>{_e(tip)}</title>"
            f'<text x="{left - 6}" y="{y + 16}" class="lbl" text-anchor="end">{_e(_short(name, int(left / CHAR_W)))}</text>'
        )
        for j, v in enumerate((a, b)):
            w = span * (v or 0) / top_value
            body.append(
                f'<rect x="{left}" y="{y + 3 + j * 10}" width="{w:.1f}" height="9" fill="{colours[j]}"/>'
            )
        longest = span * max(a or 0, b or 0) / top_value
        body.append(f'<text x="{left + longest + 4:.1f}" y="{y + 16}" class="val">{_e(note)}</text></g>')
    return _svg(width, height, body, label)


def _heat_colour(v: float | None) -> str:
    if v is None:
        return "#f3f3f3"
    v = max(0.0, min(1.0, v))
    # white -> deep red
    r, g, b = 255 - int(v * (255 - 176)), 255 - int(v * (255 - 36)), 255 - int(v * (255 - 40))
    return f"#{r:02x}{g:02x}{b:02x}"


def heatmap(
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    values: Sequence[Sequence[float | None]],
    *,
    label: str,
    cell_text: Sequence[Sequence[str]] | None = None,
    tips: Sequence[Sequence[str]] | None = None,
    scale_max: float | None = None,
) -> Markup:
    """A grid of rates; colour scaled to ``scale_max`` (default: the largest value)."""
    if not row_labels or not col_labels:
        return Markup('<p class="empty">No data.</p>')
    left = min(300, max(60, int(max(len(r) for r in row_labels) * CHAR_W) + 12))
    cw, ch = 46, 20
    head = min(130, max(30, int(max(len(_short(c, 20)) for c in col_labels) * CHAR_W * 0.72) + 16))
    width = left + cw * len(col_labels) + head
    height = head + ch * len(row_labels) + 6
    vmax = scale_max or max([v for row in values for v in row if v is not None] + [1e-9])
    body = []
    for j, c in enumerate(col_labels):
        x = left + j * cw + cw / 2
        body.append(
            f'<g><title>{_e(c)}</title><text x="{x:.1f}" y="{head - 6}" class="lbl" '
            f'transform="rotate(-45 {x:.1f} {head - 6})">{_e(_short(c, 20))}</text></g>'
        )
    for i, r in enumerate(row_labels):
        y = head + i * ch
        body.append(
            f'<text x="{left - 6}" y="{y + 14}" class="lbl" text-anchor="end">{_e(_short(r, int(left / CHAR_W)))}</text>'
        )
        for j, _c in enumerate(col_labels):
            v = values[i][j]
            x = left + j * cw
            shade = _heat_colour(None if v is None else v / vmax)
            txt = cell_text[i][j] if cell_text else pct(v)
            dark = v is not None and v / vmax > 0.55
            tip = tips[i][j] if tips else f"{r} × {col_labels[j]}: {txt}"
            body.append(
                f'<g><title>{_e(tip)}</title><rect x="{x}" y="{y}" width="{cw - 2}" height="{ch - 2}" fill="{shade}"/>'
                f'<text x="{x + (cw - 2) / 2:.1f}" y="{y + 13}" class="cell{" dark" if dark else ""}" '
                f'text-anchor="middle">{_e(txt)}</text></g>'
            )
    return _svg(width, height, body, label)


def histogram(counts: Mapping[int, int], *, label: str, isolated_max: int, width: int = 480) -> Markup:
    """Failed traces by number of modes; bars coloured none / isolated / cascading."""
    if not counts:
        return Markup('<p class="empty">No failed traces.</p>')
    top_n = max(counts)
    xs = list(range(0, top_n + 1))
    left, top, bottom = 40, 22, 30
    height = 200
    span_h = height - top - bottom
    bw = max(8, min(48, (width - left - 10) / len(xs)))
    width = int(left + bw * len(xs) + 10)
    ymax = max(counts.values())
    colours = {"none": "#bab0ac", "isolated": "#4e79a7", "cascading": "#e15759"}
    body = []
    x_leg = left
    for name, colour in colours.items():
        body.append(f'<rect x="{x_leg}" y="4" width="10" height="10" fill="{colour}"/>')
        body.append(f'<text x="{x_leg + 14}" y="13" class="axis">{name}</text>')
        x_leg += 90
    for k in range(5):
        y = top + span_h * (1 - k / 4)
        body.append(f'<line x1="{left}" y1="{y:.1f}" x2="{width - 10}" y2="{y:.1f}" class="grid"/>')
        body.append(
            f'<text x="{left - 4}" y="{y + 4:.1f}" class="axis" text-anchor="end">{ymax * k / 4:.0f}</text>'
        )
    for i, n in enumerate(xs):
        c = counts.get(n, 0)
        h = span_h * c / ymax if ymax else 0
        x = left + i * bw
        kind = "none" if n == 0 else ("isolated" if n <= isolated_max else "cascading")
        body.append(
            f"<g><title>{n} mode(s): {c} failed trace(s) ({kind})</title>"
            f'<rect x="{x + 1:.1f}" y="{top + span_h - h:.1f}" width="{bw - 2:.1f}" height="{h:.1f}" fill="{colours[kind]}"/>'
            f'<text x="{x + bw / 2:.1f}" y="{height - bottom + 14}" class="axis" text-anchor="middle">{n}</text></g>'
        )
    body.append(
        f'<text x="{left + (width - left) / 2:.1f}" y="{height - 2}" class="axis" text-anchor="middle">modes per failed trace</text>'
    )
    return _svg(width, height, body, label)
