"""Pattern A: the tool declaration in both shapes, the handler's answer, the in-prompt block."""

from __future__ import annotations

import json
from typing import Any

from tests.annotate._judgekit import EXAMPLES

from mastkit.feedback import TOOL_NAME, handle_tool_call, prompt_block, tool_schema
from mastkit.feedback.tool import as_trace
from mastkit.providers import estimate_tokens
from mastkit.taxonomy import load_taxonomy
from mastkit.traces.load import load_traces


def _repeating_messages(times: int = 4) -> list[dict[str, Any]]:
    msgs: list[dict[str, Any]] = [{"role": "user", "content": "Find the pool size setting."}]
    for i in range(times):
        call = {"id": f"c{i}", "type": "function", "function": {"name": "grep", "arguments": '{"p": "pool"}'}}
        msgs.append({"role": "assistant", "content": None, "tool_calls": [call]})
        msgs.append({"role": "tool", "tool_call_id": f"c{i}", "content": "no match"})
    return msgs


def test_openai_shape() -> None:
    tool = tool_schema("openai")
    assert tool["type"] == "function"
    fn = tool["function"]
    assert fn["name"] == TOOL_NAME and fn["strict"] is True and "MAST" in fn["description"]
    params = fn["parameters"]
    assert params["type"] == "object" and params["additionalProperties"] is False
    assert params["required"] == ["modes", "planned_action"] == list(params["properties"])


def test_anthropic_shape() -> None:
    tool = tool_schema("anthropic")
    assert set(tool) == {"name", "description", "input_schema"}
    assert tool["name"] == TOOL_NAME
    assert tool["input_schema"] == tool_schema("openai")["function"]["parameters"]


def test_handler_names_the_repeated_call_and_what_to_do() -> None:
    answer = handle_tool_call('{"modes": null, "planned_action": "grep once more"}', _repeating_messages())
    first, second = answer.splitlines()[:2]
    assert "1 failure mode shows" in first and "9 events" in first
    assert second.startswith("- FM-1.3 Step Repetition [medium] at steps 1-7")
    assert "Do not repeat a call" in second
    assert "Your planned action: grep once more" in answer


def test_handler_clean_run_and_mode_filter() -> None:
    clean = handle_tool_call(None, _repeating_messages(1))
    assert "none shows" in clean and "Keep going" in clean
    only = handle_tool_call({"modes": ["FM-3.1"], "planned_action": None}, _repeating_messages())
    assert "1 modes checked" in only and "FM-1.3" not in only


def test_handler_orders_by_severity_on_a_trace() -> None:
    (trace,) = load_traces(EXAMPLES / "04_taubench_retail_gives_up.json")
    answer = handle_tool_call(json.dumps({"modes": None, "planned_action": None}), trace)
    assert "- FM-3.1 Premature Termination [fatal] at step 20 (assistant)" in answer
    assert 'Seen: "I can\'t complete"' in answer


def test_bad_arguments_are_an_answer_not_an_exception() -> None:
    msgs = _repeating_messages()
    assert handle_tool_call("{not json", msgs).startswith("error: bad arguments")
    assert handle_tool_call({"modes": ["FM-9.9"]}, msgs).startswith("error: unknown mode code")
    assert handle_tool_call({"modes": None, "extra": 1}, msgs).startswith("error: bad arguments")


def test_empty_message_list() -> None:
    assert as_trace([]).events == []
    assert "0 events" in handle_tool_call(None, [])


def test_prompt_block_budget_drops_least_severe_whole_lines() -> None:
    full = prompt_block(max_tokens=None)
    lines = full.splitlines()
    assert len(lines) == 15  # header + 14 modes
    assert (
        lines[1].startswith("- FM-3.1")
        and lines[2].startswith("- FM-3.3")
        and lines[3].startswith("- FM-1.1")
    )
    assert lines[-1].startswith("- FM-2.1")  # low severity, misalignment: last
    short = prompt_block(max_tokens=150)
    assert estimate_tokens(short) <= 150
    kept = [ln for ln in short.splitlines() if ln.startswith("- ")]
    assert kept == lines[1 : 1 + len(kept)] and 0 < len(kept) < 14
    assert short.splitlines()[-1] == f"({14 - len(kept)} less severe modes left out.)"
    assert prompt_block(max_tokens=5) == ""
    assert TOOL_NAME in prompt_block(tool=True)


def test_custom_taxonomy_uses_its_fix_hints_and_severity() -> None:
    mast = load_taxonomy("mast")
    doc = mast.model_dump()
    doc["id"] = "custom"
    doc["modes"][0]["severity"] = "critical"  # FM-1.1 stays first
    doc["modes"][13]["severity"] = "fatal"  # FM-3.3
    tax = type(mast).model_validate(doc)
    lines = prompt_block(tax, max_tokens=None).splitlines()
    assert lines[1].startswith("- FM-1.1") and lines[2].startswith("- FM-3.3")
    assert lines[3].startswith("- FM-1.2")  # the others: medium, taxonomy order
    assert mast.mode("FM-1.1").fix_hints[0] in lines[1]
