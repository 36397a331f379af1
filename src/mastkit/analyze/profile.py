"""Failure analyses over annotated traces: profiles, modes per failed trace, fatal vs benign
(lift + Fisher's exact test), co-occurrence, first modes and cascade chains, cross-group overlap.

All functions take :class:`Row` objects (one per annotated trace; build them with
:func:`rows`) and return plain tables (lists of dicts) for the CLI, the report and notebooks.
Rates carry bootstrap (or Wilson) confidence intervals.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any

import numpy as np

from mastkit.annotate.model import Annotation

ISOLATED_MAX = 3
"""Failed traces with at most this many modes are 'isolated' failures; more is 'cascading'.
(The ITBench study contrasts 2.6 modes per failed trace for frontier models with 4.7-5.3 for
open models; 3 sits between the two regimes.)"""


@dataclass
class Row:
    """One annotated trace, flattened for analysis."""

    trace_id: str
    present: set[str]
    """Modes judged present."""
    judged: set[str]
    """Modes with a present/absent verdict (unknown excluded)."""
    success: bool | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    """framework, model, benchmark, source_format, ..."""
    first_seq: dict[str, int] = field(default_factory=dict)
    """First evidence event per present mode (for ordering)."""


def _group(row: Row, by: str | None) -> str:
    """The group a row falls in: its ``by`` metadata value ("unknown" when absent), or "all"."""
    return str(row.meta.get(by, "unknown")) if by else "all"


def rows(annotations: Iterable[Annotation], meta: Mapping[str, Mapping[str, Any]] | None = None) -> list[Row]:
    """Rows from annotations plus per-trace metadata (``{trace_id: {"success": ..., "framework": ...}}``)."""
    out = []
    for a in annotations:
        m = dict((meta or {}).get(a.trace_id, {}))
        success = m.pop("success", None)
        first = {}
        for v in a.verdicts:
            seqs = [e.seq_start for e in v.evidence if e.seq_start is not None]
            if v.verdict == "present" and seqs:
                first[v.code] = min(seqs)
        out.append(
            Row(
                trace_id=a.trace_id,
                present={v.code for v in a.verdicts if v.verdict == "present"},
                judged={v.code for v in a.verdicts if v.verdict != "unknown"},
                success=None if success is None else bool(success),
                meta=m,
                first_seq=first,
            )
        )
    return out


_Z95 = NormalDist().inv_cdf(0.975)
"""The two-sided 95% normal quantile (1.959964...)."""


def wilson(k: int, n: int, z: float = _Z95) -> tuple[float, float] | None:
    """Wilson score interval for a proportion k/n (95% by default); None when n = 0.

    The ends are exact at the boundaries: 0/n gives a lower bound of 0 and n/n an upper bound of 1.
    """
    if n == 0:
        return None
    if not 0 <= k <= n:
        raise ValueError(f"wilson needs 0 <= k <= n, got k={k}, n={n}")
    p = k / n
    d = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / d
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (0.0 if k == 0 else centre - half, 1.0 if k == n else centre + half)


def _bootstrap_mean(values: Sequence[float], n_boot: int = 1000, seed: int = 0) -> tuple[float, float] | None:
    """95% percentile bootstrap interval of the mean of ``values`` (each value is one trace).

    None with fewer than two values: one value cannot be resampled into an interval.
    """
    if len(values) < 2:
        return None
    rng = np.random.default_rng(seed)
    data = np.asarray(values)
    means = data[rng.integers(len(data), size=(n_boot, len(data)))].mean(axis=1)
    lo, hi = np.quantile(means, [0.025, 0.975])
    return (float(lo), float(hi))


def failure_profile(
    data: Sequence[Row],
    codes: Sequence[str],
    *,
    by: str | None = None,
    categories: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """Per mode (and group): traces judged, present, prevalence (with 95% CI) and share of all flags."""
    groups: dict[str, list[Row]] = defaultdict(list)
    for r in data:
        groups[_group(r, by)].append(r)
    table = []
    for group, members in sorted(groups.items()):
        flags = sum(len(r.present & set(codes)) for r in members)
        for code in codes:
            judged = sum(1 for r in members if code in r.judged)
            k = sum(1 for r in members if code in r.present)
            table.append(
                {
                    "group": group,
                    "code": code,
                    "category": (categories or {}).get(code),
                    "traces": len(members),
                    "judged": judged,
                    "present": k,
                    "prevalence": k / judged if judged else None,
                    "ci": wilson(k, judged),
                    "share": k / flags if flags else None,
                }
            )
    return table


def category_profile(
    data: Sequence[Row], categories: Mapping[str, str], *, by: str | None = None
) -> list[dict[str, Any]]:
    """Per category: traces with at least one mode of it, and its share of all flags."""
    groups: dict[str, list[Row]] = defaultdict(list)
    for r in data:
        groups[_group(r, by)].append(r)
    out = []
    cats = sorted(set(categories.values()))
    for group, members in sorted(groups.items()):
        flags = Counter(categories[c] for r in members for c in r.present if c in categories)
        total = sum(flags.values())
        for cat in cats:
            k = sum(1 for r in members if any(categories.get(c) == cat for c in r.present))
            out.append(
                {
                    "group": group,
                    "category": cat,
                    "traces": len(members),
                    "with_category": k,
                    "prevalence": k / len(members),
                    "ci": wilson(k, len(members)),
                    "share": flags[cat] / total if total else None,
                }
            )
    return out


def modes_per_failed_trace(data: Sequence[Row], *, by: str | None = None) -> list[dict[str, Any]]:
    """Mean modes per failed trace (bootstrap CI), the histogram, and the isolated/cascading split."""
    groups: dict[str, list[Row]] = defaultdict(list)
    for r in data:
        if r.success is False:
            groups[_group(r, by)].append(r)
    out = []
    for group, members in sorted(groups.items()):
        n_modes = [len(r.present) for r in members]
        isolated = sum(1 for n in n_modes if 0 < n <= ISOLATED_MAX)
        cascading = sum(1 for n in n_modes if n > ISOLATED_MAX)
        out.append(
            {
                "group": group,
                "failed_traces": len(members),
                "mean_modes": sum(n_modes) / len(n_modes),
                "ci": _bootstrap_mean([float(n) for n in n_modes]),
                "histogram": dict(sorted(Counter(n_modes).items())),
                "none": sum(1 for n in n_modes if n == 0),
                "isolated": isolated,
                "cascading": cascading,
            }
        )
    return out


def fisher_exact(a: int, b: int, c: int, d: int) -> float:
    """Two-sided Fisher exact test p-value for the 2x2 table [[a, b], [c, d]].

    The p-value sums the probabilities of every table with the same margins that is no more
    likely than the observed one. Probabilities share the denominator C(n, a + b), so the tables
    are compared and summed as exact integers: there is no rounding tolerance, and a table as
    likely as the observed one (p = 1 for equal proportions) gives exactly 1.0."""
    n = a + b + c + d
    row1, col1 = a + b, a + c

    def weight(x: int) -> int:
        # Tables with x in a's cell; math.comb is 0 for the values of x the margins rule out.
        return math.comb(col1, x) * math.comb(n - col1, row1 - x)

    observed = weight(a)
    return sum(w for x in range(min(row1, col1) + 1) if (w := weight(x)) <= observed) / math.comb(n, row1)


def fatal_vs_benign(
    data: Sequence[Row], codes: Sequence[str], *, alpha: float = 0.05
) -> list[dict[str, Any]]:
    """Prevalence of each mode in failed vs successful traces, lift, and Fisher's exact p-value.

    ``lift`` = (p_failed - p_success) / p_success (the "+52% in failed runs" of the ITBench study);
    ``ratio`` = p_failed / p_success. A mode is *fatal* when significantly more frequent in failed
    runs, *benign* when it is common in successful runs too.
    """
    failed = [r for r in data if r.success is False]
    ok = [r for r in data if r.success is True]
    out = []
    for code in codes:
        f_j = [r for r in failed if code in r.judged]
        s_j = [r for r in ok if code in r.judged]
        a = sum(1 for r in f_j if code in r.present)
        c = sum(1 for r in s_j if code in r.present)
        b, d = len(f_j) - a, len(s_j) - c
        pf = a / len(f_j) if f_j else None
        ps = c / len(s_j) if s_j else None
        p: float | None = None
        verdict = "n/a"
        if pf is not None and ps is not None:
            p = fisher_exact(a, b, c, d)
            verdict = "fatal" if p < alpha and pf > ps else ("benign" if ps > 0 and p >= alpha else "neutral")
        lift = (pf - ps) / ps if pf is not None and ps else None
        out.append(
            {
                "code": code,
                "failed_n": len(f_j),
                "failed_present": a,
                "p_failed": pf,
                "ci_failed": wilson(a, len(f_j)),
                "success_n": len(s_j),
                "success_present": c,
                "p_success": ps,
                "ci_success": wilson(c, len(s_j)),
                "lift": lift,
                "ratio": pf / ps if pf is not None and ps else None,
                "p_value": p,
                "verdict": verdict,
            }
        )
    return out


def cooccurrence(data: Sequence[Row], codes: Sequence[str]) -> dict[str, Any]:
    """Co-occurrence counts and conditional probabilities P(column | row) over traces."""
    count = {a: {b: 0 for b in codes} for a in codes}
    for r in data:
        for a in r.present:
            for b in r.present:
                if a in count and b in count[a]:
                    count[a][b] += 1
    cond = {a: {b: (count[a][b] / count[a][a] if count[a][a] else None) for b in codes} for a in codes}
    return {"codes": list(codes), "counts": count, "conditional": cond}


def first_modes(data: Sequence[Row]) -> list[dict[str, Any]]:
    """Which mode shows first in each trace (by first evidence event), counted over traces."""
    c = Counter(min(r.first_seq, key=lambda k: (r.first_seq[k], k)) for r in data if r.first_seq)
    total = sum(c.values())
    return [{"code": k, "first_in": v, "share": v / total} for k, v in c.most_common()]


def cascade_chains(data: Sequence[Row], *, min_count: int = 1) -> list[dict[str, Any]]:
    """Ordered pairs (A before B) of modes within traces: which mode tends to precede which."""
    pairs: Counter[tuple[str, str]] = Counter()
    for r in data:
        ordered = sorted(r.first_seq, key=lambda k: (r.first_seq[k], k))
        for i, a in enumerate(ordered):
            for b in ordered[i + 1 :]:
                if r.first_seq[b] > r.first_seq[a]:
                    pairs[(a, b)] += 1
    out = []
    for (a, b), n in pairs.most_common():
        if n >= min_count:
            rev = pairs.get((b, a), 0)
            out.append({"before": a, "after": b, "traces": n, "reverse": rev, "direction": n / (n + rev)})
    return out


def overlap(data: Sequence[Row], *, by: str) -> list[dict[str, Any]]:
    """Jaccard overlap of the sets of modes seen in each pair of groups (benchmarks, domains, ...)."""
    seen: dict[str, set[str]] = defaultdict(set)
    for r in data:
        seen[_group(r, by)] |= r.present
    groups = sorted(seen)
    out = []
    for i, a in enumerate(groups):
        for b in groups[i + 1 :]:
            union = seen[a] | seen[b]
            out.append(
                {
                    "a": a,
                    "b": b,
                    "jaccard": len(seen[a] & seen[b]) / len(union) if union else None,
                    "shared": sorted(seen[a] & seen[b]),
                }
            )
    return out
