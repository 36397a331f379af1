"""The guard simulator's scripted runs as a second generator, relabelled for all 14 modes.

``mastkit.guard.sim`` labels each behaviour with the mode it injects. Here those labels are
restated in the taxonomy's paper numbering and completed: ``false_success`` (a fix claimed with
no test after the edit) is FM-3.2, not FM-3.3, since no check exists at all; ``plan_mismatch`` is
left out, because the plan it breaks lives in the guard spec and is not visible in the trace.
"""

from __future__ import annotations

from detector_corpus.labels import Sample, assign_splits, full_labels
from mastkit.guard.sim import make_scenario

BEHAVIOUR_LABELS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "healthy": ((), ()),
    "loop": (("FM-1.3",), ()),
    "cycle": (("FM-1.3",), ()),
    "premature_stop": (("FM-3.1",), ("FM-3.2",)),
    "false_success": (("FM-3.2",), ()),
    "ignored_error": (("FM-3.3",), ()),
    "ambiguous": (("FM-2.2",), ()),
    "no_stop": (("FM-1.5",), ()),
}
"""behaviour -> (modes present, modes skipped); every other mode is absent."""


def sim_samples(seeds: range = range(12)) -> list[Sample]:
    """Every behaviour above for each seed, with its fixed split."""
    out = []
    for behaviour, (present, skip) in BEHAVIOUR_LABELS.items():
        for seed in seeds:
            trace = make_scenario(behaviour, seed).trace()
            # the simulator's own labels would tell an annotator the answer
            trace = trace.model_copy(update={"labels": [], "extra": {}})
            if behaviour == "ambiguous" and any("Permission denied" in e.text() for e in trace.events):
                # a refused read then an edit elsewhere: not an ambiguity in the task
                present, skip = (), ("FM-2.2",)
            out.append(
                Sample(trace=trace, labels=full_labels(present, skip), source="guard_sim", note=behaviour)
            )
            present, skip = BEHAVIOUR_LABELS[behaviour]
    splits = assign_splits([(s.source, s.trace_id) for s in out])
    for s in out:
        s.split = splits[s.trace_id]
    return out
