"""The clarification branch: ambiguity routes to a question instead of an assumption."""

from __future__ import annotations

from mastkit.guard import ClarificationGuard, RunConfig

from ._kit import call, only

CONFIG = RunConfig(state_changing_tools=["edit", "restart"], ask_tools=["ask_user"])


def test_several_matches_then_a_change_is_redirected_to_asking() -> None:
    g = only(ClarificationGuard(), config=CONFIG)
    call(g, "search", {"q": "api"}, "found 3 matches: api-a api-b api-c")
    assert call(g, "read", {"p": "x"}, "...") == "allow"  # reading more is fine
    d = g.check_tool_call("restart", {"svc": "api-a"})
    assert d.action == "redirect" and d.mode == "FM-2.2" and "several candidates" in d.message
    assert g.check_stop("Done").action == "redirect"


def test_asking_or_narrowing_closes_the_signal() -> None:
    g = only(ClarificationGuard(), config=CONFIG)
    call(g, "search", {"q": "api"}, "Multiple matches found")
    call(g, "ask_user", {"question": "Which api?"}, "sent")
    g.record_user("api-b")
    assert call(g, "restart", {"svc": "api-b"}) == "allow"
    g = only(ClarificationGuard(), config=CONFIG)
    call(g, "search", {"q": "api"}, "found 2 results")
    call(g, "search", {"q": "api primary"}, "1 result: api-b")  # the same tool answers clearly
    assert call(g, "restart", {"svc": "api-b"}) == "allow"


def test_a_question_message_to_the_user_counts_as_asking() -> None:
    g = only(ClarificationGuard(), config=CONFIG)
    call(g, "search", {}, "ambiguous name")
    g.check_message("Which one do you mean, eu or us?")
    assert call(g, "edit", {}) == "allow"


def test_a_permission_error_is_a_signal_but_a_plain_error_is_not() -> None:
    g = only(ClarificationGuard(), config=CONFIG)
    call(g, "read", {}, "open(): Permission denied", is_error=True)
    assert g.check_tool_call("edit", {}).action == "redirect"
    g = only(ClarificationGuard(), config=CONFIG)
    call(g, "read", {}, "Permission denied", is_error=False)  # not an error result: no signal
    call(g, "run", {}, "Traceback: KeyError", is_error=True)
    assert call(g, "edit", {}) == "allow"


def test_an_open_question_in_the_task_holds_until_answered() -> None:
    g = only(ClarificationGuard(), config=CONFIG, task="Restart the workers — which region should I pick?")
    assert call(g, "read", {}) == "allow"
    d = g.check_tool_call("restart", {"region": "eu"})
    assert d.action == "redirect" and "which region should I pick?" in d.message
    g.record_user("eu-west")
    assert call(g, "restart", {"region": "eu-west"}) == "allow"


def test_a_task_without_an_open_question_is_no_signal() -> None:
    g = only(ClarificationGuard(), config=CONFIG, task="Restart the eu workers, which are slow.")
    assert call(g, "restart", {}) == "allow"
