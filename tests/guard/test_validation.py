"""Action validation: allow/deny lists, argument schemas, the declared plan."""

from __future__ import annotations

from mastkit.guard import ActionValidator

from ._kit import call, only

SCHEMA = {"type": "object", "required": ["path", "patch"], "additionalProperties": False,
          "properties": {"path": {"type": "string"}, "patch": {"type": "string"},
                         "mode": {"enum": ["a", "b"]}}}  # fmt: skip


def test_deny_and_allow_lists() -> None:
    g = only(ActionValidator(deny=["drop_*"]))
    d = g.check_tool_call("drop_table", {})
    assert d.action == "block" and d.mode == "FM-1.1" and "deny list" in d.message
    assert call(g, "select", {}) == "allow"
    g = only(ActionValidator(allow=["read*", "grep"]))
    assert call(g, "read_file", {}) == "allow" and call(g, "GREP", {}) == "allow"
    assert g.check_tool_call("write_file", {}).action == "block"
    assert g.check_tool_call("done", {}).action == "allow"  # stopping is always allowed


def test_argument_schema() -> None:
    g = only(ActionValidator(schemas={"edit_*": SCHEMA}))
    assert call(g, "edit_file", {"path": "a", "patch": "b"}) == "allow"
    d = g.check_tool_call("edit_file", {"path": "a"})
    assert d.action == "block" and "missing required 'patch'" in d.message and d.mode == "FM-2.6"
    assert "expected string" in g.check_tool_call("edit_file", {"path": 3, "patch": "b"}).message
    assert "unexpected 'x'" in g.check_tool_call("edit_file", {"path": "a", "patch": "b", "x": 1}).message
    assert "not one of" in g.check_tool_call("edit_file", {"path": "a", "patch": "b", "mode": "c"}).message
    assert "expected object" in g.check_tool_call("edit_file", "not json").message


def test_the_plan_allows_the_current_and_the_next_step_only() -> None:
    plan = [{"step": "look", "tools": ["read", "grep"]}, {"step": "fix", "tools": ["edit", "test"]},
            {"step": "ship", "tools": ["deploy"]}]  # fmt: skip
    g = only(ActionValidator(plan=plan))
    assert call(g, "read", {}) == "allow"
    d = g.check_tool_call("deploy", {})
    assert d.action == "block" and "current plan step 'look'" in d.message and d.mode == "FM-2.6"
    assert call(g, "edit", {}) == "allow"  # moves to "fix"
    assert g.check_tool_call("read", {}).action == "block"  # no going back
    assert call(g, "deploy", {}) == "allow"
    g = only(ActionValidator(plan=plan, lookahead=2))
    assert call(g, "deploy", {}) == "allow"
