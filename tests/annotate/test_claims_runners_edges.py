"""Edge cases of the test-runner summary parser and the success / give-up claim readers.

Each case pins one detail the broader detector tests leave open: a default count, a runner
name, a boundary of the output tail, a clause that is skipped rather than ending the search.
"""

from __future__ import annotations

from mastkit.annotate.detectors._claims import give_up, success_claim
from mastkit.annotate.detectors._runners import TestSummary, parse_test_summary


def test_pytest_counts_errors_with_failures() -> None:
    out = "===== 1 failed, 2 passed, 3 errors in 0.12s ====="
    assert parse_test_summary(out) == TestSummary("pytest", passed=2, failed=4)


def test_pytest_single_error_counts_as_failure() -> None:
    assert parse_test_summary("1 failed, 2 passed, 1 error in 0.12s") == TestSummary("pytest", 2, 2)


def test_pytest_without_passed_count_has_zero_passed() -> None:
    assert parse_test_summary("===== 1 failed in 0.12s =====") == TestSummary("pytest", passed=0, failed=1)


def test_unittest_ok_counts_every_test_as_passed() -> None:
    out = "...\n----------------------------------------------------------------------\nRan 3 tests in 0.010s\n\nOK\n"
    assert parse_test_summary(out) == TestSummary("unittest", passed=3, failed=0)


def test_unittest_failed_sums_failures_and_errors() -> None:
    out = "Ran 5 tests in 0.1s\n\nFAILED (failures=1, errors=2)\n"
    assert parse_test_summary(out) == TestSummary("unittest", passed=2, failed=3)


def test_unittest_failed_without_detail_counts_one_failure() -> None:
    assert parse_test_summary("Ran 3 tests in 0.1s\n\nFAILED\n") == TestSummary("unittest", 2, 1)


def test_unittest_passed_never_below_zero() -> None:
    out = "Ran 1 test in 0.1s\n\nFAILED (failures=1, errors=2)\n"
    assert parse_test_summary(out) == TestSummary("unittest", passed=0, failed=3)


def test_jest_mixed_summary() -> None:
    out = "Tests:       1 failed, 3 passed, 4 total\nTime: 1.2 s\n"
    assert parse_test_summary(out) == TestSummary("jest", passed=3, failed=1)


def test_jest_all_passed_has_zero_failed() -> None:
    assert parse_test_summary("Tests:       3 passed, 3 total\n") == TestSummary("jest", passed=3, failed=0)


def test_jest_all_failed_has_zero_passed() -> None:
    assert parse_test_summary("Tests:       2 failed, 2 total\n") == TestSummary("jest", passed=0, failed=2)


def test_mocha_passing_and_failing() -> None:
    out = "  3 passing (12ms)\n  1 failing\n"
    assert parse_test_summary(out) == TestSummary("mocha", passed=3, failed=1)


def test_mocha_only_failing_has_zero_passed() -> None:
    assert parse_test_summary("  1 failing\n") == TestSummary("mocha", passed=0, failed=1)


def test_go_package_fail_line_counts_once() -> None:
    assert parse_test_summary("FAIL\texample.com/pkg\t0.012s\n") == TestSummary("go", passed=0, failed=1)


def test_go_test_fail_marker_counts() -> None:
    assert parse_test_summary("--- FAIL: TestThing (0.00s)\n") == TestSummary("go", passed=0, failed=1)


def test_go_pass_and_ok_lines_count_as_passed() -> None:
    out = "PASS\nok  \texample.com/pkg\t0.010s\n"
    assert parse_test_summary(out) == TestSummary("go", passed=2, failed=0)


def test_go_mixed_run() -> None:
    out = "--- FAIL: TestA (0.00s)\nFAIL\nFAIL\texample.com/a\t0.01s\nok  \texample.com/b\t0.01s\n"
    assert parse_test_summary(out) == TestSummary("go", passed=1, failed=3)


def test_only_the_last_6000_characters_are_read() -> None:
    out = "1 passing" + "\n" * (6001 - len("1 passing"))
    assert len(out) == 6001
    assert parse_test_summary(out) is None
    assert parse_test_summary(out[1:]) is None
    assert parse_test_summary(out[:-1]) == TestSummary("mocha", passed=1, failed=0)


def test_question_sentence_is_skipped_not_final() -> None:
    assert success_claim("Is it fixed? The issue is resolved.") == "issue is resolved"


def test_leading_condition_sentence_is_skipped_not_final() -> None:
    assert success_claim("If the tests pass, we merge. The issue is resolved.") == "issue is resolved"


def test_opening_claim_negated_right_after_it() -> None:
    assert success_claim("Done, not.") is None


def test_opening_claim_negation_window_is_twelve_characters() -> None:
    near = "Fixed, the ap not reachable."
    assert near.index("not") + len("not") == len("Fixed") + 12
    assert success_claim(near) is None
    far = "Fixed, the api not reachable."
    assert far.index("not") + len("not") == len("Fixed") + 13
    assert success_claim(far) == "Fixed"


def test_opening_claim_strips_markdown() -> None:
    assert success_claim("**Fixed** the login bug.") == "Fixed"
    assert success_claim("- Resolved: the alert cleared.") == "Resolved"


def test_rejected_match_does_not_end_its_clause() -> None:
    assert success_claim("It was fixed yet the task is complete") == "task is complete"


def test_modal_before_claim_rejects_it() -> None:
    assert success_claim("I hope the issue is resolved.") is None
    assert success_claim("We expect the alerts are cleared.") is None


def test_give_up_found_after_plain_sentence() -> None:
    assert give_up("Checking the logs. I give up.") == "I give up"


def test_give_up_found_after_a_setback_the_agent_moved_past() -> None:
    text = "I couldn't find the root cause at first. I give up."
    assert give_up(text) == "I give up"


def test_a_hopeful_claim_is_not_one() -> None:
    # tau2-bench telecom: "I'm hopeful this has fixed it, so let's check"
    assert success_claim("I'm hopeful this has fixed it, so let's check with a speed test.") is None
    assert success_claim("This has fixed it.") == "has fixed"
