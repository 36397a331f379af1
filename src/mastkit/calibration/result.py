"""What a calibration measured, and the one line reports and ``eval`` show about a judge."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from mastkit.annotate.model import AnnotatorConfig

CI = tuple[float, float] | None

RULES_LINE = "rule annotator: see docs/detectors.md for its measured precision"


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore")


class ModeCalibration(_Model):
    """One failure mode's agreement with the human majority label."""

    code: str
    n: int
    """(trace, mode) pairs scored (a present/absent verdict and a gold label)."""
    unknown: int
    """Pairs left unknown by the judge (not scored)."""
    tp: int
    fp: int
    fn: int
    tn: int
    precision: float | None
    recall: float | None
    f1: float | None
    f1_ci: CI = None
    kappa: float | None = None
    kappa_ci: CI = None
    prevalence: float | None = None
    """Share of gold positives among the scored pairs."""
    baseline_random_f1: float | None = None
    """Expected F1 of a random annotator at the gold prevalence."""


class AttributionCalibration(_Model):
    """The judge's responsible agent and step against Who&When's human labels."""

    n: int
    agent_accuracy: float | None
    step_accuracy: float | None
    random_agent: float | None
    random_step: float | None
    missing: int
    """Labelled traces the judge named no agent for (scored as wrong)."""


class CalibrationResult(_Model):
    """Agreement of one annotator configuration with the humans on the calibration set."""

    config_hash: str
    config: AnnotatorConfig
    set_version: str
    created_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    traces: int
    """Failure-mode traces scored (annotated and labelled)."""
    failed: list[str] = Field(default_factory=list)
    """Trace ids the annotator failed on or did not reach (budget): not scored."""
    modes: list[ModeCalibration]
    micro_precision: float | None
    micro_recall: float | None
    micro_f1: float | None
    micro_f1_ci: CI = None
    macro_f1: float | None
    macro_f1_ci: CI = None
    kappa: float | None
    """Cohen's kappa pooled over every scored (trace, mode) pair."""
    kappa_ci: CI = None
    unknown: int
    coverage: float | None
    """Share of the labelled pairs that got a present/absent verdict."""
    baseline_always_absent: dict[str, float | None]
    baseline_random: dict[str, float | None]
    attribution: AttributionCalibration | None = None
    model_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    extra: dict[str, Any] = Field(default_factory=dict)

    def summary(self) -> str:
        """``macro-F1 0.41 [0.20, 0.60], kappa 0.30 [0.10, 0.50] (19 traces, 2026-11-26)``."""
        return (
            f"macro-F1 {_f(self.macro_f1)}{_ci(self.macro_f1_ci)}, kappa {_f(self.kappa)}{_ci(self.kappa_ci)} "
            f"({self.traces} traces, {self.created_at.date().isoformat()})"
        )


def _f(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.2f}"


def _ci(ci: CI) -> str:
    return "" if ci is None else f" [{ci[0]:.2f}, {ci[1]:.2f}]"


def agreement_line(config: AnnotatorConfig, found: tuple[CalibrationResult, bool] | None) -> str:
    """What a report says about how far to trust the annotator that made a run.

    ``found`` is what :func:`mastkit.calibration.calibration_for` returned: a result and
    whether it was measured with exactly this configuration.
    """
    if config.kind == "rules":
        return RULES_LINE
    if found is None:
        hybrid = " --annotator hybrid" if config.kind == "hybrid" else ""
        return f"uncalibrated: run `mastkit calibrate --model {config.model or 'provider:name'}{hybrid}`"
    result, exact = found
    line = f"measured agreement on the calibration set: {result.summary()}"
    if not exact:
        line += "; measured with other options of the same model, prompt version and taxonomy"
    return line
