"""How far to trust a judge: its measured agreement with humans on a shipped calibration set.

``calibrate(annotator, store=...)`` runs an annotator on :func:`load_calibration_set` and
stores a :class:`CalibrationResult` under its configuration hash; :func:`calibration_for` finds
it again for a run, and :func:`agreement_line` is the sentence reports and ``eval`` print.
"""

from mastkit.calibration.dataset import CalibrationSet, load_calibration_set
from mastkit.calibration.result import (
    RULES_LINE,
    AttributionCalibration,
    CalibrationResult,
    ModeCalibration,
    agreement_line,
)
from mastkit.calibration.run import CALL_LOG_PREFIX, calibrate, calibration_for, run_agreement_line

__all__ = [
    "CALL_LOG_PREFIX",
    "RULES_LINE",
    "AttributionCalibration",
    "CalibrationResult",
    "CalibrationSet",
    "ModeCalibration",
    "agreement_line",
    "calibrate",
    "calibration_for",
    "load_calibration_set",
    "run_agreement_line",
]
