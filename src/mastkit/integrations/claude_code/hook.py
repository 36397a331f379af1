"""Answer one Claude Code hook call with the guards' decision.

:func:`handle_hook` is the whole job of a ``mastkit hook <verb>`` process: read the payload,
rebuild the session's run (the stored events replayed into a fresh
:class:`~mastkit.guard.Guardian`; on a session's first call, the current turn of the transcript),
check the new event, store the run again and render the decision in the hook protocol.

A turn is a user prompt and the work it starts. A new turn (a new run for the guards) begins at
``UserPromptSubmit``, or at the first tool call after Claude was let stop. Finished turns are
appended to the session's traces file (:mod:`.session`).

The hook never stands in Claude's way because of its own trouble: an unreadable payload or an
internal error gives exit code 0 and a note on stderr; an invalid spec gives exit code 1 (a
non-blocking error Claude Code shows the user) with the spec error.
"""

from __future__ import annotations

import json
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from mastkit.guard.decision import ALLOW, Decision
from mastkit.guard.guardian import GUARD_SUBTYPE, Guardian
from mastkit.guard.spec import GuardSpec, GuardSpecError, load_spec
from mastkit.integrations.claude_code.protocol import (
    HookInput,
    render,
    tool_exit_code,
    tool_is_error,
    tool_output,
)
from mastkit.integrations.claude_code.session import SessionRecord, SessionStore
from mastkit.traces.model import Event, Termination, ToolCall

log = logging.getLogger("mastkit.integrations.claude_code")

CLAUDE_CODE_READ_ONLY = ["TodoWrite", "TodoRead", "Read", "Grep", "Glob", "LS", "WebFetch", "WebSearch"]
"""Claude Code tools that never change state, even when a default pattern (``*write*``) matches."""
SPEC_ENV = "MASTKIT_GUARD_SPEC"
SPEC_NAMES = (".claude/guards.yaml", ".claude/guards.yml", "guards.yaml", "guards.yml")
"""Where a spec is looked for in the project folder when none is given."""
MAX_TAIL_BYTES = 256 * 1024


@dataclass
class HookOptions:
    """How the hook runs (flags of ``mastkit hook``)."""

    spec: str | Path | None = None
    """Guard spec file; default ``$MASTKIT_GUARD_SPEC``, else ``.claude/guards.yaml`` or
    ``guards.yaml`` in the project folder, else the defaults."""
    state_dir: str | Path | None = None
    """Where session files go; default ``$XDG_STATE_HOME/mastkit/hooks``."""
    exit_code_style: bool = False
    """Block with exit code 2 and the reason on stderr instead of JSON on stdout."""
    use_transcript: bool = True
    """On a session's first call, replay the current turn of ``transcript_path``."""
    save_traces: bool = True
    """Append finished turns to ``<state dir>/traces/<session>.jsonl``."""


@dataclass
class HookResult:
    """What the hook process answers: its exit code and what it writes."""

    exit_code: int = 0
    stdout: str = ""
    stderr: str = ""
    decision: Decision = ALLOW


def handle_hook(
    verb_or_event: str, payload: str | bytes | dict[str, Any], options: HookOptions
) -> HookResult:
    """Answer one hook call. ``verb_or_event`` is a verb (``pre-tool-use``) or an event name
    (``PreToolUse``); with ``"auto"``, the payload's ``hook_event_name`` is used."""
    from mastkit.integrations.claude_code.protocol import HOOK_EVENTS

    try:
        data = json.loads(payload) if isinstance(payload, (str, bytes)) else payload
        hook = HookInput.model_validate(data)
    except (ValueError, ValidationError) as exc:
        return HookResult(0, "", f"mastkit hook: ignoring an unreadable payload ({_short(exc)})\n")
    event_name = HOOK_EVENTS.get(verb_or_event, verb_or_event)
    if event_name == "auto":
        event_name = hook.hook_event_name or ""
    if event_name not in HOOK_EVENTS.values():
        return HookResult(0, "", f"mastkit hook: no guard for hook event {event_name!r}; allowing\n")
    try:
        spec = resolve_spec(options.spec, hook.cwd)
    except GuardSpecError as exc:
        return HookResult(1, "", f"mastkit hook: invalid guard spec: {exc}\n")
    try:
        decision = _decide(event_name, hook, spec, options)
    except Exception as exc:  # never stand in Claude's way because of our own bug
        log.debug("mastkit hook failed", exc_info=True)
        return HookResult(0, "", f"mastkit hook: internal error, allowing ({_short(exc)})\n")
    code, out, err = render(event_name, decision, exit_code_style=options.exit_code_style)
    return HookResult(code, out, err, decision)


def resolve_spec(spec: str | Path | None, cwd: str | None) -> GuardSpec:
    """The spec to run with: the given file, ``$MASTKIT_GUARD_SPEC``, a spec file in the project
    folder (``$CLAUDE_PROJECT_DIR``, else the payload's ``cwd``), else the defaults; with Claude
    Code's read-only tools added to ``run.read_only_tools``."""
    path: Path | None = Path(spec) if spec else None
    if path is None and os.environ.get(SPEC_ENV):
        path = Path(os.environ[SPEC_ENV])
    if path is None:
        project = os.environ.get("CLAUDE_PROJECT_DIR") or cwd
        if project:
            path = next((Path(project) / n for n in SPEC_NAMES if (Path(project) / n).is_file()), None)
    loaded = load_spec(path) if path is not None else GuardSpec()
    read_only = list(dict.fromkeys([*loaded.run.read_only_tools, *CLAUDE_CODE_READ_ONLY]))
    run = loaded.run.model_copy(update={"read_only_tools": read_only})
    return loaded.model_copy(update={"run": run})


def _decide(event_name: str, hook: HookInput, spec: GuardSpec, options: HookOptions) -> Decision:
    store = SessionStore(options.state_dir)
    with store.locked(hook.session_id):
        record = store.load(hook.session_id)
        if record is None:
            record = SessionRecord(hook.session_id)
            if options.use_transcript and hook.transcript_path and event_name != "UserPromptSubmit":
                record.events = _transcript_turn(hook.transcript_path)
        guardian = _rebuild(record, spec)
        new_turn = event_name == "UserPromptSubmit" or (
            record.ended and event_name in ("PreToolUse", "PostToolUse", "PostToolUseFailure")
        )
        if new_turn and (guardian.state.steps or record.ended):
            if options.save_traces and not record.saved:
                _save_turn(store, record, guardian)
            record = SessionRecord(hook.session_id, turn=record.turn + 1)
            guardian = _rebuild(record, spec)
        decision = _check(event_name, hook, guardian, record)
        record.events = list(guardian.events)
        if record.ended and options.save_traces and not record.saved:
            _save_turn(store, record, guardian)
        store.save(record)
    return decision


def _rebuild(record: SessionRecord, spec: GuardSpec) -> Guardian:
    """A Guardian for the record's turn with the stored events replayed (no decisions emitted;
    stored guard events are put back as they were, so seqs stay the same)."""
    g = Guardian.from_spec(
        spec, clock=time.time, trace_id=f"claude-code-{record.session_id}-t{record.turn}", actor="claude"
    )
    g.state.started = record.started_at
    for event in record.events:
        if event.kind == "system" and event.subtype == GUARD_SUBTYPE:
            g.state.events.append(event.replace(seq=len(g.state.events)))
        else:
            g.replay([event])
    return g


def _check(event_name: str, hook: HookInput, g: Guardian, record: SessionRecord) -> Decision:
    if event_name == "UserPromptSubmit":
        return g.record_user(hook.prompt or "")
    if event_name == "PreToolUse":
        return g.check_tool_call(hook.tool_name or "unknown", hook.tool_input, call_id=hook.tool_use_id)
    if event_name in ("PostToolUse", "PostToolUseFailure"):
        failed = event_name == "PostToolUseFailure"
        call_id = hook.tool_use_id
        if call_id is None or g.state.call_by_id(call_id) is None:
            # the call was not seen before (no PreToolUse hook for it): it ran, so record it as run
            call_id = call_id or f"claude-code-call-{len(g.events)}"
            g.replay([_tool_call(hook, call_id, len(g.events))])
        response = hook.error if failed and hook.error is not None else hook.tool_response
        return g.record_tool_result(
            tool_output(response),
            call_id=call_id,
            name=hook.tool_name,
            is_error=tool_is_error(hook.tool_response, failed=failed),
            exit_code=tool_exit_code(hook.tool_response, failed=failed),
        )
    if event_name == "SubagentStop":
        # a sub-agent's end is not the run's end: recorded, never gated
        g.check_message("(sub-agent finished)", actor="subagent")
        return ALLOW
    # Stop
    text = hook.last_assistant_message
    if text is None and hook.transcript_path:
        text = last_assistant_text(hook.transcript_path)
    if hook.stop_hook_active:
        # Claude is already going on because a Stop hook blocked it: let it stop this time (the
        # stop is recorded, not checked again, so no refusal is logged that was not enforced)
        g.replay([Event(seq=len(g.events), kind="message", role="assistant", actor="claude",
                        content=text or "", subtype="final_answer")])  # fmt: skip
        record.ended = True
        return ALLOW
    decision = g.check_stop(text or "")
    record.ended = decision.allowed
    return decision


def _tool_call(hook: HookInput, call_id: str, seq: int) -> Event:
    return Event(
        seq=seq, kind="tool_call", role="assistant", actor="claude",
        tool_call=ToolCall(name=hook.tool_name or "unknown", call_id=call_id, arguments=hook.tool_input),
    )  # fmt: skip


def _save_turn(store: SessionStore, record: SessionRecord, g: Guardian) -> None:
    try:
        fields: dict[str, Any] = {
            "framework": "claude_code",
            "extra": {"claude_code": {"session_id": record.session_id, "turn": record.turn}},
        }
        if record.ended and not g.state.stopped:  # let stop by stop_hook_active
            fields["termination"] = Termination(reason="final_answer", by="agent", at_seq=len(g.events) - 1)
        trace = g.trace(**fields)
        store.append_trace(record.session_id, trace.model_dump_json(exclude_none=True).encode())
        record.saved = True
    except Exception:
        log.warning("mastkit hook: could not save the turn's trace", exc_info=True)


def _transcript_turn(path: str) -> list[Event]:
    """The current turn of a Claude Code transcript (events after the last user prompt), for a
    session whose hooks were installed while it ran. Empty when the file cannot be read."""
    if not Path(path).is_file():
        return []
    try:
        from mastkit.traces import load_traces

        traces = list(load_traces(path, format="claude_code"))
    except Exception:
        log.debug("mastkit hook: transcript not readable", exc_info=True)
        return []
    if not traces:
        return []
    events = [e for e in traces[-1].events if e.kind in ("message", "tool_call", "tool_result")]
    start = 0
    for i, e in enumerate(events):
        if e.kind == "message" and e.role == "user" and not e.is_copied_context:
            start = i
    return [e.replace(seq=i, raw=None, source=None) for i, e in enumerate(events[start:])]


def last_assistant_text(path: str) -> str | None:
    """The text of the last assistant message in a transcript (read from the file's tail)."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - MAX_TAIL_BYTES))
            tail = fh.read()
    except OSError:
        return None
    for line in reversed(tail.splitlines()):
        try:
            doc = json.loads(line)
        except ValueError:
            continue
        if not isinstance(doc, dict) or doc.get("type") != "assistant":
            continue
        message = doc.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            texts = [b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"]
            if texts:
                return "\n".join(texts)
    return None


def _short(exc: BaseException) -> str:
    if isinstance(exc, ValidationError) and exc.errors():
        err = exc.errors()[0]
        return f"{'.'.join(str(x) for x in err['loc']) or 'payload'}: {err['msg']}"
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:200]
