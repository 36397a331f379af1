"""Observable signals several detectors read: success claims, checks, state changes, errors.

Kept deliberately conservative (precision over recall); each pattern is a word-bounded
regex over event text or tool command text.
"""

from __future__ import annotations

import re

import orjson

from mastkit.traces.model import Event, ToolCall, Trace

SUCCESS_CLAIM = re.compile(
    r"(?i)\b(?:(?:has|have|is|are|was|been|now)\s+(?:been\s+)?(?:successfully\s+)?"
    r"(?:fixed|resolved|completed|restored|mitigated|solved|implemented|deployed|verified)"
    r"|(?:successfully|finally)\s+(?:fixed|resolved|completed|restored|mitigated|solved|implemented|deployed)"
    r"|issue is (?:now )?(?:fixed|resolved)|problem is (?:now )?(?:fixed|resolved|solved)"
    r"|task (?:is|has been) (?:now )?(?:complete|completed|done|finished)"
    r"|all (?:the )?tests (?:now )?pass|tests? (?:are |is )?(?:now )?passing"
    r"|incident (?:is |has been )?(?:now )?resolved|everything (?:is )?working"
    r"|should (?:now )?be (?:fixed|resolved|working)"
    r"|(?:restart|rollback|roll-back|fix|change|patch|update|redeploy)\s+(?:has\s+)?(?:resolved|fixed)"
    r"|resolved the [\w -]{0,40}(?:incident|issue|alert|problem|outage))\b"
    r"|\bverified:|(?:^|\n)\s*(?:resolved|fixed|done)[.!:]"
)

# Tools an agent calls to hand in its work (an implicit claim that the task is done).
SUBMIT_TOOLS = re.compile(
    r"(?i)^(?:submit|finish|final_answer|task_complete|attempt_completion|complete_task|done)$"
)

GIVE_UP = re.compile(
    r"(?i)\b(?:i (?:can(?:no|')t|am unable to|was unable to|could not|couldn't) (?:complete|finish|solve|fix|"
    r"continue|proceed|determine|find)|unable to (?:complete|finish|solve|proceed)|i(?:'ll| will) stop here|"
    r"giving up|give up|beyond (?:my|the) (?:scope|capabilit)|too complex to)\b"
)

CONTINUE_ONLY = re.compile(r"(?i)^\s*(?:please\s+)?(?:continue|keep going|go on|proceed)[\s.!]*$")

QUESTION_TO_USER = re.compile(
    r"(?i)(?:\?\s*$|\b(?:could you|can you|would you|please (?:provide|confirm|clarify|share|tell)|"
    r"do you (?:want|have|know)|which (?:one|option)|let me know)\b)"
)

ASK_TOOLS = re.compile(r"(?i)(?:ask|clarif|question|human|user_input|request_input|elicit)")

AUTH_OR_VALIDATION_ERROR = re.compile(
    r"(?i)\b(?:401|403|unauthori[sz]ed|forbidden|permission denied|access denied|invalid (?:credentials|token|"
    r"api key|password)|authentication (?:failed|required|error)|not authenticated|validation[ _](?:error|failed)|"
    r"422 unprocessable|must be one of|ambiguous (?:value|parameter|argument|environment|target)|"
    r"missing required (?:field|parameter|argument)|invalid (?:value|parameter|argument)s?|"
    r"required (?:field|parameter) .{0,30}missing)\b"
)

FAILURE_OUTPUT = re.compile(
    r"(?i)(?:\b(?:FAILED|FAILURES?|ERROR|Traceback|exception|error:|fatal:|command not found|No such file|"
    r"CrashLoopBackOff|ImagePullBackOff|OOMKilled|5\d\d (?:Internal|Bad|Service)|AssertionError)\b"
    r"|\b\d+ failed\b)"
)

_STATE_CHANGE_TOOLS = re.compile(
    r"(?i)(?:^|[_.:-])(?:edit|write|create|apply|patch|replace|str_replace|insert|delete|remove|update|set|"
    r"deploy|restart|rollout|scale|install|commit|move|rename|submit)(?:$|[_.:-])"
)
_STATE_CHANGE_COMMANDS = re.compile(
    r"(?i)(?:\bsed\s+-i\b|>\s*[\w./-]+|\btee\b|\bkubectl\s+(?:apply|patch|edit|delete|scale|set|rollout\s+restart|"
    r"create|replace|annotate|label)\b|\bhelm\s+(?:install|upgrade|rollback)\b|\bgit\s+(?:apply|commit|checkout|"
    r"reset|merge|cherry-pick)\b|\bpatch\s+-p|\bpip\s+install\b|\bnpm\s+install\b|\bmv\b|\bcp\b|\brm\b|"
    r"\bsystemctl\s+(?:restart|start|stop)\b|\bdocker\s+(?:restart|run|stop)\b|\bcat\s*>|\bapply_patch\b)"
)
_CHECK_COMMANDS = re.compile(
    r"(?i)(?:\bpytest\b|\bpython\s+-m\s+(?:pytest|unittest)\b|\b(?:npm|yarn|pnpm)\s+(?:run\s+)?test\b|"
    r"\bgo\s+test\b|\bcargo\s+test\b|\bmake\s+(?:test|check)\b|\btox\b|\bnox\b|\bcurl\b|\bwget\b|"
    r"\bkubectl\s+(?:get|describe|logs|top|rollout\s+status)\b|\bsystemctl\s+status\b|\bgrep\b|\bdiff\b|"
    r"\bpython3?\s+[\w./-]+\.py\b|\bnode\s+[\w./-]+\.js\b|\bhealth|\bverify|\bvalidat|\bcheck|\btest)"
)
# Checks that only show that something exists or runs, not that it behaves correctly.
STATUS_ONLY_COMMANDS = re.compile(
    r"(?i)^\s*(?:kubectl\s+get\s+(?:pods?|deploy(?:ments?)?|svc|services?|nodes?)\b(?!.*-o\s*json)|"
    r"systemctl\s+status\b|ps\b|ls\b|cat\b|echo\b|docker\s+ps\b|pwd\b|which\b)"
)


def command_text(call: ToolCall) -> str:
    """The command a tool call runs, as text (shell command if there is one, else the raw arguments)."""
    args = call.arguments
    if isinstance(args, dict):
        for key in ("command", "cmd", "script", "code", "input", "query"):
            val = args.get(key)
            if isinstance(val, str):
                return val
            if isinstance(val, list) and all(isinstance(x, str) for x in val):
                return " ".join(val)
    return call.arguments_raw or ""


_READ_ONLY_EDITOR_COMMANDS = frozenset({"view", "read", "show", "list", "open", "find", "search"})
_CLI_TOOL = re.compile(r"^[a-z][\w-]*$")


def full_command(call: ToolCall) -> str:
    """The command with the program name: tools named after a CLI (``kubectl``, ``git``, ``helm``)
    often take only its arguments (``get pods``), so the tool name is put in front."""
    text = command_text(call).strip()
    name = call.name.strip()
    generic = {
        "bash",
        "shell",
        "sh",
        "terminal",
        "execute",
        "execute_bash",
        "run",
        "run_command",
        "exec",
        "cmd",
    }
    if _CLI_TOOL.match(name) and name.lower() not in generic and not text.lower().startswith(name.lower()):
        return f"{name} {text}"
    return text


def canonical_call(call: ToolCall) -> str:
    """A normal form of a call for repetition checks: name + sorted arguments, whitespace folded."""
    args = call.arguments
    if args is not None:
        try:
            text = orjson.dumps(args, option=orjson.OPT_SORT_KEYS).decode()
        except TypeError:
            text = str(args)
    else:
        text = call.arguments_raw or ""
    return f"{call.name}:{' '.join(text.split())}"


def is_state_change(call: ToolCall) -> bool:
    """True when the call changes the environment (edits, applies, restarts, installs...)."""
    args = call.arguments
    if isinstance(args, dict) and str(args.get("command", "")).lower() in _READ_ONLY_EDITOR_COMMANDS:
        return False  # file-editor tools (str_replace_editor view ...)
    if _STATE_CHANGE_TOOLS.search(call.name):
        return True
    return bool(_STATE_CHANGE_COMMANDS.search(full_command(call)))


_CHECK_TOOLS = re.compile(
    r"(?i)(?:^|[_.:-])(?:get|status|describe|inspect|health|query|show|observe|monitor)(?:$|[_.:-])"
)


def is_check(call: ToolCall) -> bool:
    """True when the call looks like a test, probe or inspection."""
    if is_state_change(call) and not (_CHECK_COMMANDS.search(call.name) or _CHECK_TOOLS.search(call.name)):
        return False
    return bool(
        _CHECK_COMMANDS.search(call.name)
        or _CHECK_TOOLS.search(call.name)
        or _CHECK_COMMANDS.search(full_command(call))
    )


def result_failed(result: Event | None) -> bool:
    """True when a tool result reports failure (error flag, non-zero exit, failure text)."""
    if result is None or result.tool_result is None:
        return False
    r = result.tool_result
    if r.is_error or (r.exit_code is not None and r.exit_code != 0):
        return True
    return bool(FAILURE_OUTPUT.search((r.output or "")[-4000:]))


def agent_texts(trace: Trace) -> list[Event]:
    """Live messages/reasoning written by agents (not users, tools or replayed context)."""
    return [
        e
        for e in trace.events
        if e.kind in ("message", "reasoning", "plan", "termination") and e.is_agent_step() and e.content
    ]


def structured_enough(trace: Trace, min_events: int = 3) -> bool:
    """True when the trace has real event structure to reason about (not one unsegmented blob)."""
    return trace.segmentation != "raw_unsegmented" and len(trace.events) >= min_events
