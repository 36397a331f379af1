"""``evaluate``: an annotation run (or an attribution method) against gold labels."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from mastkit.analyze.agreement import AgreementReport, agreement, fleiss_kappa
from mastkit.analyze.attribution import AttributionScores, score_attribution
from mastkit.analyze.gold import Gold
from mastkit.annotate.model import Annotation
from mastkit.attribute.model import Attribution
from mastkit.traces.model import Trace


@dataclass
class EvalResult:
    agreement: AgreementReport
    human_fleiss: dict[str, float | None]
    """Fleiss' kappa among the gold annotators per mode (when the gold has several)."""


def evaluate(
    annotations: Iterable[Annotation], gold: Gold, codes: list[str] | None = None, *, n_boot: int = 1000
) -> EvalResult:
    """Per-mode P/R/F1, micro/macro F1, Cohen's kappa (with CIs and baselines), and the gold's own Fleiss kappa."""
    pred: dict[str, dict[str, bool | None]] = {}
    for a in annotations:
        pred[a.trace_id] = {
            v.code: (None if v.verdict == "unknown" else v.verdict == "present") for v in a.verdicts
        }
    report = agreement(pred, gold.labels, codes, n_boot=n_boot)
    fleiss: dict[str, float | None] = {}
    for m in report.modes:
        items = [gold.raters[t][m.code] for t in gold.raters if m.code in gold.raters[t]]
        sizes = {len(i) for i in items}
        fleiss[m.code] = fleiss_kappa(items) if items and len(sizes) == 1 and sizes != {1} else None
    return EvalResult(agreement=report, human_fleiss=fleiss)


def evaluate_attribution(preds: dict[str, Attribution], traces: Iterable[Trace]) -> AttributionScores:
    """Agent/step accuracy (and ±1/±3) against the traces' gold attribution labels, with baselines."""
    return score_attribution(preds, list(traces))


def as_rows(result: EvalResult) -> list[dict[str, Any]]:
    rows = []
    for m in result.agreement.modes:
        c = m.counts
        rows.append(
            {
                "code": m.code,
                "n": c.n,
                "unknown": m.unknown,
                "tp": c.tp,
                "fp": c.fp,
                "fn": c.fn,
                "tn": c.tn,
                "precision": c.precision,
                "recall": c.recall,
                "f1": c.f1,
                "f1_ci": m.f1_ci,
                "kappa": c.kappa,
                "kappa_ci": m.kappa_ci,
                "gold_prevalence": m.prevalence,
                "baseline_random_f1": m.baseline_random_f1,
                "human_fleiss": result.human_fleiss.get(m.code),
            }
        )
    return rows
