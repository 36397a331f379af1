"""The detectors' shared helpers, pinned down by mutation testing: how a tool call is read as a
command (``_signals``), how a verdict gets its confidence (``_precision``) and how detectors are
registered, found and build their verdicts (``_base``)."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from mastkit.annotate.detectors import _base, _precision
from mastkit.annotate.detectors._base import (
    Detector,
    absent,
    detector,
    detector_for,
    detectors,
    evidence_at,
    live_events,
    present,
    quote,
    unknown,
)
from mastkit.annotate.detectors._precision import MIN_N, PRIOR, confidence_for
from mastkit.annotate.detectors._signals import (
    agent_texts,
    call_commands,
    canonical_call,
    checks_after_own_change,
    command_text,
    full_command,
    is_check,
    is_log_line,
    is_state_change,
    is_status_probe,
    is_test_run,
    pods_unhealthy,
    result_failed,
    structured_enough,
    submitted_text,
)
from mastkit.annotate.model import Evidence, ModeVerdict
from mastkit.taxonomy import load_taxonomy
from mastkit.traces.model import Event, ToolCall, ToolResult, Trace

from ._tracebuild import T

MAST = load_taxonomy("mast")


def call(name: str, arguments: Any = None, raw: str | None = None) -> ToolCall:
    return ToolCall(name=name, call_id="c1", arguments=arguments, arguments_raw=raw)


def bash(command: str) -> ToolCall:
    return call("bash", {"command": command})


def programs(tc: ToolCall) -> list[str]:
    return [c.program for c in call_commands(tc)]


def tool_result(output: str | None, error: bool | None = None, exit_code: int | None = None) -> Event:
    return Event(
        seq=1,
        kind="tool_result",
        actor="environment",
        role="tool",
        tool_result=ToolResult(call_id="c1", output=output, is_error=error, exit_code=exit_code),
    )


# _signals.command_text -------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["command", "cmd", "script", "code", "input", "query"])
def test_each_command_argument_is_read(key: str) -> None:
    assert command_text(call("tool", {"other": "no", key: "ls -la"})) == "ls -la"


def test_the_first_command_key_wins() -> None:
    assert command_text(call("tool", {"query": "q", "cmd": "c", "command": "first"})) == "first"


def test_a_list_of_words_is_joined_with_spaces() -> None:
    assert command_text(call("tool", {"command": ["ls", "-la", "/tmp"]})) == "ls -la /tmp"


def test_a_list_with_a_non_string_is_skipped_for_the_next_key() -> None:
    assert command_text(call("tool", {"command": ["ls", 1], "cmd": "pwd"})) == "pwd"


def test_a_non_string_value_is_skipped_for_the_next_key() -> None:
    assert command_text(call("tool", {"command": 3, "script": "make"})) == "make"


def test_without_a_command_key_the_raw_arguments_are_the_text() -> None:
    assert command_text(call("tool", {"path": "a.py"}, raw='{"path": "a.py"}')) == '{"path": "a.py"}'
    assert command_text(call("tool", None, raw="get pods")) == "get pods"
    assert command_text(call("tool", ["ls"], raw="raw")) == "raw"
    assert command_text(call("tool")) == ""


# _signals.full_command ---------------------------------------------------------------------------


def test_a_cli_named_tool_gets_its_name_in_front() -> None:
    assert full_command(call("kubectl", {"command": "get pods"})) == "kubectl get pods"
    assert full_command(call("kubectl", {"command": "  get pods  "})) == "kubectl get pods"
    assert full_command(call(" git ", {"command": "status"})) == "git status"


def test_a_command_that_already_names_the_program_is_left_alone() -> None:
    assert full_command(call("kubectl", {"command": "kubectl get pods"})) == "kubectl get pods"
    assert full_command(call("kubectl", {"command": "KUBECTL get pods"})) == "KUBECTL get pods"
    assert full_command(call("kUbectl", {"command": "kubectl get pods"})) == "kubectl get pods"


def test_a_program_whose_name_only_starts_like_the_tool_still_gets_the_prefix() -> None:
    # `go` the tool, `gofmt` the argument: the tool's program is not named yet
    assert full_command(call("go", {"command": "gofmt -l ."})) == "go gofmt -l ."
    assert full_command(call("git", {"command": "gitk"})) == "git gitk"
    assert full_command(call("git", {"command": "git\tstatus"})) == "git\tstatus"


@pytest.mark.parametrize("name", ["bash", "run_command", "exec", "eXec", "local_shell"])
def test_shell_tools_get_no_prefix(name: str) -> None:
    assert full_command(call(name, {"command": "ls -la"})) == "ls -la"


@pytest.mark.parametrize("name", ["My Tool", "Kubectl", "deploy.run", "9tool", ""])
def test_names_that_are_not_a_cli_get_no_prefix(name: str) -> None:
    assert full_command(call(name, {"command": "get pods"})) == "get pods"


# _signals.canonical_call ---------------------------------------------------------------------------


def test_a_canonical_call_sorts_keys_and_folds_whitespace() -> None:
    a = canonical_call(call("edit", {"b": "x   y", "a": 1}))
    assert a == 'edit:{"a":1,"b":"x y"}'
    assert canonical_call(call("edit", {"a": 1, "b": "x y"})) == a


def test_a_canonical_call_of_unserialisable_arguments_uses_their_text() -> None:
    assert canonical_call(call("t", {"a": {3}})) == "t:{'a': {3}}"


def test_a_canonical_call_without_parsed_arguments_uses_the_raw_text() -> None:
    assert canonical_call(call("t", None, raw="  ls   -la ")) == "t:ls -la"
    assert canonical_call(call("t")) == "t:"


# _signals.call_commands and the command argument --------------------------------------------------


def test_a_shell_call_is_parsed() -> None:
    assert programs(bash("ls -la && pytest -q")) == ["ls", "pytest"]


def test_the_shell_tool_name_is_matched_case_insensitively() -> None:
    assert programs(call(" BASH ", {"command": "frobnicate"})) == ["frobnicate"]


def test_a_tool_named_after_a_known_program_is_parsed() -> None:
    assert programs(call("kubectl", {"x": 1}, raw="get pods")) == ["kubectl"]


def test_an_empty_command_gives_no_commands() -> None:
    assert call_commands(bash("   ")) == []
    assert call_commands(call("My Tool")) == []


def test_an_unknown_tool_without_a_command_argument_gives_no_commands() -> None:
    assert call_commands(call("My Tool", {"path": "ls -la"}, raw="ls -la")) == []


@pytest.mark.parametrize("key", ["command", "cmd", "script"])
def test_a_command_line_argument_of_any_tool_is_parsed(key: str) -> None:
    assert programs(call("My Tool", {key: "frob -x"})) == ["frob"]


def test_a_single_word_argument_counts_only_when_it_is_a_known_program() -> None:
    assert programs(call("My Tool", {"command": "  ls "})) == ["ls"]
    assert programs(call("My Tool", {"command": "/usr/bin/ls"})) == ["ls"]
    assert programs(call("My Tool", {"command": "frobnicate"})) == []
    assert programs(call("My Tool", {"command": "/opt/frobnicate"})) == []


def test_a_blank_command_argument_falls_to_the_next_key() -> None:
    assert programs(call("mytool", {"command": "  ", "cmd": "frob -x"})) == ["mytool"]
    assert programs(call("My Tool", {"command": 7, "script": "frob -x"})) == ["frob"]


def test_a_non_dict_argument_is_no_command_line() -> None:
    assert programs(call("My Tool", ["ls -la"], raw="ls -la")) == []


# _signals.is_state_change / is_check --------------------------------------------------------------


def editor(name: str, command: Any) -> ToolCall:
    return call(name, {"command": command, "path": "/x.py"})


@pytest.mark.parametrize("verb", ["create", "str_replace", "insert", "write", "edit", "append", "undo_edit"])
def test_an_editor_write_verb_is_a_state_change(verb: str) -> None:
    assert is_state_change(editor("editor", verb))
    assert is_state_change(editor("editor", verb.upper()))
    assert not is_check(editor("editor", verb))


@pytest.mark.parametrize("verb", ["view", "read", "show", "list", "open", "find", "search"])
def test_an_editor_read_verb_is_neither_change_nor_check(verb: str) -> None:
    assert not is_state_change(editor("str_replace_editor", verb))
    assert not is_check(editor("view_file", verb))


def test_the_editor_verb_may_repeat_the_tool_name() -> None:
    assert is_state_change(editor("editor", "editor create /x.py"))
    assert not is_state_change(editor("str_replace_editor", "str_replace_editor view /x.py"))


def test_an_editor_command_without_a_verb_falls_back_to_the_tool_name() -> None:
    assert is_state_change(editor("str_replace_editor", "str_replace_editor"))
    assert is_state_change(editor("str_replace_editor", ""))
    assert is_state_change(editor("str_replace_editor", 5))
    assert is_check(editor("view_file", "view_file"))
    assert is_state_change(call("str_replace_editor", ["view"]))


def test_a_shell_write_is_a_state_change_and_a_read_is_not() -> None:
    assert is_state_change(bash("sed -i s/a/b/ x.py"))
    assert is_state_change(bash("frob > out.py"))
    assert not is_state_change(bash("ls -la"))


def test_known_commands_decide_over_the_tool_name() -> None:
    assert not is_state_change(call("deploy.run", {"command": "ls -la"}))
    assert not is_check(call("get.run", {"command": "sed -i s/a/b/ x.py"}))


def test_unknown_programs_leave_the_decision_to_the_tool_name() -> None:
    assert not is_state_change(bash("frob -x"))
    assert is_state_change(call("update.run", {"command": "frob -x"}))
    assert not is_check(bash("frob -x"))
    assert is_check(call("get.run", {"command": "frob -x"}))


@pytest.mark.parametrize(
    ("name", "change", "check"),
    [
        ("update_order", True, False),
        ("get_order", False, True),
        ("update_verify", True, True),
        ("lookup", False, False),
        # camelCase and spaced names (JS SDK and OpenAPI-style tools) say the same
        ("cancelBooking", True, False),
        ("CancelBooking", True, False),
        ("getOrderStatus", False, True),
        ("Restart Service", True, False),
        ("updateAndVerify", True, True),
        ("setup2Cancel", True, False),
        ("uploadedfiles", False, False),  # one word: no verb in it
    ],
)
def test_tool_names_say_change_or_check(name: str, change: bool, check: bool) -> None:
    tc = call(name, {"order_id": "A1"})
    assert (is_state_change(tc), is_check(tc)) == (change, check)


@pytest.mark.parametrize(
    ("command", "check"),
    [
        ("pytest -q", True),
        ("ls -la", True),
        ("sed -i s/a/b/ x.py && pytest -q", True),
        ("pytest -q && sed -i s/a/b/ x.py", False),
        ("sed -i s/a/b/ x.py && pytest -q && sed -i s/b/c/ y.py", False),
        ("sed -i s/a/b/ x.py && echo done", False),
        ("echo done", False),
        ("pytest -q && echo done", True),
    ],
)
def test_a_check_counts_only_after_the_last_change(command: str, check: bool) -> None:
    assert is_check(bash(command)) is check


def test_a_change_then_its_check_in_one_command_line() -> None:
    assert checks_after_own_change(bash("sed -i s/a/b/ x.py && pytest -q"))
    assert not checks_after_own_change(bash("pytest -q"))
    assert not checks_after_own_change(bash("sed -i s/a/b/ x.py"))


# _signals.is_test_run / is_status_probe -----------------------------------------------------------


@pytest.mark.parametrize("name", ["test", "tests", "run_tests", "run_test", "test_all", "x_tests_y"])
def test_test_tools_are_test_runs(name: str) -> None:
    assert is_test_run(call(name, {}))


@pytest.mark.parametrize("name", ["latest", "get_latest", "contest", "testing", "run_linter"])
def test_other_tools_are_not_test_runs(name: str) -> None:
    assert not is_test_run(call(name, {}))


def test_a_test_runner_command_is_a_test_run() -> None:
    assert is_test_run(bash("cd src && pytest -q"))
    assert not is_test_run(bash("ls -la"))


def test_a_status_probe_runs_only_status_commands() -> None:
    assert is_status_probe(bash("kubectl get pods"))
    assert is_status_probe(bash("ls && kubectl get pods"))
    assert not is_status_probe(bash("kubectl get pods && pytest -q"))
    assert not is_status_probe(bash("pytest -q && kubectl get pods"))
    assert not is_status_probe(call("lookup", {}))


# _signals.pods_unhealthy --------------------------------------------------------------------------

HEAD = "NAME   READY   STATUS    RESTARTS   AGE"


def pods(*rows: str) -> str:
    return "\n".join([HEAD, *rows])


@pytest.mark.parametrize(
    "status",
    [
        "CrashLoopBackOff",
        "Error",
        "ImagePullBackOff",
        "ErrImagePull",
        "OOMKilled",
        "Pending",
        "ContainerCreating",
        "CreateContainerConfigError",
        "Init:Error",
        "Init:CrashLoopBackOff",
        "Evicted",
        "Terminating",
    ],
)
def test_a_pod_in_a_bad_status_is_unhealthy(status: str) -> None:
    assert pods_unhealthy(pods(f"web-1   1/1   {status}   0   5m"))


@pytest.mark.parametrize(
    ("ready", "status", "bad"),
    [
        ("0/1", "Running", True),
        ("1/2", "Running", True),
        ("1/1", "Running", False),
        ("2/1", "Running", False),
        ("0/1", "Completed", False),
        ("n/a", "Running", False),
    ],
)
def test_a_pod_not_ready_is_unhealthy_unless_completed(ready: str, status: str, bad: bool) -> None:
    assert pods_unhealthy(pods(f"web-1   {ready}   {status}   0   5m")) is bad


def test_every_row_is_read_and_short_rows_skipped() -> None:
    assert pods_unhealthy(pods("web-1   1/1   Running   0   5m", "", "db-1", "db-2   0/1   Running   3   5m"))
    assert pods_unhealthy("\n\n" + pods("web-1   0/1   Running   0   5m"))
    assert not pods_unhealthy("NAME READY STATUS\nweb-1 0/1")


def test_output_that_is_not_a_pod_table_is_not_unhealthy() -> None:
    assert not pods_unhealthy("")
    assert not pods_unhealthy("  \n ")
    assert not pods_unhealthy("NAME   READY   PHASE\nweb-1   0/1   Error")
    assert not pods_unhealthy("NAME   STATE   STATUS\nweb-1   0/1   Error")
    assert not pods_unhealthy("web-1   0/1   Error\n" + HEAD)


# _signals.result_failed ----------------------------------------------------------------------------


def test_no_result_has_not_failed() -> None:
    assert not result_failed(None)
    assert not result_failed(Event(seq=0, kind="message", actor="agent", content="ERROR"))


def test_structural_failure_signals() -> None:
    assert result_failed(tool_result("all good", error=True), strict=True)
    assert result_failed(tool_result("all good", exit_code=2), strict=True)
    assert not result_failed(tool_result("all good", exit_code=0), strict=True)
    assert not result_failed(tool_result("all good", error=False, exit_code=None))


def test_a_test_summary_decides_over_failure_words() -> None:
    assert not result_failed(tool_result("ERROR: flaky\n5 passed, 0 failed"))
    assert result_failed(tool_result("===== 1 failed, 2 passed in 0.3s ====="), strict=True)
    assert not result_failed(tool_result("5 passed in 0.1s"), strict=True)


def test_a_bare_5xx_and_unhealthy_pods_fail_even_when_strict() -> None:
    assert result_failed(tool_result(" 503 \n"), strict=True)
    assert not result_failed(tool_result("5030"), strict=True)
    assert not result_failed(tool_result("200"), strict=True)
    assert result_failed(tool_result(pods("web-1   0/1   Running   0   5m")), strict=True)


def test_failure_words_count_unless_strict() -> None:
    out = tool_result("Traceback (most recent call last):\n  boom")
    assert result_failed(out)
    assert not result_failed(out, strict=True)
    assert not result_failed(tool_result("deployed fine"))
    assert not result_failed(tool_result(None))


def test_only_the_last_4000_characters_are_searched_for_failure_words() -> None:
    assert result_failed(tool_result("ERROR" + " " * 3995))
    assert not result_failed(tool_result("ERROR" + " " * 3996))


# _signals: log lines, submissions, agent texts, structure -----------------------------------------


@pytest.mark.parametrize(
    ("text", "log"),
    [
        ("[2025-01-17 11:36:43 INFO] Agent started", True),
        ("  2025-01-17T11:36:43 started", True),
        ("chatdev - INFO - phase done", True),
        ("runner - ERROR - failed", True),
        ("I fixed the bug in 2025-01-17's release.", False),
        ("chatdev - NOTICE - x", False),
    ],
)
def test_log_lines(text: str, log: bool) -> None:
    assert is_log_line(text) is log


@pytest.mark.parametrize("key", ["summary", "message", "answer", "result", "final_answer", "text", "output"])
def test_each_submission_key_is_read(key: str) -> None:
    assert submitted_text({"other": "no", key: "Fixed it."}) == "Fixed it."


def test_a_submission_without_text_has_none() -> None:
    assert submitted_text({"summary": 3, "answer": "42"}) == "42"
    assert submitted_text({"summary": None}) is None
    assert submitted_text(["Fixed it."]) is None
    assert submitted_text("Fixed it.") is None


def test_agent_texts_are_live_agent_messages_reasoning_plans_and_terminations() -> None:
    t = T().user("Fix it.").say("Looking.").say("I think so.", kind="reasoning").say("1. x", kind="plan")
    t.say("Done.", kind="termination").call("bash", command="ls").result("a.py").say("")
    t.event(kind="message", actor="agent", role="assistant", content="old", is_copied_context=True)
    t.event(kind="message", actor="agent", role="user", content="relay")
    assert [e.seq for e in agent_texts(t.build())] == [1, 2, 3, 4]


def test_structured_enough_needs_segmented_events() -> None:
    t = T().user("a").say("b")
    assert not structured_enough(t.build())
    t.say("c")
    assert structured_enough(t.build())
    assert not structured_enough(t.build(), min_events=4)
    assert not structured_enough(t.build(segmentation="raw_unsegmented"))
    assert structured_enough(t.build(segmentation="heuristic"))


# _precision.confidence_for --------------------------------------------------------------------------


TABLE: dict[str, Any] = {
    "split": "dev",
    "generated": "2026-11-27",
    "detectors": {
        "good": {"present": {"right": 17, "n": 17}, "absent": {"right": 1, "n": 5}},
        "few": {"present": {"right": 4, "n": 4}, "absent": {"right": 3.0, "n": 9}},
        "half": {"present": {"right": 9, "n": "9"}},
    },
}


@pytest.fixture
def table(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    data: dict[str, Any] = {k: v for k, v in TABLE.items()}
    monkeypatch.setattr(_precision, "precision_table", lambda: data)
    return data


def test_a_measured_precision_is_smoothed(table: dict[str, Any]) -> None:
    c = confidence_for("good", "present")
    assert c.value == 0.947
    assert c.origin == "measured: precision 17/17 right, 0.95 smoothed (dev, 2026-11-27)"


def test_a_measured_negative_predictive_value_at_the_minimum_count(table: dict[str, Any]) -> None:
    assert MIN_N == 5
    c = confidence_for("good", "absent")
    assert (c.value, c.origin) == (
        0.286,
        "measured: negative predictive value 1/5 right, 0.29 smoothed (dev, 2026-11-27)",
    )


def test_too_few_or_malformed_measurements_give_the_prior(table: dict[str, Any]) -> None:
    assert PRIOR == 0.5
    c = confidence_for("few", "present")
    assert (c.value, c.origin) == (0.5, "prior 0.5 (only 4 verdicts measured)")
    assert confidence_for("few", "absent").origin == "prior 0.5 (only 9 verdicts measured)"
    assert confidence_for("half", "present").origin == "prior 0.5 (only 9 verdicts measured)"


def test_an_unmeasured_detector_or_side_gives_the_prior(table: dict[str, Any]) -> None:
    assert confidence_for("nobody", "present").origin == "prior 0.5 (never measured)"
    c = confidence_for("half", "absent")
    assert (c.value, c.origin) == (0.5, "prior 0.5 (never measured)")


def test_a_table_without_its_provenance_says_so(table: dict[str, Any]) -> None:
    del table["split"], table["generated"]
    assert confidence_for("good", "present").origin == "measured: precision 17/17 right, 0.95 smoothed (?, ?)"


def test_a_table_without_detectors_gives_the_prior(monkeypatch: pytest.MonkeyPatch) -> None:
    for data in (
        {},
        {"detectors": None},
        {"detectors": {"good": None}},
        {"detectors": {"good": {"present": None}}},
    ):
        monkeypatch.setattr(_precision, "precision_table", lambda data=data: data)
        assert confidence_for("good", "present") == _precision.Confidence(0.5, "prior 0.5 (never measured)")


# _base: verdict helpers ------------------------------------------------------------------------------


def test_a_present_verdict_carries_evidence_and_its_measured_confidence(table: dict[str, Any]) -> None:
    ev = Evidence(quote="x", seq_start=2, seq_end=3)
    v = present("FM-1.3", "good", iter([ev]), "looped")
    assert v == ModeVerdict(
        code="FM-1.3",
        verdict="present",
        confidence=0.947,
        evidence=[ev],
        rationale="looped",
        source="rule:good",
        extra={"confidence_from": "measured: precision 17/17 right, 0.95 smoothed (dev, 2026-11-27)"},
    )


def test_an_absent_verdict_carries_the_negative_predictive_value(table: dict[str, Any]) -> None:
    v = absent("FM-1.3", "good", "no loop")
    assert v == ModeVerdict(
        code="FM-1.3",
        verdict="absent",
        confidence=0.286,
        rationale="no loop",
        source="rule:good",
        extra={
            "confidence_from": "measured: negative predictive value 1/5 right, 0.29 smoothed (dev, 2026-11-27)"
        },
    )


def test_an_unknown_verdict_has_no_confidence() -> None:
    v = unknown("FM-2.1", "reset", "no structure")
    assert v == ModeVerdict(code="FM-2.1", verdict="unknown", rationale="no structure", source="rule:reset")


def test_a_quote_is_one_line_and_cut_at_the_limit() -> None:
    assert quote(None) is None
    assert quote("") is None
    assert quote("  a\n\tb  c ") == "a b c"
    assert quote("x" * 200) == "x" * 200
    assert quote("x" * 201) == "x" * 199 + "…"
    assert quote("abcdef", limit=5) == "abcd…"
    assert quote("abcde", limit=5) == "abcde"


def test_evidence_spans_its_events_and_quotes_the_first() -> None:
    t = T().user("Fix it.").say("Step one.", actor="coder").say("Step two.", actor="reviewer")
    events = t.build().events
    assert evidence_at(events[1:3], note="two steps") == Evidence(
        quote="Step one.", seq_start=1, seq_end=2, agent="coder", note="two steps"
    )
    assert evidence_at(events[2:3], text="given  text") == Evidence(
        quote="given text", seq_start=2, seq_end=2, agent="reviewer"
    )
    assert evidence_at(events[1:2], text="").quote is None


def test_live_events_leave_out_copied_context() -> None:
    t = T().call("bash", copied=True, command="ls").result("a", copied=True).say("Now.").sh("ls")
    assert [e.seq for e in live_events(t.build())] == [2, 3, 4]


# _base: registry ------------------------------------------------------------------------------------


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """A copy of the discovered registry, so that detectors registered by a test go away after it."""
    detectors()
    monkeypatch.setattr(_base, "_DETECTORS", dict(_base._DETECTORS))


@pytest.mark.usefixtures("registry")
def test_a_registered_detector_is_found_by_taxonomy_and_code() -> None:

    def judge(trace: Trace) -> ModeVerdict:
        return unknown("X-1", "judge", f"never on {trace.trace_id}")

    judge.__doc__ = "\n    Says unknown.\n    "

    def bare(trace: Trace) -> ModeVerdict:
        return unknown("X-2", "bare", "never")

    assert detector("X-1", "judge", taxonomy="mine")(judge) is judge
    detector("X-2", "bare", "mine")(bare)
    found = detector_for("mine", "X-1")
    assert found == Detector(code="X-1", name="judge", fn=judge, description="Says unknown.", taxonomy="mine")
    assert found is not None and found.key == ("mine", "X-1")
    assert found(T().build()).rationale == "never on t"
    assert [d.code for d in detectors("mine")] == ["X-1", "X-2"]
    assert detectors("mine")[1].description == ""
    assert detector_for("mast", "X-1") is None
    assert detector_for("mine", "FM-1.3") is None


@pytest.mark.usefixtures("registry")
def test_a_detector_binds_to_mast_by_default() -> None:

    def fn(trace: Trace) -> ModeVerdict:
        return unknown("FM-9.9", "nine", "never")

    detector("FM-9.9", "nine")(fn)
    d = detector_for(MAST, "FM-9.9")
    assert d is not None and d.taxonomy == "mast" and d.name == "nine"
    assert Detector(code="A", name="a", fn=fn, description="").taxonomy == "mast"


def test_detectors_are_listed_by_taxonomy_then_code() -> None:
    every = detectors()
    assert [d.key for d in every] == sorted(d.key for d in every)
    mast = detectors(MAST)
    assert mast == detectors("mast") and len(mast) == 13
    assert {d.taxonomy for d in mast} == {"mast"}
    assert detectors("no-such-taxonomy") == []


def test_the_detector_modules_are_discovered_on_first_use(monkeypatch: pytest.MonkeyPatch) -> None:
    """From a registry that has seen no detector module, the first look-up imports them all."""
    public = [m for m in list(sys.modules) if m.startswith("mastkit.annotate.detectors.")]
    public = [m for m in public if not m.rsplit(".", 1)[-1].startswith("_")]
    package = sys.modules["mastkit.annotate.detectors"]
    for m in public:
        monkeypatch.delitem(sys.modules, m)
        monkeypatch.delattr(package, m.rsplit(".", 1)[-1], raising=False)
    monkeypatch.setattr(_base, "_DETECTORS", {})
    monkeypatch.setattr(_base, "_DISCOVERED", False)
    d = detector_for("mast", "FM-1.3")
    assert d is not None and d.name == "step_repetition"
    assert len(detectors("mast")) == 13
    assert _base._DISCOVERED is True
