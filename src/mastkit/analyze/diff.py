"""``diff_runs``: compare two annotation runs — before/after a fix, model A vs model B, rules vs judge.

For each mode: prevalence in each run (present / judged; ``unknown`` verdicts are excluded and
counted), the difference with Wilson intervals, and an exact test. When the two runs judged the
same traces (same trace ids, e.g. two annotators, or a re-run after a prompt change), the test is
McNemar's exact test on the discordant pairs (paired); otherwise Fisher's exact test on the 2x2
table of present/absent counts (unpaired). A mode *rose* or *fell* when p < alpha.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Literal, Protocol

from pydantic import BaseModel

from mastkit.analyze.profile import fisher_exact, wilson
from mastkit.annotate.model import Annotation

Direction = Literal["rose", "fell", "unchanged", "n/a"]


class ModeDiff(BaseModel):
    code: str
    a_present: int
    a_judged: int
    a_unknown: int
    b_present: int
    b_judged: int
    b_unknown: int
    p_a: float | None
    p_b: float | None
    ci_a: tuple[float, float] | None
    ci_b: tuple[float, float] | None
    delta: float | None
    """p_b - p_a."""
    test: Literal["mcnemar", "fisher", "none"]
    p_value: float | None
    direction: Direction
    gained: int = 0
    """Paired traces where the mode is absent in A and present in B."""
    lost: int = 0
    """Paired traces where the mode is present in A and absent in B."""


class TraceChange(BaseModel):
    trace_id: str
    gained: list[str]
    lost: list[str]


class RunDiff(BaseModel):
    run_a: str
    run_b: str
    a_traces: int
    b_traces: int
    paired_traces: int
    only_in_a: list[str]
    only_in_b: list[str]
    modes: list[ModeDiff]
    changes: list[TraceChange]
    """Per paired trace, the modes that appeared or disappeared from A to B (only traces that changed)."""
    alpha: float


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value for b and c discordant pairs (binomial, p = 1/2)."""
    n = b + c
    if n == 0:
        return 1.0
    k = min(b, c)
    tail: float = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return min(1.0, 2 * tail)


def _vectors(annotations: Iterable[Annotation]) -> dict[str, dict[str, str]]:
    return {a.trace_id: {v.code: v.verdict for v in a.verdicts} for a in annotations}


def diff_annotations(
    a_anns: Iterable[Annotation],
    b_anns: Iterable[Annotation],
    *,
    run_a: str = "A",
    run_b: str = "B",
    alpha: float = 0.05,
    min_paired_share: float = 0.5,
) -> RunDiff:
    """Compare two sets of annotations (see the module doc)."""
    a, b = _vectors(a_anns), _vectors(b_anns)
    both = sorted(set(a) & set(b))
    paired = bool(both) and len(both) >= min_paired_share * max(len(a), len(b))
    codes: list[str] = []
    for vec in (*a.values(), *b.values()):
        codes.extend(c for c in vec if c not in codes)
    modes: list[ModeDiff] = []
    for code in codes:
        va = [v.get(code, "unknown") for v in a.values()]
        vb = [v.get(code, "unknown") for v in b.values()]
        ap, aj = va.count("present"), sum(1 for x in va if x != "unknown")
        bp, bj = vb.count("present"), sum(1 for x in vb if x != "unknown")
        pa = ap / aj if aj else None
        pb = bp / bj if bj else None
        gained = lost = 0
        test: Literal["mcnemar", "fisher", "none"] = "none"
        p: float | None = None
        if paired:
            judged_both = [
                t
                for t in both
                if a[t].get(code, "unknown") != "unknown" and b[t].get(code, "unknown") != "unknown"
            ]
            gained = sum(1 for t in judged_both if a[t][code] == "absent" and b[t][code] == "present")
            lost = sum(1 for t in judged_both if a[t][code] == "present" and b[t][code] == "absent")
            if judged_both:
                test, p = "mcnemar", mcnemar_exact(gained, lost)
        elif aj and bj:
            test, p = "fisher", fisher_exact(ap, aj - ap, bp, bj - bp)
        direction: Direction = "n/a"
        if p is not None and pa is not None and pb is not None:
            direction = "unchanged" if p >= alpha else ("rose" if pb > pa else "fell")
        modes.append(
            ModeDiff(
                code=code, a_present=ap, a_judged=aj, a_unknown=len(va) - aj, b_present=bp, b_judged=bj,
                b_unknown=len(vb) - bj, p_a=pa, p_b=pb, ci_a=wilson(ap, aj), ci_b=wilson(bp, bj),
                delta=pb - pa if pa is not None and pb is not None else None, test=test, p_value=p,
                direction=direction, gained=gained, lost=lost,
            )
        )  # fmt: skip
    changes = []
    for t in both:
        g = sorted(c for c in codes if a[t].get(c) == "absent" and b[t].get(c) == "present")
        lo = sorted(c for c in codes if a[t].get(c) == "present" and b[t].get(c) == "absent")
        if g or lo:
            changes.append(TraceChange(trace_id=t, gained=g, lost=lo))
    return RunDiff(
        run_a=run_a,
        run_b=run_b,
        a_traces=len(a),
        b_traces=len(b),
        paired_traces=len(both) if paired else 0,
        only_in_a=sorted(set(a) - set(b)),
        only_in_b=sorted(set(b) - set(a)),
        modes=modes,
        changes=changes,
        alpha=alpha,
    )


class _RunSource(Protocol):
    """What :func:`diff_runs` needs from a store."""

    def resolve_run(self, ref: str | None = None) -> str: ...
    def annotations(self, config_hash: str | None = None) -> Iterable[Annotation]: ...


def diff_runs(store: _RunSource, run_a: str, run_b: str, *, alpha: float = 0.05) -> RunDiff:
    """Compare two stored runs (config-hash prefixes, ``rules``/``llm``/``hybrid`` or model names)."""
    ha, hb = store.resolve_run(run_a), store.resolve_run(run_b)
    return diff_annotations(store.annotations(ha), store.annotations(hb), run_a=ha, run_b=hb, alpha=alpha)
