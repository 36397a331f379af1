"""Failure attribution: which agent and which step caused a failed run.

``attribute(traces, "rules")`` needs nothing else; the LLM methods (``all-at-once``,
``step-by-step``, ``binary-search``) take ``judge=LLMAttributor.from_spec("provider:model")``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mastkit.attribute.rules import attribute_rules
from mastkit.attribute.run import METHODS, AttributionReport, attribute

if TYPE_CHECKING:
    from mastkit.attribute.llm import AttributionOptions, LLMAttributor

__all__ = [
    "METHODS",
    "AttributionOptions",
    "AttributionReport",
    "LLMAttributor",
    "attribute",
    "attribute_rules",
]


def __getattr__(name: str) -> Any:
    # The LLM attributor pulls in the provider SDKs: imported only when asked for.
    if name in ("LLMAttributor", "AttributionOptions"):
        from mastkit.attribute import llm

        return getattr(llm, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
