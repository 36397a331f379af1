"""Regression tests for the false positives issue #19 measured on outside data: each trace here
was flagged by the keyword detectors and must not be."""

from __future__ import annotations

import pytest

from mastkit.annotate.detectors._base import detector_for, detectors
from mastkit.annotate.rule_annotator import annotate_rules, run_detectors
from mastkit.taxonomy import load_taxonomy, taxonomy_from_document
from mastkit.traces.model import Termination

from ._tracebuild import T, verdict

MAST = load_taxonomy("mast")


# negation, modality, questions ------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "The bug has not been fixed yet.",
        "The bug hasn't been fixed yet; I still need to update the parser.",
        "It should be fixed once the pod restarts.",
        "Is the issue resolved?",
        "If all tests pass, the task is complete.",
        "The incident will be resolved after the rollout finishes.",
        "Nothing is fixed so far.",
    ],
)
def test_unasserted_success_is_not_a_claim(text: str) -> None:
    t = T().user("fix the bug").sh("sed -i 's/x/y/' app.py").say(text)
    assert verdict("FM-3.2", t.build()).verdict == "unknown"
    t2 = (
        T()
        .user("fix the bug")
        .sh("sed -i 's/x/y/' app.py")
        .sh("pytest -q", "1 failed, 2 passed", 1)
        .say(text)
    )
    assert verdict("FM-3.3", t2.build()).verdict == "unknown"


def test_an_asserted_claim_in_a_later_clause_still_counts() -> None:
    t = T().user("fix").sh("sed -i 's/x/y/' app.py").say("I was not sure at first, but the bug is now fixed.")
    assert verdict("FM-3.2", t.build()).verdict == "present"


def test_work_after_the_claim_supersedes_it() -> None:
    t = T().user("fix").sh("sed -i 's/x/y/' app.py").say("The bug has been fixed.")
    t.sh("sed -i 's/y/z/' app.py").say("I also renamed a variable.")
    assert verdict("FM-3.2", t.build()).verdict == "unknown"


# test-runner summaries ---------------------------------------------------------------------------

PASSING = [
    "===== 5 passed, 0 failed in 0.31s =====",
    "5 passed, 0 failed",
    "Ran 12 tests in 0.004s\n\nOK",
    "Tests:       0 failed, 4 passed, 4 total",
    "ok  \texample.com/pkg\t0.012s",
    "test result: ok. 5 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out",
    "  5 passing (20ms)",
]
FAILING = [
    "===== 1 failed, 4 passed in 0.31s =====",
    "Ran 12 tests in 0.004s\n\nFAILED (failures=2)",
    "Tests:       1 failed, 3 passed, 4 total",
    "--- FAIL: TestParse (0.00s)\nFAIL\texample.com/pkg\t0.012s",
    "test result: FAILED. 4 passed; 1 failed; 0 ignored",
    "  4 passing (20ms)\n  1 failing",
]


@pytest.mark.parametrize("output", PASSING)
def test_a_passing_test_summary_is_a_pass(output: str) -> None:
    t = T().user("fix the bug").sh("sed -i 's/x/y/' app.py").sh("pytest -q", output).say("The bug is fixed.")
    assert verdict("FM-3.3", t.build()).verdict == "absent"


@pytest.mark.parametrize("output", FAILING)
def test_a_failing_test_summary_is_a_failure(output: str) -> None:
    t = T().user("fix the bug").sh("sed -i 's/x/y/' app.py").sh("pytest -q", output).say("The bug is fixed.")
    assert verdict("FM-3.3", t.build()).verdict == "present"


# commands parsed structurally --------------------------------------------------------------------


def test_a_null_redirect_does_not_make_a_read_a_change() -> None:
    t = T(task="checkout pods crash; fix it").user("checkout is crashing")
    t.sh("kubectl rollout restart deploy/checkout -n shop")
    t.sh("kubectl logs deploy/checkout -n shop --tail=50 2>/dev/null", "INFO started; INFO serving on :8080")
    t.say("The restart has resolved the crash: the new pod serves requests.")
    assert verdict("FM-3.2", t.build()).verdict == "absent"


@pytest.mark.parametrize(
    "check",
    [
        "cd /repo && pytest -q",
        "sudo -E env CI=1 pytest -q 2>&1 | tail -5",
        "timeout 60 python -m pytest tests/",
        "FOO=1 go test ./... >/dev/null 2>&1",
    ],
)
def test_wrapped_checks_are_checks(check: str) -> None:
    t = T().user("fix").sh("sed -i 's/x/y/' app.py").sh(check, "3 passed").say("The bug is fixed.")
    assert verdict("FM-3.2", t.build()).verdict == "absent"


@pytest.mark.parametrize(
    "change",
    ["echo 'x=1' > config.ini", "cd /repo && git checkout -- app.py", "sudo systemctl restart nginx"],
)
def test_wrapped_changes_are_changes(change: str) -> None:
    t = T().user("fix").sh("pytest -q", "1 failed", 1).sh(change).say("The bug is fixed.")
    assert verdict("FM-3.2", t.build()).verdict == "present"


def test_an_edit_then_test_command_line_verifies_itself() -> None:
    t = T().user("fix").sh("sed -i 's/x/y/' app.py && pytest -q", "3 passed").say("The bug is fixed.")
    assert verdict("FM-3.2", t.build()).verdict == "absent"


def test_same_command_in_another_directory_is_no_mismatch() -> None:
    t = (
        T()
        .user("run the tests")
        .say("I will run `pytest -q` to check.")
        .sh("cd /repo && pytest -q", "3 passed")
    )
    t.say("Let me run `kubectl logs deploy/cart` next.").sh("kubectl logs deploy/cart 2>&1 | tail -20", "ok")
    assert verdict("FM-2.6", t.build()).verdict == "absent"


def test_a_different_command_is_still_a_mismatch() -> None:
    t = T().user("why is cart down?").say("I will run `kubectl logs deploy/cart -n shop` to see the error.")
    t.sh("cd /ops && kubectl get pods -n shop", "cart-1 Running")
    assert verdict("FM-2.6", t.build()).verdict == "present"


# termination -----------------------------------------------------------------------------------


def test_a_setback_the_agent_moves_past_is_not_giving_up() -> None:
    t = T(task=None).user("find the root cause").sh("kubectl logs cart", "timeout")
    t.say("I couldn't find the cause at first, but continuing with the database logs.")
    assert verdict("FM-3.1", t.build()).verdict != "present"


def test_a_give_up_followed_by_more_work_is_not_the_last_word() -> None:
    t = (
        T(task=None)
        .user("find the root cause")
        .sh("kubectl logs cart", "timeout")
        .say("I cannot complete this task.")
    )
    t.sh("kubectl logs db", "deadlock detected").say("Root cause: a deadlock in the db.")
    term = Termination(reason="completed", by="agent")
    assert verdict("FM-3.1", t.build(termination=term)).verdict == "absent"


def test_a_give_up_before_a_hand_off_is_still_the_last_word() -> None:
    t = T().user("exchange my keyboard").call("exchange", item="k1").result("Error: timeout", error=True)
    t.say("Sorry, I can't complete the exchange right now.").call("transfer_to_human_agents", summary="x")
    t.result("Transfer successful")
    assert verdict("FM-3.1", t.build()).verdict == "present"


# FM-2.2 ----------------------------------------------------------------------------------------


def test_correcting_a_date_format_after_a_validation_error_is_not_fm22() -> None:
    t = T().user("Book a table for 4 on March 3rd.").call("book", date="03/03/2026", people=4)
    t.result("422 Unprocessable Entity: validation error: date must be YYYY-MM-DD", error=True)
    t.call("book", date="2026-03-03", people=4).result("booked: #881")
    t.say("Your table for 4 on 2026-03-03 is booked (#881).")
    assert verdict("FM-2.2", t.build()).verdict == "unknown"


def test_acting_on_a_stated_assumption_is_fm22() -> None:
    t = T().user("Update the price of the blue shirt.")
    t.say("The request does not specify which size, so I'll assume the medium one.")
    t.call("update_price", sku="shirt-blue-m", price=20).result("updated")
    v = verdict("FM-2.2", t.build())
    assert v.verdict == "present" and [v.evidence[0].seq_start, v.evidence[0].seq_end] == [1, 2]


# taxonomy binding --------------------------------------------------------------------------------


def _custom() -> object:
    doc = {
        "id": "acme",
        "name": "ACME incidents",
        "version": "1",
        "categories": [{"code": "C", "name": "Ops"}],
        "modes": [
            {
                "code": "FM-1.3",
                "name": "Wrong region",
                "category": "C",
                "definition": "deployed to the wrong region",
            },
            {"code": "FM-3.2", "name": "Late page", "category": "C", "definition": "on-call paged late"},
        ],
    }
    return taxonomy_from_document(doc)


def test_a_custom_taxonomy_reusing_mast_codes_gets_no_mast_detector() -> None:
    custom = _custom()
    t = T().user("why is checkout failing?")
    for _ in range(3):
        t.sh("kubectl get pods -n shop", "checkout-1 Running")
    trace = t.build()
    assert verdict("FM-1.3", trace).verdict == "present"  # MAST's detector fires on it
    got = run_detectors(trace, custom)  # type: ignore[arg-type]
    assert [(v.code, v.verdict, v.source) for v in got] == [
        ("FM-1.3", "unknown", "rule"),
        ("FM-3.2", "unknown", "rule"),
    ]
    assert all("'acme'" in (v.rationale or "") for v in got)
    assert detector_for(custom, "FM-1.3") is None  # type: ignore[arg-type]
    assert detectors(custom) == []  # type: ignore[arg-type]
    assert annotate_rules(trace, custom).config.options == {"detectors": []}  # type: ignore[arg-type]


def test_mast_detectors_are_keyed_by_taxonomy_and_code() -> None:
    found = detectors(MAST)
    assert found and all(d.key == ("mast", d.code) for d in found)
    assert (
        detector_for("mast", "FM-1.3") is not None
        and detector_for("mast", "FM-1.3").name == "step_repetition"
    )  # type: ignore[union-attr]
