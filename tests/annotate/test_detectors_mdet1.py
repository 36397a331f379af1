"""Edge cases of FM-1.1 (disobey_task) and FM-1.4 (loss_of_history) that mutation testing found
untested: which arguments name a changed file, which edits rewrite a signature, when a change
counts as confirmed, and what an exchange is in a run without a user."""

from __future__ import annotations

from typing import Any

import pytest

from mastkit.annotate.model import ModeVerdict

from ._tracebuild import T, verdict

POLICY = "Before any change to a booking, list the details and get an explicit 'yes' from the user."


def fm11(t: T) -> ModeVerdict:
    return verdict("FM-1.1", t.build())


# FM-1.1: where constraints and the final answer are read ---------------------------------------


def test_a_constraint_stated_only_by_the_user_is_read() -> None:
    t = T(task="Fix the parser.").user("Do not modify the tests.")
    t.call("edit_file", path="tests/test_parse.py", old="assert x", new="# assert x").result("ok")
    v = fm11(t)
    assert v.verdict == "present" and v.evidence[0].seq_start == 1


def test_the_first_user_message_is_read_not_a_greeting_before_it() -> None:
    t = T(task=None).say("Hi, how can I help?").user("How tall is it? Answer in one sentence.")
    t.say("It is 330 m. It grew in 2022.")
    v = fm11(t)
    assert v.verdict == "present" and v.evidence[0].seq_start == 2
    assert v.evidence[0].note == "the answer has 2 sentences; one was asked"


def test_a_run_without_task_user_or_system_text_is_unknown() -> None:
    t = T(task=None).say("Starting.").call("edit_file", path="a.py", old="a", new="b").result("ok")
    v = fm11(t)
    assert (v.verdict, v.rationale) == ("unknown", "no task text")


def test_the_system_prompt_is_read_also_after_the_first_user_message() -> None:
    t = T(task=None).user("Cancel booking AB1.").system(POLICY).say("AB1 to Denver, insured. Cancel it?")
    t.call("cancel_reservation", reservation_id="AB1").result('{"status": "cancelled"}')
    v = fm11(t)
    assert v.verdict == "present" and v.evidence[0].seq_start == 3


def test_a_system_message_late_in_the_run_is_not_the_policy() -> None:
    t = T(task=None).user("Cancel booking AB1.").say("AB1 to Denver, insured.").say("Checking.")
    t.system(POLICY).call("cancel_reservation", reservation_id="AB1").result('{"status": "cancelled"}')
    v = fm11(t)
    assert (v.verdict, v.rationale) == ("unknown", "the task states no constraint the rules can check")


def test_the_final_answer_is_the_agents_last_message_not_the_users() -> None:
    t = T(task=None).user("How tall is it? Answer in one sentence.").say("It is 330 m.")
    t.user("Thanks. Bye.")
    v = fm11(t)
    assert v.verdict == "absent" and "one sentence" in (v.rationale or "")
    t2 = T(task=None).user("How tall is it? Answer in at most 4 words.").say("330 m.")
    t2.user("Thanks, that is all I wanted to know today.")
    assert fm11(t2).verdict == "absent"


# FM-1.1: which arguments name the file a change touches ----------------------------------------

NO_CONFIG = "Fix the loader. Do not touch config.yaml."


@pytest.mark.parametrize("key", ["path", "file", "file_path", "filename", "target"])
def test_each_path_argument_names_the_changed_file(key: str) -> None:
    t = T(task=NO_CONFIG).user("go")
    args: dict[str, Any] = {key: "config.yaml", "old": "a: 1", "new": "a: 2"}
    t.call("edit_file", **args).result("ok")
    v = fm11(t)
    assert v.verdict == "present"
    assert (v.evidence[0].seq_start, v.evidence[0].seq_end) == (1, 1)
    assert v.evidence[0].note == "changes config.yaml, which the task said not to touch"


@pytest.mark.parametrize("key", ["path", "file", "file_path", "filename", "target"])
def test_a_path_argument_naming_another_file_keeps_the_rule(key: str) -> None:
    t = T(task=NO_CONFIG).user("go")
    args: dict[str, Any] = {key: "loader.py", "old": "a", "new": "b"}
    t.call("edit_file", **args).result("ok")
    v = fm11(t)
    assert v.verdict == "absent" and "config.yaml untouched" in (v.rationale or "")


def test_a_path_argument_that_is_not_a_string_is_ignored() -> None:
    t = T(task=NO_CONFIG).user("go")
    t.call("edit_file", path=["config.yaml"], old="a", new="b").result("ok")
    assert fm11(t).verdict == "absent"


def test_a_redirect_target_is_a_changed_file() -> None:
    t = T(task=NO_CONFIG).user("go").sh("echo 'a: 2' > config.yaml")
    v = fm11(t)
    assert v.verdict == "present" and v.evidence[0].seq_start == 1


@pytest.mark.parametrize(
    ("cmd", "hit"),
    [
        ("rm tests/fixtures/data.json", True),  # the first argument, a path with a slash
        ("rm -f tests/fixtures/data.json", True),  # a flag without a slash is skipped, not fatal
        ("rm -rf build/tmp", False),  # a path, but not a test file
    ],
)
def test_command_arguments_with_a_slash_are_changed_files(cmd: str, hit: bool) -> None:
    t = T(task="Fix the parser. Do not modify the tests.").user("go").sh(cmd)
    v = fm11(t)
    assert v.verdict == ("present" if hit else "absent")
    if hit:
        assert v.evidence[0].seq_start == 1
        assert v.evidence[0].note == "changes a test file the task said not to modify"


def test_command_arguments_with_a_source_suffix_are_changed_files() -> None:
    task = "Fix the bug. Only touch the module with the bug."
    t = T(task=task).user("go").sh("rm legacy.py compat.py")
    v = fm11(t)
    assert v.verdict == "present"
    assert v.evidence[0].note == "changes 2 source files (compat.py, legacy.py); the task allows one"
    t2 = T(task=task).user("go").sh("rm legacy.py notes.txt")
    assert fm11(t2).verdict == "absent"


def test_a_protected_path_removed_by_a_command() -> None:
    t = T(task="Fix the loader. Do not touch conf/settings.yaml.").user("go").sh("rm -f conf/settings.yaml")
    v = fm11(t)
    assert v.verdict == "present"
    assert v.evidence[0].note == "changes conf/settings.yaml, which the task said not to touch"


# FM-1.1: which edits rewrite a signature -------------------------------------------------------

KEEP_SIG = "Fix total(). Keep the public signature of the function unchanged."


@pytest.mark.parametrize(
    ("old_key", "new_key"),
    [("old", "new"), ("old_str", "new_str"), ("old_string", "new_string"), ("search", "replace")],
)
def test_each_edit_argument_pair_is_read_for_signatures(old_key: str, new_key: str) -> None:
    t = T(task=KEEP_SIG).user("go")
    args: dict[str, Any] = {old_key: "def total(items):", new_key: "def total(items, strict):"}
    t.call("edit_file", path="cart.py", **args).result("ok")
    v = fm11(t)
    assert v.verdict == "present" and v.evidence[0].seq_start == 1
    assert v.evidence[0].note == "changes the signature of total, which the task said to keep"


@pytest.mark.parametrize(
    "args",
    [
        {"content": "def total(items, strict):\n    pass"},  # a whole-file write: no before/after
        {"old": "def total(items):"},  # a deletion without a replacement
        {"new": "def total(items, strict):"},  # an insertion without an original
        {"old": "def total(items):", "new": 3},  # a replacement that is not text
    ],
)
def test_an_edit_without_both_texts_changes_no_signature(args: dict[str, Any]) -> None:
    t = T(task=KEEP_SIG).user("go")
    t.call("edit_file", path="cart.py", **args).result("ok")
    v = fm11(t)
    assert v.verdict == "absent" and "signature kept" in (v.rationale or "")


def test_reflowing_the_parameters_keeps_the_signature() -> None:
    t = T(task=KEEP_SIG).user("go")
    t.call(
        "edit_file",
        path="cart.py",
        old="def total(items, strict):",
        new="def total(\n    items,\n    strict,\n):",
    ).result("ok")
    # The trailing comma differs, so that reflow is a change; spacing alone is not.
    assert fm11(t).verdict == "present"
    t2 = T(task=KEEP_SIG).user("go")
    t2.call(
        "edit_file", path="cart.py", old="def total(items,  strict):", new="def total(items,\n    strict):"
    ).result("ok")
    assert fm11(t2).verdict == "absent"


# FM-1.1: when a change counts as confirmed -----------------------------------------------------


def _policy_run() -> T:
    return T(task=None).system(POLICY).user("Cancel booking AB1.").say("AB1 to Denver, insured. Cancel it?")


def test_shell_commands_and_lookups_are_not_held_to_the_confirmation_policy() -> None:
    t = _policy_run().sh("rm -f /tmp/booking-cache.json")
    assert fm11(t).verdict == "absent"
    t2 = _policy_run().call("calculate_refund", reservation_id="AB1").result('{"refund": 120}')
    assert fm11(t2).verdict == "absent"


@pytest.mark.parametrize(
    "first",
    [
        lambda t: t.sh("rm -f /tmp/booking-cache.json"),
        lambda t: t.call("calculate_refund", reservation_id="AB1").result('{"refund": 120}'),
    ],
)
def test_a_skipped_call_does_not_hide_a_later_unconfirmed_change(first: Any) -> None:
    t = first(_policy_run())
    n = len(t.events)
    t.call("cancel_reservation", reservation_id="AB1").result('{"status": "cancelled"}')
    v = fm11(t)
    assert v.verdict == "present" and v.evidence[0].seq_start == n
    assert v.evidence[0].note == (
        "cancel_reservation runs without the user's explicit confirmation the policy requires"
    )


def test_messages_after_the_change_do_not_decide_its_confirmation() -> None:
    t = _policy_run().user("Yes, go ahead.")
    t.call("cancel_reservation", reservation_id="AB1").result('{"status": "cancelled"}')
    t.say("Done. Anything else?").user("Thanks, nothing more.")
    assert fm11(t).verdict == "absent"


def test_a_yes_given_only_after_the_change_is_too_late() -> None:
    t = _policy_run().call("cancel_reservation", reservation_id="AB1").result('{"status": "cancelled"}')
    t.user("Yes, that is what I wanted.")
    v = fm11(t)
    assert v.verdict == "present" and v.evidence[0].seq_start == 3


def test_a_change_before_any_user_message_is_unconfirmed() -> None:
    t = T(task=POLICY + " Cancel booking AB1.").say("Cancelling AB1.")
    t.call("cancel_reservation", reservation_id="AB1").result('{"status": "cancelled"}')
    v = fm11(t)
    assert v.verdict == "present" and v.evidence[0].seq_start == 1
    assert (
        v.rationale == "cancel_reservation runs without the user's explicit confirmation the policy requires"
    )


def test_an_empty_user_message_does_not_void_the_yes_before_it() -> None:
    t = _policy_run().user("Yes, go ahead.").user("")
    t.call("cancel_reservation", reservation_id="AB1").result('{"status": "cancelled"}')
    assert fm11(t).verdict == "absent"


def test_a_question_from_the_system_does_not_reopen_the_yes() -> None:
    t = _policy_run().user("Yes, go ahead.").system("Is the session still active?")
    t.call("cancel_reservation", reservation_id="AB1").result('{"status": "cancelled"}')
    assert fm11(t).verdict == "absent"


def test_each_change_needs_its_own_yes_after_a_new_question() -> None:
    t = _policy_run().user("Yes, go ahead.")
    t.call("cancel_reservation", reservation_id="AB1").result('{"status": "cancelled"}')
    t.say("Cancelled. Should I also cancel AB2?")
    t.call("cancel_reservation", reservation_id="AB2").result('{"status": "cancelled"}')
    v = fm11(t)
    assert v.verdict == "present" and [(e.seq_start, e.seq_end) for e in v.evidence] == [(7, 7)]


# FM-1.4: an exchange in a run without a user ---------------------------------------------------


def test_a_teammate_repeating_itself_in_a_run_without_a_user() -> None:
    t = T(task="Report the height of the Eiffel Tower.")
    t.say("Found: 330 m (source: SETE).", actor="Researcher")
    t.say("Researcher, what figure did you find?", actor="Writer")
    t.say("Same as above: 330 m.", actor="Researcher").say("Draft: 330 m.", actor="Writer")
    v = verdict("FM-1.4", t.build())
    assert v.verdict == "present"
    assert [(e.seq_start, e.seq_end, e.agent) for e in v.evidence] == [(1, 2, "Writer")]
    assert v.rationale == "Researcher has to repeat information given before (event 2)"


def test_a_first_question_in_a_run_without_a_user_is_no_lost_history() -> None:
    t = T(task="Report the height of the Eiffel Tower.")
    t.say("Researcher, what figure did you find?", actor="Writer")
    t.say("Same as above: 330 m.", actor="Researcher").say("Draft: 330 m.", actor="Writer")
    t.say("Checked the draft.", actor="Reviewer")
    assert verdict("FM-1.4", t.build()).verdict == "unknown"


# FM-1.4: "as I said" opens the reply, or is emphasis further in (tau2-bench runs) -----------------


def test_a_reminder_further_into_a_long_reply_is_not_a_repeat() -> None:
    base = T().user("My user id is mia_1. I booked it 10 hours ago.").say("Let me look.")
    base.call("get_user_details", user_id="mia_1").result("{}")
    base.say("Which cities were on the booking?")
    reply = "I don't remember the cities. Like I said, it was booked 10 hours ago."
    assert verdict("FM-1.4", base.user(reply).build()).verdict == "absent"
    opening = T().user("My user id is mia_1. I booked it 10 hours ago.").say("Let me look.")
    opening.call("get_user_details", user_id="mia_1").result("{}")
    opening.say("Which cities were on the booking?").user("Like I said, it was booked 10 hours ago.")
    v = verdict("FM-1.4", opening.build())
    assert (
        v.verdict == "present"
        and v.evidence[0].note == "the user has to repeat information given before (event 5)"
    )
    # a sentence end needs a space or the end after it: "v1.2" does not end the first sentence
    dotted = T().user("My user id is mia_1. I use v1.2 of the app.").say("Let me look.")
    dotted.call("get_user_details", user_id="mia_1").result("{}")
    dotted.say("Which version?").user("v1.2, as I said.")
    assert verdict("FM-1.4", dotted.build()).verdict == "present"


def test_a_reminder_that_answers_no_question_or_request_is_not_a_repeat() -> None:
    # tau2-bench: "as I mentioned" while declining an offer the agent only described
    t = T().user("I want HAT139 on May 26.").say("Let me look.")
    t.call("search_flights", date="May 26").result("[]")
    t.say("HAT139 is sold out on May 26, so I will hold off on changes.")
    t.user("As I mentioned, only HAT139 works for me.")
    assert verdict("FM-1.4", t.build()).verdict == "absent"
    # a request counts as asking ("Please send ..."), as does a question
    for ask in ("Please send the flight number.", "Which flight was it?", "Could you give the flight"):
        t = T().user("I want HAT139 on May 26.").say("Let me look.")
        t.call("search_flights", date="May 26").result("[]").say(ask)
        t.user("As I mentioned, HAT139.")
        assert verdict("FM-1.4", t.build()).verdict == "present", ask
