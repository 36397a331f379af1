"""Failure annotation: rule detectors (offline default) and an LLM-as-a-Judge over any provider."""

from mastkit.annotate.model import (
    Annotation,
    AnnotatorConfig,
    Attribution,
    Evidence,
    ModeVerdict,
    VerdictValue,
)
from mastkit.annotate.run import Annotator, BudgetExceededError, Progress, ResultCache, RunReport, annotate

__all__ = [
    "Annotation",
    "Annotator",
    "AnnotatorConfig",
    "Attribution",
    "BudgetExceededError",
    "Evidence",
    "ModeVerdict",
    "Progress",
    "ResultCache",
    "RunReport",
    "VerdictValue",
    "annotate",
]
