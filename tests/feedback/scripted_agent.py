"""A scripted agent for the experiment harness tests: its success depends on the feedback it gets.

Each task names the failure mode the agent commits (``weakness``: FM-1.3 repeats a call, FM-3.1
gives up). The agent avoids it when the feedback names that mode and either comes from a review
of its previous attempt (pattern B) or the repetition is one of the task's ``heeds_block``
(generic in-prompt advice, pattern A, helps only sometimes). Otherwise it commits the mode.

It writes a canonical trace to ``MASTKIT_TRACE_OUT``; with ``"outcome_in_trace": true`` the
trace records the outcome and the exit code is always 0 (the harness must read the trace).
Exit 3: the feedback in the environment and in the file differ.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from mastkit.traces.model import Event, Outcome, ToolCall, ToolResult, Trace
from mastkit.traces.ops import dump_trace


def _events(task: str, fail_mode: str | None) -> list[Event]:
    ev: list[Event] = [Event(seq=0, kind="message", actor="user", role="user", content=task)]

    def add(**kw: object) -> None:
        ev.append(Event(seq=len(ev), actor="agent", role="assistant", **kw))  # type: ignore[arg-type]

    def call(name: str, args: dict[str, object], output: str, exit_code: int = 0) -> None:
        cid = f"c{len(ev)}"
        add(kind="tool_call", tool_call=ToolCall(call_id=cid, name=name, arguments=args))
        ev.append(
            Event(
                seq=len(ev),
                kind="tool_result",
                actor="tool",
                role="tool",
                tool_result=ToolResult(call_id=cid, name=name, output=output, exit_code=exit_code),
            )
        )

    call("read_file", {"path": "app.py"}, "def handler(): return pool.get(timeout=1)")
    if fail_mode == "FM-1.3":
        for _ in range(4):
            call("grep", {"pattern": "pool_size"}, "no match")
        add(kind="message", content="I could not find the setting.")
        return ev
    if fail_mode == "FM-3.1":
        add(kind="message", content="This is too complex; I can't complete the task. Stopping here.")
        return ev
    call("edit_file", {"path": "config.yaml", "set": "pool_size=20"}, "ok")
    call("run_tests", {}, "12 passed", exit_code=0)
    add(kind="message", content="Raised the pool size; the tests pass.")
    return ev


def main() -> int:
    feedback = os.environ["MASTKIT_FEEDBACK"]
    if Path(os.environ["MASTKIT_FEEDBACK_FILE"]).read_text(encoding="utf-8") != feedback:
        return 3
    task = json.loads(Path(os.environ["MASTKIT_TASK_FILE"]).read_text(encoding="utf-8"))
    rep = int(os.environ["MASTKIT_REP"])
    weakness = task["weakness"]
    named = weakness in feedback
    reviewed = "previous attempt" in feedback
    ok = named and (reviewed or rep in task.get("heeds_block", []))
    trace = Trace(
        trace_id=f"{task['id']}-{os.environ['MASTKIT_ARM']}-{rep}",
        source_format="canonical",
        task=os.environ["MASTKIT_TASK"],
        events=_events(os.environ["MASTKIT_TASK"], None if ok else weakness),
        outcome=Outcome(success=ok) if task.get("outcome_in_trace") else None,
    )
    Path(os.environ["MASTKIT_TRACE_OUT"]).write_bytes(dump_trace(trace))
    if task.get("outcome_in_trace"):
        return 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
