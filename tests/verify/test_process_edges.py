"""Edge cases of the process signals and of the process scorer's logistic fit and inner choice:
exact values per branch, written to kill the surviving mutants of a mutmut run."""

from __future__ import annotations

import math
from typing import Any

import pytest
from tests.verify.test_process import run

from mastkit.traces.model import Event, ToolResult, Trace
from mastkit.verify import ProcessScorer, process
from mastkit.verify.process import _leaves, _scalar_text, is_error_result, process_features
from mastkit.verify.process_scorer import (
    C_GRID,
    FAMILIES,
    FAMILIES_ALL,
    ConsensusScorer,
    _logistic,
    _selected_rate,
    _sigmoid,
)

# -- signal extraction ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kw", "expected"),
    [
        ({"output": "done"}, False),
        ({"output": None}, False),
        ({"output": "done", "exit_code": 0}, False),
        ({"output": "done", "exit_code": None}, False),
        ({"output": "done", "exit_code": 2}, True),
        ({"output": "done", "exit_code": -1}, True),
        ({"output": "done", "is_error": True}, True),
        ({"output": "  ERROR: no such booking"}, True),
        ({"output": "Errors were found"}, True),
        ({"output": "no error here"}, False),
    ],
)
def test_error_result_branches(kw: dict[str, Any], expected: bool) -> None:
    assert is_error_result(ToolResult(call_id="c", **kw)) is expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, None),
        (True, None),
        (False, None),
        (5.0, None),  # "5": one character
        (50.0, "50"),
        (12.5, "12.5"),
        (7, None),
        (42, "42"),
        ("  AB12 ", "ab12"),
        (" x ", None),
        ("xy", "xy"),
    ],
)
def test_scalar_text(value: Any, expected: str | None) -> None:
    assert _scalar_text(value) == expected


def test_leaves_walk_dicts_lists_and_tuples() -> None:
    value = {"a": [1, (2, {"b": "c"})], "d": {"e": None}, "f": []}
    assert list(_leaves(value)) == [1, 2, "c", None]
    assert list(_leaves("x")) == ["x"]


def test_unsupported_write_arguments_are_ungrounded() -> None:
    p = process(
        run(
            "r",
            [
                ("user", "Change flight AB12 to 2024-05-01, yes"),
                ("call", ("get_booking", {"id": "AB12"}, '{"price": 350}')),
                # ab12, 2024-05-01, 350 (whole float) are known; zz99 and 12.5 are made up;
                # booleans, None and one-character values are skipped
                (
                    "call",
                    (
                        "update_booking",
                        {
                            "id": "ab12",
                            "date": "2024-05-01",
                            "p": 350.0,
                            "x": ["ZZ99", 12.5],
                            "f": True,
                            "n": 1,
                        },
                        "done",
                    ),
                ),
            ],
        )
    )
    assert p.ungrounded_values == 2
    assert (p.writes, p.unconfirmed_writes) == (1, 0)


def test_a_value_first_seen_in_a_later_result_is_still_ungrounded() -> None:
    p = process(
        run(
            "r",
            [
                ("user", "yes"),
                ("call", ("book_flight", {"flight": "QX77"}, "booked QX77")),
            ],
        )
    )
    assert p.ungrounded_values == 1


def test_confirmation_is_read_from_the_last_user_message_only() -> None:
    p = process(
        run(
            "r",
            [
                ("user", "Yes please"),
                ("user", "hmm, wait"),
                ("call", ("cancel_booking", {}, "done")),
                ("user", "Okay."),
                ("call", ("lookup_booking", {}, "x")),  # a read keeps the agreement
                ("call", ("cancel_booking", {}, "done")),
            ],
        )
    )
    assert (p.writes, p.unconfirmed_writes) == (2, 1)


def test_write_with_no_user_message_before_is_unconfirmed() -> None:
    p = process(run("r", [("call", ("cancel_booking", {}, "done")), ("user", "yes")]))
    assert (p.writes, p.unconfirmed_writes) == (1, 1)


def test_unresolved_errors_count_failures_since_the_last_success_per_tool() -> None:
    p = process(
        run(
            "r",
            [
                ("user", "yes"),
                ("call", ("update_booking", {}, "error: locked")),
                ("call", ("update_booking", {}, "Error again")),
                ("call", ("cancel_booking", {}, "error: nope")),
                ("call", ("cancel_booking", {}, "done")),
                ("call", ("get_user", {}, "error: missing")),
            ],
        )
    )
    assert (p.tool_errors, p.unresolved_errors) == (4, 3)


def test_results_without_a_name_share_one_bucket() -> None:
    events = [
        Event(seq=0, kind="tool_result", tool_result=ToolResult(call_id="a", output="error")),
        Event(seq=1, kind="tool_result", tool_result=ToolResult(call_id="b", output="fine")),
        Event(seq=2, kind="tool_result", tool_result=ToolResult(call_id="c", output="error x")),
    ]
    p = process(Trace(trace_id="r", source_format="test", events=events))
    assert (p.tool_errors, p.unresolved_errors) == (2, 1)


def test_handoff_is_not_a_write() -> None:
    p = process(run("r", [("user", "yes"), ("call", ("transfer_to_human_agents", {"summary": "QQ"}, "ok"))]))
    assert (p.handoff, p.writes, p.unconfirmed_writes, p.ungrounded_values) == (True, 0, 0, 0)


@pytest.mark.parametrize(
    ("steps", "expected"),
    [
        # agent declined: (ended_by_user, final_question, declines, final_decline)
        ([("user", "refund me"), ("agent", "Sorry, I cannot refund that.")], (False, False, 1, True)),
        # user ended
        (
            [("user", "hi"), ("agent", "Unfortunately not. Anything else?"), ("user", "bye")],
            (True, True, 1, True),
        ),
        # empty last agent message is skipped when finding the final one
        (
            [("user", "hi"), ("agent", "I am unable to help?"), ("agent", "  "), ("agent", "Done.")],
            (False, False, 1, False),
        ),
        ([("user", "hi"), ("agent", "Can I help?"), ("agent", " ")], (False, True, 0, False)),
        ([], (False, False, 0, False)),
    ],
)
def test_endings(steps: list[tuple[str, Any]], expected: tuple[bool, bool, int, bool]) -> None:
    p = process(run("r", steps))
    assert (p.ended_by_user, p.final_question, p.declines, p.final_decline) == expected
    assert p.handoff is False


def test_process_features_exact_values() -> None:
    t = run(
        "r",
        [
            ("user", "cancel AB12"),
            ("agent", "Cancel AB12?"),
            ("user", "yes"),
            ("call", ("cancel_booking", {"id": "ab12"}, "error: locked")),
            ("call", ("transfer_to_human_agents", {}, "ok")),
            ("agent", "Sorry."),
            ("user", "bye"),
        ],
    )
    f = process_features(t)
    assert f == {
        "log_writes": math.log1p(1),
        "log_events": math.log1p(9),
        "log_user_turns": math.log1p(3),
        "unconfirmed_writes": 0.0,
        "tool_errors": 1.0,
        "unresolved_errors": 1.0,
        "ungrounded_values": 0.0,
        "handoff": 1.0,
        "ended_by_user": 1.0,
        "final_question": 0.0,
        "declines": 1.0,
        "final_decline": 1.0,
    }


# -- the logistic fit ----------------------------------------------------------------------------


def _rows(xs: list[float], col: str = "tool_errors") -> list[dict[str, float]]:
    return [{f: 0.0 for f in FAMILIES_ALL} | {col: x} for x in xs]


def _prob(w: dict[str, float], b: float, row: dict[str, float]) -> float:
    return _sigmoid(b + sum(w[f] * row[f] for f in w))


def test_logistic_one_class_or_no_columns_gives_the_clamped_log_odds() -> None:
    rows = _rows([0, 1, 2, 3])
    w, b = _logistic(rows, [1, 1, 1, 1], ["tool_errors"], 1.0)
    assert set(w) == set(FAMILIES_ALL) and not any(w.values())
    assert b == pytest.approx(math.log(0.98 / 0.02))
    _, b = _logistic(rows, [0, 0, 0, 0], ["tool_errors"], 1.0)
    assert b == pytest.approx(math.log(0.02 / 0.98))
    _, b = _logistic(rows, [1, 0, 0, 0], [], 1.0)
    assert b == pytest.approx(math.log(0.25 / 0.75))


def test_logistic_on_a_separable_dataset() -> None:
    xs = [0.0, 1.0, 2.0, 3.0, 10.0, 11.0, 12.0, 13.0]
    y = [1, 1, 1, 1, 0, 0, 0, 0]  # more errors, less success
    rows = _rows(xs)
    w, b = _logistic(rows, y, ["tool_errors"], 1.0)
    assert w["tool_errors"] < 0
    assert [k for k in w if w[k]] == ["tool_errors"]
    probs = [_prob(w, b, r) for r in rows]
    assert probs == sorted(probs, reverse=True)
    assert probs[0] > 0.5 > probs[-1]
    # the raw-scale weights reproduce sklearn's model on standardised features exactly
    from sklearn.linear_model import LogisticRegression

    mean = sum(xs) / len(xs)
    std = math.sqrt(sum((x - mean) ** 2 for x in xs) / len(xs))
    model = LogisticRegression(C=1.0, max_iter=1000).fit([[(x - mean) / std] for x in xs], y)
    assert w["tool_errors"] == pytest.approx(model.coef_[0][0] / std, rel=1e-6)
    assert b == pytest.approx(model.intercept_[0] - model.coef_[0][0] * mean / std, rel=1e-6)
    expected = model.predict_proba([[(x - mean) / std] for x in xs])[:, 1]
    assert probs == pytest.approx(list(expected), rel=1e-6)


def test_logistic_intercept_follows_the_base_rate_and_c_shrinks_weights() -> None:
    xs = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]
    y = [0, 0, 1, 0, 1, 1, 1, 1]
    rows = _rows(xs, "declines")
    strong, _ = _logistic(rows, y, ["declines"], 10.0)
    weak, bw = _logistic(rows, y, ["declines"], 0.01)
    assert 0 < weak["declines"] < strong["declines"]
    # heavy shrinkage: the model at the mean predicts about the base rate (5/8)
    assert _prob(weak, bw, _rows([3.5], "declines")[0]) == pytest.approx(5 / 8, abs=0.02)


def test_logistic_constant_column_gets_no_weight_and_two_columns_keep_order() -> None:
    rows = [
        {f: 0.0 for f in FAMILIES_ALL} | {"tool_errors": e, "handoff": 1.0, "declines": d}
        for e, d in [(0, 5), (1, 4), (2, 3), (3, 2), (4, 1), (5, 0)]
    ]
    y = [1, 1, 1, 0, 0, 0]
    w, b = _logistic(rows, y, ["tool_errors", "handoff", "declines"], 1.0)
    assert w["handoff"] == 0.0
    assert w["tool_errors"] < 0 < w["declines"]
    assert w["tool_errors"] == pytest.approx(-w["declines"])
    assert math.isfinite(b)
    probs = [_prob(w, b, r) for r in rows]
    assert probs == sorted(probs, reverse=True)


# -- selection rate, description, copies ---------------------------------------------------------


def test_selected_rate() -> None:
    assert _selected_rate([], [], []) == 0.0
    # group a: top scored fails; group b: two tied tops, one succeeds
    scores = [0.9, 0.1, 0.5, 0.5, 0.2]
    labels = [0, 1, 1, 0, 1]
    groups = ["a", "a", "b", "b", "b"]
    assert _selected_rate(scores, labels, groups) == pytest.approx((0 + 0.5) / 2)
    assert _selected_rate([0.1, 0.9, 0.3], [0, 1, 1], ["a", "a", "c"]) == 1.0
    assert _selected_rate([-2.0, -1.0], [0, 1], ["a", "a"]) == 1.0


def test_describe() -> None:
    s = ProcessScorer()
    assert s.describe() == "defaults"
    s.chosen = (("ending",), 0.1)
    assert s.describe() == "ending, C=0.1"
    s.chosen = (("confirmation", "errors"), 1.0)
    assert s.describe() == "confirmation+errors, C=1"
    s.chosen = (tuple(FAMILIES), 0.1)
    assert s.describe() == "all, C=0.1"


def test_fresh_copies_settings_and_shares_the_memo() -> None:
    s = ProcessScorer(families=["errors", "ending"], c=0.1, train=False, inner_folds=3, name="p2")
    s._memo["k"] = {"x": 1.0}
    f = s.fresh()
    assert (f.families, f.c, f.trainable, f.inner_folds, f.name) == (
        ["errors", "ending"],
        0.1,
        False,
        3,
        "p2",
    )
    assert f.taxonomy is s.taxonomy
    assert f._memo is s._memo
    assert not f.fitted and f.chosen is None
    assert ProcessScorer(train=False).fresh().name == "process_defaults"


def test_init_rejects_unknown_families_and_sets_defaults() -> None:
    with pytest.raises(ValueError, match="unknown feature families: bogus"):
        ProcessScorer(families=["errors", "bogus"])
    s = ProcessScorer()
    assert (s.name, s.families, s.c, s.trainable, s.inner_folds) == ("process", None, None, True, 4)
    assert s.weights["unresolved_errors"] == -0.7 and s.weights["handoff"] == 0.0
    assert s.intercept == 0.0 and not s.fitted
    assert len(s._candidates()) == (len(FAMILIES) + 1) * len(C_GRID)


def _task_rollout(tid: str, task: str, *, errors: int, declines: int) -> Trace:
    steps: list[tuple[str, Any]] = [("user", f"do {task}")]
    steps += [("call", ("get_thing", {}, "error: x")) for _ in range(errors)]
    steps += [("agent", "sorry") for _ in range(declines)]
    steps.append(("agent", "done"))
    return run(tid, steps, task=task)


def test_features_group_rollouts_by_key_and_none_stands_alone() -> None:
    a = _task_rollout("a", "t1", errors=0, declines=0)
    b = _task_rollout("b", "t1", errors=1, declines=0)
    c = _task_rollout("c", "t2", errors=2, declines=0)
    rows = ProcessScorer().features([a, b, c], ["g", None, "g"])
    assert [r["tool_errors"] for r in rows] == [0.0, 1.0, 2.0]
    assert rows[1]["agreement"] == 0.5  # alone in its group
    assert rows[0]["agreement"] == 1.0 and rows[2]["agreement"] == 1.0  # both without effects


def _errors_dataset() -> tuple[list[Trace], list[bool]]:
    """Eight tasks of four rollouts: success is exactly "no tool error"; declines are noise."""
    traces, labels = [], []
    for k in range(8):
        for j in range(4):
            ok = (j + k) % 2 == 0
            traces.append(
                _task_rollout(f"t{k}-{j}", f"t{k}", errors=0 if ok else 1 + j % 2, declines=(j * k) % 3)
            )
            labels.append(ok)
    return traces, labels


def test_fit_on_separable_errors_uses_them_with_the_weaker_penalty() -> None:
    traces, labels = _errors_dataset()
    s = ProcessScorer(inner_folds=4).fit(traces, labels)
    assert s.chosen is not None and s.chosen[1] == 1.0 and "errors" in s.chosen[0]
    assert s.fitted and s.weights["tool_errors"] < 0
    scored = s.assess_group(traces[:4])
    probs = [a.probability for a in scored]
    assert probs[0] is not None and probs[1] is not None
    assert probs[0] > 0.5 > probs[1]
    assert scored[0].explanation.startswith(f"fitted ({s.describe()}): ")


def _choice_rows(n_tasks: int = 8) -> tuple[list[dict[str, float]], list[int], list[str]]:
    """Rows where ``declines`` decides success, ``tool_errors`` is noise, all else is constant."""
    rows, y, groups = [], [], []
    for k in range(n_tasks):
        for j in range(4):
            ok = (j + k) % 2 == 0
            noise = float((j + 2 * k) % 5)
            rows.append({f: 0.0 for f in FAMILIES_ALL} | {"declines": float(ok), "tool_errors": noise})
            y.append(int(ok))
            groups.append(f"t{k}")
    return rows, y, groups


def test_inner_choice_prefers_the_informative_family_then_fewer_features() -> None:
    rows, y, groups = _choice_rows()
    s = ProcessScorer(inner_folds=4)
    assert s._choose(rows, y, groups, s._candidates()) == (("ending",), 1.0)
    # the same information in "all" ties on rate and log-likelihood only without the noise
    clean = [r | {"tool_errors": 0.0} for r in rows]
    assert s._choose(clean, y, groups, [(tuple(FAMILIES), 1.0), (("ending",), 1.0)]) == (("ending",), 1.0)
    # a noise family alone loses to the informative one wherever it is listed
    cands = [(("errors",), 1.0), (("ending",), 0.1), (("ending",), 1.0)]
    assert s._choose(rows, y, groups, cands) == (("ending",), 1.0)


def test_inner_choice_ties_go_to_the_earlier_candidate() -> None:
    rows, y, groups = _choice_rows()
    same = [r | {"ungrounded_values": r["declines"], "unconfirmed_writes": r["declines"]} for r in rows]
    s = ProcessScorer(inner_folds=4)
    a, b = (("grounding",), 1.0), (("confirmation",), 1.0)
    assert s._choose(same, y, groups, [a, b]) == a
    assert s._choose(same, y, groups, [b, a]) == b
    assert s._choose(same, y, ["one"] * len(y), [b, a]) == b


def test_fit_with_one_task_or_one_candidate_skips_the_choice() -> None:
    traces, labels = _errors_dataset()
    one = ProcessScorer().fit(traces[:4], labels[:4])
    assert one.chosen == (tuple(FAMILIES), C_GRID[0])
    fixed = ProcessScorer(families=["ending"], c=1.0).fit(traces, labels)
    assert fixed.chosen == (("ending",), 1.0)
    assert fixed.weights["tool_errors"] == 0.0 and fixed.weights["declines"] != 0.0


def test_fit_groups_default_to_task_then_trace_id() -> None:
    traces, labels = _errors_dataset()
    # groups given explicitly as one task: no inner choice possible
    s = ProcessScorer().fit(traces, labels, groups=["same"] * len(traces))
    assert s.chosen == (tuple(FAMILIES), C_GRID[0])
    # without task ids each trace is its own group, so the choice runs
    bare = [t.model_copy(update={"task_id": None}) for t in traces]
    s2 = ProcessScorer().fit(bare, labels)
    assert s2.chosen is not None and s2.chosen[1] == 1.0


def test_fit_rejects_mismatched_or_empty_input() -> None:
    traces, labels = _errors_dataset()
    with pytest.raises(ValueError, match="as many labels"):
        ProcessScorer().fit(traces, labels[:-1])
    with pytest.raises(ValueError, match="at least one"):
        ProcessScorer().fit([], [])


def test_fit_on_one_class_keeps_zero_weights_and_log_odds_intercept() -> None:
    traces, _ = _errors_dataset()
    s = ProcessScorer(families=["errors"], c=1.0).fit(traces, [True] * len(traces))
    assert not any(s.weights.values())
    assert s.intercept == pytest.approx(math.log(0.98 / 0.02))


def test_unfitted_score_explains_the_default_weights() -> None:
    t = run("r", [("user", "hi"), ("call", ("cancel_booking", {"id": "QQ12"}, "done"))])
    (a,) = ProcessScorer(train=False).assess_group([t])
    # one unconfirmed write (-0.5), one ungrounded value (-0.3), one unshared... none: alone
    z = -0.5 - 0.3 + 1.5 * 0.5
    assert a.probability == pytest.approx(_sigmoid(z))
    assert a.explanation.startswith("default weights: agreement=0.5 (+0.75), unconfirmed_writes=1 (-0.50)")
    assert a.details["features"]["ungrounded_values"] == 1.0


def test_consensus_scorer_explanation() -> None:
    a = run("a", [("call", ("cancel_booking", {"id": 1}, "done"))])
    b = run("b", [("call", ("cancel_booking", {"id": 2}, "done"))])
    out = ConsensusScorer().assess_group([a, b])
    assert [x.probability for x in out] == [0.0, 0.0]
    assert out[0].explanation == "agrees 0.00 with its siblings; 1 unshared effect(s)"
    assert out[0].details == {"agreement": 0.0, "unshared": 1.0}
    (alone,) = ConsensusScorer().assess_group([a])
    assert alone.probability == 0.5
    assert alone.explanation == "agrees 0.50 with its siblings; 0 unshared effect(s)"


def test_inner_choice_runs_with_two_tasks_and_unlabelled_groups_stand_alone() -> None:
    rows, y, groups = _choice_rows(2)
    s = ProcessScorer(inner_folds=4)
    assert s._choose(rows, y, groups, [(("errors",), 1.0), (("ending",), 1.0)]) == (("ending",), 1.0)
    a = _task_rollout("a", "t1", errors=0, declines=0)
    b = _task_rollout("b", "t1", errors=1, declines=0)
    rows2 = s.features([a, b], [None, None])
    assert [r["agreement"] for r in rows2] == [0.5, 0.5]
    with pytest.raises(ValueError, match=r"^fit needs as many labels as traces, and at least one$"):
        s.fit([a], [True, False])
