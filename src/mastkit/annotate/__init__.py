"""Failure annotation: rule detectors (offline default) and an LLM-as-a-Judge over any provider."""

from mastkit.annotate.model import (
    Annotation,
    AnnotatorConfig,
    Evidence,
    ModeVerdict,
    VerdictValue,
)
from mastkit.annotate.run import Annotator, Progress, ResultCache, RunReport, annotate

__all__ = [
    "Annotation",
    "Annotator",
    "AnnotatorConfig",
    "Evidence",
    "ModeVerdict",
    "Progress",
    "ResultCache",
    "RunReport",
    "VerdictValue",
    "annotate",
]
