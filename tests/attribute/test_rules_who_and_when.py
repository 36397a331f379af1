"""The rules attribution baseline, measured for real on all 184 Who&When traces."""

from __future__ import annotations

import pytest

from conftest import shared_path
from mastkit import load_traces
from mastkit.analyze.attribution import score_attribution
from mastkit.attribute.model import Attribution
from mastkit.attribute.rule_attributor import attribute_by_rules
from mastkit.traces.model import Event, Label, Trace


def _trace() -> Trace:
    events = [
        Event(seq=0, kind="message", actor="human", role="user", content="What is 2+2?"),
        Event(seq=1, kind="message", actor="Coder", role="assistant", content="```python\nprint(2+2\n```"),
        Event(
            seq=2,
            kind="message",
            actor="Computer_terminal",
            role="user",
            content="exitcode: 1 (execution failed)\nSyntaxError: unexpected EOF",
        ),
        Event(seq=3, kind="message", actor="Checker", role="assistant", content="The answer is 5."),
    ]
    return Trace(
        trace_id="x",
        source_format="test",
        events=events,
        labels=[Label(kind="attribution", agent="Coder", step=1)],
    )


def test_error_step_blames_the_acting_agent() -> None:
    a = attribute_by_rules(_trace())
    assert (a.agent, a.step) == ("Coder", 1) and (a.reason or "").startswith("error_step")


def test_scoring_hand_computed() -> None:
    t = _trace()
    s = score_attribution({"x": Attribution(agent="Coder", step=2)}, [t])
    assert s.agent_accuracy == 1.0 and s.step_accuracy == 0.0 and s.step_within[1] == 1.0
    # agents: Checker, Coder, Computer_terminal -> random agent 1/3; 4 steps -> random step 1/4
    assert s.random_agent == pytest.approx(1 / 3) and s.random_step == pytest.approx(0.25)
    assert s.random_step_within[1] == pytest.approx(3 / 4)
    missing = score_attribution({}, [t])
    assert missing.missing == 1 and missing.agent_accuracy == 0.0


@pytest.mark.parametrize("folder", ["Algorithm-Generated", "Hand-Crafted"])
@pytest.mark.parametrize("with_ground_truth", [False, True])
def test_rules_beat_random_on_who_and_when(folder: str, with_ground_truth: bool) -> None:
    traces = list(load_traces(shared_path("who_and_when", folder)))
    preds = {
        t.trace_id: attribute_by_rules(
            t, ground_truth=t.outcome.ground_truth if with_ground_truth and t.outcome else None
        )
        for t in traces
    }
    s = score_attribution(preds, traces)
    assert s.n == {"Algorithm-Generated": 126, "Hand-Crafted": 58}[folder]
    assert s.agent_accuracy is not None and s.random_agent is not None
    assert s.step_accuracy is not None and s.random_step is not None
    assert s.agent_accuracy > s.random_agent
    assert s.step_accuracy > s.random_step
