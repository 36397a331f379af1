"""The verification gate: no success claim without evidence checks passing after the last change."""

from __future__ import annotations

from mastkit.guard import CallableCheck, Guardian, RunConfig, VerificationConfig, VerificationGate
from mastkit.traces import Event

from ._kit import call, only

CHECKS = {"checks": [{"name": "tests", "tool": "run_tests", "exit_code": 0},
                     {"name": "health", "tool": "curl", "output_regex": r"\b200\b"}]}  # fmt: skip


def gate() -> VerificationGate:
    return VerificationGate(VerificationConfig.model_validate(CHECKS))


def test_a_claim_with_no_check_run_is_refused() -> None:
    g = only(gate())
    call(g, "edit_file", {"p": 1}, "edited")
    d = g.check_stop("Fixed!")
    assert d.action == "redirect" and d.mode == "FM-3.3" and d.guard == "verification"
    assert "'tests' has not been run since the last change" in d.message and "'health'" in d.message
    assert not g.state.stopped


def test_checks_must_pass_and_run_after_the_last_change() -> None:
    g = only(gate())
    call(g, "edit_file", {"p": 1}, "edited")
    call(g, "run_tests", {}, "3 passed", exit_code=0)
    call(g, "curl", {}, "HTTP 200 OK")
    call(g, "edit_file", {"p": 2}, "edited")  # a later change makes the evidence stale
    d = g.check_tool_call("done", {})
    assert d.action == "redirect" and "has not been run since the last change" in d.message
    call(g, "run_tests", {"n": 2}, "1 failed", exit_code=1)
    call(g, "curl", {"n": 2}, "HTTP 200 OK")
    d = g.check_stop()
    assert d.action == "redirect" and "'tests' failed" in d.message
    call(g, "run_tests", {"n": 3}, "3 passed", exit_code=0)
    assert g.check_stop("Fixed and verified.").action == "allow"


def test_evidence_before_any_change_counts_when_nothing_changed() -> None:
    g = only(gate())
    call(g, "run_tests", {}, "ok", exit_code=0)
    call(g, "curl", {}, "200")
    assert g.check_stop().action == "allow"


def test_require_change_refuses_a_claim_when_nothing_was_done() -> None:
    g = only(VerificationGate(VerificationConfig.model_validate({**CHECKS, "require_change": True})))
    call(g, "run_tests", {}, "ok", exit_code=0)
    call(g, "curl", {}, "200")
    assert g.check_stop().action == "redirect"


def test_only_claims_are_gated() -> None:
    g = only(gate())
    call(g, "edit_file", {}, "edited")
    assert g.check_message("working on it").action == "allow"
    assert call(g, "read_file", {}, "x") == "allow"


def test_a_user_callable_check_and_args_regex() -> None:
    def healthy(result: Event, call_event: Event | None) -> bool:
        return "green" in (result.tool_result.output or "") if result.tool_result else False

    cfg = VerificationConfig.model_validate(
        {"checks": [{"name": "pytest", "tool": "bash", "args_regex": "pytest", "exit_code": 0}]}
    )
    g = Guardian(
        [VerificationGate(cfg, callables=[CallableCheck("dashboard", "status", healthy)])],
        config=RunConfig(state_changing_tools=["edit"]), stamp_times=False,
    )  # fmt: skip
    call(g, "edit", {}, "ok")
    call(g, "bash", {"cmd": "ls"}, "files", exit_code=0)  # not the pytest call
    call(g, "status", {}, "red")
    d = g.check_stop()
    assert "'pytest' has not been run" in d.message and "'dashboard' failed" in d.message
    call(g, "bash", {"cmd": "pytest -q"}, "5 passed", exit_code=0)
    call(g, "status", {"again": True}, "green")
    assert g.check_stop().action == "allow"
