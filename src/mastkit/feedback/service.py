"""Feedback for one trace from what the store holds: the failure vector, the attribution, the text.

:func:`failure_vector` finds the annotation of a trace (its content hash) in the store — of one
run when asked, else of the most recent run that annotated it — and annotates the trace on the
fly (the rule annotator unless another is given, stored) when the store has none.
:func:`reflection_for` then writes pattern B's reflection from it, templated or by a model.
"""

from __future__ import annotations

import asyncio

from mastkit.annotate.model import Annotation
from mastkit.annotate.rule_annotator import annotate_rules
from mastkit.attribute.model import Attribution
from mastkit.attribute.rule_attributor import attribute_by_rules
from mastkit.feedback.llm_reflect import LLMReflector
from mastkit.feedback.reflection import Reflection, reflect
from mastkit.feedback.tool import TraceAnnotator
from mastkit.store import Store
from mastkit.taxonomy import Taxonomy
from mastkit.traces.model import Trace

__all__ = ["attribution_for", "failure_vector", "reflection_for"]


async def failure_vector(
    trace: Trace,
    taxonomy: Taxonomy,
    *,
    store: Store | None = None,
    run: str | None = None,
    annotator: TraceAnnotator | None = None,
) -> Annotation:
    """The annotation of ``trace``: from ``store`` (the run ``run`` — a config hash prefix, a kind
    or a model — when given, else the latest run holding one for this trace's content), else made
    now by ``annotator`` (rules by default) and stored."""
    t_hash = trace.content_hash()
    if store is not None:
        runs = [store.resolve_run(run)] if run else [str(r["config_hash"]) for r in reversed(store.runs())]
        for config_hash in runs:
            found = store.get_annotation(t_hash, config_hash)
            if found is not None and found.config.taxonomy_id == taxonomy.id:
                return found
    annotation = await annotator.annotate(trace) if annotator is not None else annotate_rules(trace, taxonomy)
    if store is not None:
        store.upsert_trace(trace, t_hash)
        store.register_run(annotation.config)
        store.put_annotation(annotation, t_hash)
    return annotation


def attribution_for(trace: Trace, annotation: Annotation, store: Store | None = None) -> Attribution | None:
    """The responsible agent and step: a stored attribution of this trace version, else the
    annotation's own, else the rule attributor's when the annotation found a failure mode."""
    if store is not None:
        stored = store.attributions_by_hash().get(trace.content_hash())
        if stored is not None:
            return stored
    if annotation.attribution is not None:
        return annotation.attribution
    if annotation.present():
        return attribute_by_rules(trace)
    return None


async def areflection_for(
    trace: Trace,
    taxonomy: Taxonomy,
    *,
    store: Store | None = None,
    run: str | None = None,
    annotator: TraceAnnotator | None = None,
    reflector: LLMReflector | None = None,
) -> Reflection:
    """:func:`reflection_for` inside an event loop."""
    annotation = await failure_vector(trace, taxonomy, store=store, run=run, annotator=annotator)
    attribution = attribution_for(trace, annotation, store)
    if reflector is not None:
        return await reflector.reflect(trace, annotation, attribution=attribution)
    return reflect(annotation, taxonomy, attribution=attribution)


def reflection_for(
    trace: Trace,
    taxonomy: Taxonomy,
    *,
    store: Store | None = None,
    run: str | None = None,
    annotator: TraceAnnotator | None = None,
    reflector: LLMReflector | None = None,
) -> Reflection:
    """Pattern B for ``trace``: its failure vector (see :func:`failure_vector`) and attribution
    turned into a reflection — templated, or written by ``reflector`` when given."""
    return asyncio.run(
        areflection_for(trace, taxonomy, store=store, run=run, annotator=annotator, reflector=reflector)
    )
