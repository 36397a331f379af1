"""Process signals, consensus across a task's rollouts, the group-aware scorer hook, and the
process scorer's nested choice of features."""

from __future__ import annotations

from typing import Any

import pytest
from tests.verify._rollouts import flipped, rollout

from mastkit.traces.model import Event, Outcome, ToolCall, ToolResult, Trace
from mastkit.verify import (
    ConsensusScorer,
    ProcessScorer,
    RandomScorer,
    assess_grouped,
    evaluate_selection,
    process,
    select_best,
)
from mastkit.verify.consensus import consensus_features, effects, similarity


def run(tid: str, steps: list[tuple[str, Any]], *, task: str = "t", success: bool | None = None) -> Trace:
    """A rollout from ``(kind, value)`` steps: ``user``/``agent`` text, ``call`` (name, args,
    output) — a tool call followed by its result."""
    events: list[Event] = []

    def add(**kw: Any) -> None:
        events.append(Event(seq=len(events), **kw))

    for kind, value in steps:
        if kind == "user":
            add(kind="message", actor="user", role="user", content=value)
        elif kind == "agent":
            add(kind="message", actor="assistant", role="assistant", content=value)
        else:
            name, args, output = value
            cid = f"c{len(events)}"
            add(
                kind="tool_call",
                actor="assistant",
                role="assistant",
                tool_call=ToolCall(name=name, call_id=cid, arguments=args),
            )
            add(
                kind="tool_result",
                actor="env",
                role="tool",
                tool_result=ToolResult(call_id=cid, name=name, output=output),
            )
    return Trace(
        trace_id=tid,
        source_format="test",
        task_id=task,
        events=events,
        outcome=None if success is None else Outcome(success=success),
        raw={"reward": float(bool(success))},
    )


def test_confirmation_needs_an_agreement_before_each_write() -> None:
    p = process(
        run(
            "r",
            [
                ("user", "cancel booking AB12 please"),
                ("call", ("get_booking", {"id": "AB12"}, "{}")),
                ("agent", "Shall I cancel AB12?"),
                ("user", "Yes, go ahead."),
                ("call", ("cancel_booking", {"id": "AB12"}, "done")),
                ("call", ("send_certificate", {"amount": 50}, "done")),  # no new agreement
                ("user", "what is the weather"),
                ("call", ("update_booking", {"id": "AB12"}, "done")),  # not an agreement
            ],
        )
    )
    assert (p.writes, p.unconfirmed_writes) == (3, 2)


def test_errors_resolved_by_a_later_success_of_the_same_tool() -> None:
    p = process(
        run(
            "r",
            [
                ("call", ("book", {"x": 1}, "Error: payment does not add up")),
                ("call", ("book", {"x": 2}, "ok")),
                ("call", ("refund", {"x": 3}, "error: not allowed")),
            ],
        )
    )
    assert (p.tool_errors, p.unresolved_errors) == (2, 1)


def test_grounding_counts_values_nobody_said() -> None:
    p = process(
        run(
            "r",
            [
                ("user", "my id is mia_li_3668, book flight HAT136"),
                ("call", ("search_flights", {}, '{"price": 255}')),
                ("user", "yes"),
                (
                    "call",
                    (
                        "book",
                        {"user": "MIA_LI_3668", "flights": ["HAT136"], "amount": 255.0, "card": "cc_9"},
                        "ok",
                    ),
                ),
            ],
        )
    )
    assert p.ungrounded_values == 1  # only "cc_9": the others were said by the user or a tool


def test_how_the_run_ended() -> None:
    p = process(
        run(
            "r",
            [
                ("user", "give me a refund"),
                ("agent", "I'm sorry, I cannot refund a basic economy fare."),
                ("call", ("transfer_to_human_agents", {"summary": "wants refund"}, "ok")),
                ("agent", "Anything else?"),
                ("user", "no thanks"),
            ],
        )
    )
    assert (p.handoff, p.declines, p.final_decline, p.final_question, p.ended_by_user) == (
        True,
        1,
        False,
        True,
        True,
    )
    assert p.writes == 0  # a hand-off is not a write


def test_effects_normalise_arguments_and_skip_failed_calls() -> None:
    a = run(
        "a", [("call", ("cancel", {"id": " AB12 ", "n": 2.0}, "ok")), ("call", ("pay", {"x": 1}, "Error"))]
    )
    b = run("b", [("call", ("cancel", {"n": 2, "id": "ab12"}, "ok"))])
    assert effects(a) == effects(b) and sum(effects(a).values()) == 1
    assert similarity(effects(a), effects(run("c", []))) == 0.0
    assert similarity(effects(run("c", [])), effects(run("d", []))) == 1.0


def _task(name: str, ids: list[str], *, success: list[bool] | None = None) -> list[Trace]:
    """Rollouts of one task; each cancels the reservation named by ``ids``."""
    return [
        run(
            f"{name}-{i}",
            [("user", f"cancel {r}, yes"), ("call", ("cancel_reservation", {"id": r}, "ok"))],
            task=name,
            success=None if success is None else success[i],
        )
        for i, r in enumerate(ids)
    ]


def test_consensus_prefers_the_majority_effect() -> None:
    rows = consensus_features(_task("a", ["X", "Y", "Y"]))
    assert [r["agreement"] for r in rows] == [0.0, 0.5, 0.5]
    assert [r["unshared"] for r in rows] == [1.0, 0.0, 0.0]
    assert consensus_features(_task("a", ["X"])) == [{"agreement": 0.5, "unshared": 0.0}]


def test_select_best_gives_a_group_aware_scorer_the_whole_task() -> None:
    # alone, every rollout would tie and the tie-break would pick a-0 (the odd one out)
    rollouts = _task("a", ["X", "Y", "Y"]) + _task("b", ["Z", "Z", "W"])
    chosen = select_best(rollouts, ConsensusScorer())
    assert {k: t.trace_id for k, t in chosen.items()} == {"a": "a-1", "b": "b-0"}
    scored = assess_grouped(ConsensusScorer(), rollouts, [t.task_id for t in rollouts])
    assert [a.probability for a in scored] == [0.0, 0.5, 0.5, 0.5, 0.5, 0.0]
    assert ConsensusScorer().assess(rollouts[0]).probability == 0.5  # alone: no siblings


def test_evaluation_scores_a_group_aware_scorer_by_task() -> None:
    data = _task("a", ["X", "Y", "Y"], success=[False, True, True]) + _task(
        "b", ["Z", "W", "Z"], success=[True, False, True]
    )
    (cons, rnd) = evaluate_selection(data, [ConsensusScorer(), RandomScorer()], n_boot=100).results
    assert cons.selected.value == pytest.approx(1.0)
    assert rnd.selected.value == pytest.approx(2 / 3)


def _labelled(n_tasks: int) -> list[Trace]:
    """Tasks of four rollouts: the ones whose agent declined succeed; nothing else differs."""
    out = []
    for k in range(n_tasks):
        for i in range(4):
            ok = (i + k) % 2 == 0
            steps: list[tuple[str, Any]] = [("user", "change my flight"), ("agent", f"looking {i}")]
            steps.append(
                ("agent", "Sorry, I cannot change a basic economy fare." if ok else "Done, changed.")
            )
            out.append(run(f"t{k}-{i}", steps, task=f"t{k}", success=ok))
    return out


def test_process_scorer_chooses_the_informative_family_on_training_tasks_only() -> None:
    data = _labelled(12)
    s = ProcessScorer().fit(data, [bool(t.outcome and t.outcome.success) for t in data])
    assert s.chosen is not None and "ending" in s.describe()
    new = _labelled(1)
    assert s.score(new[0]) > 0.5 > s.score(new[1])
    ev = evaluate_selection(data, [ProcessScorer()], n_boot=100, n_splits=3)
    (row,) = ev.results
    assert row.selected.value == pytest.approx(1.0)
    assert "chosen per fold: " in row.protocol and "ending" in row.protocol


def test_fixed_families_skip_the_inner_choice() -> None:
    data = _labelled(6)
    labels = [bool(t.outcome and t.outcome.success) for t in data]
    s = ProcessScorer(families=["size"], c=1.0).fit(data, labels)
    assert s.describe() == "size, C=1"
    assert s.weights["declines"] == 0.0
    with pytest.raises(ValueError, match="unknown feature families"):
        ProcessScorer(families=["nope"])


def test_process_defaults_penalise_unconfirmed_and_unshared_writes() -> None:
    s = ProcessScorer(train=False)
    careful = run("a", [("user", "cancel X? yes"), ("call", ("cancel", {"id": "x"}, "ok"))], task="a")
    hasty = run("b", [("user", "hello"), ("call", ("cancel", {"id": "q"}, "ok"))], task="a")
    p = s.assess_group([careful, careful.model_copy(update={"trace_id": "c"}), hasty])
    assert p[0].probability is not None and p[2].probability is not None
    assert p[0].probability > p[2].probability
    assert "default weights" in p[0].explanation


@pytest.mark.parametrize("success", [True, False])
def test_flipped_outcome_changes_no_group_score(success: bool) -> None:
    group = [rollout("a", i, success=success, changes=i) for i in range(3)]
    flip = [flipped(t) for t in group]
    train = _labelled(6)
    fitted = ProcessScorer().fit(train, [bool(t.outcome and t.outcome.success) for t in train])
    for s in (ConsensusScorer(), ProcessScorer(train=False), fitted):
        assert s.assess_group(group) == s.assess_group(flip), s.name
