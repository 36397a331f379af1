"""The process scorer beyond its signals: how the inner cross-validation picks a model (the
selection rate first, then the held-out log-likelihood, with the inner fold count it was given),
the failure vector and the taxonomy's severities, the per-rollout feature memo, the explanation
of a score and the checks on its input. Each choice case is built so that the right pick and
the pick of a plausible slip (a rate rounded coarsely, the likelihood of the wrong class, the
default fold count) differ by a clear margin."""

from __future__ import annotations

import pytest
from tests.verify.test_process import run
from tests.verify.test_process_edges import _choice_rows, _errors_dataset

from mastkit.taxonomy import load_taxonomy
from mastkit.traces.model import Trace
from mastkit.verify.blind import blind
from mastkit.verify.process_scorer import FAMILIES_ALL, ProcessScorer, _sigmoid


def _row(**values: float) -> dict[str, float]:
    return {f: 0.0 for f in FAMILIES_ALL} | values


def test_inner_choice_uses_the_inner_fold_count() -> None:
    # four tasks of one success and one failure; on this data a 2-fold inner split finds the
    # errors family better at picking the success, a task-by-task split finds the ending family
    pairs = [((0, 1), (0, 0)), ((0, 1), (1, 0)), ((1, 0), (0, 1)), ((0, 0), (1, 1))]
    rows, y, groups = [], [], []
    for k, pair in enumerate(pairs):
        for ok, (declines, errors) in zip((1, 0), pair, strict=True):
            rows.append(_row(declines=float(declines), tool_errors=float(errors)))
            y.append(ok)
            groups.append(f"t{k}")
    cands = [(("errors",), 1.0), (("ending",), 1.0)]
    assert ProcessScorer(inner_folds=2)._choose(rows, y, groups, cands) == (("errors",), 1.0)
    assert ProcessScorer(inner_folds=4)._choose(rows, y, groups, cands) == (("ending",), 1.0)
    assert ProcessScorer()._choose(rows, y, groups, cands) == (("ending",), 1.0)  # 5 folds, 4 tasks


def test_inner_choice_with_one_candidate_returns_it() -> None:
    rows = [_row(declines=float(k % 2)) for k in range(8)]
    y = [k % 2 for k in range(8)]
    groups = [f"t{k // 2}" for k in range(8)]
    only = (("ending",), 0.1)
    assert ProcessScorer(inner_folds=2)._choose(rows, y, groups, [only]) == only


def test_a_family_that_picks_right_in_every_task_beats_a_better_calibrated_one() -> None:
    # declines marks the success of every task; tool_errors marks it in seven tasks of eight
    # and the failure in task 0. The errors model has the better held-out log-likelihood
    # (about -0.48 against -0.66 for the heavily shrunk ending model) but picks wrong once:
    # its selection rate 7/8 must not count as a tie with 1.0.
    rows, y, groups = [], [], []
    for k in range(8):
        for ok in (1, 0):
            errors = float(ok) if k == 0 else float(not ok)
            rows.append(_row(declines=float(ok), tool_errors=errors))
            y.append(ok)
            groups.append(f"t{k}")
    s = ProcessScorer(inner_folds=4)
    assert s._choose(rows, y, groups, [(("errors",), 1.0), (("ending",), 0.01)]) == (("ending",), 0.01)
    assert s._choose(rows, y, groups, [(("ending",), 0.01), (("errors",), 1.0)]) == (("ending",), 0.01)


def test_with_one_rollout_per_task_the_held_out_likelihood_decides() -> None:
    # sixteen tasks of one rollout each, so every model selects the same rollouts (rate 12/16).
    # Failures have declines=0 except task 0's, which looks like a success. Held out, the
    # nearly unpenalised model (C=10) is sure that failure succeeds and pays for it; C=1 has
    # the best log-likelihood (-0.355 against -0.373 and -0.551 for C=0.1). Scoring both
    # classes as successes, or failures with log(1 + p) or log(2 - p), picks another C.
    rows, y, groups = [], [], []
    for k in range(16):
        ok = k % 4 != 0
        rows.append(_row(declines=1.0 if ok or k == 0 else 0.0))
        y.append(int(ok))
        groups.append(f"t{k}")
    cands = [(("ending",), 10.0), (("ending",), 1.0), (("ending",), 0.1)]
    assert ProcessScorer(inner_folds=4)._choose(rows, y, groups, cands) == (("ending",), 1.0)


def test_log_likelihoods_a_millionth_apart_tie_and_the_earlier_candidate_stays() -> None:
    # on rows where declines decides success, C=1.000003 has a held-out log-likelihood about
    # 2e-7 above C=1 (-0.0990580 against -0.0990582): noise, not a reason to switch models
    rows, y, groups = _choice_rows()
    s = ProcessScorer(inner_folds=4)
    a, b = (("ending",), 1.0), (("ending",), 1.000003)
    assert s._choose(rows, y, groups, [a, b]) == a
    assert s._choose(rows, y, groups, [b, a]) == b
    # a thousandth of C further the gain (7e-5) is real and the later candidate wins
    assert s._choose(rows, y, groups, [a, (("ending",), 1.001)]) == (("ending",), 1.001)


def test_fixed_families_still_choose_the_penalty() -> None:
    # with the families fixed there are two candidates (C=0.1 and C=1), and the inner
    # cross-validation still picks between them: the separable errors family wants C=1
    traces, labels = _errors_dataset()
    s = ProcessScorer(families=["errors"]).fit(traces, labels)
    assert s.chosen == (("errors",), 1.0)
    assert ProcessScorer(families=["ending"]).fit(traces, labels).chosen == (("ending",), 0.1)


# -- the failure vector, the feature memo and the explanation ----------------------------------


def _busy_rollout() -> Trace:
    """Three identical reads (FM-1.3), two unconfirmed writes of which one fails, one made-up
    value (QQ9) and an unchecked "Done." (FM-3.2)."""
    return run(
        "busy",
        [("user", "hi, change booking AB12")]
        + [("call", ("get_booking", {"id": "AB12"}, "status: held"))] * 3
        + [
            ("call", ("cancel_booking", {"id": "AB12"}, "done")),
            ("call", ("update_booking", {"id": "AB12", "seat": "QQ9"}, "error: locked")),
            ("agent", "Done."),
        ],
    )


def test_failure_vector_counts_present_modes_and_the_fatal_ones() -> None:
    t = _busy_rollout()
    (row,) = ProcessScorer().group_features([t])
    assert (row["modes_present"], row["fatal_present"]) == (2.0, 0.0)  # FM-1.3, FM-3.2: not fatal
    # a taxonomy that calls step repetition fatal: fresh copies (one per fold) keep it
    mast = load_taxonomy("mast")
    modes = [m.model_copy(update={"severity": "fatal"}) if m.code == "FM-1.3" else m for m in mast.modes]
    strict = ProcessScorer(taxonomy=mast.model_copy(update={"modes": modes}))
    (row,) = strict.fresh().group_features([t])
    assert (row["modes_present"], row["fatal_present"]) == (2.0, 1.0)


def test_features_are_computed_once_per_rollout_and_shared_with_fresh_copies() -> None:
    t = _busy_rollout()
    s = ProcessScorer()
    s.group_features([t])
    key = blind(t).content_hash()
    assert s._memo[key]["unconfirmed_writes"] == 2.0
    s._memo[key]["unconfirmed_writes"] = 7.0  # a stored value is reused, not recomputed
    assert s.fresh().group_features([t])[0]["unconfirmed_writes"] == 7.0
    assert ProcessScorer().group_features([t])[0]["unconfirmed_writes"] == 2.0


def test_explanation_lists_the_four_largest_contributions_in_order() -> None:
    busy, idle = _busy_rollout(), run("idle", [("user", "hi")])
    a, b = ProcessScorer(train=False).assess_group([busy, idle])
    # modes -2, unconfirmed writes -1, unresolved error -0.7, unshared effect -0.5; the made-up
    # value (-0.3) is the fifth and left out; agreement is 0 (the idle sibling did nothing)
    assert a.explanation == (
        "default weights: modes_present=2 (-2.00), unconfirmed_writes=2 (-1.00), "
        "unresolved_errors=1 (-0.70), unshared=1 (-0.50)"
    )
    assert a.probability == pytest.approx(_sigmoid(-2.0 - 1.0 - 0.7 - 0.5 - 0.3))
    assert b.explanation == "default weights: no feature moved the score"
    assert b.probability == 0.5


@pytest.mark.parametrize("extra", [-1, 1])
def test_fit_and_features_reject_a_group_list_of_the_wrong_length(extra: int) -> None:
    # before: a KeyError, an IndexError or a zip error from deep inside, depending on the groups
    traces, labels = _errors_dataset()
    for groups in (["t"] * (len(traces) + extra), [f"g{i % 3}" for i in range(len(traces) + extra)]):
        with pytest.raises(ValueError, match=r"^one group per trace: 32 traces, 3[13] groups$"):
            ProcessScorer().fit(traces, labels, groups)
        with pytest.raises(ValueError, match="one group per trace"):
            ProcessScorer().features(traces, groups)


def test_a_taxonomys_own_severity_decides_which_modes_are_fatal() -> None:
    mast = load_taxonomy("mast")
    severity = {"FM-1.1": "low", "FM-1.3": "Critical", "FM-3.2": "HIGH", "FM-2.1": "fatal"}
    modes = [m.model_copy(update={"severity": severity.get(m.code)}) for m in mast.modes]
    s = ProcessScorer(taxonomy=mast.model_copy(update={"modes": modes}))
    # FM-1.1 is fatal by default but this taxonomy says "low"; unrated modes keep the default
    assert s._fatal == {"FM-1.3", "FM-3.2", "FM-2.1", "FM-2.3", "FM-3.1", "FM-3.3"}
    assert ProcessScorer()._fatal == {"FM-1.1", "FM-2.3", "FM-3.1", "FM-3.3"}
    (row,) = s.group_features([_busy_rollout()])
    assert (row["modes_present"], row["fatal_present"]) == (2.0, 2.0)


def test_unknown_families_are_all_named_and_a_new_scorer_is_unfitted() -> None:
    with pytest.raises(ValueError) as err:
        ProcessScorer(families=["bogus", "errors", "nope"])
    known = "size, confirmation, errors, grounding, ending, consensus, failure_vector"
    assert str(err.value) == f"unknown feature families: bogus, nope; known: {known}"
    assert ProcessScorer().fitted is False
