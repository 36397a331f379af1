"""Rule detectors: one module per failure mode, no LLM. Each registers with
:func:`mastkit.annotate.detectors._base.detector`; the registry imports every module here."""
