"""Feedback for the next attempt: the taxonomy turned into advice an agent can use.

* **Pattern A** (:mod:`.tool`): the taxonomy as a tool the agent calls on its own partial
  trace while it runs (:func:`tool_schema` in the OpenAI or Anthropic shape,
  :func:`handle_tool_call`), and a compact in-prompt block (:func:`prompt_block`).
* **Pattern B** (:mod:`.reflection`, :mod:`.llm_reflect`, :mod:`.service`): a reflection for
  the next attempt written from another annotator's failure vector and attribution, most
  severe problem first, within a token budget (:meth:`Reflection.render`); templated offline,
  or written by a model (:class:`LLMReflector`).
* The experiment harness (:mod:`.experiment`): a user's agent command run per task, arm and
  repetition, pass rates per arm and a paired exact test against the baseline.

Severity and the per-mode "what to do instead" hints: :mod:`.modes`.
"""

from mastkit.feedback.llm_reflect import LLMReflector, make_reflector
from mastkit.feedback.modes import do_instead, severity
from mastkit.feedback.reflection import Reflection, ReflectionItem, reflect
from mastkit.feedback.service import attribution_for, failure_vector, reflection_for
from mastkit.feedback.tool import (
    TOOL_NAME,
    ahandle_tool_call,
    handle_tool_call,
    prompt_block,
    tool_schema,
)

__all__ = [
    "TOOL_NAME",
    "LLMReflector",
    "Reflection",
    "ReflectionItem",
    "ahandle_tool_call",
    "attribution_for",
    "do_instead",
    "failure_vector",
    "handle_tool_call",
    "make_reflector",
    "prompt_block",
    "reflect",
    "reflection_for",
    "severity",
    "tool_schema",
]
