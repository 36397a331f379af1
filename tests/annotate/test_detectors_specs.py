"""The detectors added for issue 19 (FM-1.1, FM-1.2, FM-2.4, FM-2.5) and the confidence table."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from mastkit.annotate.detectors._base import detector_for
from mastkit.annotate.detectors._claims import affirms
from mastkit.annotate.detectors._precision import PRIOR, confidence_for
from mastkit.annotate.model import ModeVerdict
from mastkit.taxonomy import load_taxonomy
from mastkit.traces.model import AgentInfo, Trace

from ._tracebuild import T

MAST = load_taxonomy("mast")


def verdict(code: str, trace: Trace) -> ModeVerdict:
    det = detector_for(MAST, code)
    assert det is not None
    v = det(trace)
    if v.verdict == "present":
        assert v.evidence and all(ev.seq_start is not None for ev in v.evidence)
    return v


# FM-1.1 ----------------------------------------------------------------------------------------


def test_a_change_in_a_read_only_task_disobeys_it() -> None:
    t = T(task="Investigate the crash and report the cause; do not change anything in the cluster.")
    t.user("go").sh("kubectl describe pod api-1", "OOMKilled").sh(
        "kubectl set resources deploy/api --limits=memory=1Gi"
    )
    v = verdict("FM-1.1", t.build())
    assert v.verdict == "present" and v.evidence[0].seq_start == 3


def test_a_read_only_task_kept_is_absent() -> None:
    t = T(task="Investigate the crash and report the cause; do not change anything in the cluster.")
    t.user("go").sh("kubectl describe pod api-1", "OOMKilled").say("The pod runs out of memory.")
    assert verdict("FM-1.1", t.build()).verdict == "absent"


def test_editing_tests_the_task_protects() -> None:
    t = T(task="Fix the parser. Do not modify the tests.").user("go")
    t.call("edit_file", path="src/parse.py", old="a", new="b").result("ok")
    t.call("edit_file", path="tests/test_parse.py", old="assert x", new="# assert x").result("ok")
    v = verdict("FM-1.1", t.build())
    assert v.verdict == "present" and v.evidence[0].seq_start == 3


def test_a_changed_signature_the_task_keeps() -> None:
    t = T(task="Fix total(). Keep the public signature of the function unchanged.").user("go")
    t.call("edit_file", path="cart.py", old="def total(items):", new="def total(items, strict):").result("ok")
    assert verdict("FM-1.1", t.build()).verdict == "present"
    t2 = T(task="Fix total(). Keep the public signature of the function unchanged.").user("go")
    t2.call(
        "edit_file", path="cart.py", old="def total(items):\n    x", new="def total(items):\n    y"
    ).result("ok")
    assert verdict("FM-1.1", t2.build()).verdict == "absent"


@pytest.mark.parametrize(
    ("task", "answer", "expected"),
    [
        ("How tall is it? Answer in one sentence.", "Final: 330 m. It grew in 2022.", "present"),
        ("How tall is it? Answer in one sentence.", "Final: 330 m since 2022.", "absent"),
        (
            "How tall is it? Answer in at most 5 words.",
            "It is three hundred and thirty metres tall.",
            "present",
        ),
        ("How tall is it? Answer in at most 5 words.", "330 metres.", "absent"),
    ],
)
def test_answer_format_limits(task: str, answer: str, expected: str) -> None:
    t = T(task=task).user(task).say("Let me look.").say(answer)
    assert verdict("FM-1.1", t.build()).verdict == expected


POLICY = "Before any change to a booking, list the details and get an explicit 'yes' from the user."


def test_a_change_without_the_confirmation_the_policy_requires() -> None:
    t = T(task=None).system(POLICY).user("Cancel booking AB1.").say("AB1 to Denver, insured. Cancel it?")
    t.call("cancel_reservation", reservation_id="AB1").result('{"status": "cancelled"}')
    v = verdict("FM-1.1", t.build())
    assert v.verdict == "present" and v.evidence[0].seq_start == 3


def test_a_confirmed_change_keeps_the_policy() -> None:
    t = T(task=None).system(POLICY).user("Cancel booking AB1.").say("AB1 to Denver, insured. Cancel it?")
    t.user("Yes, go ahead.").call("cancel_reservation", reservation_id="AB1").result(
        '{"status": "cancelled"}'
    )
    assert verdict("FM-1.1", t.build()).verdict == "absent"


@pytest.mark.parametrize(
    ("text", "yes"),
    [
        ("Yes, go ahead.", True),
        ("If that's the only option, then yes, please go ahead.", True),
        ("Hmm, maybe I mixed things up. Yes, please proceed with it.", True),
        ("Oui, please proceed with canceling this reservation.", True),
        ("Everything looks good! Use the certificate.", True),
        ("No, don't proceed yet.", False),
        ("Please do not go ahead.", False),
        ("I'll go with the first option.", False),
        ("Let's use the gift card to cover the difference, please.", False),
        ("Thanks! Could you also add one checked bag?", False),
    ],
)
def test_what_counts_as_a_users_yes(text: str, yes: bool) -> None:
    assert affirms(text) is yes


def test_a_yes_then_an_agent_statement_still_confirms() -> None:
    t = T(task=None).system(POLICY).user("Cancel booking AB1.").say("AB1 to Denver, insured. Cancel it?")
    t.user("Yes, please proceed. I should get a full refund, right?").say("You will. Cancelling now.")
    t.call("cancel_reservation", reservation_id="AB1").result('{"status": "cancelled"}')
    assert verdict("FM-1.1", t.build()).verdict == "absent"


def test_a_new_question_after_the_yes_needs_a_new_yes() -> None:
    t = T(task=None).system(POLICY).user("Cancel booking AB1.").say("AB1 to Denver, insured. Cancel it?")
    t.user("Yes.").say("Should I also refund the insurance?")
    t.call("cancel_reservation", reservation_id="AB1").result('{"status": "cancelled"}')
    v = verdict("FM-1.1", t.build())
    assert v.verdict == "present" and v.evidence[0].seq_start == 5


def test_choosing_an_option_is_not_the_yes_the_policy_asks_for() -> None:
    t = T(task=None).system(POLICY).user("Book me to Denver.").say("Option 1: $120. Option 2: $180. Which?")
    t.user("I'll go with option 1.").call("book_reservation", flight="HAT1").result('{"status": "ok"}')
    assert verdict("FM-1.1", t.build()).verdict == "present"


def test_no_checkable_constraint_is_unknown() -> None:
    t = T(task="Make the checkout faster.").user("go").sh("sed -i s/a/b/ app.py")
    assert verdict("FM-1.1", t.build()).verdict == "unknown"


# FM-1.2 ----------------------------------------------------------------------------------------

TEAM = [
    AgentInfo(name="Coder", role_description="writes and runs code"),
    AgentInfo(name="Reviewer", role_description="reviews the Coder's changes; never edits files"),
]


def test_a_reviewer_who_must_not_edit_edits() -> None:
    t = T().user("fix it").call("edit_file", actor="Coder", path="a.py", old="x", new="y").result("ok")
    t.call("edit_file", actor="Reviewer", path="a.py", old="y", new="z").result("ok")
    v = verdict("FM-1.2", t.build(agents=TEAM))
    assert v.verdict == "present" and v.evidence[0].agent == "Reviewer" and v.evidence[0].seq_start == 3


def test_roles_kept_are_absent() -> None:
    t = T().user("fix it").call("edit_file", actor="Coder", path="a.py", old="x", new="y").result("ok")
    t.say("Looks good to me.", actor="Reviewer")
    assert verdict("FM-1.2", t.build(agents=TEAM)).verdict == "absent"


def test_a_call_outside_the_agents_tool_list() -> None:
    agents = [AgentInfo(name="agent", tools=[{"type": "function", "function": {"name": "search"}}])]
    t = T().user("q").call("search", query="x").result("r").call("delete_user", id="7").result("ok")
    v = verdict("FM-1.2", t.build(agents=agents))
    assert v.verdict == "present" and "delete_user" in (v.rationale or "")


def test_a_hosted_tool_variant_is_among_the_tools() -> None:
    agents = [AgentInfo(name="agent", tools=["web_search_preview"])]
    t = T().user("q").call("web_search", query="x").result("r")
    assert verdict("FM-1.2", t.build(agents=agents)).verdict == "absent"


def test_a_conditional_sentence_in_a_system_prompt_is_not_a_prohibition() -> None:
    agents = [
        AgentInfo(name="agent", system_prompt="If the suite takes minutes, do not run tests. Be brief.")
    ]
    t = T().user("q").sh("pytest -q", "3 passed")
    assert verdict("FM-1.2", t.build(agents=agents)).verdict == "unknown"


def test_a_reviewer_who_writes_the_code_itself() -> None:
    agents = [
        AgentInfo(
            name="Reviewer", system_prompt="You review code. You do not write or rewrite the code yourself."
        )
    ]
    code = "```python\n" + "\n".join(f"x{i} = {i}" for i in range(10)) + "\n```"
    t = T().user("build it").say(f"I rewrote it:\n{code}", actor="Reviewer")
    assert verdict("FM-1.2", t.build(agents=agents)).verdict == "present"


# FM-2.4 ----------------------------------------------------------------------------------------


def _withheld(passed_on: bool) -> Trace:
    t = (
        T()
        .user("Fix the bug and run the tests.")
        .sh("cat tests/README", "# note: the DB is read-only; use TEST_DB=replica-2", actor="Coder")
    )
    t.say("Heads-up: use TEST_DB=replica-2." if passed_on else "Starting on the fix.", actor="Coder")
    t.sh("pytest -q", "1 failed: readonly database", exit_code=1, actor="Reviewer")
    return t.build()


def test_a_note_kept_to_oneself_is_withheld() -> None:
    v = verdict("FM-2.4", _withheld(False))
    assert v.verdict == "present" and [v.evidence[0].seq_start, v.evidence[0].seq_end] == [2, 3]


def test_a_note_passed_on_is_absent() -> None:
    assert verdict("FM-2.4", _withheld(True)).verdict == "absent"


def test_a_reused_call_id_keeps_the_note_with_the_agent_who_read_it() -> None:
    t = _withheld(False)
    for e in t.events:  # both calls (Coder's cat, Reviewer's pytest) and their results share one id
        if e.tool_call is not None:
            e.tool_call.call_id = "call_1"
        if e.tool_result is not None:
            e.tool_result.call_id = "call_1"
    v = verdict("FM-2.4", t)
    assert v.verdict == "present" and [v.evidence[0].seq_start, v.evidence[0].seq_end] == [2, 3]


def test_a_single_agent_run_is_unknown_for_withholding() -> None:
    t = T().user("go").sh("cat notes", "# note: the DB is read-only").say("ok")
    assert verdict("FM-2.4", t.build()).verdict == "unknown"


# FM-2.5 ----------------------------------------------------------------------------------------


def _review(reply: str, apply: bool) -> Trace:
    t = T().user("Fix slugify.").call("edit_file", actor="Coder", path="t.py", old="a", new="b").result("ok")
    t.say("The fix misses the empty-input case. Please add a guard.", actor="Reviewer")
    if apply:
        t.call("edit_file", actor="Coder", path="t.py", old="b", new="c").result("ok")
    t.say(reply, actor="Coder")
    return t.build()


def test_a_correction_neither_applied_nor_answered_is_ignored() -> None:
    v = verdict("FM-2.5", _review("Submitting the patch now.", apply=False))
    assert v.verdict == "present" and [v.evidence[0].seq_start, v.evidence[0].seq_end] == [3, 4]


@pytest.mark.parametrize(
    ("reply", "apply"),
    [("Submitting the patch now.", True), ("I disagree: the caller never passes ''.", False)],
)
def test_a_correction_applied_or_answered_is_absent(reply: str, apply: bool) -> None:
    assert verdict("FM-2.5", _review(reply, apply)).verdict == "absent"


# confidence = measured precision ------------------------------------------------------------------


def _table() -> dict[str, dict[str, dict[str, int]]]:
    text = (resources.files("mastkit.annotate.detectors") / "precision.json").read_text(encoding="utf-8")
    data = json.loads(text)
    assert data["split"] == "dev" and "bench/detectors.py" in data["command"]
    return data["detectors"]  # type: ignore[no-any-return]


def test_present_confidence_is_the_measured_precision() -> None:
    stat = _table()["step_repetition"]["present"]
    assert stat["n"] >= 5
    t = T().user("why is checkout failing?")
    for _ in range(3):
        t.sh("kubectl get pods -n shop", "checkout-1 Running")
    v = verdict("FM-1.3", t.build())
    assert v.verdict == "present"
    assert v.confidence == round((stat["right"] + 1) / (stat["n"] + 2), 3)
    assert str(v.extra["confidence_from"]).startswith("measured")


def test_absent_confidence_is_the_measured_negative_predictive_value() -> None:
    stat = _table()["step_repetition"]["absent"]
    t = T().user("fix it").sh("pytest", "1 failed", 1).sh("sed -i s/a/b/ app.py").sh("pytest", "1 passed")
    v = verdict("FM-1.3", t.build())
    assert v.verdict == "absent" and v.confidence == round((stat["right"] + 1) / (stat["n"] + 2), 3)


def test_an_unmeasured_detector_gets_the_prior() -> None:
    conf = confidence_for("no_such_detector", "present")
    assert conf.value == PRIOR and conf.origin.startswith("prior")
    few = [name for name, e in _table().items() if 0 < e["present"]["n"] < 5]
    for name in few:
        assert confidence_for(name, "present").value == PRIOR


# FM-3.2 on API writes ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ('{"id": "AB1", "status": "cancelled", "refund": "card_1", "date": "2026-05-01"}', "absent"),
        ("ok", "present"),
    ],
)
def test_an_api_write_that_returns_the_record_has_shown_the_new_state(output: str, expected: str) -> None:
    t = T(task=None).user("Cancel AB1.").call("cancel_reservation", reservation_id="AB1").result(output)
    t.say("Your booking has been cancelled.")
    assert verdict("FM-3.2", t.build()).verdict == expected


# FM-2.2 in chat-only runs and on a picked candidate ---------------------------------------------------


def test_a_chat_team_that_guesses_what_the_question_means() -> None:
    t = T(task="How tall is the tower?").user("How tall is the tower?")
    t.say("Assuming 'the tower' means the Eiffel Tower.", actor="Researcher")
    t.say("It is 330 m.", actor="Writer")
    v = verdict("FM-2.2", t.build())
    assert v.verdict == "present" and [v.evidence[0].seq_start, v.evidence[0].seq_end] == [1, 2]


def test_a_chat_team_that_asks_is_absent() -> None:
    t = T(task="How tall is the tower?").user("How tall is the tower?")
    t.say(
        "Assuming 'the tower' means the Eiffel Tower? Could you confirm which tower you mean?",
        actor="Researcher",
    )
    assert verdict("FM-2.2", t.build()).verdict != "present"


def test_picking_one_of_two_deployments_without_asking() -> None:
    t = T(task="Restart the mailer deployment.").user("Restart the mailer deployment.")
    t.sh("kubectl get deploy -A | grep mailer", "prod mailer 0/3\nstaging mailer 3/3")
    t.say("mailer exists in prod and staging; I'll restart the prod one.")
    t.sh("kubectl rollout restart deployment/mailer -n prod")
    assert verdict("FM-2.2", t.build()).verdict == "present"


# FM-1.5 past the end, FM-2.1 nudges ------------------------------------------------------------------


@pytest.mark.parametrize("rejected", [False, True])
def test_work_after_a_completing_call(rejected: bool) -> None:
    t = T(task="Find the flag.").user("Find the flag.").call("submit", answer="flag{a}").result("ok")
    if rejected:
        t.user("Your submission was incorrect. Please proceed and attempt to find the correct answer.")
    t.sh("cat notes.txt", "x").sh("python decode.py", "flag{b}")
    v = verdict("FM-1.5", t.build())
    assert (v.verdict == "present") is not rejected


def _after_done(*user_turns: str) -> Trace:
    t = T(task=None).user("Change my seat.").call("update_seat", seat="4A").result('{"seat": "4A"}')
    t.say("Done: seat 4A. Anything else?")
    for turn in user_turns:
        t.user(turn).say("Of course.").say("Let me know if there is anything else.")
    return t.build()


@pytest.mark.parametrize(
    ("turns", "present"),
    [
        (("No thanks, that's all.",), True),
        (("Bye!", "Goodbye."), True),
        (("That's all right. I'll handle it later. Can you find me a flight to Seattle?",), False),
        (("No, thank you. Could you double-check the insurance though?",), False),
        (("No thanks.", "Actually, one more thing: add a bag."), False),
    ],
)
def test_talking_past_the_users_goodbye(turns: tuple[str, ...], present: bool) -> None:
    v = verdict("FM-1.5", _after_done(*turns))
    assert (v.verdict == "present") is present
    if present:
        assert "after the user said they were done" in (v.rationale or "")


def test_a_repeated_harness_nudge_is_not_a_reset() -> None:
    nudge = "Please proceed to the next step using your best judgement and the tools you have."
    t = T(task="Find the flag in the binary.").user("Find the flag in the binary.")
    t.sh("strings bin", "x").user(nudge).sh("file bin", "ELF").user(nudge).sh("objdump -d bin", "...")
    assert verdict("FM-2.1", t.build()).verdict == "absent"


# FM-3.1 nothing done, FM-2.2 assumptions about facts -----------------------------------------------


@pytest.mark.parametrize(
    ("ending", "expected"), [("none", "present"), ("transfer", "unknown"), ("user", "unknown")]
)
def test_a_change_request_with_nothing_changed(ending: str, expected: str) -> None:
    t = T(task=None).user("Please cancel reservation AB1.").call("get_reservation", reservation_id="AB1")
    t.result('{"id": "AB1"}').say("This reservation cannot be cancelled under the policy.")
    if ending == "transfer":
        t.call("transfer_to_human_agents", summary="wants AB1 cancelled").result("Transfer successful")
    if ending == "user":
        t.user("OK, bye.")
    assert verdict("FM-3.1", t.build()).verdict == expected


def test_an_assumption_about_a_fact_is_not_about_the_request() -> None:
    t = T(task=None).user("How many crocodiles were found in Florida?")
    t.say("The placeholder file was wrong, so I'll assume we don't have the exact URL yet.", actor="Analyst")
    t.say("Trying the USGS search page instead.", actor="Analyst")
    assert verdict("FM-2.2", t.build()).verdict == "unknown"
