"""Failure attribution: which agent and which step caused a failed run.

``attribute(traces, "rules")`` needs nothing else; the LLM methods (``all-at-once``,
``step-by-step``, ``binary-search``) take ``judge=LLMAttributor.from_spec("provider:model")``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mastkit.attribute.llm import AttributionOptions, LLMAttributor
    from mastkit.attribute.model import Attribution
    from mastkit.attribute.rule_attributor import attribute_by_rules
    from mastkit.attribute.run import METHODS, AttributionReport, attribute

__all__ = [
    "METHODS",
    "Attribution",
    "AttributionOptions",
    "AttributionReport",
    "LLMAttributor",
    "attribute",
    "attribute_by_rules",
]


_LAZY = {
    "Attribution": "model",
    "attribute_by_rules": "rule_attributor",
    "METHODS": "run",
    "AttributionReport": "run",
    "attribute": "run",
    "LLMAttributor": "llm",
    "AttributionOptions": "llm",
}


def __getattr__(name: str) -> Any:
    # Imported when asked for: the LLM attributor pulls in the provider SDKs, and
    # ``mastkit.attribute.model`` must load without the rest (the annotation model uses it).
    if name in _LAZY:
        return getattr(importlib.import_module(f"mastkit.attribute.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
