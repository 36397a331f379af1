"""``calibrate``: run an annotator on the calibration set and measure its agreement with the humans."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from mastkit.analyze.agreement import agreement, macro_f1_ci
from mastkit.analyze.attribution import score_attribution
from mastkit.annotate.model import Annotation, AnnotatorConfig
from mastkit.annotate.run import Annotator, Progress, annotate
from mastkit.attribute.model import Attribution
from mastkit.calibration.dataset import CalibrationSet, load_calibration_set
from mastkit.calibration.result import (
    AttributionCalibration,
    CalibrationResult,
    ModeCalibration,
    agreement_line,
)
from mastkit.store import Store

CALL_LOG_PREFIX = "calibration:"
"""Model calls of a calibration are logged under this prefix + the configuration hash, so that a
run's own cost (``Store.call_stats(config_hash)``) leaves them out; store-wide spending still counts them."""


class _CalibrationCalls:
    """The judge's response cache and call log, logging calls under :data:`CALL_LOG_PREFIX`."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def cached_response(self, r_hash: str) -> Any:
        return self._inner.cached_response(r_hash)

    def put_response(self, r_hash: str, text: str, **kw: Any) -> None:
        self._inner.put_response(r_hash, text, **kw)

    def log_call(self, *, config_hash: str | None, **kw: Any) -> None:
        self._inner.log_call(config_hash=f"{CALL_LOG_PREFIX}{config_hash}" if config_hash else None, **kw)

    def __getattr__(self, name: str) -> Any:  # fence_secret and whatever else the cache offers
        return getattr(self._inner, name)


@contextmanager
def _calls_apart(annotator: Annotator) -> Iterator[None]:
    inner = getattr(annotator, "cache", None)
    if inner is None:
        yield
        return
    setattr(annotator, "cache", _CalibrationCalls(inner))  # noqa: B010 (not every annotator has one)
    try:
        yield
    finally:
        setattr(annotator, "cache", inner)  # noqa: B010


def _verdicts(a: Annotation) -> dict[str, bool | None]:
    return {v.code: (None if v.verdict == "unknown" else v.verdict == "present") for v in a.verdicts}


def calibrate(
    annotator: Annotator,
    *,
    store: Store | None = None,
    attribution: bool = True,
    concurrency: int = 8,
    n_boot: int = 1000,
    seed: int = 0,
    on_progress: Callable[[Progress], None] | None = None,
    calibration_set: CalibrationSet | None = None,
) -> CalibrationResult:
    """Annotate the calibration set with ``annotator`` and score it against the human labels.

    Failure modes are scored on the MAST traces: per mode precision, recall, F1 and Cohen's
    kappa with trace-cluster bootstrap intervals (:func:`mastkit.analyze.agreement.agreement`),
    micro and macro F1, the pooled kappa, the share of unknown verdicts, and the always-absent
    and prevalence-matched random baselines. With ``attribution`` the Who&When traces are
    annotated too and the judge's responsible agent and step are scored against theirs.

    The annotations themselves are not stored as a run (they would mix with the user's traces
    under the same configuration); model replies do go to the annotator's response cache, so a
    second calibration of the same judge costs nothing, and its calls are logged under
    ``calibration:<config hash>``. With ``store`` the result is saved under the annotator's
    configuration hash (:meth:`mastkit.store.Store.put_calibration`).
    """
    cs = calibration_set or load_calibration_set()
    traces = cs.traces if attribution else cs.mode_traces
    with _calls_apart(annotator):
        report = annotate(traces, annotator, store=None, concurrency=concurrency, on_progress=on_progress)
    by_id = {a.trace_id: a for a in report.annotations}
    mode_ids = {t.trace_id for t in cs.mode_traces}
    pred = {tid: _verdicts(a) for tid, a in by_id.items() if tid in mode_ids}
    ag = agreement(pred, cs.gold.labels, n_boot=n_boot, seed=seed)
    modes = [
        ModeCalibration(
            code=m.code,
            n=m.counts.n,
            unknown=m.unknown,
            tp=m.counts.tp,
            fp=m.counts.fp,
            fn=m.counts.fn,
            tn=m.counts.tn,
            precision=m.counts.precision,
            recall=m.counts.recall,
            f1=m.counts.f1,
            f1_ci=m.f1_ci,
            kappa=m.counts.kappa,
            kappa_ci=m.kappa_ci,
            prevalence=m.prevalence,
            baseline_random_f1=m.baseline_random_f1,
        )
        for m in ag.modes
    ]
    attr: AttributionCalibration | None = None
    if attribution and cs.attribution_traces:
        preds: dict[str, Attribution] = {
            t.trace_id: a.attribution
            for t in cs.attribution_traces
            if (a := by_id.get(t.trace_id)) is not None and a.attribution is not None
        }
        s = score_attribution(preds, cs.attribution_traces)
        attr = AttributionCalibration(
            n=s.n,
            agent_accuracy=s.agent_accuracy,
            step_accuracy=s.step_accuracy,
            random_agent=s.random_agent,
            random_step=s.random_step,
            missing=s.missing,
        )
    p = report.progress
    result = CalibrationResult(
        config_hash=annotator.config.config_hash(),
        config=annotator.config,
        set_version=cs.version,
        traces=ag.items,
        failed=sorted(o.trace_id for o in report.outcomes if o.status in ("failed", "not_done")),
        modes=modes,
        micro_precision=ag.micro.precision,
        micro_recall=ag.micro.recall,
        micro_f1=ag.micro.f1,
        micro_f1_ci=ag.micro_f1_ci,
        macro_f1=ag.macro_f1,
        macro_f1_ci=macro_f1_ci(pred, cs.gold.labels, n_boot=n_boot, seed=seed),
        kappa=ag.kappa,
        kappa_ci=ag.kappa_ci,
        unknown=ag.unknown,
        coverage=ag.coverage,
        baseline_always_absent=ag.baseline_always_absent,
        baseline_random=ag.baseline_random,
        attribution=attr,
        model_calls=p.model_calls,
        input_tokens=p.input_tokens,
        output_tokens=p.output_tokens,
        cost_usd=p.cost_usd,
    )
    if store is not None:
        store.put_calibration(annotator.config, result.model_dump_json(), set_version=cs.version)
    return result


def calibration_for(store: Store, config: AnnotatorConfig) -> tuple[CalibrationResult, bool] | None:
    """The stored calibration of ``config`` and whether it is exact (see :meth:`Store.calibration`)."""
    found = store.calibration(config)
    if found is None:
        return None
    return CalibrationResult.model_validate_json(found[0]), found[1]


def run_agreement_line(store: Store, config_hash: str) -> str:
    """:func:`~mastkit.calibration.agreement_line` for the stored run ``config_hash``.

    The lookup rule: a calibration of exactly this configuration; else the latest one of the
    same kind, model, prompt version and taxonomy (other options such as samples or window size
    differ, and the line says so); else the run is uncalibrated. Rule runs point to the
    detectors' published precision.
    """
    row = next((r for r in store.runs() if r["config_hash"] == config_hash), None)
    if row is None:
        return "uncalibrated: unknown run"
    config = AnnotatorConfig.model_validate_json(row["config_json"])
    return agreement_line(config, calibration_for(store, config))
