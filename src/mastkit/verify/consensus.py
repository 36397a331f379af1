"""Consensus across the rollouts of one task (best-of-N self-consistency).

Independent runs of the same task that end in the same state tend to be right more often than a
run whose effects no sibling shares. The *effects* of a rollout are the multiset of its
state-changing calls that did not fail (hand-offs included): the tool name with its arguments
normalised (keys sorted, strings trimmed and lower-cased, whole floats as integers). Two
rollouts agree to the degree their effects overlap (Jaccard similarity of the multisets; two
rollouts with no effect agree fully).

Per rollout: ``agreement`` — the mean similarity to its siblings; ``unshared`` — effects no
sibling produced. A rollout alone in its group gets agreement 0.5 and no unshared effect.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import orjson

from mastkit.traces.model import Trace
from mastkit.verify.process import is_error_result
from mastkit.verify.signals import is_handoff_tool, is_state_changing

__all__ = ["CONSENSUS_FEATURES", "consensus_features", "effects", "similarity"]

CONSENSUS_FEATURES = ("agreement", "unshared")

Effect = tuple[str, str]


def _normalise(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _normalise(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_normalise(v) for v in value]
    if isinstance(value, str):
        return value.strip().lower()
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def effects(trace: Trace) -> Counter[Effect]:
    """The state-changing calls of ``trace`` that did not fail, normalised (see the module doc)."""
    out: Counter[Effect] = Counter()
    for e, answer in trace.tool_calls():
        call = e.tool_call
        if call is None or not (is_state_changing(call.name) or is_handoff_tool(call.name)):
            continue
        result = answer.tool_result if answer is not None else None
        if result is not None and is_error_result(result):
            continue
        args = call.arguments if call.arguments is not None else call.arguments_raw
        if is_handoff_tool(call.name):
            args = None  # the summary is free text: any hand-off agrees with any other
        out[(call.name, orjson.dumps(_normalise(args), option=orjson.OPT_SORT_KEYS).decode())] += 1
    return out


def similarity(a: Counter[Effect], b: Counter[Effect]) -> float:
    """Jaccard similarity of two effect multisets (1 when both are empty)."""
    union = sum((a | b).values())
    return 1.0 if union == 0 else sum((a & b).values()) / union


def consensus_features(group: Sequence[Trace]) -> list[dict[str, float]]:
    """``agreement`` and ``unshared`` of each rollout of one task (read them blinded)."""
    sets = [effects(t) for t in group]
    out = []
    for i, mine in enumerate(sets):
        others = [s for j, s in enumerate(sets) if j != i]
        if not others:
            out.append({"agreement": 0.5, "unshared": 0.0})
            continue
        agreement = sum(similarity(mine, o) for o in others) / len(others)
        unshared = sum(1 for eff in mine if not any(eff in o for o in others))
        out.append({"agreement": agreement, "unshared": float(unshared)})
    return out
