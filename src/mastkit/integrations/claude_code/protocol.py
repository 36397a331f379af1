"""The Claude Code hook protocol: what a hook reads on stdin and how it answers.

Input (one JSON object on stdin): every event has ``session_id``, ``transcript_path``, ``cwd``
and ``hook_event_name``; tool events add ``tool_name``, ``tool_input`` and (newer versions)
``tool_use_id``; ``PostToolUse`` adds ``tool_response``, ``PostToolUseFailure`` adds ``error``;
``Stop``/``SubagentStop`` add ``stop_hook_active`` (true when Claude is already continuing
because a Stop hook blocked it); ``UserPromptSubmit`` adds ``prompt``.

Output: exit code 0 lets things go on; JSON on stdout refines that. ``PreToolUse`` denies a call
with ``hookSpecificOutput.permissionDecision = "deny"`` and a ``permissionDecisionReason`` that
Claude sees; ``PostToolUse``, ``Stop``, ``SubagentStop`` and ``UserPromptSubmit`` block with
``decision: "block"`` and a ``reason``; ``additionalContext`` adds text to Claude's context
without blocking. The older form, exit code 2 with the reason on stderr, is produced with
``--exit-code``.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict

from mastkit.guard.decision import Decision

HOOK_EVENTS: dict[str, str] = {
    "pre-tool-use": "PreToolUse",
    "post-tool-use": "PostToolUse",
    "post-tool-use-failure": "PostToolUseFailure",
    "stop": "Stop",
    "subagent-stop": "SubagentStop",
    "user-prompt-submit": "UserPromptSubmit",
}
"""CLI verb -> Claude Code hook event name."""

MAX_OUTPUT_CHARS = 20_000
"""Longest tool output kept per result (head and tail), so the session file stays small."""


class HookInput(BaseModel):
    """One hook call's stdin. Unknown fields are kept (Claude Code adds fields over time)."""

    model_config = ConfigDict(extra="allow")

    session_id: str
    transcript_path: str | None = None
    cwd: str | None = None
    hook_event_name: str | None = None
    permission_mode: str | None = None
    tool_name: str | None = None
    tool_input: dict[str, Any] | None = None
    tool_response: Any = None
    tool_use_id: str | None = None
    error: str | None = None
    stop_hook_active: bool = False
    prompt: str | None = None
    last_assistant_message: str | None = None


def tool_output(response: Any) -> str:
    """The text of a tool's response: a Bash result's stdout and stderr, a text field of a dict
    (``output``, ``content``, ``result``, ``text``), else the response as sorted JSON."""
    if response is None:
        return ""
    if isinstance(response, str):
        text = response
    elif isinstance(response, dict) and ("stdout" in response or "stderr" in response):
        parts = [str(response.get("stdout") or ""), str(response.get("stderr") or "")]
        text = "\n".join(p for p in parts if p)
    elif isinstance(response, dict) and any(isinstance(response.get(k), str) for k in _TEXT_KEYS):
        text = next(str(response[k]) for k in _TEXT_KEYS if isinstance(response.get(k), str))
    else:
        text = json.dumps(response, sort_keys=True, default=str, ensure_ascii=False)
    return _clip(text)


_TEXT_KEYS = ("output", "content", "result", "text", "error")


def tool_exit_code(response: Any, *, failed: bool) -> int | None:
    """The exit code a response reports (``exit_code``, ``exitCode``, ``returncode``), else 0
    for a tool that ran (``PostToolUse``) and 1 for one that failed (``PostToolUseFailure``)."""
    if isinstance(response, dict):
        for key in ("exit_code", "exitCode", "returncode", "return_code"):
            value = response.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                return value
    return 1 if failed else 0


def tool_is_error(response: Any, *, failed: bool) -> bool:
    """True for a failed call, or a response that says it is an error or was interrupted."""
    if failed:
        return True
    if isinstance(response, dict):
        return any(response.get(k) is True for k in ("is_error", "isError", "interrupted"))
    return False


def _clip(text: str) -> str:
    if len(text) <= MAX_OUTPUT_CHARS:
        return text
    half = MAX_OUTPUT_CHARS // 2
    return f"{text[:half]}\n[... {len(text) - 2 * half} characters elided by mastkit ...]\n{text[-half:]}"


def reason_text(decision: Decision) -> str:
    """What Claude is told: the guard's message, prefixed with the guard and the mode it prevents."""
    tag = ", ".join(x for x in (decision.guard, decision.mode) if x)
    return f"[mastkit guard{': ' + tag if tag else ''}] {decision.message}".strip()


def render(event_name: str, decision: Decision, *, exit_code_style: bool = False) -> tuple[int, str, str]:
    """The answer to one hook call for ``decision``: ``(exit code, stdout, stderr)``."""
    if decision.action == "allow":
        return 0, "", ""
    reason = reason_text(decision)
    if decision.stops:
        if exit_code_style:
            return 2, "", reason + "\n"
        if event_name == "PreToolUse":
            out: dict[str, Any] = {
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "deny",
                    "permissionDecisionReason": reason,
                }
            }
        else:
            out = {"decision": "block", "reason": reason}
        return 0, json.dumps(out, ensure_ascii=False) + "\n", ""
    # warn: go on, and tell Claude (and the user) why
    out = {"systemMessage": reason}
    if event_name in ("PreToolUse", "PostToolUse", "PostToolUseFailure", "UserPromptSubmit"):
        out["hookSpecificOutput"] = {"hookEventName": event_name, "additionalContext": reason}
    return 0, json.dumps(out, ensure_ascii=False) + "\n", ""
