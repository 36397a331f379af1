"""Observable signals several detectors read: success claims, checks, state changes, errors.

Kept deliberately conservative (precision over recall). Shell commands are parsed with
:mod:`~mastkit.annotate.detectors._shell`, test-runner output with
:mod:`~mastkit.annotate.detectors._runners`, and claims are read per clause with negation and
modality by :mod:`~mastkit.annotate.detectors._claims`; the remaining patterns are word-bounded
regexes over tool names and message text.
"""

from __future__ import annotations

import re

import orjson

from mastkit.annotate.detectors._claims import GIVE_UP as GIVE_UP
from mastkit.annotate.detectors._claims import SUCCESS_CLAIM as SUCCESS_CLAIM
from mastkit.annotate.detectors._claims import give_up as give_up
from mastkit.annotate.detectors._claims import success_claim as success_claim
from mastkit.annotate.detectors._runners import parse_test_summary
from mastkit.annotate.detectors._shell import (
    KNOWN_PROGRAMS,
    SimpleCommand,
    acting,
    command_checks,
    command_writes,
    is_status_only,
    is_test_runner,
    parse_command,
)
from mastkit.traces.model import Event, ToolCall, Trace

# Tools an agent calls to hand in its work (an implicit claim that the task is done).
SUBMIT_TOOLS = re.compile(
    r"(?i)^(?:submit|finish|final_answer|task_complete|attempt_completion|complete_task|done)$"
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
    r"|\b[1-9]\d* failed\b)"
)

_STATE_CHANGE_TOOLS = re.compile(
    r"(?i)(?:^|[_.:-])(?:edit|write|create|apply|patch|replace|str_replace|insert|delete|remove|update|set|"
    r"deploy|restart|rollout|scale|install|commit|move|rename|submit|cancel|book|refund|exchange|return|modify|"
    r"send|pay|charge|reserve|purchase|buy|place|add|upsert|rollback|revert|kill|terminate|stop|start|"
    r"enable|disable|assign|approve|merge|upload|post|put|close|resolve|reopen|escalate|reboot|reset|toggle|"
    r"switch|activate|deactivate|suspend|resume|grant|revoke)(?:$|[_.:-])"
)

_SHELL_TOOLS = frozenset(
    {"bash", "shell", "sh", "terminal", "execute", "execute_bash", "run", "run_command", "exec", "cmd",
     "execute_command", "run_shell_command", "shell_command", "local_shell"}
)  # fmt: skip


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
    program = text.split(maxsplit=1)[0].lower() if text else ""
    if _CLI_TOOL.match(name) and name.lower() not in _SHELL_TOOLS and program != name.lower():
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


def call_commands(call: ToolCall) -> list[SimpleCommand]:
    """The parsed simple commands a call runs (empty for a call that is not a command)."""
    name = call.name.strip().lower()
    text = full_command(call)
    if not text.strip():
        return []
    if name in _SHELL_TOOLS or name in KNOWN_PROGRAMS or _has_command_arg(call):
        return acting(parse_command(text))
    return []


def _has_command_arg(call: ToolCall) -> bool:
    """A ``command`` argument that is a command line (not an editor verb like ``str_replace``)."""
    args = call.arguments
    if not isinstance(args, dict):
        return False
    for key in ("command", "cmd", "script"):
        val = args.get(key)
        if isinstance(val, str) and val.strip():
            return " " in val.strip() or val.split()[0].rsplit("/", 1)[-1] in KNOWN_PROGRAMS
    return False


_EDITOR_WRITE_VERBS = frozenset({"create", "str_replace", "insert", "write", "edit", "append", "undo_edit"})


def _editor_verb(call: ToolCall) -> str | None:
    """The verb of a file-editor call (``view``, ``create``, ``str_replace``), also when the
    command repeats the tool name (SWE-agent: ``str_replace_editor create /x.py ...``)."""
    args = call.arguments
    if not isinstance(args, dict) or not isinstance(args.get("command"), str):
        return None
    words = args["command"].split()
    if words and words[0] == call.name:
        words = words[1:]
    if not words:
        return None
    verb = words[0].lower()
    return verb if verb in _EDITOR_WRITE_VERBS or verb in _READ_ONLY_EDITOR_COMMANDS else None


def _known(call: ToolCall) -> list[SimpleCommand]:
    """The parsed commands, when the call is a command line of programs the classifiers know."""
    cmds = call_commands(call)
    return cmds if any(c.program in KNOWN_PROGRAMS or command_writes(c) for c in cmds) else []


def _snake(name: str) -> str:
    """A tool name with its camelCase and spaces made separators (``cancelBooking`` ->
    ``cancel_Booking``, ``Get Status`` -> ``Get_Status``), so the verb lists see each word."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|\s+", "_", name)


def is_state_change(call: ToolCall) -> bool:
    """True when the call changes the environment (edits, applies, restarts, installs...)."""
    verb = _editor_verb(call)
    if verb is not None:
        return verb in _EDITOR_WRITE_VERBS  # file-editor tools (str_replace_editor view/create ...)
    cmds = _known(call)
    if cmds:
        return any(command_writes(c) for c in cmds)
    return bool(_STATE_CHANGE_TOOLS.search(_snake(call.name)))


_CHECK_TOOLS = re.compile(
    r"(?i)(?:^|[_.:-])(?:get|status|describe|inspect|health|query|show|observe|monitor|test|tests|check|"
    r"verify|validate|logs?|metrics|search|read|view|list|fetch)(?:$|[_.:-])"
)


def is_check(call: ToolCall) -> bool:
    """True when the call tests, probes or inspects — and, in a command line that also changes
    something, the check runs after the last change (``sed -i ... && pytest``)."""
    verb = _editor_verb(call)
    if verb is not None:
        return False  # reading a file back is not a check of behaviour
    cmds = _known(call)
    if cmds:
        last_write = max((i for i, c in enumerate(cmds) if command_writes(c)), default=-1)
        return any(command_checks(c) and not command_writes(c) for c in cmds[last_write + 1 :])
    name = _snake(call.name)
    if _STATE_CHANGE_TOOLS.search(name) and not _CHECK_TOOLS.search(name):
        return False
    return bool(_CHECK_TOOLS.search(name))


def checks_after_own_change(call: ToolCall) -> bool:
    """A command line that changes something and then checks it (``sed -i ... && pytest``)."""
    return is_state_change(call) and is_check(call)


def is_test_run(call: ToolCall) -> bool:
    """True when the call runs a test suite."""
    return any(is_test_runner(c) for c in call_commands(call)) or bool(
        re.search(r"(?i)(?:^|_)(?:run_)?tests?(?:$|_)", call.name)
    )


def is_status_probe(call: ToolCall) -> bool:
    """True when every command of the call only shows that things exist or run."""
    cmds = call_commands(call)
    return bool(cmds) and all(is_status_only(c) for c in cmds)


_POD_BAD_STATUS = frozenset(
    {"crashloopbackoff", "error", "imagepullbackoff", "errimagepull", "oomkilled", "pending", "containercreating",
     "createcontainerconfigerror", "init:error", "init:crashloopbackoff", "evicted", "terminating"}
)  # fmt: skip


def pods_unhealthy(output: str) -> bool:
    """``kubectl get pods`` table output with a pod not ready or in a bad status."""
    lines = [ln.split() for ln in output.strip().splitlines() if ln.strip()]
    if not lines or "READY" not in lines[0] or "STATUS" not in lines[0]:
        return False
    ready_col, status_col = lines[0].index("READY"), lines[0].index("STATUS")
    for row in lines[1:]:
        if len(row) <= max(ready_col, status_col):
            continue
        ready, status = row[ready_col], row[status_col].lower()
        m = re.fullmatch(r"(\d+)/(\d+)", ready)
        if status in _POD_BAD_STATUS or (m and status != "completed" and int(m.group(1)) < int(m.group(2))):
            return True
    return False


_HTTP_5XX = re.compile(r"^\s*5\d\d\s*$")


def result_failed(result: Event | None, *, strict: bool = False) -> bool:
    """True when a tool result reports failure.

    Structural signals first: the error flag, a non-zero exit code, a test runner's summary
    ("5 passed, 0 failed" is a pass). Without those, failure words in the output count unless
    ``strict`` (then only structural signals and a bare 5xx status code do).
    """
    if result is None or result.tool_result is None:
        return False
    r = result.tool_result
    if r.is_error or (r.exit_code is not None and r.exit_code != 0):
        return True
    output = r.output or ""
    summary = parse_test_summary(output)
    if summary is not None:
        return summary.failed > 0
    if _HTTP_5XX.match(output) or pods_unhealthy(output):
        return True
    if strict:
        return False
    return bool(FAILURE_OUTPUT.search(output[-4000:]))


# Harness log lines written as messages ("[2025-01-17 11:36:43 INFO] ...", "X - INFO - ...").
_LOG_LINE = re.compile(r"^\s*\[?\d{4}-\d\d-\d\d[ T]\d|^\S+ - (?:INFO|DEBUG|WARNING|ERROR) - ")


def is_log_line(text: str) -> bool:
    """True for a harness log line recorded as a message (not something an agent said)."""
    return bool(_LOG_LINE.search(text))


def submitted_text(args: object) -> str | None:
    """The summary/answer text a submission call carries, if any."""
    if isinstance(args, dict):
        for key in ("summary", "message", "answer", "result", "final_answer", "text", "output"):
            val = args.get(key)
            if isinstance(val, str):
                return val
    return None


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
