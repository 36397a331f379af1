"""From notes to a taxonomy: cluster, merge near-duplicates, name and define each cluster,
map it to MAST, and check the result against the validation gates, coarsening the cut for
a few rounds while a gate fails."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from mastkit.learn.cluster import cluster_labels, embed, pairwise_cosine, stability
from mastkit.learn.notes import Note
from mastkit.taxonomy import Category, FailureMode, Taxonomy, load_taxonomy

__all__ = ["Gate", "LearnOptions", "LearnResult", "RoundReport", "induce_taxonomy", "mast_mapping"]

_CATEGORIES = {
    "E": ("Execution errors", "Tool calls, code and environment steps that fail."),
    "P": ("Progress and loops", "Repeated or stalled work that does not move the run forward."),
    "T": ("Termination", "How and when the run stops short of the goal."),
    "B": ("Behaviour", "Conduct found by the rule detectors or a model: checks, questions, hand-offs."),
}
_SIGNAL_CATEGORY = {
    "tool_error": "E",
    "error_event": "E",
    "message_error": "E",
    "repetition": "P",
    "termination": "T",
    "stop": "T",
    "detector": "B",
    "llm": "B",
}
_NOISE_TERMS = {"<n>", "<id>", "<value>", "<path>", "<file>", "<url>", "<email>", "the", "a", "an", "of",
                "to", "and", "with", "in", "on", "is", "was", "error", "failed", "step"}  # fmt: skip


class LearnOptions(BaseModel):
    """Knobs of :func:`induce_taxonomy` (and of :func:`mastkit.learn.learn_taxonomy`)."""

    model_config = ConfigDict(extra="forbid")

    distance_threshold: float = 0.6
    """Cosine distance at which the first round cuts the clustering."""
    threshold_step: float = 0.1
    """How much each further round coarsens the cut."""
    max_rounds: int = 4
    min_support: int = 2
    """Failed traces a cluster needs to become a mode."""
    merge_similarity: float = 0.6
    """Clusters whose centroids are at least this similar are merged."""
    max_mode_similarity: float = 0.6
    """Distinctness gate: the most similar pair of mode definitions must stay below this."""
    min_coverage: float = 0.6
    """Coverage gate: share of failed traces (with notes) that get at least one mode."""
    min_stability: float = 0.6
    """Stability gate: mean adjusted Rand index over subsamples."""
    stability_rounds: int = 10
    mast_min_similarity: float = 0.1
    """Below this TF-IDF cosine a mode is marked new instead of mapped to MAST."""
    taxonomy_id: str = "learned"
    code_prefix: str = ""
    """Mode codes are ``<prefix>-01``, ``<prefix>-02``, ...; empty: ``L`` for the default id, else the id
    in capitals (so that two learned taxonomies never share codes, which compare would take as matches)."""

    @property
    def prefix(self) -> str:
        if self.code_prefix:
            return self.code_prefix
        return "L" if self.taxonomy_id == "learned" else self.taxonomy_id.upper()

    name: str = "Learned taxonomy"
    seed: int = 0


class Gate(BaseModel):
    """One validation gate: its number, its threshold, pass or fail."""

    name: str
    value: float | None
    threshold: float | None
    passed: bool | None
    """None when the gate cannot be computed here (needs a model or gold labels)."""
    detail: str = ""


class RoundReport(BaseModel):
    round: int
    distance_threshold: float
    modes: int
    gates: list[Gate]


class LearnResult(BaseModel):
    """A learned taxonomy with its gates, rounds and per-trace mode assignments."""

    taxonomy: Taxonomy
    gates: list[Gate]
    rounds: list[RoundReport]
    assignments: dict[str, list[str]] = Field(default_factory=dict)
    """Mode codes each trace's notes fell into."""
    failed_traces: int = 0
    notes: int = 0

    @property
    def passed(self) -> bool:
        return all(g.passed is not False for g in self.gates)


def _top_terms(vector: Any, terms: list[str], k: int = 4) -> list[str]:
    import numpy as np

    row = np.asarray(vector).ravel()
    out: list[str] = []
    for i in np.argsort(-row):
        if row[i] <= 0 or len(out) >= k:
            break
        t = terms[i]
        words = t.split()
        if all(w in _NOISE_TERMS for w in words) or any(t in o or o in t for o in out):
            continue
        out.append(t)
    return out


def mast_mapping(modes: Sequence[FailureMode], min_similarity: float = 0.1) -> list[tuple[str | None, float]]:
    """Nearest MAST mode of each mode by TF-IDF cosine of their texts, or None under ``min_similarity``."""
    mast = load_taxonomy("mast")

    def text(m: FailureMode) -> str:
        return " ".join([m.name, m.definition, *m.cues])

    emb = embed([text(m) for m in mast.modes] + [text(m) for m in modes])
    sims = pairwise_cosine(emb.matrix[len(mast.modes) :], emb.matrix[: len(mast.modes)])
    out: list[tuple[str | None, float]] = []
    for row in sims:
        j = int(row.argmax())
        s = float(row[j])
        out.append((mast.modes[j].code if s >= min_similarity else None, round(s, 3)))
    return out


def _severity(share: float) -> str:
    return "high" if share >= 0.3 else "medium" if share >= 0.1 else "low"


def _evidence(n: Note) -> dict[str, Any]:
    return {"trace_id": n.trace_id, "seqs": n.seqs, "quote": n.quote, "agent": n.agent, "note": n.text}


def _example(n: Note) -> str:
    where = f"events {n.seqs[0]}-{n.seqs[-1]}" if len(n.seqs) > 1 else f"event {n.seqs[0]}" if n.seqs else ""
    who = f" ({n.agent})" if n.agent else ""
    q = f': "{n.quote}"' if n.quote else ""
    return f"trace {n.trace_id} {where}{who}: {n.text}{q}".strip()


def _one_round(
    notes: list[Note], threshold: float, opts: LearnOptions, failed_ids: set[str]
) -> tuple[list[FailureMode], dict[str, list[str]], float, list[int]]:
    import numpy as np

    emb = embed([n.text for n in notes])
    labels = cluster_labels(emb.matrix, threshold)
    groups: dict[int, list[int]] = defaultdict(list)
    for i, lab in enumerate(labels):
        groups[lab].append(i)
    dense = np.asarray(emb.matrix.toarray())
    # merge near-duplicate clusters (centroid cosine at or above merge_similarity)
    keys = sorted(groups)
    cents = {k: dense[groups[k]].mean(axis=0) for k in keys}
    parent = {k: k for k in keys}

    def find(k: int) -> int:
        while parent[k] != k:
            k = parent[k]
        return k

    for a_i, a in enumerate(keys):
        for b in keys[a_i + 1 :]:
            ca, cb = cents[a], cents[b]
            denom = float(np.linalg.norm(ca) * np.linalg.norm(cb)) or 1.0
            if float(ca @ cb) / denom >= opts.merge_similarity:
                parent[find(b)] = find(a)
    merged: dict[int, list[int]] = defaultdict(list)
    for k in keys:
        merged[find(k)].extend(groups[k])
    final_labels = [find(lab) for lab in labels]
    terms = emb.terms()
    n_failed = max(1, len(failed_ids))
    candidates: list[tuple[int, list[int], float]] = []
    for k, rows in merged.items():
        f_traces = {notes[i].trace_id for i in rows if notes[i].failed}
        s_traces = {notes[i].trace_id for i in rows if not notes[i].failed}
        if len(f_traces) < opts.min_support or len(s_traces) > len(f_traces):
            continue  # too rare, or as common in successful runs: not what separates failure
        candidates.append((k, rows, len(f_traces) / n_failed))
    candidates.sort(key=lambda c: -c[2])
    modes: list[FailureMode] = []
    assignments: dict[str, list[str]] = defaultdict(list)
    for idx, (_k, rows, share) in enumerate(candidates, start=1):
        code = f"{opts.prefix}-{idx:02d}"
        cent = dense[rows].mean(axis=0)
        sims = dense[rows] @ cent
        order = [rows[j] for j in np.argsort(-sims)]
        central = notes[order[0]]
        top = _top_terms(cent, terms)
        signals = Counter(notes[i].signal for i in rows)
        category = _SIGNAL_CATEGORY.get(signals.most_common(1)[0][0], "B")
        f_sorted = sorted({notes[i].trace_id for i in rows if notes[i].failed})
        s_count = len({notes[i].trace_id for i in rows if not notes[i].failed})
        name = " / ".join(top[:3]) or central.text[:60]
        examples = []
        seen_tr: set[str] = set()
        for i in order:
            if notes[i].trace_id not in seen_tr:
                seen_tr.add(notes[i].trace_id)
                examples.append(notes[i])
            if len(examples) == 3:
                break
        variants = list(dict.fromkeys(notes[i].text for i in order))[:4]
        modes.append(
            FailureMode(
                code=code,
                name=name[:80],
                category=category,
                definition=f"{central.text[0].upper()}{central.text[1:]}.",
                when_to_use="A step of the run matches one of: " + "; ".join(variants),
                when_not_to_use=(
                    "The same signal in a run that still reached its goal"
                    + (f" (seen in {s_count} successful traces)" if s_count else "")
                    + "; errors the agent recovered from in the next step."
                ),
                cues=[*top, *sorted(signals)],
                examples=[_example(n) for n in examples],
                severity=_severity(share),
                extra={
                    "support_failed_traces": len(f_sorted),
                    "support_successful_traces": s_count,
                    "share_of_failed": round(share, 3),
                    "notes": len(rows),
                    "detector_modes": dict(Counter(c for i in rows if (c := notes[i].mast_code))),
                    "evidence": [_evidence(n) for n in examples],
                },
            )
        )
        for i in rows:
            if code not in assignments[notes[i].trace_id]:
                assignments[notes[i].trace_id].append(code)
    stab = stability(emb.matrix, final_labels, threshold, rounds=opts.stability_rounds, seed=opts.seed)
    return modes, dict(assignments), stab, final_labels


def _gates(
    modes: list[FailureMode],
    assignments: dict[str, list[str]],
    failed_ids: set[str],
    stab: float,
    opts: LearnOptions,
) -> list[Gate]:
    covered = sum(1 for t in failed_ids if assignments.get(t))
    coverage = covered / len(failed_ids) if failed_ids else 0.0
    if len(modes) >= 2:
        emb = embed([m.definition + " " + m.when_to_use for m in modes])
        sims = pairwise_cosine(emb.matrix)
        worst, pair = 0.0, ("", "")
        for i in range(len(modes)):
            for j in range(i + 1, len(modes)):
                if float(sims[i][j]) > worst:
                    worst, pair = float(sims[i][j]), (modes[i].code, modes[j].code)
        distinct = Gate(name="distinctness", value=round(worst, 3), threshold=opts.max_mode_similarity,
                        passed=worst < opts.max_mode_similarity,
                        detail=f"most similar pair {pair[0]} / {pair[1]}")  # fmt: skip
    else:
        distinct = Gate(name="distinctness", value=0.0, threshold=opts.max_mode_similarity,
                        passed=bool(modes), detail="fewer than two modes")  # fmt: skip
    return [
        Gate(name="coverage", value=round(coverage, 3), threshold=opts.min_coverage,
             passed=coverage >= opts.min_coverage, detail=f"{covered}/{len(failed_ids)} failed traces"),
        distinct,
        Gate(name="stability", value=round(stab, 3), threshold=opts.min_stability,
             passed=stab >= opts.min_stability, detail=f"mean ARI over {opts.stability_rounds} 80% subsamples"),
        Gate(name="annotator_agreement", value=None, threshold=0.75, passed=None,
             detail="Fleiss' kappa across independent LLM annotators: needs a model (not run offline)"),
    ]  # fmt: skip


def induce_taxonomy(
    notes: Sequence[Note], failed_traces: Sequence[str], opts: LearnOptions | None = None, *, source: str = ""
) -> LearnResult:
    """Learn a taxonomy from ``notes``; ``failed_traces`` are the ids coverage is measured over."""
    opts = opts or LearnOptions()
    notes = list(notes)
    failed_ids = set(failed_traces)
    if not [n for n in notes if n.failed]:
        raise ValueError("no failure notes to learn from: none of the traces shows a failure signal")
    rounds: list[RoundReport] = []
    best: tuple[int, int, list[FailureMode], dict[str, list[str]], list[Gate]] | None = None
    threshold = opts.distance_threshold
    for r in range(1, opts.max_rounds + 1):
        modes, assignments, stab, _labels = _one_round(notes, threshold, opts, failed_ids)
        gates = _gates(modes, assignments, failed_ids, stab, opts)
        rounds.append(
            RoundReport(round=r, distance_threshold=round(threshold, 3), modes=len(modes), gates=gates)
        )
        passed = sum(1 for g in gates if g.passed)
        if modes and (best is None or passed >= best[0]):
            best = (passed, r, modes, assignments, gates)
        if modes and all(g.passed is not False for g in gates):
            break
        threshold = min(0.95, threshold + opts.threshold_step)
    if best is None:
        raise ValueError(f"no cluster reached the minimum support of {opts.min_support} failed traces")
    _passed, _r, modes, assignments, gates = best
    mapping = mast_mapping(modes, opts.mast_min_similarity)
    for k, m in enumerate(modes):
        # a mode made mostly of one rule detector's findings maps to that detector's MAST mode
        hits = Counter(m.extra.get("detector_modes") or {})
        if hits and 2 * hits.most_common(1)[0][1] >= m.extra["notes"]:
            mapping[k] = (hits.most_common(1)[0][0], 1.0)
    modes = [
        m.model_copy(update={"extra": {**m.extra, "mast_match": code or "new", "mast_similarity": sim}})
        for m, (code, sim) in zip(modes, mapping, strict=True)
    ]
    used = list(dict.fromkeys(m.category for m in modes))
    taxonomy = Taxonomy(
        id=opts.taxonomy_id,
        name=opts.name,
        version="1",
        source=source or "learned by mastkit learn",
        description=f"Learned from {len(failed_ids)} failed traces ({len(notes)} notes).",
        categories=[Category(code=c, name=_CATEGORIES[c][0], description=_CATEGORIES[c][1]) for c in used],
        modes=modes,
        extra={"gates": [g.model_dump() for g in gates], "rounds": len(rounds)},
    )
    return LearnResult(taxonomy=taxonomy, gates=gates, rounds=rounds, assignments=assignments,
                       failed_traces=len(failed_ids), notes=len(notes))  # fmt: skip
