"""Scoring failure attribution against human labels (Who&When style).

Metrics (as in the Who&When paper's ``evaluate.py``): exact-match agent accuracy, exact-match
step accuracy, and step accuracy within ±k. Baselines printed beside them:

* ``random`` — the expected accuracy of picking uniformly among the trace's agents / steps
  (computed exactly, not sampled; steps are the trace's events, agents its actors other than
  user, human, system, environment and tool);
* ``most_active_agent`` — blame the agent with the most steps in the trace (uses no labels; a tie
  goes to the alphabetically last name).

Only traces whose gold label has a step are scored (``n``); a trace without a prediction counts
as wrong for every metric and is counted in ``missing``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from mastkit.attribute.model import Attribution
from mastkit.traces.model import Label, Trace, is_agent_name


@dataclass
class AttributionScores:
    n: int
    agent_accuracy: float | None
    step_accuracy: float | None
    step_within: dict[int, float | None]
    random_agent: float | None
    random_step: float | None
    random_step_within: dict[int, float | None]
    most_active_agent: float | None
    missing: int
    """Traces with a gold label but no prediction (scored as wrong)."""


def gold_attribution(trace: Trace) -> Label | None:
    """The human attribution label carried by a trace (Who&When), if any."""
    return next((lab for lab in trace.labels if lab.kind == "attribution"), None)


def _agents(trace: Trace) -> list[str]:
    return sorted({e.actor for e in trace.events if e.actor and is_agent_name(e.actor)})


def score_attribution(
    preds: Mapping[str, Attribution | None],
    traces: Sequence[Trace],
    *,
    tolerances: Sequence[int] = (1, 3),
) -> AttributionScores:
    """Score predictions ``{trace_id: Attribution}`` against the traces' gold attribution labels."""
    agent_hits = step_hits = missing = n = 0
    within = dict.fromkeys(tolerances, 0)
    rnd_agent = rnd_step = 0.0
    rnd_within = dict.fromkeys(tolerances, 0.0)
    active_hits = 0
    for t in traces:
        gold = gold_attribution(t)
        if gold is None or gold.step is None:
            continue
        n += 1
        p = preds.get(t.trace_id)
        if p is None:
            missing += 1
        else:
            agent_hits += int(p.agent is not None and p.agent == gold.agent)
            step_hits += int(p.step is not None and p.step == gold.step)
            for k in tolerances:
                within[k] += int(p.step is not None and abs(p.step - gold.step) <= k)
        agents = _agents(t)
        steps = len(t.events)
        rnd_agent += (1 / len(agents)) if agents and gold.agent in agents else 0.0
        rnd_step += 1 / steps if steps else 0.0
        for k in tolerances:
            lo, hi = max(0, gold.step - k), min(steps - 1, gold.step + k)
            # a gold step outside the trace (a labelling error) leaves no step within reach: 0, never negative
            rnd_within[k] += max(0, hi - lo + 1) / steps if steps else 0.0
        counts = Counter(e.actor for e in t.events if e.actor and is_agent_name(e.actor))
        if counts:
            top = max(counts.items(), key=lambda kv: (kv[1], kv[0]))[0]
            active_hits += int(top == gold.agent)

    def rate(x: float) -> float | None:
        return x / n if n else None

    return AttributionScores(
        n=n,
        agent_accuracy=rate(agent_hits),
        step_accuracy=rate(step_hits),
        step_within={k: rate(v) for k, v in within.items()},
        random_agent=rate(rnd_agent),
        random_step=rate(rnd_step),
        random_step_within={k: rate(v) for k, v in rnd_within.items()},
        most_active_agent=rate(active_hits),
        missing=missing,
    )
