"""guards.yaml: validation with the YAML path and line, defaults, the same spec in code."""

from __future__ import annotations

from pathlib import Path

import pytest

from mastkit.guard import Guardian, GuardSpec, GuardSpecError, load_spec

FULL = """\
version: 1
run:
  state_changing_tools: [edit_file, restart_service]
  stop_tools: [done]
guards:
  loop: {warn_at: 2, block_at: 4}
  budget: {max_steps: 30, max_cost_usd: 1.5}
  termination:
    states: [open, resolved]
    transitions:
      - {from: open, to: resolved, when: {tool: close_ticket, result: {}}}
    stop_states: [resolved]
  verification:
    checks:
      - {name: tests, tool: run_tests, exit_code: 0}
  clarification: {}
  validation:
    deny: ["drop_*"]
    plan:
      - {step: investigate, tools: [search, read_file]}
      - {step: fix, tools: [edit_file, run_tests]}
"""


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "guards.yaml"
    p.write_text(text)
    return p


def test_a_full_spec_loads_and_builds_every_guard(tmp_path: Path) -> None:
    spec = load_spec(write(tmp_path, FULL))
    names = [g.name for g in spec.build_guards()]
    assert names == ["validation", "loop", "budget", "clarification", "termination", "verification"]
    g = Guardian.from_spec(write(tmp_path, FULL))
    assert [g.check_tool_call("search", {}).action for _ in range(4)] == ["allow", "warn", "warn", "block"]
    assert g.state.is_state_changing("restart_service") and not g.state.is_state_changing("write_file")


def test_no_spec_means_loop_blocks_the_5th_and_budgets_only_warn() -> None:
    g = Guardian.default(stamp_times=False)
    assert [g.guards[i].name for i in range(len(g.guards))] == ["loop", "budget"]
    actions = []
    for _ in range(5):
        d = g.check_tool_call("ls", {"p": "."})
        actions.append(d.action)
        if d.allowed:
            g.record_tool_result("a b")
    assert actions == ["allow", "allow", "warn", "warn", "block"]
    g = Guardian.default(stamp_times=False)
    actions = [g.check_tool_call("read", {"i": i}).action for i in range(250)]
    assert "block" not in actions and "redirect" not in actions and actions.count("warn") == 2
    assert GuardSpec().guards.budget.on_limit == "warn"


def test_an_empty_file_is_the_default_spec(tmp_path: Path) -> None:
    assert load_spec(write(tmp_path, "")) == GuardSpec()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "guards:\n  loop:\n    block_at: 1\n",
            "guards.loop.block_at (line 3): Input should be greater than or equal to 2",
        ),
        (
            "guards:\n  loop: {warn_at: 6}\n",
            "guards.loop (line 2): warn_at (6) must not be above block_at (5)",
        ),
        ("guards:\n  lopo: {}\n", "guards.lopo (line 2): unknown key"),
        ("guards:\n  budget:\n    mode: FM-9.9\n", "guards.budget.mode: 'FM-9.9' is not a MAST mode code"),
        ("version: 2\n", "version (line 1): Input should be 1"),
        (
            "guards:\n  verification:\n    checks:\n      - {name: t, tool: x, output_regex: '('}\n",
            "guards.verification.checks.0.output_regex (line 4): not a valid regular expression",
        ),
        ("guards: [1, 2]\n", "guards (line 1):"),
        ("guards:\n  loop: {warn_at: 2\n", "not valid YAML (line 3)"),
        ("- a\n- b\n", "a guard spec is a mapping"),
    ],
)
def test_errors_name_the_file_the_path_and_the_line(tmp_path: Path, text: str, expected: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(GuardSpecError) as info:
        load_spec(path)
    assert str(info.value).startswith(str(path)) and expected in str(info.value)


def test_a_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(GuardSpecError, match="cannot read the guard spec"):
        load_spec(tmp_path / "nope.yaml")


def test_the_same_spec_in_code() -> None:
    spec = GuardSpec.from_dict(
        {"guards": {"loop": {"block_at": 3, "warn_at": 3}, "budget": {"enabled": False}}}
    )
    g = Guardian.from_spec(spec, stamp_times=False)
    assert [x.name for x in g.guards] == ["loop"]
    with pytest.raises(GuardSpecError, match=r"spec: guards.loop.block_at"):
        GuardSpec.from_dict({"guards": {"loop": {"block_at": "many"}}})
