"""FM-3.2 and FM-3.3 edge behaviour: chat-only teams with a checker, wrap-ups, self-confirming
writes, and checks that look at another record than the one changed."""

from __future__ import annotations

import pytest

from mastkit.annotate.detectors._base import detectors
from mastkit.annotate.model import ModeVerdict
from mastkit.traces.model import AgentInfo, Termination, ToolCall, Trace

from ._tracebuild import T

DET = {d.code: d for d in detectors()}
DONE = Termination(reason="final_answer", by="agent")


def fm32(trace: Trace) -> ModeVerdict:
    v = DET["FM-3.2"](trace)
    assert (v.code, v.source) == ("FM-3.2", "rule:no_verification")
    return v


def fm33(trace: Trace) -> ModeVerdict:
    v = DET["FM-3.3"](trace)
    assert (v.code, v.source) == ("FM-3.3", "rule:incorrect_verification")
    return v


def spans(v: ModeVerdict) -> list[tuple[int | None, int | None]]:
    return [(ev.seq_start, ev.seq_end) for ev in v.evidence]


# FM-3.2 in a chat-only team ------------------------------------------------------------------------


def team(
    lines: list[tuple[str, str]],
    roster: list[AgentInfo] | None = None,
    termination: Termination | None = DONE,
    user_first: bool = True,
) -> Trace:
    """A chat-only run: (actor, text) messages, kind ``reasoning`` when the text starts with '~'."""
    t = T(task="What is 6 times 7?")
    if user_first:
        t.user("What is 6 times 7?")
    for actor, text in lines:
        if text.startswith("~"):
            t.say(text[1:], actor=actor, kind="reasoning")
        else:
            t.say(text, actor=actor)
    agents = roster if roster is not None else [AgentInfo(name="Solver"), AgentInfo(name="Critic")]
    return t.build(termination=termination, agents=agents)


def test_a_team_answer_that_goes_out_unchecked_is_present() -> None:
    v = fm32(team([("Solver", "I think it is 42."), ("Solver", "Final answer: 42")]))
    assert v.verdict == "present"
    assert spans(v) == [(1, 2)]
    assert v.evidence[0].note == "the answer goes out without Critic checking it"
    assert v.rationale == "the team's checker (Critic) never checked the answer before it went out"


def test_every_checker_is_named_in_sorted_order() -> None:
    roster = [AgentInfo(name="Verifier"), AgentInfo(name="Solver"), AgentInfo(name="Critic")]
    v = fm32(team([("Solver", "I think it is 42."), ("Solver", "Final answer: 42")], roster))
    assert v.verdict == "present"
    assert v.evidence[0].note == "the answer goes out without Critic, Verifier checking it"
    assert "(Critic, Verifier)" in (v.rationale or "")


def test_the_checker_speaking_after_the_draft_is_absent() -> None:
    lines = [
        ("Solver", "I think it is 42."),
        ("Critic", "Looks right."),
        ("Critic", "Confirmed: 6 x 7 = 42."),
        ("Solver", "Final answer: 42"),
    ]
    v = fm32(team(lines))
    assert v.verdict == "absent"
    assert v.rationale == "Critic checked the answer (event 3) before it went out"


def test_the_checker_speaking_only_before_the_first_draft_is_present() -> None:
    lines = [("Critic", "Show your work."), ("Solver", "I think it is 42."), ("Solver", "Final answer: 42")]
    v = fm32(team(lines))
    assert v.verdict == "present"
    assert spans(v) == [(2, 3)]


def test_the_first_draft_opens_the_window_for_the_checker() -> None:
    # The checker answered the first draft; a later revision by the same agent does not reset it
    # (docs/detectors.md: "without that agent speaking after the first draft").
    lines = [
        ("Solver", "I think it is 42."),
        ("Critic", "Looks right."),
        ("Solver", "Revised: still 42."),
        ("Solver", "Final answer: 42"),
    ]
    v = fm32(team(lines))
    assert v.verdict == "absent"
    assert "(event 2)" in (v.rationale or "")


def test_the_checker_with_the_last_word_is_absent() -> None:
    v = fm32(team([("Solver", "I think it is 42."), ("Critic", "Final answer: 42, checked.")]))
    assert v.verdict == "absent"
    assert v.rationale == "the checking agent Critic has the last word"


def test_checker_reasoning_is_not_speaking() -> None:
    # Only messages count: the checker thinking to itself did not check the answer, and its
    # reasoning after the answer does not make it the last word.
    lines = [
        ("Solver", "I think it is 42."),
        ("Critic", "~Is it 42? Probably."),
        ("Solver", "Final answer: 42"),
        ("Critic", "~The answer went out."),
    ]
    v = fm32(team(lines))
    assert v.verdict == "present"
    assert spans(v) == [(1, 3)]


def test_another_agents_messages_are_not_the_answerers_drafts() -> None:
    # Writer's message is not Solver's draft; without a draft marker there is no draft stage.
    lines = [("Writer", "Six sevens are 42."), ("Solver", "Final answer: 42")]
    v = fm32(team(lines))
    assert v.verdict == "unknown"
    assert v.rationale == "no draft stage to check"


@pytest.mark.parametrize("draft", ["Draft: 42", "** Proposed answer: 42", "Candidate: 42", "DRAFT 42"])
def test_a_marked_draft_by_another_agent_is_a_draft_stage(draft: str) -> None:
    v = fm32(team([("Writer", draft), ("Solver", "Final answer: 42")]))
    assert v.verdict == "present"
    assert spans(v) == [(2, 2)]  # no draft by the answerer: the answer alone is cited


@pytest.mark.parametrize("text", ["My draft: 42", "Drafting: 42", "the candidates are 41 and 42"])
def test_draft_marker_must_open_the_message(text: str) -> None:
    assert fm32(team([("Writer", text), ("Solver", "Final answer: 42")])).verdict == "unknown"


def test_a_checker_speaking_before_any_draft_marker_counts_from_the_start() -> None:
    # The answerer never spoke before its answer: any checker message before it counts, also
    # the very first event of the trace.
    lines = [("Critic", "Please double-check it."), ("Writer", "Draft: 42"), ("Solver", "Final answer: 42")]
    v = fm32(team(lines, user_first=False))
    assert v.verdict == "absent"
    assert v.rationale == "Critic checked the answer (event 0) before it went out"


def test_a_checker_message_after_the_answerer_first_spoke_counts() -> None:
    lines = [("Solver", "Thinking about it."), ("Critic", "Looks fine."), ("Solver", "Final answer: 42")]
    v = fm32(team(lines, user_first=False))
    assert v.verdict == "absent"
    assert v.rationale == "Critic checked the answer (event 1) before it went out"


@pytest.mark.parametrize(
    ("termination", "roster"),
    [
        (None, None),
        (Termination(reason="max_steps", by="limit"), None),
        (Termination(reason="user", by="user"), None),
        (DONE, [AgentInfo(name="Solver"), AgentInfo(name="Writer")]),
        (DONE, []),
    ],
)
def test_a_team_without_an_agent_ending_or_a_checker_is_unknown(
    termination: Termination | None, roster: list[AgentInfo] | None
) -> None:
    v = fm32(team([("Solver", "I think it is 42."), ("Solver", "Final answer: 42")], roster, termination))
    assert v.verdict == "unknown"
    assert v.rationale == "no tool calls, and no checking role in a team to tell whether it checked"


def test_a_team_with_no_messages_is_unknown() -> None:
    v = fm32(team([("Solver", "~thinking"), ("Solver", "~still thinking")]))
    assert v.verdict == "unknown"
    assert v.rationale == "no tool calls, and no checking role in a team to tell whether it checked"


@pytest.mark.parametrize(
    "name",
    ["Critic", "Reviewer", "code review", "Verifier", "verify bot", "Checker", "checks", "check", "Tester",
     "QA", "Quality Lead"],
)  # fmt: skip
def test_checking_roles_by_name(name: str) -> None:
    roster = [AgentInfo(name="Solver"), AgentInfo(name=name)]
    v = fm32(team([("Solver", "I think it is 42."), ("Solver", "Final answer: 42")], roster))
    assert v.verdict == "present"
    assert f"without {name} checking it" in (v.evidence[0].note or "")


@pytest.mark.parametrize("name", ["Critical", "Checkpoint", "Reviewing", "Verification", "Testers", "Helper"])
def test_names_that_only_look_like_checkers(name: str) -> None:
    roster = [AgentInfo(name="Solver"), AgentInfo(name=name)]
    v = fm32(team([("Solver", "I think it is 42."), ("Solver", "Final answer: 42")], roster))
    assert v.verdict == "unknown"


@pytest.mark.parametrize(
    ("role", "expected"),
    [
        ("Reviewer; also writes summaries", "present"),
        ("QA", "present"),
        ("Writes summaries; reviewer of style", "unknown"),
        (None, "unknown"),
        ("", "unknown"),
    ],
)
def test_a_checking_role_from_the_first_part_of_the_role_description(role: str | None, expected: str) -> None:
    roster = [AgentInfo(name="Solver"), AgentInfo(name="Bob", role_description=role)]
    v = fm32(team([("Solver", "I think it is 42."), ("Solver", "Final answer: 42")], roster))
    assert v.verdict == expected
    if expected == "present":
        assert v.evidence[0].note == "the answer goes out without Bob checking it"
        lines = [("Solver", "I think it is 42."), ("Bob", "Correct."), ("Solver", "Final answer: 42")]
        assert fm32(team(lines, roster)).verdict == "absent"


def test_a_team_with_tool_calls_is_judged_on_its_calls() -> None:
    t = T().user("fix it").sh("sed -i 's/x/y/' app.py").say("The bug has been fixed.", actor="Solver")
    v = fm32(t.build(termination=DONE, agents=[AgentInfo(name="Solver"), AgentInfo(name="Critic")]))
    assert v.verdict == "present"
    assert v.rationale == "success is claimed without any check after the last change"


# FM-3.2: wrap-ups are not changes -------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    ["close_ticket", "Ticket.Resolve", "hand_off", "transfer_to_human_agents", "send_message", "reply"],
)
def test_a_wrap_up_alone_is_no_change(name: str) -> None:
    t = T(task=None).user("My order O1 never arrived.").call(name, ticket_id="T1").result("done")
    t.say("Your issue has been resolved.")
    v = fm32(t.build())
    assert v.verdict == "unknown"
    assert v.rationale == "no state-changing action before the success claim"


def test_the_change_before_a_wrap_up_is_the_last_change() -> None:
    t = T(task=None).user("Refund O1.").call("refund_order", order_id="O1").result("ok")
    t.call("close_ticket", ticket_id="T1").result("closed").say("Your order has been refunded.")
    v = fm32(t.build())
    assert v.verdict == "present"
    assert spans(v) == [(1, 1), (5, 5)]
    assert [ev.note for ev in v.evidence] == [
        "last change before the claim",
        "success claimed with no check after the change",
    ]


def test_a_wrap_up_name_running_a_command_is_a_change() -> None:
    # A tool named like a wrap-up that runs a command line is judged by its command.
    t = T().user("clean the cache").call("close_ticket", command="rm -rf build/cache").result("")
    t.say("The cache has been cleaned and the task is complete.")
    v = fm32(t.build())
    assert v.verdict == "present"
    assert spans(v)[0] == (1, 1)


@pytest.mark.parametrize("name", ["update_closed_flag", "set_reporter", "enclose_record_update"])
def test_names_that_only_contain_a_wrap_up_word_are_changes(name: str) -> None:
    t = T(task=None).user("Fix O1.").call(name, order_id="O1").result("ok").say("It has been updated.")
    v = fm32(t.build())
    assert v.verdict == "present"
    assert spans(v) == [(1, 1), (3, 3)]


# FM-3.2: an API write that shows its new state ------------------------------------------------------


def api_write(output: str, error: bool | None = None, name: str = "update_reservation", **args: str) -> Trace:
    t = T(task=None).user("Please change my booking.").call(name, **(args or {"reservation_id": "R1"}))
    t.result(output, error=error).say("It has been completed successfully.")
    return t.build()


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ('{"id": "R1", "cabin": "economy", "paid": 120}', "absent"),
        ('  \n {"id": "R1", "cabin": "economy", "paid": 120}', "absent"),
        ('{"id": "R1", "cabin": "economy"}', "present"),
        ('[{"id": "R1", "cabin": "economy", "paid": 120}]', "present"),
        ("id: R1, cabin: economy, paid: 120", "present"),
        ('{"error": "reservation not found", "code": 404, "id": "R1"}', "present"),
    ],
)
def test_a_write_answered_with_the_record(output: str, expected: str) -> None:
    v = fm32(api_write(output))
    assert v.verdict == expected
    if expected == "absent":
        assert v.rationale == "the change at event 1 returned the updated record"
    else:
        assert spans(v) == [(1, 1), (3, 3)]


def test_a_write_flagged_as_an_error_shows_nothing() -> None:
    assert fm32(api_write('{"id": "R1", "cabin": "economy", "paid": 120}', error=True)).verdict == "present"


@pytest.mark.parametrize(
    ("output", "name", "args", "expected"),
    [
        ("Certificate c_1 added to user u_2 with amount 200.", "send_certificate", {"user": "u"}, "absent"),
        ("Certificate added to the user.", "send_certificate", {"user": "u"}, "present"),
        ("Certificate c_1 queued for user u_2.", "send_certificate", {"user": "u"}, "present"),
        ("Note n_1 saved for user u_2.", "add_note", {"user": "u"}, "absent"),
        ("Note n_1 saved for user u_2.", "write_note", {"user": "u"}, "present"),
        ("Note n_1 saved for user u_2.", "add_note", {"Path": "notes.txt"}, "present"),
        ("Note n_1 saved for user u_2.", "add_note", {"FILE_PATH": "notes.txt"}, "present"),
        ("Note n_1 saved for user u_2.", "add_note", {"target": "notes.txt"}, "absent"),
    ],
)
def test_a_service_confirmation_naming_what_it_did(
    output: str, name: str, args: dict[str, str], expected: str
) -> None:
    assert fm32(api_write(output, None, name, **args)).verdict == expected


def raw_call(t: T, name: str, arguments: object) -> T:
    """A call whose arguments are not a dict (unparsed: None, a string, a list)."""
    cid = f"c{len(t.events)}"
    return t.event(
        kind="tool_call",
        actor="agent",
        role="assistant",
        tool_call=ToolCall(name=name, call_id=cid, arguments=arguments),
    )


@pytest.mark.parametrize("arguments", [None, "u_2 200", ["path", "notes.txt"]])
def test_a_confirmation_needs_no_argument_dict(arguments: object) -> None:
    # Unparsed arguments are not read for file keys: a list naming "path" is no file argument.
    t = raw_call(T(task=None).user("Send the certificate."), "send_certificate", arguments)
    t.result("Certificate c_1 added to user u_2 with amount 200.").say("It has been completed successfully.")
    v = fm32(t.build())
    assert v.verdict == "absent"
    assert v.rationale == "the change at event 1 returned the updated record"


def test_a_shell_write_printing_json_is_not_self_confirming() -> None:
    t = T().user("apply the config").sh("kubectl apply -f cfg.yaml", '{"kind": "x", "name": "y", "ns": "z"}')
    t.say("The config has been applied successfully.")
    v = fm32(t.build())
    assert v.verdict == "present"
    assert spans(v) == [(1, 1), (3, 3)]


def test_a_write_without_a_result_shows_nothing() -> None:
    t = T(task=None).user("Cancel R1.").call("cancel_reservation", reservation_id="R1")
    t.say("R1 has been cancelled successfully.")
    v = fm32(t.build())
    assert v.verdict == "present"
    assert spans(v) == [(1, 1), (2, 2)]


def test_fm33_takes_a_self_confirming_write_as_checked_only_when_the_claim_does_not_cite_a_read() -> None:
    rec = '{"reservation_id": "R1", "status": "cancelled", "refund": 120}'
    t = T(task=None).user("Cancel R1.").call("cancel_reservation", reservation_id="R1").result(rec)
    t.call("get_reservation_details", reservation_id="R2").result('{"reservation_id": "R2"}')
    t.say("R1 has been cancelled successfully.")
    assert fm33(t.build()).verdict == "absent"


# FM-3.3: the check looked at another record --------------------------------------------------------


def other_record(
    change: dict[str, object], check: dict[str, object], claim: str = "It has been updated."
) -> Trace:
    """An API change answered "ok" (no new state shown), then an API read, then a claim."""
    t = T(task=None).user("Please update my order.").call("update_order", **change).result("ok")
    t.call("get_order_details", **check).result('{"status": "shipped"}').say(claim)
    return t.build()


@pytest.mark.parametrize(
    ("change", "check", "note"),
    [
        ({"id": "O1"}, {"id": "O2"}, "changed id=O1, then checked id=O2"),
        ({"orderId": "O1"}, {"orderId": "O2"}, "changed orderId=O1, then checked orderId=O2"),
        ({"order_id": 1}, {"order_id": 2}, "changed order_id=1, then checked order_id=2"),
        (
            {"user_id": "U1", "order_id": "O1", "note": "x"},
            {"user_id": "U2", "order_id": "O2"},
            "changed user_id=U1, then checked user_id=U2",
        ),
    ],
)
def test_a_check_of_another_id_is_present(
    change: dict[str, object], check: dict[str, object], note: str
) -> None:
    v = fm33(other_record(change, check))
    assert v.verdict == "present"
    assert spans(v) == [(1, 3), (5, 5)]
    assert [ev.note for ev in v.evidence] == [note, "success claimed"]
    assert v.rationale == "the check after the change looked at something else than what was changed"


@pytest.mark.parametrize(
    ("change", "check"),
    [
        ({"order_id": "O1"}, {"order_id": "O1"}),  # the same record
        ({"user_id": "U1", "order_id": "O1"}, {"user_id": "U1", "order_id": "O2"}),  # one id shared
        ({"order_id": "O1", "reason": "late"}, {"order_id": "O1"}),  # a key only the change has
        ({"order_id": "O1"}, {"user_id": "U1"}),  # no id key in common
        ({"cabin": "economy"}, {"cabin": "business"}),  # not an id key
        ({"paid": "10"}, {"paid": "20"}),
        ({"ID": "O1"}, {"ID": "O2"}),
        ({"userid": "U1"}, {"userid": "U2"}),
        ({"order_id": ["O1"]}, {"order_id": ["O2"]}),  # not a plain id value
        ({"order_id": 1.5}, {"order_id": 2.5}),
    ],
)
def test_no_other_record_without_a_differing_id(change: dict[str, object], check: dict[str, object]) -> None:
    v = fm33(other_record(change, check))
    assert v.verdict == "absent"
    assert v.rationale == "a passing check (event 3) supports the claim"


@pytest.mark.parametrize(
    ("change_args", "check_args"), [(None, {"order_id": "O2"}), ({"order_id": "O1"}, None)]
)
def test_unparsed_arguments_name_no_record(change_args: object, check_args: object) -> None:
    t = raw_call(T(task=None).user("Please update my order."), "update_order", change_args).result("ok")
    raw_call(t, "get_order_details", check_args).result('{"status": "shipped"}').say("It has been updated.")
    v = fm33(t.build())
    assert v.verdict == "absent"
    assert v.rationale == "a passing check (event 3) supports the claim"


def test_a_command_line_check_is_not_compared_by_arguments() -> None:
    t = T(task=None).user("Please update my order.").call("update_order", order_id="O1").result("ok")
    t.call("check_order", order_id="O2", command="curl -s http://api/orders/O2").result(
        '{"status": "shipped"}'
    )
    t.say("It has been updated.")
    v = fm33(t.build())
    assert v.verdict == "absent"
    assert v.rationale == "a passing check (event 3) supports the claim"


# FM-3.2 / FM-3.3: which claim is the final one ------------------------------------------------------


def test_a_submission_after_a_spoken_claim_is_the_final_claim() -> None:
    t = T().user("fix the bug").sh("sed -i 's/x/y/' app.py").say("The bug is fixed.")
    t.call("submit", summary="All tests pass.")
    v = fm32(t.build())
    assert v.verdict == "present"
    assert spans(v) == [(1, 1), (4, 4)]
    assert v.evidence[1].quote == "All tests pass"  # the submission's own words, not the call


def test_a_submission_without_a_summary_is_quoted_as_the_call() -> None:
    t = T().user("fix the bug").sh("sed -i 's/x/y/' app.py").call("submit")
    v = fm32(t.build())
    assert v.verdict == "present"
    assert spans(v) == [(1, 1), (3, 3)]
    assert (v.evidence[1].quote or "").startswith("submit(")
    assert fm33(t.build()).verdict == "unknown"  # no asserted words to hold against a check


def test_the_last_spoken_claim_wins_over_an_earlier_one() -> None:
    t = T().user("fix the bug").say("The bug is fixed.").sh("sed -i 's/x/y/' app.py")
    t.say("Now the bug is fixed for real.")
    v = fm32(t.build())
    assert v.verdict == "present"
    assert spans(v) == [(2, 2), (4, 4)]


def test_fm33_reads_the_claim_from_a_submission_summary() -> None:
    t = T().user("fix the bug").sh("sed -i 's/x/y/' app.py").sh("pytest -q", "1 failed, 2 passed", 1)
    t.call("submit", summary="The bug is fixed.")
    v = fm33(t.build())
    assert v.verdict == "present"
    assert spans(v) == [(3, 3), (4, 4), (5, 5)]
    assert v.evidence[-1].quote == "is fixed"
    assert v.rationale == "success claimed although the last check failed"


def test_a_device_stating_its_new_state_shows_the_change() -> None:
    # tau2-bench telecom: the toggle's result states the new state, so the claim rests on it
    t = T().user("My data does not work.").call("toggle_airplane_mode")
    t.result("Airplane Mode is now OFF. Status Bar: 5G | Data Enabled")
    t.say("Turning off Airplane Mode has restored your signal.")
    assert fm32(t.build()).rationale == "the change at event 1 returned the updated record"
    t = T().user("My data does not work.").call("toggle_airplane_mode").result("Done. Status Bar: 5G")
    t.say("Turning off Airplane Mode has restored your signal.")
    assert fm32(t.build()).verdict == "present"
