"""``diff_runs``: compare two annotation runs — before/after a fix, model A vs model B, rules vs judge.

For each mode: prevalence in each run (present / judged; ``unknown`` verdicts are excluded and
counted), the difference with Wilson intervals, and an exact test. When the two runs judged the
same traces (same trace ids, e.g. two annotators, or a re-run after a prompt change), the test is
McNemar's exact test on the discordant pairs (paired); otherwise Fisher's exact test on the 2x2
table of present/absent counts (unpaired). A mode *rose* or *fell* when p < alpha; the direction
is that of the test's evidence (more gained than lost traces when paired, p_b > p_a otherwise).

Categories (MAST's FC1-FC3, or a custom taxonomy's) get the same treatment one level up: a trace
has a category when any of its modes is present, is judged on it when any of its modes is
present or absent, and ``flags`` counts the present verdicts of the category's modes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Literal, Protocol

from pydantic import BaseModel

from mastkit.analyze.profile import fisher_exact, wilson
from mastkit.annotate.model import Annotation
from mastkit.taxonomy import builtin_taxonomies, load_taxonomy

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
    delta_ci: tuple[float, float] | None = None
    """95% interval of the difference (Newcombe's hybrid score interval from the two Wilson intervals)."""
    test: Literal["mcnemar", "fisher", "none"]
    p_value: float | None
    direction: Direction
    gained: int = 0
    """Paired traces where the mode is absent in A and present in B."""
    lost: int = 0
    """Paired traces where the mode is present in A and absent in B."""


class CategoryDiff(BaseModel):
    """A category's totals in each run: traces with at least one of its modes, and its flags."""

    category: str
    name: str | None = None
    codes: list[str]
    a_present: int
    """Traces of A with at least one mode of the category present."""
    a_judged: int
    """Traces of A with at least one mode of the category judged present or absent."""
    a_flags: int
    """Present verdicts of the category's modes in A (a trace counts once per mode)."""
    a_unknown: int = 0
    """Traces of A with every mode of the category unknown."""
    b_present: int
    b_judged: int
    b_flags: int
    b_unknown: int = 0
    p_a: float | None
    p_b: float | None
    ci_a: tuple[float, float] | None
    ci_b: tuple[float, float] | None
    delta: float | None
    delta_ci: tuple[float, float] | None = None
    test: Literal["mcnemar", "fisher", "none"]
    p_value: float | None
    direction: Direction
    gained: int = 0
    lost: int = 0


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
    categories: list[CategoryDiff] = []
    """Per-category totals (empty when the taxonomy's categories are unknown)."""
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


Vectors = dict[str, dict[str, str]]


def _vectors(annotations: Iterable[Annotation]) -> Vectors:
    return {a.trace_id: {v.code: v.verdict for v in a.verdicts} for a in annotations}


def newcombe(k_a: int, n_a: int, k_b: int, n_b: int) -> tuple[float, float] | None:
    """95% interval of p_b - p_a: Newcombe's hybrid score interval built from the Wilson intervals.

    It treats the samples as independent; on paired traces whose verdicts agree more often than
    chance (the usual case) it is conservative — the McNemar p-value is the paired evidence."""
    ci_a, ci_b = wilson(k_a, n_a), wilson(k_b, n_b)
    if ci_a is None or ci_b is None:
        return None
    p_a, p_b = k_a / n_a, k_b / n_b
    d = p_b - p_a
    lower = d - math.sqrt((p_b - ci_b[0]) ** 2 + (ci_a[1] - p_a) ** 2)
    upper = d + math.sqrt((ci_b[1] - p_b) ** 2 + (p_a - ci_a[0]) ** 2)
    return (max(-1.0, lower), min(1.0, upper))


def _mode_value(code: str) -> Callable[[dict[str, str]], str]:
    return lambda vec: vec.get(code, "unknown")


def _category_value(codes: list[str]) -> Callable[[dict[str, str]], str]:
    def value(vec: dict[str, str]) -> str:
        got = [vec.get(c) for c in codes]
        if "present" in got:
            return "present"
        return "absent" if "absent" in got else "unknown"

    return value


def _compare(
    a: Vectors,
    b: Vectors,
    both: list[str] | None,
    value: Callable[[dict[str, str]], str],
    alpha: float,
) -> dict[str, object]:
    """Counts, proportions, Wilson intervals and the exact test for one mode or category.

    ``both`` holds the paired trace ids (McNemar), or None for an unpaired comparison (Fisher)."""
    va = {t: value(v) for t, v in a.items()}
    vb = {t: value(v) for t, v in b.items()}
    ap = sum(1 for x in va.values() if x == "present")
    aj = sum(1 for x in va.values() if x != "unknown")
    bp = sum(1 for x in vb.values() if x == "present")
    bj = sum(1 for x in vb.values() if x != "unknown")
    pa = ap / aj if aj else None
    pb = bp / bj if bj else None
    gained = lost = 0
    test: Literal["mcnemar", "fisher", "none"] = "none"
    p: float | None = None
    if both is not None:
        judged_both = [t for t in both if va[t] != "unknown" and vb[t] != "unknown"]
        gained = sum(1 for t in judged_both if va[t] == "absent" and vb[t] == "present")
        lost = sum(1 for t in judged_both if va[t] == "present" and vb[t] == "absent")
        if judged_both:
            test, p = "mcnemar", mcnemar_exact(gained, lost)
    elif aj and bj:
        test, p = "fisher", fisher_exact(ap, aj - ap, bp, bj - bp)
    direction: Direction = "n/a"
    if p is not None and pa is not None and pb is not None:
        # The direction follows the evidence the test used: the paired changes for McNemar
        # (which can disagree with the all-trace prevalences when some traces are in one run only).
        up = gained > lost if test == "mcnemar" else pb > pa
        direction = "unchanged" if p >= alpha else ("rose" if up else "fell")
    return {
        "a_present": ap, "a_judged": aj, "a_unknown": len(va) - aj,
        "b_present": bp, "b_judged": bj, "b_unknown": len(vb) - bj,
        "p_a": pa, "p_b": pb, "ci_a": wilson(ap, aj), "ci_b": wilson(bp, bj),
        "delta": pb - pa if pa is not None and pb is not None else None,
        "delta_ci": newcombe(ap, aj, bp, bj),
        "test": test, "p_value": p, "direction": direction, "gained": gained, "lost": lost,
    }  # fmt: skip


def _taxonomy_categories(annotations: Iterable[Annotation]) -> tuple[dict[str, str], dict[str, str]]:
    """``({code: category}, {category: name})`` from the runs' taxonomy when it is a built-in one."""
    ids = {ann.config.taxonomy_id for ann in annotations}
    if len(ids) != 1 or (tid := ids.pop()) not in builtin_taxonomies():
        return {}, {}
    tax = load_taxonomy(tid)
    return {m.code: m.category for m in tax.modes}, {c.code: c.name for c in tax.categories}


def diff_annotations(
    a_anns: Iterable[Annotation],
    b_anns: Iterable[Annotation],
    *,
    run_a: str = "A",
    run_b: str = "B",
    alpha: float = 0.05,
    min_paired_share: float = 0.5,
    categories: Mapping[str, str] | None = None,
    category_names: Mapping[str, str] | None = None,
) -> RunDiff:
    """Compare two sets of annotations (see the module doc).

    ``categories`` maps mode codes to category codes; by default they come from the runs'
    taxonomy when both runs use the same built-in one (a custom taxonomy file is not stored with
    the run, so pass its categories explicitly: ``{m.code: m.category for m in tax.modes}``).
    """
    a_list, b_list = list(a_anns), list(b_anns)
    a, b = _vectors(a_list), _vectors(b_list)
    if categories is None:
        categories, names = _taxonomy_categories([*a_list, *b_list])
        category_names = category_names or names
    both = sorted(set(a) & set(b))
    paired = bool(both) and len(both) >= min_paired_share * max(len(a), len(b))
    codes: list[str] = []
    for vec in (*a.values(), *b.values()):
        codes.extend(c for c in vec if c not in codes)
    modes = [
        ModeDiff.model_validate(
            {"code": code, **_compare(a, b, both if paired else None, _mode_value(code), alpha)}
        )
        for code in codes
    ]
    cats: list[CategoryDiff] = []
    by_cat: dict[str, list[str]] = {}
    for code in codes:
        if code in categories:
            by_cat.setdefault(categories[code], []).append(code)
    for cat, members in by_cat.items():
        stats = _compare(a, b, both if paired else None, _category_value(members), alpha)
        cats.append(
            CategoryDiff.model_validate(
                {
                    "category": cat,
                    "name": (category_names or {}).get(cat),
                    "codes": members,
                    "a_flags": sum(1 for v in a.values() for c in members if v.get(c) == "present"),
                    "b_flags": sum(1 for v in b.values() for c in members if v.get(c) == "present"),
                    **stats,
                }
            )
        )
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
        categories=cats,
        changes=changes,
        alpha=alpha,
    )


class _Record(Protocol):
    """A stored annotation with the trace it was made on (``mastkit.store.StoredAnnotation``)."""

    @property
    def trace_id(self) -> str: ...
    @property
    def path(self) -> str | None: ...
    @property
    def annotation(self) -> Annotation: ...


class _RunSource(Protocol):
    """What :func:`diff_runs` needs from a store."""

    def resolve_run(self, ref: str | None = None) -> str: ...
    def annotation_records(self, config_hash: str | None = None) -> Sequence[_Record]: ...


def diff_runs(store: _RunSource, run_a: str, run_b: str, *, alpha: float = 0.05) -> RunDiff:
    """Compare two stored runs (config-hash prefixes, ``rules``/``llm``/``hybrid`` or model names).

    Traces are paired by trace id and the file they were read from: two different traces that
    share an id (two files both holding ``run-1``) are compared as two, labelled ``id (path)``."""
    ha, hb = store.resolve_run(run_a), store.resolve_run(run_b)
    ra, rb = store.annotation_records(ha), store.annotation_records(hb)
    paths: dict[str, set[str]] = {}
    for r in (*ra, *rb):
        paths.setdefault(r.trace_id, set()).add(r.path or "")

    def labelled(records: Sequence[_Record]) -> list[Annotation]:
        return [
            r.annotation
            if len(paths[r.trace_id]) == 1
            else r.annotation.model_copy(update={"trace_id": f"{r.trace_id} ({r.path or '?'})"})
            for r in records
        ]

    return diff_annotations(labelled(ra), labelled(rb), run_a=ha, run_b=hb, alpha=alpha)
