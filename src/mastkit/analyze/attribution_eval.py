"""Measuring attribution against human labels: accuracy with Wilson intervals and exact random baselines.

Used by ``bench/attribution.py``. A label is a :class:`Gold` (trace, agent, step). The labels
come from Who&When traces (their ``attribution`` label) or from a JSONL file in the Who&When
shape that points into a shared trace file (``bench/attribution_labels/``).

Metrics: agent accuracy (exact name), step accuracy (exact event ``seq``) and step accuracy
within ±k. The random baseline is the exact expectation of picking uniformly among the trace's
candidate agents and among its events, not a sample.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mastkit.analyze.profile import wilson
from mastkit.traces.model import Label, Trace, is_agent_name

__all__ = [
    "Gold",
    "Rate",
    "Scores",
    "candidate_agents",
    "golds_from_traces",
    "load_labels",
    "random_scores",
    "score",
    "split",
]

Prediction = tuple[str | None, int | None]
"""(agent, step) — what a method names for one trace; (None, None) when it names nothing."""


@dataclass(frozen=True)
class Gold:
    """One human label: the trace, the agent held responsible and the decisive step (event seq)."""

    trace: Trace
    agent: str
    step: int


@dataclass(frozen=True)
class Rate:
    """Hits out of n, with its 95% Wilson interval (for a random baseline: expected hits)."""

    hits: float
    n: int

    @property
    def value(self) -> float | None:
        return self.hits / self.n if self.n else None

    @property
    def ci(self) -> tuple[float, float] | None:
        if not self.n or self.hits != int(self.hits):
            return None
        return wilson(int(self.hits), self.n)

    def as_dict(self) -> dict[str, object]:
        return {"hits": self.hits, "n": self.n, "value": self.value, "ci": self.ci}


@dataclass
class Scores:
    """Agent, exact step and ±k step accuracy of one method on one label set."""

    agent: Rate
    step: Rate
    within: dict[int, Rate] = field(default_factory=dict)

    def as_dict(self) -> dict[str, object]:
        return {
            "agent": self.agent.as_dict(),
            "step": self.step.as_dict(),
            **{f"step_pm{k}": r.as_dict() for k, r in self.within.items()},
        }


def candidate_agents(trace: Trace) -> list[str]:
    """Who could be blamed: the agents, plus a user who takes part after the first agent step.

    A user who only states the task is not a candidate; a (simulated) user who answers the agent
    is, since it can give wrong or changing information.
    """
    names = {e.actor for e in trace.events if e.actor and is_agent_name(e.actor)}
    first_agent = next((i for i, e in enumerate(trace.events) if e.actor and is_agent_name(e.actor)), None)
    if first_agent is not None:
        names |= {e.actor for e in trace.events[first_agent + 1 :] if e.actor and e.is_user_message()}
    return sorted(names)


def score(
    preds: Mapping[int, Prediction], golds: Sequence[Gold], tolerances: Iterable[int] = (1, 3)
) -> Scores:
    """Score predictions, keyed by the gold's position in ``golds``."""
    ks = list(tolerances)
    agent = step = 0
    within = dict.fromkeys(ks, 0)
    for i, g in enumerate(golds):
        a, s = preds.get(i, (None, None))
        agent += a == g.agent
        step += s == g.step
        for k in ks:
            within[k] += s is not None and abs(s - g.step) <= k
    n = len(golds)
    return Scores(Rate(agent, n), Rate(step, n), {k: Rate(v, n) for k, v in within.items()})


def random_scores(golds: Sequence[Gold], tolerances: Iterable[int] = (1, 3)) -> Scores:
    """The exact expected scores of a uniform pick among candidate agents and among events."""
    ks = list(tolerances)
    agent = step = 0.0
    within = dict.fromkeys(ks, 0.0)
    for g in golds:
        agents = candidate_agents(g.trace)
        agent += (g.agent in agents) / len(agents) if agents else 0.0
        seqs = [e.seq for e in g.trace.events]
        if seqs:
            step += seqs.count(g.step) / len(seqs)
            for k in ks:
                within[k] += sum(abs(s - g.step) <= k for s in seqs) / len(seqs)
    n = len(golds)
    return Scores(Rate(agent, n), Rate(step, n), {k: Rate(v, n) for k, v in within.items()})


def golds_from_traces(traces: Iterable[Trace]) -> list[Gold]:
    """The Who&When labels carried by the traces (traces without an agent and step are left out)."""
    out = []
    for t in traces:
        lab: Label | None = next((x for x in t.labels if x.kind == "attribution"), None)
        if lab is not None and lab.agent and lab.step is not None:
            out.append(Gold(t, lab.agent, lab.step))
    return out


def load_labels(path: Path | str, shared: Path | str, load: Callable[[Path], Iterable[Trace]]) -> list[Gold]:
    """Labels from a JSONL file (``trace_id``, ``path`` under ``shared``, ``mistake_agent``, ``mistake_step``).

    Raises ``KeyError`` when a labelled trace id is not in the file it points to.
    """
    rows = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
    cache: dict[str, dict[str, Trace]] = {}
    out = []
    for r in rows:
        if r["path"] not in cache:
            cache[r["path"]] = {t.trace_id: t for t in load(Path(shared) / r["path"])}
        out.append(Gold(cache[r["path"]][r["trace_id"]], r["mistake_agent"], int(r["mistake_step"])))
    return out


def split(golds: Sequence[Gold], seed: int = 19) -> tuple[list[Gold], list[Gold]]:
    """A fixed half/half split, stratified by the blamed agent: (tuning half, held-out half).

    Within each blamed agent, trace ids are sorted, shuffled with ``seed`` and the first half
    (rounded down) goes to tuning. The order of ``golds`` is kept in both halves.
    """
    tune: set[str] = set()
    for agent in sorted({g.agent for g in golds}):
        ids = sorted(g.trace.trace_id for g in golds if g.agent == agent)
        random.Random(seed).shuffle(ids)
        tune |= set(ids[: len(ids) // 2])
    return [g for g in golds if g.trace.trace_id in tune], [g for g in golds if g.trace.trace_id not in tune]
