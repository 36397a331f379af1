"""Each rule detector on hand-built traces: a positive, a negative, and an abstention."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from mastkit.annotate.detectors._base import detectors
from mastkit.annotate.model import ModeVerdict
from mastkit.traces.model import Termination, Trace

from ._tracebuild import T

DET = {d.code: d for d in detectors()}


def verdict(code: str, trace: Trace) -> ModeVerdict:
    v = DET[code](trace)
    assert v.code == code
    if v.verdict == "present":
        assert v.evidence, "a present verdict must carry evidence"
        assert all(ev.seq_start is None or 0 <= ev.seq_start < len(trace.events) for ev in v.evidence)
        assert v.source.startswith("rule:")
    return v


def test_all_planned_detectors_registered() -> None:
    assert set(DET) == {
        "FM-1.1",
        "FM-1.2",
        "FM-1.3",
        "FM-1.4",
        "FM-1.5",
        "FM-2.1",
        "FM-2.2",
        "FM-2.4",
        "FM-2.5",
        "FM-2.6",
        "FM-3.1",
        "FM-3.2",
        "FM-3.3",
    }


def test_unsegmented_traces_get_unknown_everywhere() -> None:
    t = T().say("one blob of text with everything").build(segmentation="raw_unsegmented")
    for code in DET:
        assert verdict(code, t).verdict == "unknown", code


# FM-1.3 ---------------------------------------------------------------------------------------


def test_step_repetition_present_on_identical_calls_with_identical_output() -> None:
    t = T().user("why is checkout failing?")
    for _ in range(3):
        t.sh("kubectl get pods -n shop", "checkout-1 Running")
    v = verdict("FM-1.3", t.build())
    assert v.verdict == "present"
    assert v.evidence[0].seq_start == 1 and v.evidence[0].seq_end == 5


def test_step_repetition_absent_when_state_changes() -> None:
    t = T().user("fix it").sh("pytest", "1 failed", 1).sh("sed -i s/a/b/ app.py").sh("pytest", "1 passed")
    assert verdict("FM-1.3", t.build()).verdict == "absent"


def test_step_repetition_ignores_replayed_context() -> None:
    t = T().user("go")
    for _ in range(3):
        t.call("bash", copied=True, command="ls").result("a.py", copied=True)
    t.sh("cat a.py", "print(1)").sh("python a.py", "1").sh("ls", "a.py b.py")
    assert verdict("FM-1.3", t.build()).verdict == "absent"


# FM-1.5 ---------------------------------------------------------------------------------------


def test_unaware_of_termination_on_step_cap() -> None:
    t = T().user("solve").sh("ls").sh("cat x").say("still looking")
    term = Termination(reason="max_steps", by="limit", native="exit_cost", at_seq=4)
    assert verdict("FM-1.5", t.build(termination=term)).verdict == "present"


def test_unaware_of_termination_on_continue_loop() -> None:
    t = T().user("compute 2+2").say("Let me think.", actor="assistant")
    for _ in range(3):
        t.say("Continue.", actor="mathproxyagent").say("Still thinking about it.", actor="assistant")
    v = verdict("FM-1.5", t.build())
    assert v.verdict == "present" and "continue" in (v.rationale or "")


@pytest.mark.parametrize(
    ("reason", "by", "cap"),
    [
        ("error_max_turns", "error", True),
        ("cost_limit", "error", True),
        ("end_turn", "user", False),  # a turn ending is not a cap
        ("turn_aborted", "error", False),  # an aborted turn is not a cap either
    ],
)
def test_which_termination_reasons_are_caps(reason: str, by: str, cap: bool) -> None:
    t = T().user("solve").sh("ls").sh("cat x").say("still looking")
    v = verdict("FM-1.5", t.build(termination=Termination(reason=reason, by=by)))  # type: ignore[arg-type]
    assert (v.verdict == "present" and "limit" in (v.rationale or "")) is cap


def test_termination_by_agent_is_absent() -> None:
    t = T().user("solve").sh("ls").say("FINAL ANSWER: 4")
    term = Termination(reason="final_answer", by="agent")
    assert verdict("FM-1.5", t.build(termination=term)).verdict == "absent"


def test_quoted_terminate_is_not_a_final_answer() -> None:
    t = T().user("solve")
    t.say('No code to run. To end the conversation reply only with "TERMINATE"', actor="terminal")
    for i in range(4):
        t.say(f"Working on step {i} of the analysis now.", actor="expert")
    assert verdict("FM-1.5", t.build()).verdict == "unknown"


# FM-3.1 ---------------------------------------------------------------------------------------


def test_premature_termination_on_open_plan() -> None:
    t = (
        T()
        .user("migrate the db")
        .event(kind="plan", actor="agent", content="- [x] backup\n- [ ] migrate\n- [ ] verify")
    )
    t.sh("pg_dump db > b.sql").say("Backup done, stopping now.")
    v = verdict("FM-3.1", t.build(termination=Termination(reason="completed", by="agent")))
    assert v.verdict == "present" and "2 open item" in (v.rationale or "")


def test_premature_termination_on_giving_up() -> None:
    t = T().user("find the root cause").sh("kubectl logs cart", "timeout").say("I cannot complete this task.")
    assert verdict("FM-3.1", t.build()).verdict == "present"


def test_a_refusal_handed_to_a_human_is_not_giving_up() -> None:
    t = T(task=None).user("Cancel my basic economy booking for illness.").call("get_reservation", id="R1")
    t.result('{"insurance": "no"}').say("Without insurance I cannot proceed with the cancellation.")
    t.user("Then transfer me please.").call("transfer_to_human_agents", summary="wants a refund")
    assert verdict("FM-3.1", t.build()).verdict != "present"
    t2 = T(task=None).user("Cancel my booking.").call("get_reservation", id="R1").result('{"ok": 1}')
    t2.say("I cannot proceed with the cancellation.").call("submit", answer="no")
    assert verdict("FM-3.1", t2.build()).verdict == "present"  # a submission is no hand-over


def test_premature_termination_absent_with_final_answer() -> None:
    # a question, not the default "Fix the failing checkout service." (asked to fix, it changes nothing)
    t = T(task="What is 6 times 7?").user("q").sh("ls").say("Answer: 42")
    term = Termination(reason="submitted", by="agent")
    assert verdict("FM-3.1", t.build(termination=term)).verdict == "absent"


def test_premature_termination_not_blamed_on_limits() -> None:
    t = T().user("q").sh("ls").say("I cannot complete this task.")
    term = Termination(reason="max_steps", by="limit")
    assert verdict("FM-3.1", t.build(termination=term)).verdict == "unknown"


# FM-3.2 / FM-3.3 ------------------------------------------------------------------------------


def test_no_verification_when_claim_follows_a_change_directly() -> None:
    t = T().user("fix the bug").sh("pytest", "1 failed", 1).sh("sed -i 's/x/y/' app.py")
    t.say("The bug has been fixed.")
    v = verdict("FM-3.2", t.build())
    assert v.verdict == "present"
    assert [ev.seq_start for ev in v.evidence] == [3, 5]


def test_verification_present_after_change() -> None:
    t = T().user("fix").sh("sed -i 's/x/y/' app.py").sh("pytest -q", "3 passed").say("All tests pass now.")
    assert verdict("FM-3.2", t.build()).verdict == "absent"
    assert verdict("FM-3.3", t.build()).verdict == "absent"


@pytest.mark.parametrize(
    ("tool", "args", "output", "expected"),
    [
        ("update_reservation", {"id": "R1"}, '{"id": "R1", "cabin": "economy", "paid": 120}', "absent"),
        ("send_certificate", {"user": "u_2"}, "Certificate c_1 added to user u_2 with amount 200.", "absent"),
        ("send_certificate", {"user": "u_2"}, "ok", "present"),
        ("send_certificate", {"user": "u_2"}, "Error: certificate not added (limit 100)", "present"),
        ("create_file", {"path": "app.py"}, "File created successfully at app_v2.py", "present"),
        ("str_replace_editor", {"command": "create"}, "File created successfully at app_v2.py", "present"),
    ],
)
def test_a_service_confirming_its_own_write(
    tool: str, args: dict[str, str], output: str, expected: str
) -> None:
    # A service that answers with the new record or a confirmation naming what it did has shown
    # the agent the new state; a file tool's "file created" says nothing about behaviour.
    t = T().user("please do it").call(tool, **args).result(output).say("It has been completed successfully.")
    assert verdict("FM-3.2", t.build()).verdict == expected


def test_no_claim_means_unknown() -> None:
    t = T().user("fix").sh("sed -i 's/x/y/' app.py").say("I edited the file.")
    assert verdict("FM-3.2", t.build()).verdict == "unknown"


def test_incorrect_verification_on_failing_check() -> None:
    t = (
        T()
        .user("fix")
        .sh("sed -i 's/x/y/' app.py")
        .sh("pytest -q", "FAILED test_app.py::test_x - AssertionError", 1)
    )
    t.say("The issue is resolved.")
    assert verdict("FM-3.3", t.build()).verdict == "present"


def test_incorrect_verification_on_status_only_probe() -> None:
    t = T(task="Checkout returns HTTP 500 errors; fix the incident.").user("alert: checkout 5xx")
    t.sh("kubectl rollout restart deploy/checkout -n shop").sh(
        "kubectl get pods -n shop", "checkout-2 1/1 Running"
    )
    t.say("The incident is resolved: checkout has been restored.")
    v = verdict("FM-3.3", t.build())
    assert v.verdict == "present" and "only show that things run" in (v.rationale or "")


@pytest.mark.parametrize(
    ("change_answer", "expected"),
    [("ok", "present"), ('{"reservation_id": "R1", "status": "cancelled", "refund": 120}', "absent")],
)
def test_a_check_of_another_record(change_answer: str, expected: str) -> None:
    # Checking R2 after changing R1 does not check the change, unless the change's own answer
    # already showed R1's new state (then the read of R2 serves the user's next question).
    t = T(task=None).user("Cancel R1.").call("cancel_reservation", reservation_id="R1").result(change_answer)
    t.call("get_reservation_details", reservation_id="R2").result('{"reservation_id": "R2"}')
    t.say("R1 has been cancelled successfully.")
    v = verdict("FM-3.3", t.build())
    assert v.verdict == expected
    if expected == "present":
        assert "reservation_id=R1, then checked reservation_id=R2" in (v.evidence[0].note or "")
    t2 = T(task=None).user("Cancel R1.").call("cancel_reservation", reservation_id="R1").result("ok")
    t2.call("get_reservation_details", reservation_id="R1").result('{"reservation_id": "R1"}')
    t2.say("R1 has been cancelled successfully.")
    assert verdict("FM-3.3", t2.build()).verdict == "absent"
    # The agent presents the read of R2 as its check: that check looked at the wrong record.
    t3 = T(task=None).user("Cancel R1.").call("cancel_reservation", reservation_id="R1").result(change_answer)
    t3.call("get_reservation_details", reservation_id="R2").result('{"reservation_id": "R2"}')
    t3.say("I double-checked: R1 has been cancelled successfully.")
    assert verdict("FM-3.3", t3.build()).verdict == "present"


def test_behavioural_check_is_fine() -> None:
    t = T(task="Checkout returns HTTP 500 errors; fix the incident.").user("alert: checkout 5xx")
    t.sh("kubectl rollout restart deploy/checkout -n shop")
    t.sh("curl -s -o /dev/null -w '%{http_code}' http://checkout/health", "200")
    t.say("The incident is resolved.")
    assert verdict("FM-3.3", t.build()).verdict == "absent"


# FM-2.1 ---------------------------------------------------------------------------------------

TASK = "Write a function that parses ISO dates and returns the weekday, with unit tests for leap years."


def test_conversation_reset_when_task_reissued() -> None:
    t = T().user(TASK).say("Here is a first version of the parser.").sh("pytest", "2 passed").user(TASK)
    v = verdict("FM-2.1", t.build())
    assert v.verdict == "present" and v.evidence[0].seq_start == 4


def test_conversation_reset_absent() -> None:
    t = (
        T()
        .user(TASK)
        .say("Draft.")
        .sh("pytest", "2 passed")
        .say("Done, tests pass.")
        .user("thanks")
        .say("bye")
    )
    assert verdict("FM-2.1", t.build()).verdict == "absent"


# FM-1.4 ---------------------------------------------------------------------------------------


def test_loss_of_history_reask_after_compaction() -> None:
    t = T().user("My user id is mia_li_3668, please rebook my flight.").say("Looking it up.")
    t.sh("get_user mia_li_3668", "found").event(
        kind="system", subtype="context_compaction", content="summary"
    )
    t.say("Could you provide your user id again?")
    v = verdict("FM-1.4", t.build())
    assert v.verdict == "present" and "compacted" in (v.rationale or "")


def test_loss_of_history_absent() -> None:
    t = T().user("My user id is mia_li_3668.").say("Thanks.").sh("get_user mia_li_3668").say("Found you.")
    t.say("Booking now.").say("Booked.")
    assert verdict("FM-1.4", t.build()).verdict == "absent"


def test_loss_of_history_agent_asks_a_teammate_again() -> None:
    t = T().user("How tall is the Eiffel Tower?").say("Found: 330 m (source: SETE).", actor="Researcher")
    t.say("Researcher, what figure did you find?", actor="Writer")
    t.say("Same as above: 330 m.", actor="Researcher").say("Draft: 330 m.", actor="Writer")
    v = verdict("FM-1.4", t.build())
    assert v.verdict == "present"
    assert v.evidence[0].agent == "Writer" and "Researcher has to repeat" in (v.rationale or "")


def test_loss_of_history_teammate_phrase_needs_a_question() -> None:
    t = T().user("How tall is the Eiffel Tower?").say("Found: 330 m.", actor="Researcher")
    t.say("Drafting from the finding.", actor="Writer").say("Same as above: 330 m.", actor="Researcher")
    t.say("Draft: 330 m.", actor="Writer").say("Done.", actor="Writer")
    assert verdict("FM-1.4", t.build()).verdict == "absent"


def test_loss_of_history_first_reply_is_not_lost_history() -> None:
    # The first reply asks for what the opening message said: no exchange yet, nothing to lose.
    t = T().user("Cancel reservation PEP4E0, it is a family emergency.")
    t.say("Please tell me your user id and the reason for cancellation?")
    t.user("My user id is sophia_9065 and as I mentioned, a family emergency.")
    t.sh("get_reservation PEP4E0").say("Cancelled.").say("Anything else?")
    assert verdict("FM-1.4", t.build()).verdict == "absent"
    t2 = T().user("My user id is mia_li_3668, rebook my flight.").say("Could you provide your user id?")
    t2.user("mia_li_3668").say("Thanks.").sh("get_user mia_li_3668").say("Rebooked.")
    assert verdict("FM-1.4", t2.build()).verdict == "absent"


def test_loss_of_history_user_complaint_after_an_exchange() -> None:
    t = T().user("Cancel reservation PEP4E0, it is a family emergency.").say("Looking it up.")
    t.sh("get_reservation PEP4E0").say("What is the reason for cancellation?")
    t.user("As I mentioned, a family emergency.").say("Cancelled.")
    v = verdict("FM-1.4", t.build())
    assert v.verdict == "present" and "the user has to repeat" in (v.rationale or "")


def test_loss_of_history_exchange_means_an_agent_turn_after_the_user_spoke() -> None:
    # A greeting before the user spoke, a second user message or a system notice are no exchange.
    t = T(task=None).say("Hi, how can I help?").user("Cancel PEP4E0, it is a family emergency.")
    t.say("What is the reason for cancellation?").user("As I mentioned, a family emergency.")
    t.sh("cancel PEP4E0").say("Cancelled.")
    assert verdict("FM-1.4", t.build()).verdict == "absent"
    t2 = T(task=None).user("My user id is mia_li_3668.").user("I need to rebook.").system("notice: queue")
    t2.say("Could you provide your user id?").user("mia_li_3668").sh("get_user mia_li_3668").say("Done.")
    assert verdict("FM-1.4", t2.build()).verdict == "absent"


@pytest.mark.parametrize(
    ("given", "thing", "present"),
    [
        ("My user id is mia_li_3668.", "user id", True),
        ("user id: mia_li_3668", "user id", True),
        ("user id: miali", "user id", True),
        ("Reservation number PEP4E0, please.", "reservation number", True),
        ("booking code XQXQ, maybe.", "booking code", False),
        ("My email is mia@example.com.", "email", True),
        ("My name is Mia Li.", "name", True),
        ("I'll look for my user id and come back.", "user id", False),
        ("I don't have my user id handy.", "user id", False),
        ("My user id is mia_li_3668.", "email", False),
    ],
)
def test_loss_of_history_needs_a_stated_value(given: str, thing: str, present: bool) -> None:
    t = T().user(f"Please change my flight. {given}").say("Sure.").sh("search_flights", "[]")
    t.say(f"Could you provide your {thing}?").say("Waiting.").say("Still waiting.")
    assert (verdict("FM-1.4", t.build()).verdict == "present") is present


# FM-2.6 ---------------------------------------------------------------------------------------


def test_reasoning_action_mismatch_on_different_command() -> None:
    t = T().user("why is cart down?").say("I will run `kubectl logs deploy/cart -n shop` to see the error.")
    t.sh("kubectl get pods -n shop", "cart-1 Running")
    v = verdict("FM-2.6", t.build())
    assert v.verdict == "present"


def test_reasoning_action_mismatch_on_different_tool() -> None:
    t = T().user("q").call("read_file", path="notes.md").result("notes").call("search", query="x").result("r")
    t.say("Now I will use read_file to open the report.")
    t.call("search", query="y").result("r2")
    assert verdict("FM-2.6", t.build()).verdict == "present"


def test_reasoning_action_match_is_absent() -> None:
    t = T().user("q").say("I will run `pytest -q` first.").sh("pytest -q", "1 passed")
    t.say("Let me run `git diff` to review.").sh("git diff", "")
    assert verdict("FM-2.6", t.build()).verdict == "absent"


# FM-2.2 ---------------------------------------------------------------------------------------


def test_guessed_credentials_after_an_auth_error_are_not_fm22() -> None:
    # was "present": FM-2.2 is about an ambiguous task, not about recovering from a tool error
    t = T().user("deploy to prod").call("deploy", token="abc").result("HTTP 401 Unauthorized", error=True)
    t.call("deploy", token="admin123").result("HTTP 401 Unauthorized", error=True)
    assert verdict("FM-2.2", t.build()).verdict == "unknown"


def test_no_clarification_when_agent_picks_one_of_several_matches() -> None:
    t = T().user("Cancel the order for Jane Smith.").call("find_customer", full_name="Jane Smith")
    t.result("2 matching customers found: cust_11 (Boston), cust_42 (Denver)")
    t.call("cancel_order", customer_id="cust_11").result("cancelled")
    v = verdict("FM-2.2", t.build())
    assert v.verdict == "present" and "matching customers found" in (v.evidence[0].quote or "")
    assert [v.evidence[0].seq_start, v.evidence[0].seq_end] == [2, 3]


def test_asking_which_match_is_absent() -> None:
    t = T().user("Cancel the order for Jane Smith.").call("find_customer", full_name="Jane Smith")
    t.result("2 matching customers found: cust_11 (Boston), cust_42 (Denver)")
    t.say("I found two customers named Jane Smith. Which one is you: Boston or Denver?")
    assert verdict("FM-2.2", t.build()).verdict == "absent"


def test_no_errors_means_unknown() -> None:
    t = T().user("deploy").call("deploy", token="abc").result("deployed").say("Done.")
    assert verdict("FM-2.2", t.build()).verdict == "unknown"


@pytest.mark.parametrize("code", sorted(DET))
def test_detectors_never_raise_on_empty_or_odd_traces(code: str) -> None:
    odd: list[Callable[[], Trace]] = [
        lambda: T(task=None).build(),
        lambda: T().event(kind="tool_result").event(kind="tool_call", tool_call=None).build(),
        lambda: T().say("").say("").say("").say("").build(),
    ]
    for make in odd:
        DET[code](make())
