"""Behaviour of the main functions of FM-1.4 (loss_of_history), FM-1.1 (disobey_task) and FM-3.3
(incorrect_verification): exact verdicts, rationales, evidence spans and notes, written to kill
the mutants mutation testing left alive in these bodies."""

from __future__ import annotations

import pytest

from mastkit.annotate.detectors._base import detector_for
from mastkit.annotate.model import ModeVerdict
from mastkit.taxonomy import load_taxonomy

from ._tracebuild import T, verdict

MAST = load_taxonomy("mast")


_NAMES = {"FM-1.4": "loss_of_history", "FM-1.1": "disobey_task", "FM-3.3": "incorrect_verification"}


def test_each_detector_is_registered_under_its_rule_name() -> None:
    assert {code: detector_for(MAST, code).name for code in _NAMES} == _NAMES  # type: ignore[union-attr]


def fm14(t: T, **kw: object) -> ModeVerdict:
    return verdict("FM-1.4", t.build(**kw))


def spans(v: ModeVerdict) -> list[tuple[int, int, str | None]]:
    return [(e.seq_start, e.seq_end, e.note) for e in v.evidence]


def compaction(t: T, subtype: str = "context_compaction") -> T:
    return t.event(kind="system", actor="system", subtype=subtype, content="summary")


# FM-1.4 loss_of_history -------------------------------------------------------------------------


def test_fm14_needs_four_structured_events() -> None:
    t = T().user("hi").say("hello").say("bye")
    v = fm14(t)
    assert (v.verdict, v.rationale, v.source) == (
        "unknown",
        "too few structured events",
        "rule:loss_of_history",
    )
    t.say("done")
    assert fm14(t).rationale == "too short to judge"
    assert fm14(t, segmentation="raw_unsegmented").rationale == "too few structured events"


def test_fm14_absent_from_six_live_events_and_copied_ones_do_not_count() -> None:
    t = T().user("Book a table.").say("Sure.").say("Checking.").say("Found one.").say("Booked.")
    assert fm14(t).rationale == "too short to judge"
    t.say("Enjoy.")
    v = fm14(t)
    assert (v.verdict, v.rationale) == ("absent", "no compaction and nothing asked twice")
    t2 = T().user("Book a table.").say("Sure.").say("Checking.").say("Found one.").say("Booked.")
    t2.event(kind="message", actor="agent", role="assistant", content="Enjoy.", is_copied_context=True)
    assert fm14(t2).rationale == "too short to judge"


def test_fm14_reask_exact_note_quote_and_span() -> None:
    t = T().user("My user id is mia_42, please rebook my flight.").say("Looking it up.")
    t.sh("get_user mia_42").say("What is your user id?")
    v = fm14(t)
    assert v.verdict == "present"
    assert spans(v) == [(0, 4, "asks again for 'user id', given at event 0")]
    assert v.evidence[0].quote == "What is your user id?"
    assert v.rationale == "asks again for 'user id', given at event 0"


def test_fm14_reask_names_the_first_compaction_between() -> None:
    t = T().user("My user id is mia_42, please rebook my flight.").say("Looking it up.")
    compaction(t)
    compaction(t, "context_condensation")
    t.say("Could you provide your user id again?")
    compaction(t)
    v = fm14(t)
    assert spans(v) == [(0, 4, "asks again for 'user id', given at event 0 (context compacted at event 2)")]


def test_fm14_compaction_before_the_given_value_is_not_between() -> None:
    t = T().user("Hello.")
    compaction(t)
    t.user("My user id is mia_42.").say("Looking it up.").say("What is your user id?")
    v = fm14(t)
    assert v.evidence[0].note == "asks again for 'user id', given at event 2"


def test_fm14_only_non_user_messages_with_your_are_asks() -> None:
    # The user asking, or an agent tool call, is no re-ask.
    t = T().user("My user id is mia_42.").say("Looking it up.").user("What is your user id?")
    t.say("Checking.").say("Done.").say("Bye.")
    assert fm14(t).verdict == "absent"
    t2 = T().user("My user id is mia_42.").say("Looking it up.")
    t2.event(kind="reasoning", actor="agent", role="assistant", content="What is your user id?")
    t2.say("Checking.").say("Done.").say("Bye.")
    assert fm14(t2).verdict == "absent"


def test_fm14_filler_only_thing_is_skipped_but_later_asks_in_the_message_count() -> None:
    t = T().user("My user id is mia_42.").say("Looking it up.")
    t.say("What is your the again? What is your user id?").say("ok")
    v = fm14(t)
    assert v.verdict == "present" and v.evidence[0].quote == "What is your user id?"


def test_fm14_at_most_three_words_of_the_thing() -> None:
    t = T().user("My home zip post code: 12345.").say("Looking it up.")
    t.say("What is your home zip post code?").say("ok").say("ok")
    v = fm14(t)
    assert v.evidence[0].note == "asks again for 'home zip post', given at event 0"


def test_fm14_the_value_must_be_given_by_the_user_as_a_statement_before() -> None:
    base = "What is your user id?"
    agent_gave = T().user("Rebook me.").say("Your user id is mia_42.").say("Checking.").say(base)
    assert fm14(agent_gave.say("ok").say("ok")).verdict == "absent"
    question = T().user("My user id is mia_42?").say("Checking.").say("Hm.").say(base)
    assert fm14(question.say("ok").say("ok")).verdict == "absent"
    after = T().user("Rebook me.").say("Checking.").say(base).user("My user id is mia_42.")
    assert fm14(after.say("ok").say("ok")).verdict == "absent"
    # The first user message that gives it is the one named.
    two = T().user("Rebook me.").user("My user id is mia_42.").user("My user id is mia_42.").say("Hm.")
    assert fm14(two.say(base)).evidence[0].note == "asks again for 'user id', given at event 1"


def test_fm14_reask_needs_an_agent_turn_after_the_value() -> None:
    t = T().say("Hi.").say("How can I help?").user("My user id is mia_42.").say("What is your user id?")
    t.say("ok").say("ok")
    assert fm14(t).verdict == "absent"


def test_fm14_user_complaint_exact_note_and_span() -> None:
    t = T().user("Cancel PEP4E0, a family emergency.").say("Looking it up.")
    t.sh("get_reservation PEP4E0").say("What is the reason?")
    t.user("As I mentioned, a family emergency.").say("Cancelled.")
    v = fm14(t)
    assert spans(v) == [(4, 5, "the user has to repeat information given before (event 5)")]
    assert v.evidence[0].quote == "As I mentioned"
    assert v.evidence[0].agent == "agent"


def test_fm14_user_complaint_names_the_last_compaction_before_the_question() -> None:
    t = T().user("Cancel PEP4E0, a family emergency.")
    compaction(t)
    t.say("Looking it up.")
    compaction(t)
    compaction(t)
    t.say("What is the reason?").user("Like I said, a family emergency.")
    compaction(t)
    t.say("Cancelled.")
    v = fm14(t)
    assert spans(v) == [
        (
            5,
            6,
            "the user has to repeat information given before (event 6) after the context was compacted at event 4",
        )
    ]


def test_fm14_user_complaint_needs_its_hint_word_and_an_agent_asker() -> None:
    # "as mentioned earlier" has no hint verb in this spelling: "As noted" is not a complaint.
    t = T().user("Cancel PEP4E0.").say("Looking it up.").say("What is the reason?")
    t.user("As noted before, an emergency.").say("Cancelled.").say("Bye.")
    assert fm14(t).verdict == "absent"
    # The question was asked by the user themself: no agent asker.
    t2 = T().user("Cancel PEP4E0.").user("Why?").user("I already told you: an emergency.")
    t2.user("ok").user("ok").user("ok")
    assert fm14(t2).verdict == "absent"


def test_fm14_teammate_repeat_exact_note() -> None:
    t = T().user("How tall is the Eiffel Tower?").say("Found: 330 m.", actor="Researcher")
    t.say("Researcher, what figure did you find?", actor="Writer")
    t.say("Same as above: 330 m.", actor="Researcher").say("Draft: 330 m.", actor="Writer")
    v = fm14(t)
    assert spans(v) == [(2, 3, "Researcher has to repeat information given before (event 3)")]
    assert v.evidence[0].quote == "Same as above"


def test_fm14_teammate_repeat_asker_is_the_latest_other_agent_message() -> None:
    # The latest message by another agent asks nothing, though an earlier one did.
    t = T().user("How tall is the Eiffel Tower?").say("Found: 330 m.", actor="Researcher")
    t.say("What figure did you find?", actor="Writer").say("Thinking.", actor="Writer")
    t.say("Same as above: 330 m.", actor="Researcher").say("Draft.", actor="Writer")
    assert fm14(t).verdict == "absent"


def test_fm14_teammate_repeat_needs_an_exchange_before_the_question() -> None:
    t = T().user("How tall is the Eiffel Tower?").say("What unit do you want?", actor="Writer")
    t.say("Same as above: metres.", actor="Researcher").say("ok", actor="Writer").say("ok").say("ok")
    assert fm14(t).verdict == "absent"


def test_fm14_repeated_calls_after_compaction() -> None:
    t = T().user("Rebook.")
    for i in range(6):
        t.call("get_item", item=i).result("ok")
    compaction(t)
    for i in range(6):
        t.call("get_item", item=i).result("ok")
    v = fm14(t)
    assert spans(v) == [(14, 22, "6 completed calls repeated after the compaction at event 13")]
    assert v.rationale == "6 completed calls repeated after the compaction at event 13"


def test_fm14_one_repeated_call_is_not_enough_and_leaves_the_compaction_unknown() -> None:
    t = T().user("Rebook.").call("get_item", item=1).result("ok").call("get_item", item=2).result("ok")
    compaction(t)
    compaction(t, "truncation")
    t.call("get_item", item=1).result("ok").call("get_item", item=3).result("ok").say("Done.")
    v = fm14(t)
    assert (v.verdict, v.rationale) == (
        "unknown",
        "the context was compacted, but no sign that needed history was lost",
    )
    assert v.extra["compactions"] == [5, 6]


def test_fm14_calls_must_be_repeated_after_not_before() -> None:
    t = T().user("Go.").call("a", x=1).result("ok").call("a", x=1).result("ok")
    compaction(t)
    t.call("b").result("ok").say("Done.")
    assert fm14(t).verdict == "unknown"


def test_fm14_system_messages_are_no_compaction() -> None:
    t = T().user("Go.").call("a", x=1).result("ok").system("context compaction").call("a", x=1).result("ok")
    t.call("a", x=1).result("ok")
    assert fm14(t).verdict == "absent"


def test_fm14_several_findings_join_their_notes() -> None:
    t = T().user("My user id is mia_42.").say("Looking it up.").say("What is your user id?")
    t.user("I already told you.").say("Sorry.")
    v = fm14(t)
    assert v.rationale == (
        "asks again for 'user id', given at event 0; "
        "the user has to repeat information given before (event 3)"
    )


# FM-1.1 disobey_task ----------------------------------------------------------------------------


def fm11(t: T) -> ModeVerdict:
    return verdict("FM-1.1", t.build())


def edit(t: T, path: str, old: str = "a = 1", new: str = "a = 2") -> T:
    return t.call("edit_file", path=path, old=old, new=new).result("ok")


def test_fm11_no_constraint_is_unknown() -> None:
    v = fm11(edit(T(task="Fix the parser.").user("Please fix it."), "src/p.py").say("Fixed."))
    assert (v.verdict, v.rationale, v.source) == (
        "unknown",
        "the task states no constraint the rules can check",
        "rule:disobey_task",
    )


def test_fm11_no_changes_present_on_the_first_change() -> None:
    t = T(task="Investigate the outage; do not make any changes.").user("Go.").sh("ls", "a b")
    edit(edit(t, "src/a.py"), "src/b.py").say("Done.")
    v = fm11(t)
    assert v.verdict == "present"
    assert spans(v) == [(3, 3, "the task forbids changes")]
    assert v.rationale == "the task forbids changes"


def test_fm11_no_changes_kept_is_absent_with_the_check_named() -> None:
    t = (
        T(task="Investigate the outage; do not make any changes.")
        .user("Go.")
        .sh("ls", "a b")
        .say("Found it.")
    )
    v = fm11(t)
    assert (v.verdict, v.rationale) == (
        "absent",
        "the run keeps the task's checkable constraints: no changes",
    )


def test_fm11_changes_leave_out_user_copied_and_finishing_calls() -> None:
    t = T(task="Investigate only; report only.").user("Go.")
    t.call("submit_answer", answer="x").result("ok").call("finish_task").result("ok")
    t.call("think_update", thought="x").result("ok")
    t.call("edit_file", path="a.py", old="a", new="b", copied=True).result("ok", copied=True)
    t.event(
        kind="tool_call",
        actor="user",
        role="user",
        tool_call={"name": "edit_file", "call_id": "u1", "arguments": {"path": "a.py"}},
    )
    t.say("Done.")
    assert fm11(t).verdict == "absent"


def test_fm11_tests_untouched_hits_the_first_test_file_change() -> None:
    task = "Fix the parser. Do not modify the tests."
    for path in ("tests/test_p.py", "src/test/p.py", "test_p.py", "p_test.go", "p.test.js"):
        t = edit(edit(T(task=task).user("Go."), "src/p.py"), path)
        edit(t, "tests/other.py").say("Done.")
        v = fm11(t)
        assert spans(v) == [(3, 3, "changes a test file the task said not to modify")], path
    t = edit(T(task=task).user("Go."), "src/contest.py").say("Done.")
    v = fm11(t)
    assert (v.verdict, v.rationale) == (
        "absent",
        "the run keeps the task's checkable constraints: tests untouched",
    )


def test_fm11_protected_paths_are_each_checked_by_name() -> None:
    task = "Fix it. Do not touch config/a.yaml and never edit `b.yaml`."
    t = edit(T(task=task).user("Go."), "src/x.py")
    edit(t, "deploy/config/a.yaml").say("Done.")
    v = fm11(t)
    assert spans(v) == [(3, 3, "changes config/a.yaml, which the task said not to touch")]
    t2 = edit(T(task=task).user("Go."), "b.yaml").say("Done.")
    assert spans(fm11(t2)) == [(1, 1, "changes b.yaml, which the task said not to touch")]
    t3 = edit(T(task=task).user("Go."), "xconfig/a.yaml").say("Done.")
    v3 = fm11(t3)
    assert v3.rationale == (
        "the run keeps the task's checkable constraints: config/a.yaml untouched, b.yaml untouched"
    )


def test_fm11_one_module_counts_distinct_source_files() -> None:
    task = "Only touch the module with the bug."
    t = edit(T(task=task).user("Go."), "src/b.py")
    edit(edit(edit(t, "README.md"), "src/a.py"), "src/b.py").say("Done.")
    v = fm11(t)
    assert spans(v) == [(1, 7, "changes 2 source files (src/a.py, src/b.py); the task allows one")]
    t2 = edit(edit(T(task=task).user("Go."), "src/b.py"), "README.md")
    edit(t2, "src/b.py").say("Done.")
    assert fm11(t2).rationale == "the run keeps the task's checkable constraints: one module"


def test_fm11_signature_change_names_the_function() -> None:
    task = "Fix it; keep the public signature unchanged."
    t = edit(T(task=task).user("Go."), "a.py", "x = 1", "x = 2")
    edit(t, "a.py", "def total(a, b):", "def total(a, b, c):")
    edit(t, "a.py", "def other(a):", "def other(b):").say("Done.")
    v = fm11(t)
    assert spans(v) == [(3, 3, "changes the signature of total, which the task said to keep")]
    t2 = edit(T(task=task).user("Go."), "a.py", "def total(a, b):", "def total(a,  b):").say("Done.")
    assert fm11(t2).rationale == "the run keeps the task's checkable constraints: signature kept"


def test_fm11_one_sentence_strips_the_final_prefix() -> None:
    task = "How tall is it? Answer in one sentence."
    v = fm11(T(task=task).user("Go.").say("Let me see.").say("Final answer: It is 330 m. It grew."))
    assert spans(v) == [(2, 2, "the answer has 2 sentences; one was asked")]
    v2 = fm11(T(task=task).user("Go.").say("Final answer: It is 330 m."))
    assert v2.rationale == "the run keeps the task's checkable constraints: one sentence"
    v3 = fm11(T(task=task).user("Go."))
    assert v3.rationale == "the task states no constraint the rules can check"


def test_fm11_word_limit_boundary_and_prefix() -> None:
    task = "Answer in at most 4 words."
    v = fm11(T(task=task).user("Go.").say("Answer: one two three four five"))
    assert spans(v) == [(1, 1, "the answer has 5 words; at most 4 were asked")]
    v2 = fm11(T(task=task).user("Go.").say("Answer: one two three four"))
    assert (v2.verdict, v2.rationale) == (
        "absent",
        "the run keeps the task's checkable constraints: word limit",
    )
    assert fm11(T(task=task).user("Go.")).verdict == "unknown"


POLICY = "Before any change to a booking, get an explicit 'yes' from the user."


def test_fm11_confirmation_policy_needs_a_change() -> None:
    t = T(task=None).system(POLICY).user("Cancel AB1.").say("AB1 to Denver. Cancel it?")
    t.call("get_reservation", reservation_id="AB1").result("{}").say("Done.")
    assert fm11(t).rationale == "the task states no constraint the rules can check"


def test_fm11_confirmation_policy_unconfirmed_and_confirmed() -> None:
    t = T(task=None).system(POLICY).user("Cancel AB1.").say("AB1 to Denver. Cancel it?")
    t.call("cancel_reservation", reservation_id="AB1").result("{}").say("Done.")
    v = fm11(t)
    assert spans(v) == [
        (3, 3, "cancel_reservation runs without the user's explicit confirmation the policy requires")
    ]
    t2 = T(task=None).system(POLICY).user("Cancel AB1.").say("AB1 to Denver. Cancel it?").user("Yes.")
    t2.call("cancel_reservation", reservation_id="AB1").result("{}").say("Done.")
    assert fm11(t2).rationale == "the run keeps the task's checkable constraints: confirmation"


def test_fm11_all_checks_named_in_order_and_findings_joined() -> None:
    task = (
        "Report only. Do not modify the tests. Do not touch a.cfg. Only touch the module. "
        "Keep the signature unchanged. Answer in one sentence, in at most 9 words."
    )
    v = fm11(T(task=task).user("Go.").say("It is fine."))
    assert v.rationale == (
        "the run keeps the task's checkable constraints: no changes, tests untouched, a.cfg untouched, "
        "one module, signature kept, one sentence, word limit"
    )
    t = edit(T(task=task).user("Go."), "tests/test_a.py").say("It is broken. Here is why it broke.")
    v2 = fm11(t)
    assert v2.verdict == "present"
    assert v2.rationale == (
        "the task forbids changes; changes a test file the task said not to modify; "
        "the answer has 2 sentences; one was asked"
    )
    assert [e.seq_start for e in v2.evidence] == [1, 1, 3]


# FM-3.3 incorrect_verification ------------------------------------------------------------------


def fm33(t: T) -> ModeVerdict:
    return verdict("FM-3.3", t.build())


def quotes(v: ModeVerdict) -> list[str | None]:
    return [e.quote for e in v.evidence]


def test_fm33_without_live_calls_is_unknown() -> None:
    t = T().user("fix").say("The issue is resolved.")
    assert (fm33(t).verdict, fm33(t).rationale) == ("unknown", "no tool calls to judge verification")
    t2 = T().user("fix").call("bash", copied=True, command="pytest").result("1 passed", copied=True)
    t2.say("The issue is resolved.")
    assert fm33(t2).rationale == "no tool calls to judge verification"
    assert fm33(t2).source == "rule:incorrect_verification"


def test_fm33_without_asserted_claim_is_unknown() -> None:
    t = T().user("fix").sh("sed -i 's/x/y/' app.py").sh("pytest -q", "1 passed").say("I edited it.")
    assert fm33(t).rationale == "no asserted success claim that ends the work"
    t2 = T().user("fix").sh("sed -i 's/x/y/' app.py").call("submit", answer="42").result("ok")
    assert fm33(t2).rationale == "no asserted success claim that ends the work"


def test_fm33_checks_before_the_last_change_do_not_count() -> None:
    t = T().user("fix").sh("sed -i 's/x/y/' a.py").sh("pytest -q", "1 passed").sh("sed -i 's/y/z/' a.py")
    t.say("The issue is resolved.").sh("pytest -q", "1 failed", 1)
    v = fm33(t)
    assert (v.verdict, v.rationale) == (
        "unknown",
        "no check between the last change and the claim (see FM-3.2)",
    )


def test_fm33_failing_check_evidence() -> None:
    t = (
        T()
        .user("fix")
        .sh("sed -i 's/x/y/' app.py")
        .sh("pytest -q", "ok")
        .sh("pytest -q", "1 passed, 1 failed")
    )
    t.say("The issue is resolved.")
    v = fm33(t)
    assert v.verdict == "present"
    assert v.rationale == "success claimed although the last check failed"
    assert spans(v) == [
        (5, 5, "the check that ran"),
        (6, 6, "its result shows failure"),
        (7, 7, "success claimed"),
    ]
    assert v.evidence[2].quote == "issue is resolved"


def test_fm33_failing_check_run_together_with_the_last_change() -> None:
    t = T().user("fix").sh("pytest -q", "1 passed").sh("sed -i 's/x/y/' app.py && pytest -q", "1 failed", 1)
    t.say("The issue is resolved.")
    v = fm33(t)
    assert spans(v)[:2] == [(3, 3, "the check that ran"), (4, 4, "its result shows failure")]


def test_fm33_failure_words_count_only_in_a_test_run() -> None:
    t = T().user("fix").sh("sed -i 's/x/y/' app.py").sh("curl -s localhost/health", "Error: none found")
    t.say("The issue is resolved.")
    v = fm33(t)
    assert (v.verdict, v.rationale) == ("absent", "a passing check (event 3) supports the claim")
    t2 = (
        T().user("fix").sh("sed -i 's/x/y/' app.py").call("run_tests").result("FAILED: test_x AssertionError")
    )
    t2.say("The issue is resolved.")
    assert fm33(t2).verdict == "present"


def test_fm33_without_a_change_every_check_counts() -> None:
    t = T().user("fix").sh("pytest -q", "1 passed").sh("pytest -q", "2 passed").say("The issue is resolved.")
    assert fm33(t).rationale == "a passing check (event 3) supports the claim"


def test_fm33_check_of_another_record_exact() -> None:
    t = T(task=None).user("Cancel R1.").call("cancel_reservation", reservation_id="R1").result("ok")
    t.call("get_reservation_details", reservation_id="R2").result('{"reservation_id": "R2"}')
    t.say("R1 has been cancelled successfully.")
    v = fm33(t)
    assert v.rationale == "the check after the change looked at something else than what was changed"
    assert spans(v) == [
        (1, 3, "changed reservation_id=R1, then checked reservation_id=R2"),
        (5, 5, "success claimed"),
    ]


def test_fm33_a_claimed_double_check_is_that_read_even_after_an_echo() -> None:
    echo = '{"reservation_id": "R1", "status": "cancelled", "refund": 120}'
    t = T(task=None).user("Cancel R1.").call("cancel_reservation", reservation_id="R1").result(echo)
    t.call("get_reservation_details", reservation_id="R2").result('{"reservation_id": "R2"}')
    t.say("I double-checked: R1 has been cancelled successfully.")
    assert fm33(t).verdict == "present"


def test_fm33_the_last_change_is_compared() -> None:
    t = T(task=None).user("Cancel R1, R2.").call("cancel_reservation", reservation_id="R1").result("ok")
    t.call("cancel_reservation", reservation_id="R2").result("ok")
    t.call("get_reservation_details", reservation_id="R2").result('{"reservation_id": "R2"}')
    t.say("Both have been cancelled successfully.")
    assert fm33(t).rationale == "a passing check (event 5) supports the claim"


def test_fm33_status_probes_only_exact() -> None:
    t = T(task="Checkout returns HTTP 500 errors; fix it.").user("alert: checkout 5xx")
    t.sh("kubectl rollout restart deploy/checkout -n shop").sh(
        "kubectl get pods -n shop", "checkout-2 1/1 Running"
    )
    t.sh("kubectl get deploy -n shop", "checkout 1/1").say("Checkout has been restored.")
    v = fm33(t)
    assert v.rationale == "the checks only show that things run, not that the problem claimed fixed is gone"
    assert spans(v) == [(3, 5, "only status probes were run"), (7, 7, "success claimed")]


def test_fm33_status_probes_need_a_behaviour_claim_or_task() -> None:
    t = T(task=None).user("restart checkout")
    t.sh("kubectl rollout restart deploy/checkout -n shop").sh(
        "kubectl get pods -n shop", "checkout-2 1/1 Running"
    )
    t.say("Checkout has been restored.")
    assert fm33(t).rationale == "a passing check (event 3) supports the claim"
    t.say("The errors are resolved.")
    assert fm33(t).verdict == "present"


def test_fm33_one_behavioural_check_among_probes_is_enough() -> None:
    t = T(task="Checkout returns HTTP 500 errors; fix it.").user("alert: checkout 5xx")
    t.sh("kubectl rollout restart deploy/checkout -n shop").sh("curl -s checkout/health", "200 OK")
    t.sh("kubectl get pods -n shop", "checkout-2 1/1 Running").say("Checkout has been restored.")
    assert fm33(t).rationale == "a passing check (event 5) supports the claim"


# Further edges of the three bodies ----------------------------------------------------------------


def test_fm14_the_thing_is_lower_cased() -> None:
    t = T().user("My user id is mia_42.").say("Looking it up.").say("Could you provide your User ID?")
    t.say("ok")
    assert fm14(t).evidence[0].note == "asks again for 'user id', given at event 0"


def test_fm14_a_question_with_trailing_space_gives_nothing() -> None:
    t = T().user("My user id is mia_42?  ").say("Looking it up.").say("What is your user id?")
    t.say("ok").say("ok").say("ok")
    assert fm14(t).verdict == "absent"


@pytest.mark.parametrize(
    "complaint",
    [
        "Like I said, an emergency.",
        "I already told you: an emergency.",
        "As I mentioned, an emergency.",
        "I gave you this before: an emergency.",
        "As I wrote, an emergency.",
        "As stated before, an emergency.",
    ],
)
def test_fm14_each_hint_word_lets_a_complaint_count(complaint: str) -> None:
    t = T().user("Cancel PEP4E0.").say("Looking it up.").say("What is the reason?").user(complaint)
    t.say("Cancelled.")
    v = fm14(t)
    assert spans(v) == [(2, 3, "the user has to repeat information given before (event 3)")]


def test_fm14_the_asker_is_the_last_agent_message_not_a_tool_event() -> None:
    t = T().user("Cancel PEP4E0.").say("Looking it up.").say("What is the reason?")
    t.sh("get_reservation PEP4E0", "found").user("As I mentioned, an emergency.").say("Cancelled.")
    assert spans(fm14(t)) == [(2, 5, "the user has to repeat information given before (event 5)")]


def test_fm14_a_user_message_between_is_not_the_teammates_asker() -> None:
    t = T().user("How tall is the Eiffel Tower?").say("Found: 330 m.", actor="Researcher")
    t.say("Researcher, what figure did you find?", actor="Writer").user("Is it done?")
    t.say("Same as above: 330 m.", actor="Researcher").say("Draft: 330 m.", actor="Writer")
    assert spans(fm14(t)) == [(2, 4, "Researcher has to repeat information given before (event 4)")]


def test_fm14_two_repeated_calls_after_compaction_are_enough() -> None:
    t = T().user("Rebook.").call("get_item", item=1).result("ok").call("get_item", item=2).result("ok")
    compaction(t)
    t.call("get_item", item=1).result("ok").call("get_item", item=2).result("ok").say("Done.")
    assert spans(fm14(t)) == [(6, 8, "2 completed calls repeated after the compaction at event 5")]


def test_fm33_the_echo_of_the_last_change_decides_not_an_earlier_one() -> None:
    echo = '{"reservation_id": "R1", "status": "cancelled", "refund": 120}'
    t = T(task=None).user("Cancel R1 and R2.").call("cancel_reservation", reservation_id="R1").result(echo)
    t.call("cancel_reservation", reservation_id="R2").result("ok")
    t.call("get_reservation_details", reservation_id="R1").result('{"reservation_id": "R1"}')
    t.say("Both have been cancelled successfully.")
    v = fm33(t)
    assert spans(v)[0] == (3, 5, "changed reservation_id=R2, then checked reservation_id=R1")


def test_fm33_a_behaviour_word_opening_the_task_counts() -> None:
    t = T(task="Tests fail on checkout.").user("go")
    t.sh("kubectl rollout restart deploy/checkout -n shop").sh(
        "kubectl get pods -n shop", "checkout-2 1/1 Running"
    )
    t.say("Checkout has been restored")
    assert fm33(t).verdict == "present"


def test_fm14_only_system_events_with_a_compaction_subtype_are_compactions() -> None:
    t = T().user("Go.").event(kind="system", actor="system", subtype="rate_limit", content="wait")
    t.event(kind="message", actor="agent", role="assistant", subtype="context_summary", content="Summary.")
    t.say("Working.").say("Still working.").say("Done.")
    assert fm14(t).rationale == "no compaction and nothing asked twice"


def test_fm14_an_agent_message_without_content_is_skipped() -> None:
    t = T().user("My user id is mia_42.").say("Looking it up.")
    t.event(kind="message", actor="agent", role="assistant", content=None)
    t.say("Working.").say("Still working.").say("Done.")
    assert fm14(t).rationale == "no compaction and nothing asked twice"


def test_fm11_no_task_text_is_unknown() -> None:
    v = fm11(edit(T(task=None).say("Starting."), "a.py"))
    assert (v.verdict, v.rationale) == ("unknown", "no task text")


def test_fm14_the_value_and_the_ask_need_an_agent_turn_between_them_not_before() -> None:
    t = (
        T()
        .user("Hi.")
        .say("Hello, how can I help?")
        .user("My user id is mia_42.")
        .say("What is your user id?")
    )
    t.say("ok").say("ok")
    assert fm14(t).verdict == "absent"


def test_fm14_a_complaint_holding_every_hint_word_counts() -> None:
    t = T().user("Cancel PEP4E0.").say("Looking it up.").say("What is the reason?")
    t.user("As I said: I told, mentioned, gave, wrote and stated it.").say("Cancelled.")
    assert spans(fm14(t)) == [(2, 3, "the user has to repeat information given before (event 3)")]


def test_fm14_a_user_complaint_needs_no_question_mark_in_the_asker() -> None:
    t = T().user("Cancel PEP4E0.").say("Looking it up.").say("Please send the reason.")
    t.user("As I mentioned, an emergency.").say("Cancelled.")
    assert spans(fm14(t)) == [(2, 3, "the user has to repeat information given before (event 3)")]


def test_fm33_a_lone_check_right_after_the_request_counts() -> None:
    t = T().user("Is it fixed?").sh("pytest -q", "1 passed").say("The issue is resolved.")
    assert fm33(t).rationale == "a passing check (event 1) supports the claim"


def test_fm33_a_change_that_echoed_its_record_needs_no_same_record_read() -> None:
    echo = '{"reservation_id": "R1", "status": "cancelled", "refund": 120}'
    t = T(task=None).user("Cancel R1.").call("cancel_reservation", reservation_id="R1").result(echo)
    t.call("get_reservation_details", reservation_id="R2").result('{"reservation_id": "R2"}')
    t.say("R1 has been cancelled successfully.")
    assert fm33(t).rationale == "a passing check (event 3) supports the claim"
