"""``mastkit.llm.redact.Scrubber`` piece by piece: the length floor, the per-string memory and
counts, credential field names, nested values and what is shared rather than copied.

A custom pattern (kind ``custom``, the word ``SECRETWORD`` or any ``zz…`` run) makes the
expected output easy to write by hand; the corpus tests (``test_redaction_corpus.py``) cover
the built-in patterns.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from mastkit.llm.redact import RedactedTrace, Scrubber, redact_trace, set_changed
from mastkit.providers.redact import Redactor
from mastkit.traces.model import Event, ToolCall, ToolResult, Trace

R = "[REDACTED:custom]"


def _scrubber() -> Scrubber:
    return Scrubber(Redactor([r"SECRETWORD", r"zz+"], builtin=False, pii=False))


class CountingRedactor(Redactor):
    """Counts how often each text is redacted."""

    def __init__(self) -> None:
        super().__init__([r"SECRETWORD", r"zz+"], builtin=False, pii=False)
        self.seen: Counter[str] = Counter()
        self.fields: Counter[tuple[str, str]] = Counter()

    def redact(self, text: str) -> Any:
        self.seen[text] += 1
        return super().redact(text)

    def redact_field(self, name: str, value: str) -> Any:
        self.fields[(name, value)] += 1
        return super().redact_field(name, value)


def test_strings_under_six_characters_are_left_alone() -> None:
    s = _scrubber()
    assert s.text("zzzzz") == "zzzzz"  # 5 characters
    assert s.text("zzzzzz") == R  # 6
    assert s.counts == Counter({"custom": 1})
    assert Scrubber().text("a@b.co") == "[REDACTED:email]"  # the default redactor, 6 characters


def test_each_distinct_string_is_redacted_and_counted_once() -> None:
    red = CountingRedactor()
    s = Scrubber(red)
    assert s.text("say SECRETWORD") == f"say {R}"
    assert s.text("say SECRETWORD") == f"say {R}"
    assert s.counts == Counter({"custom": 1})
    assert red.seen["say SECRETWORD"] == 1
    # the result is remembered as already clean: passing it again does not redact it again
    assert s.text(f"say {R}") == f"say {R}"
    assert red.seen[f"say {R}"] == 0
    assert s.opt(None) is None and s.opt("say SECRETWORD") == f"say {R}"


def test_the_scrubber_uses_the_redactor_given_or_a_default() -> None:
    red = Redactor(builtin=False, pii=False)
    assert Scrubber(red).redactor is red
    assert isinstance(Scrubber().redactor, Redactor)
    assert Scrubber().text("write to a@b.co now") == "write to [REDACTED:email] now"


def test_credential_fields_lose_the_whole_value_and_are_remembered() -> None:
    red = CountingRedactor()
    s = Scrubber(red)
    assert s.field("password", "hunter2x") == "[REDACTED:password]"
    assert s.field("password", "hunter2x") == "[REDACTED:password]"
    assert red.fields[("password", "hunter2x")] == 1
    assert s.field("api_key", "hunter2x") == "[REDACTED:api_key]"  # the kind follows the name
    assert s.counts == Counter({"password": 1, "api_key": 1})
    assert s.field("comment", "hunter2x") == "hunter2x"  # an ordinary name: text rules only
    assert s.field("comment", "SECRETWORD") == R
    assert red.fields[("comment", "hunter2x")] == 0
    assert s.field("pwd", "abc") == "abc"  # under 4 characters: not a credential value


def test_nested_values_are_redacted_and_keys_too() -> None:
    s = _scrubber()
    obj = {"a": "SECRETWORD", 3: ["fine text", ("zzzzzzzz", 7)], "SECRETWORD": {"password": "hunter2x"}}
    out = s.value(obj)
    assert out == {"a": R, 3: ["fine text", (R, 7)], R: {"password": "[REDACTED:password]"}}
    assert list(out) == ["a", 3, R]
    assert isinstance(out[3][1], tuple)
    assert obj["a"] == "SECRETWORD"  # the input is not changed


def test_a_dict_is_rebuilt_in_order_from_the_first_change() -> None:
    s = _scrubber()
    obj = {"k1": "plain text one", "k2": "plain text two", "k3": "SECRETWORD", "k4": "plain text four"}
    out = s.value(obj)
    assert list(out.items()) == [
        ("k1", "plain text one"),
        ("k2", "plain text two"),
        ("k3", R),
        ("k4", "plain text four"),
    ]
    first = s.value({"SECRETWORD": 1, "b": 2})
    assert list(first.items()) == [(R, 1), ("b", 2)]


def test_unchanged_values_are_returned_as_they_are() -> None:
    s = _scrubber()
    d = {"a": "plain text", "b": [1, "more plain text"], "c": None}
    lst = ["plain text", 2]
    tup = ("plain text", 3)
    assert s.value(d) is d
    assert s.value(lst) is lst
    assert s.value(tup) is tup
    assert s.value(42) == 42
    assert s.strings(None) is None
    names = ["alice-123", "bob-45678"]
    assert s.strings(names) is names
    assert s.strings(["alice-123", "SECRETWORD"]) == ["alice-123", R]
    changed = s.value(["plain text", "SECRETWORD"])
    assert changed == ["plain text", R] and isinstance(changed, list)


def test_set_changed_records_only_changes() -> None:
    changes: dict[str, Any] = {}
    set_changed(changes, "a", None, lambda v: "x")
    set_changed(changes, "b", "same", lambda v: v)
    set_changed(changes, "c", "old", lambda v: "new")
    assert changes == {"c": "new"}


def _event(**kw: Any) -> Event:
    if isinstance(kw.get("tool_call"), dict):
        kw["tool_call"] = ToolCall(**kw["tool_call"])
    if isinstance(kw.get("tool_result"), dict):
        kw["tool_result"] = ToolResult(**kw["tool_result"])
    return Event(**{"seq": 0, "kind": "message", **kw})


def test_each_event_field_is_scrubbed_on_its_own() -> None:
    s = _scrubber()
    secret = "the SECRETWORD here"
    for name in ("actor", "content", "phase"):
        red = s.event(_event(**{name: secret}))
        assert getattr(red, name) == f"the {R} here", name
    assert s.event(_event(recipients=["bob-1234", secret])).recipients == ["bob-1234", f"the {R} here"]
    assert s.event(_event(raw={"x": secret})).raw == {"x": f"the {R} here"}
    assert s.event(_event(extra={"x": secret})).extra == {"x": f"the {R} here"}
    call = s.event(
        _event(
            kind="tool_call",
            tool_call={
                "name": "run_SECRETWORD",
                "arguments": {"q": secret},
                "arguments_raw": secret,
                "namespace": secret,
                "call_id": "call-SECRETWORD",
            },
        )
    ).tool_call
    assert call is not None
    assert (call.name, call.arguments, call.arguments_raw, call.namespace) == (
        f"run_{R}",
        {"q": f"the {R} here"},
        f"the {R} here",
        f"the {R} here",
    )
    assert call.call_id == "call-SECRETWORD"  # ids identify: kept
    result = s.event(
        _event(kind="tool_result", tool_result={"name": secret, "output": secret, "status": secret})
    ).tool_result
    assert result is not None
    assert (result.name, result.output, result.status) == (f"the {R} here",) * 3


def test_a_clean_event_and_a_clean_tool_call_are_shared() -> None:
    s = _scrubber()
    e = _event(
        kind="tool_call", content="plain text", tool_call={"name": "calc", "arguments": {"x": "plain text"}}
    )
    assert s.event(e) is e
    r = _event(kind="tool_result", content="plain text", tool_result={"output": "fine output"})
    assert s.event(r) is r
    call = _event(kind="tool_call", content="the SECRETWORD", tool_call={"name": "calc"})
    assert s.event(call).tool_call is call.tool_call
    result = _event(kind="tool_result", content="the SECRETWORD", tool_result={"output": "fine output"})
    assert s.event(result).tool_result is result.tool_result


def _trace(**kw: Any) -> Trace:
    return Trace.model_validate({"trace_id": "t", "source_format": "test", "events": [], **kw})


def test_each_trace_part_is_scrubbed() -> None:
    secret = "the SECRETWORD here"
    clean = f"the {R} here"
    t = _trace(
        task=secret,
        events=[
            {"seq": 0, "kind": "message", "content": "plain text"},
            {"seq": 1, "kind": "message", "content": secret},
        ],
        agents=[
            {"name": "planner", "role_description": secret},
            {
                "name": secret,
                "system_prompt": secret,
                "parent": secret,
                "tools": [secret],
                "extra": {"a": secret},
            },
        ],
        labels=[
            {
                "agent": secret,
                "reason": secret,
                "native_code": secret,
                "annotator": secret,
                "extra": {"a": secret},
            },
        ],
        termination={"reason": secret, "native": secret, "by": "agent"},
        outcome={"final_output": secret, "ground_truth": secret, "metrics": {"m": secret}},
        raw={"r": secret},
        extra={"e": secret},
    )
    red, counts = redact_trace(t, Redactor([r"SECRETWORD"], builtin=False, pii=False))
    assert red.task == clean
    assert red.events[0] is t.events[0] and red.events[1].content == clean
    assert red.agents[0].role_description == clean and red.agents[0].name == "planner"
    a = red.agents[1]
    assert (a.name, a.system_prompt, a.parent, a.tools, a.extra) == (
        clean,
        clean,
        clean,
        [clean],
        {"a": clean},
    )
    lab = red.labels[0]
    assert (lab.agent, lab.reason, lab.native_code, lab.annotator, lab.extra) == (
        clean,
        clean,
        clean,
        clean,
        {"a": clean},
    )
    assert red.termination is not None and (red.termination.reason, red.termination.native) == (clean, clean)
    assert red.termination.by == "agent"
    o = red.outcome
    assert o is not None and (o.final_output, o.ground_truth, o.metrics) == (clean, clean, {"m": clean})
    assert (red.raw, red.extra) == ({"r": clean}, {"e": clean})
    assert counts == Counter({"custom": 1})  # one distinct string, counted once
    assert isinstance(redact_trace(t), RedactedTrace)


def test_parts_without_secrets_are_shared() -> None:
    t = _trace(
        task="plain task",
        agents=[{"name": "planner"}],
        labels=[{"reason": "plain reason"}],
        termination={"reason": "max_steps"},
        outcome={"final_output": "plain output"},
    )
    red, counts = redact_trace(t, Redactor([r"SECRETWORD"], builtin=False, pii=False))
    assert red is t and not counts
    only_outcome = _trace(outcome={"final_output": "SECRETWORD"}, termination={"reason": "max_steps"})
    red2 = redact_trace(only_outcome, Redactor([r"SECRETWORD"], builtin=False, pii=False)).trace
    assert red2.termination is only_outcome.termination
    assert red2.outcome is not None and red2.outcome.final_output == R
