"""Blinding: a copy of a trace with everything that holds the answer taken out.

A verifier that reads the reward, the grader's notes or carried labels scores nothing but its
own input. :func:`blind` is applied by every scorer before it reads a trace, so a caller cannot
forget it. What goes:

* the outcome's ``success``, ``score``, ``metrics`` and ``ground_truth`` (the run's own
  ``final_output`` stays: it is what the agent produced, and detectors read it);
* the labels that came with the source (human or benchmark annotations);
* the native records: the trace's ``raw`` (for tau-bench it holds ``reward`` and ``info``, whose
  ``task.actions`` and ``reward_info`` are the gold actions and the grading) and every event's
  ``raw``;
* in the trace's, the agents' and the events' ``extra`` mappings, at any depth, every entry whose
  key names a grade (:data:`ANSWER_KEYS`: reward, score, success, grading, gold, expected…).

With ``keep_task=False`` the task text goes too. For tau-bench it is the user simulator's
hidden goal (``info.task.instruction``), which its README allows a verifier to see; the default
keeps it, and the docs say so.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from mastkit.traces.model import Event, Outcome, Trace

__all__ = ["ANSWER_KEYS", "blind", "is_answer_key"]

ANSWER_KEYS = re.compile(
    r"(reward|score|success|succeed|outcome|grad(e|er|ing)|gold|ground.?truth|expected|answer|"
    r"label|passed|pass_?at|resolved|correct|judg(e|ment)|verdict|metric|eval|^info$|actions?$)",
    re.IGNORECASE,
)
"""Keys of ``extra`` entries that are dropped: anything that may hold or reveal the grade."""


def is_answer_key(key: object) -> bool:
    """True when an ``extra`` key may hold the answer (see :data:`ANSWER_KEYS`)."""
    return isinstance(key, str) and ANSWER_KEYS.search(key) is not None


def _scrub(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _scrub(v) for k, v in value.items() if not is_answer_key(k)}
    if isinstance(value, list):
        return [_scrub(v) for v in value]
    return value


def _blind_event(e: Event) -> Event:
    if e.raw is None and not e.extra:
        return e
    return dataclasses.replace(e, raw=None, extra=_scrub(e.extra) if e.extra else {})


def blind(trace: Trace, *, keep_task: bool = True) -> Trace:
    """A copy of ``trace`` a verifier may read: no outcome grade, labels, native records or
    grade-like ``extra`` entries (see the module docstring). The input is not changed."""
    final = trace.outcome.final_output if trace.outcome is not None else None
    outcome = Outcome(final_output=final) if final else None
    agents = [a.model_copy(update={"extra": _scrub(a.extra)}) if a.extra else a for a in trace.agents]
    return trace.model_copy(
        update={
            "outcome": outcome,
            "labels": [],
            "raw": None,
            "extra": _scrub(trace.extra),
            "agents": agents,
            "task": trace.task if keep_task else None,
            "events": [_blind_event(e) for e in trace.events],
        }
    )
