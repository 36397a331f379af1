"""Edge cases of FM-1.2 (disobey_role) and FM-2.6 (reasoning_action_mismatch) that mutation
testing found untested: how tool lists and prohibitions are read, whose steps count, and which
announcement is compared with which call."""

from __future__ import annotations

from typing import Any

import pytest

from mastkit.annotate.model import ModeVerdict
from mastkit.traces.model import AgentInfo, ToolCall

from ._tracebuild import T, verdict


def fm12(t: T, *agents: AgentInfo) -> ModeVerdict:
    return verdict("FM-1.2", t.build(agents=list(agents)))


def spans(v: ModeVerdict) -> list[tuple[int | None, int | None]]:
    return [(e.seq_start, e.seq_end) for e in v.evidence]


def notes(v: ModeVerdict) -> list[str | None]:
    return [e.note for e in v.evidence]


# FM-1.2: the tool list ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "tools",
    [["search"], [{"name": "search"}], [{"type": "function", "function": {"name": "search"}}]],
)
def test_each_form_of_a_tool_list_names_the_tool(tools: list[Any]) -> None:
    t = T().user("q").say("Searching.").call("search", query="x").result("r")
    t.call("delete_user", id="7").result("ok")
    v = fm12(t, AgentInfo(name="agent", tools=tools))
    assert v.verdict == "present"
    assert spans(v) == [(4, 4)]
    assert notes(v) == ["agent calls delete_user, which is not among its tools"]
    assert v.rationale == "agent calls delete_user, which is not among its tools"
    assert v.evidence[0].agent == "agent"


@pytest.mark.parametrize(
    "tools", [[], [{"type": "function"}], [{"name": 7}], [{"function": {"name": None}}], [3]]
)
def test_a_tool_list_without_names_is_no_spec(tools: list[Any]) -> None:
    t = T().user("q").call("search", query="x").result("r")
    v = fm12(t, AgentInfo(name="agent", tools=tools))
    assert (v.verdict, v.rationale) == (
        "unknown",
        "no agent has a checkable role spec (tool list or stated prohibition)",
    )


@pytest.mark.parametrize(
    ("listed", "called"),
    [
        ("search", "search"),
        ("search", "Search"),
        ("Search", "search"),
        ("web_search_preview", "web_search"),
        ("search", "search_v2"),
        ("search", "docs.search"),
    ],
)
def test_variants_of_a_listed_tool_are_allowed(listed: str, called: str) -> None:
    t = T().user("q").say("Looking.").call(called, query="x").result("r")
    v = fm12(t, AgentInfo(name="agent", tools=[listed]))
    assert (v.verdict, v.rationale) == ("absent", "1 agent(s) with a checkable role spec keep to it")


@pytest.mark.parametrize(
    ("listed", "called"),
    [("search", "searcher"), ("search", "research"), ("web_search", "search"), ("search", "docs_search")],
)
def test_a_name_that_only_resembles_a_listed_tool_is_not_allowed(listed: str, called: str) -> None:
    t = T().user("q").call(called, query="x").result("r")
    v = fm12(t, AgentInfo(name="agent", tools=[listed]))
    assert v.verdict == "present" and spans(v) == [(1, 1)]


def test_only_the_agents_own_calls_are_held_to_its_tool_list() -> None:
    t = T().user("q").call("search", actor="Finder", query="x").result("r")
    t.call("delete_user", actor="Admin", id="7").result("ok")
    v = fm12(t, AgentInfo(name="Finder", tools=["search"]), AgentInfo(name="Admin"))
    assert (v.verdict, v.rationale) == ("absent", "1 agent(s) with a checkable role spec keep to it")


def test_every_call_outside_the_list_is_evidence() -> None:
    t = T().user("q").call("rm_user", id="1").result("ok").call("search", query="x").result("r")
    t.call("drop_table", table="t").result("ok")
    v = fm12(t, AgentInfo(name="agent", tools=["search"]))
    assert spans(v) == [(1, 1), (5, 5)]
    assert v.rationale == (
        "agent calls rm_user, which is not among its tools; agent calls drop_table, which is not among its tools"
    )


# FM-1.2: prohibitions in the role description and the system prompt --------------------------

CODE_BLOCK = "```python\n" + "\n".join(f"x{i} = {i}" for i in range(10)) + "\n```"


def test_a_prohibition_opening_the_system_prompt_is_read() -> None:
    t = T().user("fix it").say("On it.").call("edit_file", path="a.py", old="x", new="y").result("ok")
    v = fm12(t, AgentInfo(name="agent", system_prompt="Never edit files. Report what you find."))
    assert v.verdict == "present" and spans(v) == [(2, 2)]
    assert notes(v) == ["agent changes state, although its role says 'Never edit files'"]


def test_a_prohibition_after_a_conditional_sentence_is_read() -> None:
    t = T().user("fix it").call("edit_file", path="a.py", old="x", new="y").result("ok")
    prompt = "If you are unsure, ask the user. You never edit files."
    v = fm12(t, AgentInfo(name="agent", system_prompt=prompt))
    assert v.verdict == "present" and notes(v) == [
        "agent changes state, although its role says 'never edit files'"
    ]


def test_a_prohibition_on_a_line_after_a_conditional_line_is_read() -> None:
    t = T().user("fix it").call("edit_file", path="a.py", old="x", new="y").result("ok")
    prompt = "When asked, review the diff\nYou never edit files"
    assert fm12(t, AgentInfo(name="agent", system_prompt=prompt)).verdict == "present"


def test_the_role_description_and_the_system_prompt_are_both_read() -> None:
    t = T().user("fix it").sh("pytest -q", "3 passed").call("edit_file", path="a.py", old="x", new="y")
    t.result("ok")
    agent = AgentInfo(
        name="agent", role_description="Reviewer. Never edits files.", system_prompt="Be brief."
    )
    v = fm12(t, agent)
    assert spans(v) == [(3, 3)]
    agent = AgentInfo(name="agent", role_description="Reviewer.", system_prompt="Do not run any commands.")
    v = fm12(t, agent)
    assert spans(v) == [(1, 1)]
    assert notes(v) == ["agent runs a command, although its role says 'Do not run any commands'"]


def test_each_prohibition_is_checked_and_reported() -> None:
    t = T().user("go").say("Plan: look first.").sh("ls", "a.py").say(f"Here:\n{CODE_BLOCK}")
    t.call("edit_file", path="a.py", old="x", new="y").result("ok").say("Final answer: done.")
    prompt = (
        "You never edit files. You do not write any code. You do not run commands. "
        "You never give the final answer."
    )
    v = fm12(t, AgentInfo(name="agent", system_prompt=prompt))
    assert v.verdict == "present"
    assert spans(v) == [(5, 5), (4, 4), (2, 2), (7, 7)]
    assert notes(v) == [
        "agent changes state, although its role says 'never edit files'",
        "agent writes code itself, although its role says 'do not write any code'",
        "agent runs a command, although its role says 'do not run commands'",
        "agent writes the final answer, although its role says 'never give the final answer'",
    ]
    assert v.rationale == "; ".join(n or "" for n in notes(v))


ALL_RULES = (
    "You never edit files. You do not write any code. You do not run commands. "
    "You never give the final answer."
)


def test_each_prohibition_kept_is_absent() -> None:
    short = "```python\nx = 1\n```"
    t = T().user("go").say(f"The fix is small:\n{short}").say("The answer is probably 4.")
    t.call("read_file", path="a.py").result("x = 1")
    t.say("Final answer: 4", actor="Writer").say(f"Code:\n{CODE_BLOCK}", actor="Writer")
    t.call("edit_file", actor="Writer", path="a.py", old="x", new="y").result("ok").sh("ls", actor="Writer")
    v = fm12(t, AgentInfo(name="agent", system_prompt=ALL_RULES), AgentInfo(name="Writer"))
    assert (v.verdict, v.rationale) == ("absent", "1 agent(s) with a checkable role spec keep to it")


@pytest.mark.parametrize(
    "prompt",
    [
        "You never edit files.",
        "You do not write any code.",
        "You do not run commands.",
        "You never give the final answer.",
    ],
)
def test_one_prohibition_alone_makes_the_spec_checkable(prompt: str) -> None:
    t = T().user("go").say("Looking into it.").call("read_file", path="a.py").result("x = 1")
    v = fm12(t, AgentInfo(name="agent", system_prompt=prompt))
    assert (v.verdict, v.rationale) == ("absent", "1 agent(s) with a checkable role spec keep to it")


def test_a_final_answer_only_in_reasoning_is_not_written() -> None:
    t = T().user("go").say("Final answer: 4", kind="reasoning").say("Handing over to the writer.")
    v = fm12(t, AgentInfo(name="agent", system_prompt="You never give the final answer."))
    assert v.verdict == "absent"


def test_code_only_in_reasoning_is_not_written() -> None:
    t = T().user("go").say(f"Draft:\n{CODE_BLOCK}", kind="reasoning").say("Please write it, Coder.")
    v = fm12(t, AgentInfo(name="agent", system_prompt="You do not write any code."))
    assert v.verdict == "absent"


def test_a_message_in_the_agents_name_but_not_by_it_is_not_its_step() -> None:
    t = T().user("go").event(kind="message", actor="agent", role="user", content="Final answer: 4")
    t.event(kind="message", actor="agent", role="tool", content="Final answer: 4")
    v = fm12(t, AgentInfo(name="agent", system_prompt="You never give the final answer."))
    assert v.verdict == "absent"


def test_only_the_first_breach_of_a_prohibition_is_evidence() -> None:
    t = T().user("go").sh("ls", "a.py").sh("pytest -q", "ok")
    v = fm12(t, AgentInfo(name="agent", system_prompt="You do not run commands."))
    assert spans(v) == [(1, 1)]


def test_breaches_of_several_agents_are_all_reported() -> None:
    t = T().user("go").sh("ls", actor="Reviewer").call("delete_user", actor="Finder", id="7").result("ok")
    reviewer = AgentInfo(name="Reviewer", role_description="Reviews the code; does not run code.")
    finder = AgentInfo(name="Finder", tools=["search"])
    v = fm12(t, reviewer, finder)
    assert v.verdict == "present"
    assert [(e.agent, e.seq_start) for e in v.evidence] == [("Reviewer", 1), ("Finder", 3)]
    assert v.rationale == (
        "Reviewer runs a command, although its role says 'does not run code'; "
        "Finder calls delete_user, which is not among its tools"
    )


def test_agents_with_a_checkable_spec_are_counted() -> None:
    t = T().user("go").call("search", actor="Finder", query="x").result("r").say("Done.", actor="Writer")
    agents = (
        AgentInfo(name="Finder", tools=["search"]),
        AgentInfo(name="Reviewer", role_description="Reviews; never edits files."),
        AgentInfo(name="Writer", role_description="Writes the report."),
    )
    v = fm12(t, *agents)
    assert (v.verdict, v.rationale) == ("absent", "2 agent(s) with a checkable role spec keep to it")


def test_an_agent_with_only_free_text_responsibilities_is_unknown() -> None:
    t = T().user("go").sh("rm -rf build").say("Final answer: done")
    v = fm12(t, AgentInfo(name="agent", role_description="Builds the project.", system_prompt="Be careful."))
    assert (v.verdict, v.rationale) == (
        "unknown",
        "no agent has a checkable role spec (tool list or stated prohibition)",
    )


def test_a_copied_call_is_not_a_breach() -> None:
    t = T().user("go").call("delete_user", copied=True, id="7").result("ok", copied=True)
    t.call("search", query="x").result("r")
    v = fm12(t, AgentInfo(name="agent", tools=["search"]))
    assert v.verdict == "absent"


# FM-2.6: announced a look, changed state instead ---------------------------------------------


def fm26(t: T) -> ModeVerdict:
    return verdict("FM-2.6", t.build())


EDIT: dict[str, Any] = {"path": "app.py", "old": "a", "new": "b"}
TOO_FEW = "too few explicit announcements of the next action to compare"


@pytest.mark.parametrize("kind", ["message", "reasoning"])
def test_a_look_announced_then_a_change_is_a_mismatch(kind: str) -> None:
    t = T().user("fix it").say("First I'll check the config before anything else.", kind=kind)
    t.call("edit_file", **EDIT).result("ok")
    v = fm26(t)
    assert v.verdict == "present" and spans(v) == [(1, 2)]
    assert notes(v) == ["says it will check first, changes state instead"]
    assert v.evidence[0].quote == "I'll check"
    assert v.rationale == "says it will check first, changes state instead"


def test_a_look_announced_then_a_read_is_no_mismatch() -> None:
    t = T().user("fix it").say("I'll read the config.").call("read_file", path="app.py").result("x")
    t.call("edit_file", **EDIT).result("ok")
    assert (fm26(t).verdict, fm26(t).rationale) == ("unknown", TOO_FEW)


@pytest.mark.parametrize("kind", ["message", "reasoning"])
def test_a_look_announced_then_more_words_before_a_change_is_no_mismatch(kind: str) -> None:
    t = T().user("fix it").say("I'll inspect the handler.").say("It is clearly the timeout.", kind=kind)
    t.call("edit_file", **EDIT).result("ok")
    assert fm26(t).verdict == "unknown"


def test_an_empty_message_between_a_look_and_a_change_does_not_count() -> None:
    t = T().user("fix it").say("I'll inspect the handler.").say("")
    t.call("edit_file", **EDIT).result("ok")
    assert spans(fm26(t)) == [(1, 3)]


def test_another_agents_steps_after_a_look_do_not_count() -> None:
    t = T().user("fix it").say("I'll inspect the handler.").say("Go ahead.", actor="Lead")
    t.call("edit_file", **EDIT).result("ok")
    assert spans(fm26(t)) == [(1, 3)]
    t = (
        T()
        .user("fix it")
        .say("I'll inspect the handler.")
        .call("edit_file", actor="Lead", **EDIT)
        .result("ok")
    )
    t.call("read_file", path="app.py").result("x")
    assert fm26(t).verdict == "unknown"


def test_a_look_with_no_step_after_it_is_no_mismatch() -> None:
    t = T().user("fix it").call("read_file", path="app.py").result("x").say("I'll review the diff now.")
    assert fm26(t).verdict == "unknown"


# FM-2.6: announced a change of one file, changed another --------------------------------------


def test_a_change_of_another_file_than_announced_is_a_mismatch() -> None:
    t = T().user("fix it").say("I'll fix httpkit/retry.py so the backoff is capped.")
    t.sh("sed -i s/a/b/ httpkit/client.py")
    v = fm26(t)
    assert v.verdict == "present" and spans(v) == [(1, 2)]
    assert notes(v) == ["says it will change httpkit/retry.py, changes httpkit/client.py"]


def test_all_announced_and_touched_files_are_named() -> None:
    t = T().user("fix it").say("Now I will update a.py and b.py together.")
    t.sh("sed -i s/x/y/ d.py c.py")
    assert notes(fm26(t)) == ["says it will change a.py, b.py, changes c.py, d.py"]


@pytest.mark.parametrize(
    ("said", "touched"),
    [("retry.py", "httpkit/retry.py"), ("httpkit/retry.py", "retry.py"), ("a.py", "a.py")],
)
def test_the_same_file_named_with_or_without_its_directory_is_no_mismatch(said: str, touched: str) -> None:
    t = T().user("fix it").say(f"I'll fix {said} now.").sh(f"sed -i s/a/b/ {touched}")
    assert fm26(t).verdict == "unknown"


def test_a_file_whose_name_only_ends_like_the_announced_one_is_another_file() -> None:
    t = T().user("fix it").say("I'll fix try.py now.").sh("sed -i s/a/b/ retry.py")
    assert fm26(t).verdict == "present"


def test_the_next_change_is_compared_not_a_read_or_another_agents_change() -> None:
    t = T().user("fix it").say("I'll fix retry.py now.").sh("cat retry.py", "x")
    t.sh("sed -i s/a/b/ other.py", actor="Lead").sh("sed -i s/a/b/ client.py")
    v = fm26(t)
    assert spans(v) == [(1, 6)]


def test_an_announced_change_never_made_is_no_mismatch() -> None:
    t = T().user("fix it").sh("ls", "a.py").say("I'll fix retry.py now.")
    assert fm26(t).verdict == "unknown"


def test_a_change_that_names_no_file_is_no_mismatch() -> None:
    t = T().user("fix it").say("I'll fix retry.py now.").sh("kubectl rollout restart deploy/api")
    assert fm26(t).verdict == "unknown"


def test_a_file_named_only_in_the_raw_arguments_is_touched() -> None:
    raw = '{"path": "client.py", "diff": "-a\\n+b"}'
    call = ToolCall(name="apply_patch", call_id="c2", arguments={"diff": "-a\n+b"}, arguments_raw=raw)
    t = (
        T()
        .user("fix it")
        .say("I'll fix retry.py now.")
        .event(kind="tool_call", actor="agent", role="assistant", tool_call=call)
    )
    assert notes(fm26(t)) == ["says it will change retry.py, changes client.py"]


@pytest.mark.parametrize(("pad", "seen"), [(285, True), (286, False)])
def test_files_are_read_in_the_300_characters_from_the_announcement(pad: int, seen: bool) -> None:
    # "I'll fix " (9) + pad + "z/a.py" (6): with pad 285 the path's last character is the 300th
    text = "I'll fix " + "w" * (pad - 1) + " z/a.py"
    t = T().user("fix it").say("Plan. " + text).sh("sed -i s/a/b/ z/b.py")
    assert (fm26(t).verdict == "present") is seen


# FM-2.6: announced a tool or a command, used another --------------------------------------------


def with_tools() -> T:
    """A run whose tools are read_file and search."""
    return (
        T().user("q").call("read_file", path="notes.md").result("notes").call("search", query="x").result("r")
    )


@pytest.mark.parametrize("kind", ["message", "reasoning"])
def test_a_tool_announced_and_another_called_is_a_mismatch(kind: str) -> None:
    t = with_tools().say("Now I will use read_file to open the report.", kind=kind).call("search", query="y")
    v = fm26(t)
    assert v.verdict == "present" and spans(v) == [(5, 6)]
    assert notes(v) == ["says it will use read_file, calls search"]
    assert v.rationale == "says it will use read_file, calls search"


@pytest.mark.parametrize(("words", "seen"), [(6, True), (7, False)])
def test_a_tool_is_looked_for_in_the_seven_words_after_the_verb(words: int, seen: bool) -> None:
    filler = " ".join(["it"] * words)
    t = with_tools().say(f"I will use {filler} read_file now").call("search", query="y")
    assert (fm26(t).verdict == "present") is seen


@pytest.mark.parametrize(("length", "seen"), [(108, True), (109, False)])
def test_a_tool_is_looked_for_in_the_120_characters_after_the_verb(length: int, seen: bool) -> None:
    # the window opens on the verb's last letter: "e " (2) + filler + " " + "read_file" (9)
    t = with_tools().say(f"I will use {'w' * length} read_file now").call("search", query="y")
    assert (fm26(t).verdict == "present") is seen


def test_a_backticked_tool_is_read_beyond_the_seven_words() -> None:
    t = with_tools().say("I will use the tool that we talked about in the meeting, `read_file`.")
    t.call("search", query="y")
    assert notes(fm26(t)) == ["says it will use read_file, calls search"]


def test_a_backticked_command_announced_and_another_run_is_a_mismatch() -> None:
    t = T().user("q").say("I will run `cd src && make build && pytest -q` next.").sh("npm ci && npm test")
    v = fm26(t)
    assert spans(v) == [(1, 2)]
    assert notes(v) == ["says it will run 'make build / pytest…', runs 'npm ci / npm test…'"]


@pytest.mark.parametrize(("pad", "seen"), [(272, True), (273, False)])
def test_a_command_is_read_in_the_300_characters_from_the_announcement(pad: int, seen: bool) -> None:
    # "I will run " (11) + pad + " " + "`kubectl logs x`" (16): with pad 272 it ends at the 300th
    t = T().user("q").say("Plan. I will run " + "w" * pad + " `kubectl logs x`").sh("kubectl get pods")
    assert (fm26(t).verdict == "present") is seen


@pytest.mark.parametrize("cmd", ["`pytest`", "`frobnicate --all`"])
def test_a_single_word_or_an_unknown_program_is_no_announced_command(cmd: str) -> None:
    t = T().user("q").say(f"I will run {cmd} now.").sh("make test")
    t.say(f"I will run {cmd} again.").sh("make check")
    assert (fm26(t).verdict, fm26(t).rationale) == ("unknown", TOO_FEW)


def test_an_announced_command_then_a_call_that_runs_none_is_no_mismatch() -> None:
    t = T().user("q").call("search", query="x").result("r")
    t.say("I will run `pytest -q` now.").call("search", query="y").result("r")
    t.say("I will run `git status` next.").sh("git status")
    v = fm26(t)
    assert (v.verdict, v.rationale) == ("absent", "2 announced actions match the calls that follow")


def test_one_matched_announcement_is_too_few() -> None:
    t = T().user("q").say("I will run `pytest -q` first.").sh("pytest -q", "1 passed")
    assert (fm26(t).verdict, fm26(t).rationale) == ("unknown", TOO_FEW)


def test_a_run_without_tool_calls_is_unknown() -> None:
    t = T().user("q").say("I will use read_file now.").say("Done.")
    t.call("read_file", copied=True, path="a").result("x", copied=True)
    assert (fm26(t).verdict, fm26(t).rationale) == (
        "unknown",
        "no tool calls to compare with stated intentions",
    )


def test_copied_context_is_not_compared() -> None:
    t = (
        with_tools()
        .say("I will use read_file to open it.")
        .event(kind="message", actor="agent", role="assistant", content="x", is_copied_context=True)
    )
    t.event(
        kind="tool_call",
        actor="agent",
        role="assistant",
        is_copied_context=True,
        tool_call=ToolCall(name="search", call_id="old", arguments={"query": "y"}),
    )
    t.call("read_file", path="b").result("y")
    t.say("I will use search again.", kind="reasoning").call("search", query="z")
    v = fm26(t)
    assert (v.verdict, v.rationale) == ("absent", "2 announced actions match the calls that follow")


@pytest.mark.parametrize("role", ["user", "tool", "system"])
def test_an_announcement_not_in_an_agents_role_is_not_compared(role: str) -> None:
    t = with_tools().event(kind="message", actor="agent", role=role, content="I will use read_file now.")
    t.call("search", query="y")
    assert fm26(t).verdict == "unknown"


def test_a_tool_result_is_not_an_announcement() -> None:
    t = with_tools().event(
        kind="tool_result", actor="agent", role="assistant", content="I will use read_file."
    )
    t.call("search", query="y")
    assert fm26(t).verdict == "unknown"


@pytest.mark.parametrize("kind", ["message", "reasoning"])
def test_an_own_step_before_the_next_call_leaves_the_announcement_unchecked(kind: str) -> None:
    t = (
        with_tools()
        .say("I will use read_file now.")
        .say("On second thought, searching is better.", kind=kind)
    )
    t.call("search", query="y")
    assert fm26(t).verdict == "unknown"


def test_another_agents_message_before_the_next_call_does_not_count() -> None:
    t = (
        with_tools()
        .say("I will use read_file now.")
        .say("Fine by me.", actor="Lead")
        .call("search", query="y")
    )
    assert spans(fm26(t)) == [(5, 7)]


def test_another_agents_call_after_an_announcement_is_not_compared() -> None:
    t = with_tools().say("I will use read_file now.").call("search", actor="Lead", query="y")
    t.call("search", query="z")
    assert fm26(t).verdict == "unknown"


def test_an_announcement_with_nothing_after_it_is_not_compared() -> None:
    assert fm26(with_tools().say("I will use read_file now.")).verdict == "unknown"


def test_every_mismatch_is_evidence() -> None:
    t = with_tools().say("I'll check the notes first.").call("edit_file", **EDIT).result("ok")
    t.say("I'll fix retry.py now.").sh("sed -i s/a/b/ client.py")
    t.say("I will use read_file now.").call("search", query="y")
    v = fm26(t)
    assert spans(v) == [(5, 6), (8, 9), (11, 12)]
    assert v.rationale == (
        "says it will check first, changes state instead; "
        "says it will change retry.py, changes client.py; "
        "says it will use read_file, calls search"
    )


@pytest.mark.parametrize("end", [".", "...", " now."])
def test_a_tool_named_at_the_end_of_a_sentence_is_announced(end: str) -> None:
    t = with_tools().say(f"I will use read_file{end} It has the report.").call("search", query="y")
    assert notes(fm26(t)) == ["says it will use read_file, calls search"]


def test_a_dotted_tool_name_is_announced_whole() -> None:
    t = T().user("q").call("docs.search", query="x").result("r").call("search", query="y").result("r")
    t.say("I will use docs.search again.").call("search", query="z")
    assert notes(fm26(t)) == ["says it will use docs.search, calls search"]


def test_only_dots_are_dropped_from_the_end_of_a_tool_name() -> None:
    t = T().user("q").call("TeX", source="a").result("r").call("search", query="y").result("r")
    t.say("I will use TeX for the formula.").call("search", query="z")
    assert notes(fm26(t)) == ["says it will use TeX, calls search"]


# The verdicts name their detector -------------------------------------------------------------


def test_disobey_role_verdicts_name_their_source() -> None:
    t = T().user("q").call("delete_user", id="7").result("ok")
    assert fm12(t, AgentInfo(name="agent", tools=["delete_user"])).source == "rule:disobey_role"
    assert fm12(t, AgentInfo(name="agent", tools=["search"])).source == "rule:disobey_role"
    assert fm12(t, AgentInfo(name="agent")).source == "rule:disobey_role"


def test_reasoning_action_mismatch_verdicts_name_their_source() -> None:
    source = "rule:reasoning_action_mismatch"
    assert fm26(T().user("q").say("Hi.")).source == source
    assert fm26(with_tools().say("I will use read_file now.")).source == source
    t = with_tools().say("I will use read_file now.").call("search", query="y")
    assert fm26(t).source == source
    t = with_tools().say("I will use read_file now.").call("read_file", path="a").result("x")
    t.say("I will use search now.").call("search", query="y")
    assert fm26(t).source == source


# More FM-2.6 edges ----------------------------------------------------------------------------


def test_the_verb_of_a_three_word_look_announcement_is_named() -> None:
    t = T().user("fix it").say("I will check the config before anything else.")
    t.call("edit_file", **EDIT).result("ok")
    assert notes(fm26(t)) == ["says it will check first, changes state instead"]


def test_a_change_made_before_the_announcement_is_not_compared() -> None:
    # the earlier change's result is recorded after the announcement (parallel tool use)
    t = T().user("fix it").call("bash", command="sed -i s/a/b/ client.py").say("I'll fix retry.py now.")
    t.result("ok").sh("sed -i s/a/b/ retry.py")
    assert fm26(t).verdict == "unknown"


def test_an_unchecked_announcement_does_not_end_the_search() -> None:
    t = with_tools().say("I will use read_file now.").say("Hmm.").call("search", query="y").result("r")
    t.say("I will use read_file now.").call("search", query="z")
    assert spans(fm26(t)) == [(9, 10)]


@pytest.mark.parametrize(
    ("role", "said"),
    [
        ("Reviews the diff and never edits", "never edits"),
        ("Reads the code and never touches any", "never touches"),
    ],
)
def test_a_role_description_alone_is_quoted_as_written(role: str, said: str) -> None:
    t = T().user("fix it").call("edit_file", path="a.py", old="x", new="y").result("ok")
    v = fm12(t, AgentInfo(name="agent", role_description=role))
    assert notes(v) == [f"agent changes state, although its role says '{said}'"]


@pytest.mark.parametrize(
    ("role", "said"),
    [
        ("Reviewer; never edits Be brief.", "never edits"),
        ("You never modify\nanything at all.", "never modify"),
    ],
)
def test_the_quoted_prohibition_has_no_trailing_whitespace(role: str, said: str) -> None:
    t = T().user("fix it").sh("sed -i s/a/b/ a.py")
    v = fm12(t, AgentInfo(name="agent", role_description=role))
    assert notes(v) == [f"agent changes state, although its role says '{said}'"]


# FM-2.6: a look announced, done in the message, and the change asked about (tau2-bench runs) -----


def test_a_look_in_a_message_that_names_the_change_is_no_mismatch() -> None:
    t = T().user("Please cancel ABC123.")
    t.say("Let me review the details: booked today, refundable. Shall I cancel ABC123 (yes/no)?")
    t.user("yes").call("cancel_reservation", reservation_id="ABC123").result("cancelled")
    assert fm26(t).verdict == "unknown"
    # with no reply in between: "I'll check and enable it now"
    t = T().user("Roaming is off.").say("I'll check and enable it now.").call("enable_roaming").result("ok")
    assert fm26(t).verdict == "unknown"
    # the verb's other forms: updating (the "e" dropped), booking, upper case in the tool name
    t = T().user("Move ABC123.").say("Let me check the fare before updating ABC123.")
    t.call("update_reservation", reservation_id="ABC123").result("ok")
    assert fm26(t).verdict == "unknown"
    t = T().user("Book it.").say("Let me check the fare, then I finish the booking.")
    t.call("Book_flight", flight="HAT1").result("ok")
    assert fm26(t).verdict == "unknown"
    # a three-letter verb is looked for
    t = T().user("Go.").say("Let me check the flag and set it.").call("set_config", key="flag").result("ok")
    assert fm26(t).verdict == "unknown"


def test_a_verb_of_two_letters_is_never_taken_as_named() -> None:
    # "do_update": the first word is "do", too short to look for, so the look still counts
    t = T().user("Fix it.").say("Let me check it. Do you agree?").call("do_update", x=1).result("ok")
    assert spans(fm26(t)) == [(1, 2)]


def test_a_look_then_a_change_it_does_not_name_still_counts() -> None:
    # a reply in between does not matter: the change was never announced
    t = T().user("Please move ABC123.")
    t.say("Let me review the fare rules. What date would you like?").user("May 3")
    t.call("update_reservation", reservation_id="ABC123", date="May 3").result("ok")
    assert spans(fm26(t)) == [(1, 3)]
    # "set" inside another word ("settings") does not name the change
    t = T().user("Go.").say("Let me check the settings.").call("set_config", key="flag").result("ok")
    assert spans(fm26(t)) == [(1, 2)]
