"""mastkit.attribute.attribute with the default method and with a judge that has only a
synchronous ``attribute`` (run off the event loop)."""

from __future__ import annotations

from typing import Any

from mastkit.attribute import attribute
from mastkit.attribute.model import Attribution
from mastkit.traces.model import Event, Outcome, Trace


def _failed(tid: str) -> Trace:
    events = [
        Event(seq=0, kind="message", actor="user", role="user", content="Compute 2 + 2."),
        Event(seq=1, kind="message", actor="solver", role="assistant", content="The answer is 5."),
    ]
    return Trace(
        trace_id=tid, source_format="test", events=events, outcome=Outcome(success=False, ground_truth="4")
    )


class SyncJudge:
    """A judge with only ``attribute`` (no ``aattribute``)."""

    version = "sync-1"
    model_id = "test:sync"

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, Any]] = []

    def attribute(self, trace: Trace, *, method: str, ground_truth: str | None) -> Attribution:
        self.calls.append((trace.trace_id, method, ground_truth))
        return Attribution(agent="solver", step=1, method=method, reason="sync")


def test_the_default_method_is_rules() -> None:
    report = attribute([_failed("a")])
    assert report.method == "rules"
    assert report.results["a"].method == "rules"


def test_a_synchronous_judge_gets_the_trace_method_and_ground_truth() -> None:
    judge = SyncJudge()
    report = attribute([_failed("a"), _failed("b")], "all-at-once", judge=judge, with_ground_truth=True)
    assert sorted(judge.calls) == [("a", "all-at-once", "4"), ("b", "all-at-once", "4")]
    assert report.results["a"] == Attribution(agent="solver", step=1, method="all-at-once", reason="sync")
    hidden = SyncJudge()
    attribute([_failed("c")], "step-by-step", judge=hidden)
    assert hidden.calls == [("c", "step-by-step", None)]  # no ground truth unless asked for
