"""Single attribution heuristics: each names one step of a failed run as the decisive one, or nothing.

They read the trace's events, never its outcome, labels or raw record, so they can be measured
one by one and combined by :mod:`mastkit.attribute.rule_attributor`. One also reads the
simulated user's own instructions (``user_withholds``; tau-bench and tau2-bench put them in the
task field), which are what that agent was given, not how the run was graded.

* :func:`first_write` — the first state-changing action (a tool whose name is a write verb:
  book, cancel, update, delete, send, transfer, ...) that took effect; when none took effect,
  the first one attempted.
* :func:`first_error` — the first action whose result is an error (Who&When's strongest signal).
* :func:`first_bad_result` — the first action whose result is an error or a silent run (a
  program that exits cleanly but prints nothing: the step produced no evidence).
* :func:`first_unresolved_error` — the first action whose result is an error and that is not
  followed by a successful retry of the same tool (or, for executors that answer in messages,
  a clean run of the same agent's next code).
* :func:`unverified_action` — the first tool call with an argument value that appears nowhere
  before it in what others said: the user's words, tool results, the system prompt.
* :func:`user_pivot` — the (simulated) user as the responsible agent: after the agent declined
  or found nothing, the user asks for a different change, and a write carries it out.
* :func:`user_dispute` — the (simulated) user as the responsible agent: it disputes a record the
  agent has just looked up and relayed ("there's a mix-up, not through PHX"), naming a code or
  number that the record itself shows, so the user's account, not the record, is wrong.
* :func:`user_quit` — the (simulated) user as the responsible agent: it ends the run while the
  agent waits for its answer to a question, before anything was changed.
* :func:`user_withholds` — the simulated user says it lacks an identifier (its user id, ...) that
  its own instructions give it and never says it, and nothing gets written.
* :func:`user_ends_on_yes` — the user approves the action the agent proposed and ends the
  conversation in the same message, so the agent never gets to do it.
* :func:`stall_report`, :func:`wrong_answer`, :func:`detector_finding` — the Who&When signals
  (a supervisor reporting no progress, a stated answer that differs from the ground truth,
  the earliest rule-detector evidence).
* :func:`accepted_report` — in a supervised run, the worker report the supervisor accepted when
  it declared the request satisfied (in a failed run, that report's claim was wrong).
* :func:`first_action`, :func:`first_report` — structural fallbacks: the first step that acts
  (an opening message whose code is run counts), and in a supervised run the first report of a
  worker (the supervisor's plan and ledger are bookkeeping, not work).
* :func:`supervisor` — the agent that keeps a progress ledger, if any.
* :func:`first_agent_step`, :func:`last_agent_step` — the naive baselines.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass

from mastkit.annotate.detectors._base import detectors
from mastkit.annotate.detectors._claims import affirms, sentences
from mastkit.annotate.detectors._signals import FAILURE_OUTPUT
from mastkit.traces.model import Event, Trace, is_agent_name

__all__ = [
    "Finding",
    "accepted_report",
    "blind",
    "detector_finding",
    "first_action",
    "first_agent_step",
    "first_bad_result",
    "first_error",
    "first_report",
    "first_unresolved_error",
    "first_write",
    "first_write_attempt",
    "is_write_tool",
    "last_agent_step",
    "last_message",
    "live_events",
    "silent_run",
    "stall_report",
    "supervisor",
    "unverified_action",
    "user_dispute",
    "user_ends_on_yes",
    "user_pivot",
    "user_quit",
    "user_withholds",
    "wrong_answer",
]

# Executor-like agents whose messages are outputs of someone else's action.
_EXECUTORS = re.compile(r"(?i)(?:terminal|executor|computer|environment|tool|runner)")
_STALL = re.compile(
    r'(?is)"is_(?:progress_being_made)"\s*:\s*\{[^{}]*?"answer"\s*:\s*false'
    r'|"is_in_loop"\s*:\s*\{[^{}]*?"answer"\s*:\s*true|\bno progress (?:is being|has been) made\b'
)
# An executor's reply to code that ran cleanly and printed nothing.
_SILENT = re.compile(r"(?is)\A\s*exitcode:\s*0\b[^\n]*\n\s*code output:\s*\Z")
# A progress ledger: the structured self-assessment a supervising agent writes each round.
_LEDGER = re.compile(r'"(?:is_request_satisfied|is_progress_being_made|is_in_loop)"\s*:\s*\{')
_SATISFIED = re.compile(r'(?s)"is_request_satisfied"\s*:\s*\{[^{}]*?"answer"\s*:\s*true')
_ANSWER = re.compile(r"(?i)(?:final answer|the answer is|answer:|result is|result:)\s*(?P<ans>[^\n]{1,200})")

# fmt: off
WRITE_VERBS = frozenset({
    "activate", "add", "apply", "approve", "assign", "book", "buy", "cancel", "change", "charge",
    "close", "commit", "create", "deactivate", "delete", "deploy", "disable", "downgrade", "edit",
    "enable", "escalate", "exchange", "grant", "insert", "install", "kill", "merge", "modify",
    "move", "order", "patch", "pay", "post", "purchase", "push", "put", "reboot", "refund",
    "remove", "rename", "reopen", "replace", "reserve", "reset", "restart", "resume", "return",
    "revert", "revoke", "rollback", "rollout", "scale", "send", "set", "start", "stop", "submit",
    "suspend", "switch", "terminate", "toggle", "transfer", "uninstall", "update", "upgrade",
    "upload", "upsert", "write",
})
# fmt: on
"""Words that mark a tool as state-changing when they appear in its name (``update_reservation``)."""

# What a user says when asking for each kind of write (the tool's verb -> words in a request).
_REQUEST_WORDS: dict[str, tuple[str, ...]] = {
    "book": ("book", "reserve", "purchase", "buy"),
    "reserve": ("book", "reserve"),
    "cancel": ("cancel",),
    "update": ("chang", "modif", "updat", "reschedul", "switch", "move", "upgrad", "downgrad"),
    "modify": ("chang", "modif", "reschedul", "switch", "move"),
    "change": ("chang", "modif", "switch"),
    "send": ("send", "compensat", "certificate", "voucher"),
    "refund": ("refund",),
    "delete": ("delete", "remove"),
    "remove": ("remove", "delete"),
}
_DECLINE = re.compile(
    r"(?i)\b(?:unable to|(?:can ?not|can't|cannot) (?:be )?(?:modif|chang|cancel|remov|assist|help|proceed)"
    r"|not (?:possible|allowed|permitted|eligible)|there are no (?:available|direct|nonstop)"
    r"|no (?:direct|nonstop|available) flights?)"
)
# A user saying that what it was just shown is wrong.
_DISPUTE = re.compile(
    r"(?i)\b(?:mix-?up|mixed up|misunderstanding|(?:that|this|it)(?:'s| is) (?:not (?:right|correct|accurate)"
    r"|wrong|incorrect)|(?:does ?n[o']t|does not) (?:look|seem) right|(?:is|are|was|were) (?:wrong|incorrect)"
    r"|there (?:must be|seems to be|is) (?:a|an|some) (?:mistake|error|confusion))"
)
# Record-like tokens a user can name: codes (PHX, HAT035, VA5SGQ), numbers of three digits or
# more, and hyphen-grouped numbers taken whole (555-123-2002, 2024-05-15: a shared "555" is no match).
_RECORD_TOKEN = re.compile(r"\b[A-Z][A-Z0-9]{2,}\b|\b\d+(?:-\d+)+\b|\b\d{3,}\b")
# Request words that keep their meaning with a "re" prefix (rebook, resend); "move" does not (remove).
_REDO_VERBS = frozenset({"book", "send", "order", "submit", "schedul"})
_NAME_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


@dataclass(frozen=True)
class Finding:
    """One heuristic's answer: the step it blames, and why."""

    signal: str
    step: Event
    reason: str

    @property
    def agent(self) -> str | None:
        return self.step.actor


def blind(trace: Trace) -> Trace:
    """A copy of ``trace`` without what grades it: outcome, labels, raw record, extra, task.

    The task field is dropped too: some importers put the simulated user's hidden goal there.
    """
    return trace.model_copy(update={"outcome": None, "labels": [], "raw": None, "extra": {}, "task": None})


def live_events(trace: Trace) -> list[Event]:
    """The trace's events, replayed context left out."""
    return [e for e in trace.events if not e.is_copied_context]


def is_agent(e: Event) -> bool:
    """An agent's event, its tool outputs included (``is_output`` tells those apart)."""
    return is_agent_name(e.actor) and e.role != "user"


def is_output(e: Event) -> bool:
    """An event that reports the outcome of a previous action (tool result, executor reply)."""
    return e.kind == "tool_result" or bool(e.actor and _EXECUTORS.search(e.actor))


def is_step(e: Event) -> bool:
    """A substantive agent step: the agent says or does something (not a tool output)."""
    return is_agent(e) and not is_output(e) and bool(e.content or e.tool_call)


def is_user(e: Event) -> bool:
    """A message from a person or simulated user (not a system prompt, not a tool output)."""
    return e.role == "user" and not is_agent_name(e.actor) and not is_output(e)


def failed(e: Event) -> bool:
    """Whether an output event reports a failure (error flag, non-zero exit, error text at the end)."""
    if e.tool_result is not None:
        r = e.tool_result
        if r.is_error or (r.exit_code not in (None, 0)):
            return True
        return bool(FAILURE_OUTPUT.search((r.output or "")[-4000:]))
    text = e.content or ""
    if re.search(r"(?i)exitcode:\s*[1-9]|execution failed", text):
        return True
    return bool(FAILURE_OUTPUT.search(text[-4000:]))


def silent_run(e: Event) -> bool:
    """Whether an output event reports a program that exited cleanly (exit code 0) and printed nothing.

    Only results that carry an exit code count: an empty answer from an ordinary tool is not a run.
    """
    if e.tool_result is not None:
        r = e.tool_result
        return r.exit_code == 0 and not (r.output or "").strip()
    return bool(_SILENT.search(e.content or ""))


def acting_step(events: list[Event], before: int) -> Event | None:
    """The last agent (non-executor) step before index ``before``; None when a user's own tool
    call comes first (tau2-bench telecom: the user runs a speed test on its phone), since then the
    output answers the user's action, not an agent's."""
    for e in reversed(events[:before]):
        if e.tool_call is not None and is_user(e):
            return None
        if is_agent(e) and not is_output(e):
            return e
    return None


def last_message(events: list[Event], before: int, *, since: int = 0) -> Event | None:
    """The agent's last text message (a step with no tool call) in ``events[since:before]``."""
    return next((e for e in reversed(events[since:before]) if is_step(e) and e.tool_call is None), None)


def _result_index(events: list[Event], i: int) -> int | None:
    """Index of the output answering the tool call at ``i`` (same call id, else the next output)."""
    call = events[i].tool_call
    call_id = call.call_id if call is not None else None
    for j in range(i + 1, len(events)):
        e = events[j]
        if e.tool_result is not None and call_id and e.tool_result.call_id == call_id:
            return j
        if is_output(e) and (not call_id or e.tool_result is None or not e.tool_result.call_id):
            return j
        if is_step(e) and e.tool_call is None:
            return None
    return None


def _name_words(name: str) -> list[str]:
    return [w.lower() for w in _NAME_WORDS.findall(name)]


def is_write_tool(name: str) -> bool:
    """Whether a tool name reads as state-changing (one of its words is a write verb)."""
    return any(w in WRITE_VERBS for w in _name_words(name))


def _writes(events: list[Event]) -> Iterator[tuple[int, Event, bool]]:
    """Every write call: (index, event, whether its result is clean)."""
    for i, e in enumerate(events):
        if e.tool_call is not None and is_step(e) and is_write_tool(e.tool_call.name):
            j = _result_index(events, i)
            yield i, e, j is None or not failed(events[j])


# -- the heuristics ---------------------------------------------------------------------------------


def first_agent_step(events: list[Event]) -> Finding | None:
    """The first substantive agent step after the task statement.

    The task statement is the first user or non-agent message, or else the opening message
    (multi-agent logs often open with an agent restating the task it was given).
    """
    first_task = next((i for i, e in enumerate(events) if e.role == "user" or not is_agent(e)), 0)
    for e in events[first_task + 1 :]:
        if is_step(e):
            return Finding("first_action", e, "first agent step")
    if is_step(events[first_task]):  # an agent's opening message and nothing after it
        return Finding("first_action", events[first_task], "first agent step")
    return None


def first_action(events: list[Event]) -> Finding | None:
    """The first agent step that does something, the opening message included when it acts.

    Like :func:`first_agent_step`, but an opening agent message whose action is carried out (the
    next event is its output) is that step. Multi-agent logs often open with an agent restating
    its task, which is why the opening message is skipped; one that already runs code is not a
    mere restatement.
    """
    if not events:
        return None
    if is_step(events[0]) and len(events) > 1 and is_output(events[1]):
        return Finding("first_action", events[0], "first agent step (the opening message acts)")
    return first_agent_step(events)


def supervisor(events: list[Event]) -> str | None:
    """The agent that supervises the run by keeping a progress ledger, if there is one.

    A ledger is a structured self-assessment written each round (Magentic-One's Orchestrator:
    ``is_request_satisfied``, ``is_progress_being_made``, ``is_in_loop``). The run counts as
    supervised only when some other agent also takes a step.
    """
    boss = next((e.actor for e in events if is_step(e) and e.content and _LEDGER.search(e.content)), None)
    if boss is None or not any(is_step(e) and e.actor != boss for e in events):
        return None
    return boss


def _report_before(events: list[Event], i: int, boss: str) -> Event | None:
    """The last step before index ``i`` of an agent other than ``boss`` (tool outputs excluded)."""
    return next((x for x in reversed(events[:i]) if is_step(x) and x.actor != boss), None)


def first_report(events: list[Event]) -> Finding | None:
    """In a supervised run: the first step of a worker (an agent other than the supervisor).

    The supervisor's opening plan, ledger and routing restate the task; the first piece of work
    the team builds on is the first worker's report.
    """
    boss = supervisor(events)
    if boss is None:
        return None
    e = next(x for x in events if is_step(x) and x.actor != boss)
    return Finding("first_report", e, f"first report to the supervisor {boss}")


def accepted_report(events: list[Event]) -> Finding | None:
    """The report a supervisor accepted when it declared the request satisfied.

    Only failed runs are attributed, so a "request satisfied" verdict was wrong; it rests on the
    last report of another agent before it, whose claim is blamed.
    """
    boss = supervisor(events)
    if boss is None:
        return None
    for i, e in enumerate(events):
        if e.actor == boss and is_step(e) and e.content and _SATISFIED.search(e.content):
            report = _report_before(events, i, boss)
            if report is not None:
                return Finding(
                    "accepted_report", report, f"{boss} accepts it as satisfying the request at event {e.seq}"
                )
    return None


def last_agent_step(events: list[Event]) -> Finding | None:
    """The last substantive agent step."""
    e = next((x for x in reversed(events) if is_step(x)), None)
    return Finding("last_action", e, "last agent step") if e is not None else None


def first_write_attempt(events: list[Event]) -> Event | None:
    """The first state-changing call, whether or not it took effect."""
    return next((e for _, e, _ in _writes(events)), None)


def first_write(events: list[Event]) -> Finding | None:
    """The first state-changing action that took effect (else the first one attempted)."""
    writes = list(_writes(events))
    done = next(((e, ok) for _, e, ok in writes if ok), None) or next(((e, ok) for _, e, ok in writes), None)
    if done is None:
        return None
    e, ok = done
    name = e.tool_call.name if e.tool_call else "?"
    return Finding("first_write", e, f"first state-changing action {name}" + ("" if ok else " (failed)"))


def first_error(events: list[Event]) -> Finding | None:
    """The first agent action whose direct result is an error, resolved later or not."""
    for i, e in enumerate(events):
        if is_output(e) and failed(e):
            actor = acting_step(events, i)
            if actor is not None:
                return Finding("error_step", actor, f"its action failed at event {e.seq}")
    return None


def first_bad_result(events: list[Event]) -> Finding | None:
    """The first agent action whose direct result is an error or a silent run.

    A program that exits cleanly but prints nothing gave the team no evidence, yet the run goes
    on as if it had; the step that ran it is blamed like a failed one.
    """
    for i, e in enumerate(events):
        if not is_output(e):
            continue
        silent = silent_run(e)
        if silent or failed(e):
            actor = acting_step(events, i)
            if actor is not None:
                what = "ran and printed nothing" if silent else "failed"
                return Finding("error_step", actor, f"its action {what} at event {e.seq}")
    return None


def first_unresolved_error(events: list[Event]) -> Finding | None:
    """The first failed action not followed by a successful retry of the same call."""
    for i, e in enumerate(events):
        if not (is_output(e) and failed(e)):
            continue
        actor = acting_step(events, i)
        if actor is None:
            continue
        if _resolved(events, i, actor):
            continue
        return Finding("unresolved_error", actor, f"its action failed at event {e.seq} and was not redone")
    return None


def _resolved(events: list[Event], i: int, actor: Event) -> bool:
    """Whether the failure at ``i`` is followed by a clean retry by the same agent."""
    if actor.tool_call is not None:
        name = actor.tool_call.name
        for k in range(i + 1, len(events)):
            e = events[k]
            if e.tool_call is not None and e.actor == actor.actor and e.tool_call.name == name:
                j = _result_index(events, k)
                if j is not None and not failed(events[j]):
                    return True
        return False
    # message-based executor: the next reply of the same executor to the same agent
    for k in range(i + 1, len(events)):
        e = events[k]
        if is_output(e) and e.actor == events[i].actor and acting_step(events, k) is not None:
            prev = acting_step(events, k)
            if prev is not None and prev.actor == actor.actor:
                return not failed(e)
    return False


def _scalars(value: object, key: str = "") -> Iterator[tuple[str, str]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _scalars(v, str(k))
    elif isinstance(value, list):
        for v in value:
            yield from _scalars(v, key)
    elif isinstance(value, bool) or value is None:
        return
    elif isinstance(value, (int, float)):
        if value not in (0, 1):
            yield key, f"{value:g}" if isinstance(value, float) else str(value)
    elif isinstance(value, str):
        v = value.strip()
        if 2 <= len(v) <= 40 and len(v.split()) <= 3:
            yield key, v


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text.lower())


def _grounded(value: str, seen: str) -> bool:
    v = value.lower()
    if re.fullmatch(r"-?\d+(?:\.\d+)?", v):
        return re.search(rf"(?<![\d.]){re.escape(v)}(?:\.0+)?(?![\d])", seen) is not None
    return v in seen or v.replace("_", " ") in seen


def unverified_action(events: list[Event], *, writes_only: bool = True) -> Finding | None:
    """The first tool call whose argument values were never given by the user or a tool result."""
    seen = ""
    for e in events:
        call = e.tool_call
        if call is not None and is_step(e) and (not writes_only or is_write_tool(call.name)):
            args = call.arguments if isinstance(call.arguments, dict) else {}
            missing = [(k, v) for k, v in _scalars(args) if not _grounded(v, seen)]
            if missing:
                k, v = missing[0]
                return Finding("unverified", e, f"{call.name} uses {k}={v!r}, which nobody stated before")
        if not is_step(e):
            text = e.content or ""
            if e.tool_result is not None:
                text += " " + (e.tool_result.output or "")
            seen += " " + _norm(text)
        elif e.tool_call is not None and not is_write_tool(e.tool_call.name):
            # a read call's own arguments are visible in its result's context
            seen += " " + _norm(json.dumps(e.tool_call.arguments, default=str))
    return None


def _asks_for(text: str, words: tuple[str, ...]) -> bool:
    return any(re.search(rf"(?i)\b{re.escape(w)}", text) for w in words)


def _mentions(text: str, words: tuple[str, ...]) -> bool:
    """Whether ``text`` speaks of that kind of change at all, a plan included ("I'll rebook it myself")."""
    return _asks_for(text, words + tuple("re" + w for w in words if w in _REDO_VERBS))


def user_pivot(events: list[Event], *, window: int = 3) -> Finding | None:
    """The user asks for a different change after the agent declined, and a write carries it out.

    After an agent message that declines or finds nothing, the first clean write that follows
    is traced back to the user message (within ``window`` user turns of the decline) that asked
    for it; the user is blamed when it had not asked for that kind of change before the decline.
    """
    users = [i for i, e in enumerate(events) if is_user(e)]
    if len(users) < 2:
        return None
    writes = [
        (i, e) for i, e, ok in _writes(events) if ok and e.tool_call and "transfer" not in e.tool_call.name
    ]
    for i, e in enumerate(events):
        if not (is_step(e) and e.tool_call is None and e.content and _DECLINE.search(e.content)):
            continue
        later = [(j, w) for j, w in writes if j > i]
        if not later:
            continue
        j, w = later[0]
        name = w.tool_call.name if w.tool_call else "?"
        words = tuple(x for v in _name_words(name) if v in _REQUEST_WORDS for x in _REQUEST_WORDS[v])
        if not words or any(_mentions(events[u].content or "", words) for u in users if u < i):
            continue
        for u in [u for u in users if i < u < j][:window]:
            if _asks_for(events[u].content or "", words):
                reason = (
                    f"after the agent declined at event {e.seq}, the user asks for {name} (done at {w.seq})"
                )
                return Finding("user_pivot", events[u], reason)
    return None


def user_dispute(events: list[Event]) -> Finding | None:
    """The user disputes a record the agent has just looked up, naming a token the record shows.

    A user message that says what it was shown is wrong ("there's a mix-up", "that's not
    right") is blamed when, since the user's previous message, a tool answered cleanly with a
    non-empty record and the user's message names a code or number (``PHX``, ``HAT035``, ``1250``,
    ``555-123-2001`` whole) that this record contains and the agent's last message relayed: the
    user's account contradicts the record. A dispute of something the agent made up (no record
    behind it), or a correction naming a value the agent never said (the user's own line, when
    the agent picked another), is not blamed on the user.
    """
    last_user = 0
    for i, e in enumerate(events):
        if not is_user(e):
            continue
        if _DISPUTE.search(e.content or ""):
            records = " ".join(
                (x.tool_result.output if x.tool_result is not None else x.content) or ""
                for x in events[last_user:i]
                if x.kind == "tool_result" and not failed(x)
            )
            shown = set(_RECORD_TOKEN.findall(records))
            told = last_message(events, i, since=last_user)
            shown &= set(_RECORD_TOKEN.findall(told.content or "" if told is not None else ""))
            named = [t for t in _RECORD_TOKEN.findall(e.content or "") if t in shown]
            if named:
                return Finding(
                    "user_dispute", e, f"the user disputes the record looked up before it, naming {named[0]}"
                )
        last_user = i
    return None


def user_quit(events: list[Event]) -> Finding | None:
    """The user walks away from a question: the run ends on its message before anything changed.

    Fires when the last event is a user message, the agent's last message before it asks a
    question, the user had spoken before (it is answering, not opening the conversation) and no
    state-changing call was attempted anywhere in the run. The agent was waiting on the user,
    who ended the conversation instead ("###OUT-OF-SCOPE###", a stop, a goodbye), so nothing the
    user came for was done. Whether the question itself was reasonable is not visible here.
    """
    if not events or not is_user(events[-1]):
        return None
    if sum(is_user(e) for e in events) < 2 or first_write_attempt(events) is not None:
        return None
    asked = last_message(events, len(events) - 1)
    if asked is None or "?" not in (asked.content or ""):
        return None
    return Finding("user_quit", events[-1], f"the user ends the run instead of answering event {asked.seq}")


# A user saying it lacks something ("I don't have my user ID", "I can't find it", "no idea").
_LACKS = re.compile(
    r"(?i)\b(?:(?:do|does|did) not|(?:do|does|did)n['’]?t|can(?:not|['’]?t)|ha(?:ve|s)(?: not|n['’]?t)"
    r"|unable to|no longer)\s+(?:\w+\s+){0,2}?(?:have|know|remember|recall|find|locate|access|got)\b"
    r"|\bno idea\b"
)
# An identifier: a word of five or more characters mixing letters and digits (mia_kim_4397, JMO1MG).
_IDENTIFIER = re.compile(r"\b(?=\w*\d)(?=\w*[A-Za-z])\w{5,}\b")
# Words that name the user's own identity, and the phrases that introduce it ("You are X").
_IDENTITY_WORDS = frozenset({"user", "username", "account", "profile", "customer", "login", "member"})
_INTRODUCES_SELF = re.compile(r"(?i)\b(?:you are|i am|your name is|my name is)\s*:?\s*$")
# Words too generic to tell one kind of identifier from another.
_GENERIC = frozenset({
    "id", "ids", "number", "numbers", "code", "codes", "no", "details", "detail", "information", "info",
    "the", "my", "your", "it", "its", "is", "are", "and", "or", "of", "for", "with", "to", "me", "that",
    "this", "those", "these", "them", "either", "any", "right", "now", "on", "at", "handy", "you", "i",
    "we", "us", "our", "can", "could", "would", "please", "provide", "have", "be", "so", "if", "also",
    "moment", "currently", "sure", "all", "just", "yet", "access",
})  # fmt: skip
# A sentence asking the user to approve what the agent is about to do ("Shall I proceed?",
# "Please confirm", "Does everything look correct?"); a report ("I'm pleased to confirm") is not.
_ASKS_APPROVAL = re.compile(
    r"(?i)\b(?:confirm|proceed|go ahead|shall i|should i|are you sure|yes/no"
    r"|(?:is|does|do) (?:that|this|everything|all|these|the above)(?: all)? (?:look |looks |sound |sounds )?"
    r"(?:correct|right|ok(?:ay)?|good|accurate))"
)
_AS_A_REQUEST = re.compile(r"(?i)\?|\blet me know\b|\bplease\b|\breply\b|\byes/no\b")
# A proposal to hand the user over: approving it ends the conversation by design.
_HANDOFF = re.compile(
    r"(?i)\btransfer|\bhuman agent|\bsupervisor|\brepresentative|\bhand (?:you )?(?:off|over)"
)


def _kind_words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z]+", text.lower()) if w not in _GENERIC and len(w) > 1}


def _goal_identifiers(goal: str) -> Iterator[tuple[str, set[str]]]:
    """Each identifier the goal holds, with the words that say what it is: the few words before
    it ("Your user id is X" -> user), or the identity words when it introduces the user itself
    ("You are X")."""
    for m in _IDENTIFIER.finditer(goal):
        before = re.split(r"[.\n;]", goal[: m.start()])[-1]
        kinds = _kind_words(" ".join(before.split()[-4:]))
        if _INTRODUCES_SELF.search(before):
            kinds |= _IDENTITY_WORDS
        yield m.group(), kinds


def user_withholds(events: list[Event], goal: str | None) -> Finding | None:
    """The (simulated) user says it lacks an identifier that its own instructions give it.

    ``goal`` is the simulated user's instructions (tau-bench puts them in ``Trace.task``); with
    none, nothing fires. Fires at the first user message that answers an agent question by
    saying it does not have or know something ("I don't have my user ID"; "I don't have those
    with me" refers back to what the question asked for), when the instructions hold an
    identifier of that kind (a word mixing letters and digits, said to be the user's id,
    reservation, ...) that the user never says anywhere in the run, and no state-changing call
    was attempted: the user withheld what the agent needed, and nothing it came for was done.
    A user who truly lacks the thing it names (its instructions give no such identifier) is not
    blamed: the agent should have asked for something else.
    """
    if not goal or first_write_attempt(events) is not None:
        return None
    users = [i for i, e in enumerate(events) if is_user(e)]
    said = " ".join(events[i].content or "" for i in users).lower()
    held = [(token, kinds) for token, kinds in _goal_identifiers(goal) if token.lower() not in said]
    if not held:
        return None
    for i in users:
        text = events[i].content or ""
        lack = _LACKS.search(text)
        if lack is None:
            continue
        asked = last_message(events, i)
        if asked is None or "?" not in (asked.content or ""):
            continue
        claimed = _kind_words(re.split(r"[.!?]", text[lack.end() :])[0])
        if not claimed:
            # "I don't have those": what it lacks is what the question asked for
            claimed = _kind_words(" ".join(q for q in sentences(asked.content or "") if "?" in q))
        for token, kinds in held:
            if claimed & kinds:
                reason = f"the user says it lacks its {' '.join(sorted(claimed & kinds))} identifier, which its instructions give ({token})"
                return Finding("user_withholds", events[i], reason)
    return None


def user_ends_on_yes(events: list[Event], *, ended_by: str | None = None) -> Finding | None:
    """The user approves the agent's proposed action and ends the conversation in the same message.

    Fires when the run's last event is a user message that says yes, the agent's last message
    before it asks for approval ("Shall I proceed?", "Please confirm"), and the run was not ended
    by someone else (``ended_by``: who ended it, when the trace records it; "user" or unknown
    fits). The agent never got a turn to do what was approved, so the user is blamed.
    """
    if not events or not is_user(events[-1]) or ended_by not in (None, "user", "unknown"):
        return None
    asked = last_message(events, len(events) - 1)
    if asked is None or _HANDOFF.search(asked.content or "") or not affirms(events[-1].content or ""):
        return None
    if not any(_ASKS_APPROVAL.search(x) and _AS_A_REQUEST.search(x) for x in sentences(asked.content or "")):
        return None
    return Finding(
        "user_ends_on_yes",
        events[-1],
        f"the user approves event {asked.seq} and ends the run before it is done",
    )


def stall_report(events: list[Event]) -> Finding | None:
    """A supervisor reports no progress or a loop: the last step of another agent before it."""
    for i, e in enumerate(events):
        if is_agent(e) and e.content and _STALL.search(e.content):
            other = next(
                (x for x in reversed(events[:i]) if is_agent(x) and not is_output(x) and x.actor != e.actor),
                None,
            )
            if other is not None:
                return Finding("stall_report", other, f"{e.actor} reports no progress at event {e.seq}")
    return None


def _norm_answer(text: str) -> str:
    return re.sub(r"[^a-z0-9.]+", " ", text.lower()).strip()


def wrong_answer(events: list[Event], ground_truth: str | None) -> Finding | None:
    """The first agent message stating an answer that does not contain the expected one."""
    gt = _norm_answer(ground_truth or "")
    if not gt:
        return None
    for e in events:
        if is_agent(e) and not is_output(e) and e.content:
            m = _ANSWER.search(e.content)
            if m and gt not in _norm_answer(m.group("ans")):
                reason = f"states '{m.group('ans')[:60]}', expected '{(ground_truth or '')[:60]}'"
                return Finding("wrong_answer", e, reason)
    return None


def detector_finding(trace: Trace, events: list[Event]) -> tuple[Finding, str] | None:
    """The earliest evidence of any rule detector that fires, mapped to the agent step at or before it.

    Returns the finding and the detector's mode code. The detectors see a blinded copy of the trace.
    """
    hits: list[tuple[int, str]] = []
    seen = blind(trace)
    for det in detectors():
        v = det(seen)
        if v.verdict == "present":
            hits += [(ev.seq_start, v.code) for ev in v.evidence if ev.seq_start is not None]
    if not hits:
        return None
    seq, code = min(hits)
    idx = next((i for i, e in enumerate(events) if e.seq >= seq), len(events) - 1)
    target = events[idx] if is_agent(events[idx]) and not is_output(events[idx]) else acting_step(events, idx)
    if target is None:
        return None
    return Finding("detector", target, f"first rule finding {code} at event {seq}"), code
