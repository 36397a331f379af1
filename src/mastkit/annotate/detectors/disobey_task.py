"""FM-1.1 Disobey Task Specification: the run breaks an explicit, checkable constraint of the task.

Only constraints that can be checked against the trace's structure are read, from the task, the
first user message and the system prompt (a policy):

* "do not change anything" / "read-only" / "investigate and report only": any state-changing
  call;
* "do not modify the tests" / "do not touch <path>": a change to a test file / to that path;
  "only touch the module with the bug": changes to two or more source files;
* "keep the (public) signature unchanged": an edit that rewrites a ``def``/``function``
  signature;
* "answer in one sentence" / "at most N words": the final answer is longer;
* a policy that a change needs the user's explicit yes/confirmation: a state-changing call whose
  last user message before it is not a yes (choosing an option or giving a payment method is
  not a yes to the listed action), or after which the agent asked a new question.

Absent when such a constraint exists and the run keeps it. Unknown when the task states none of
them: other constraints need the judge.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from mastkit.annotate.detectors._base import absent, detector, evidence_at, live_events, present, unknown
from mastkit.annotate.detectors._claims import affirms
from mastkit.annotate.detectors._signals import call_commands, is_state_change
from mastkit.annotate.model import Evidence, ModeVerdict
from mastkit.traces.model import Event, Trace

CODE, NAME = "FM-1.1", "disobey_task"

_NO_CHANGES = re.compile(
    r"(?i)\b(?:do not|don't|must not|never) (?:change|modify|touch|alter) anything\b|\bdo not make any changes\b|"
    r"\b(?:without|no) (?:making )?(?:any )?changes\b|\bread-only (?:task|investigation|access)\b|"
    r"\breport only\b|\bonly (?:investigate|report|diagnose)\b"
)
_NO_TESTS = re.compile(
    r"(?i)\b(?:do not|don't|must not|never) (?:modify|change|edit|touch|delete) (?:the |any )?tests?\b"
)
_NO_PATH = re.compile(
    r"(?i)\b(?:do not|don't|must not|never) (?:modify|change|edit|touch|delete) `?(?P<path>[\w./-]+\.\w{1,5})`?"
)
_ONE_MODULE = re.compile(r"(?i)\bonly (?:touch|change|modify|edit) (?:the )?(?:one )?(?:module|file)\b")
_KEEP_SIGNATURE = re.compile(
    r"(?i)\bkeep (?:the )?(?:public )?(?:signature|api|interface)s?\b.{0,40}\bunchanged\b|"
    r"\b(?:do not|don't) change (?:the )?(?:public )?(?:signature|api|interface)\b"
)
_ONE_SENTENCE = re.compile(r"(?i)\b(?:answer|reply|respond) in (?:one|a single) sentence\b")
_MAX_WORDS = re.compile(r"(?i)\b(?:at most|no more than|in under|under|within) (?P<n>\d{1,3}) words\b")
_CONFIRM_POLICY = re.compile(
    r"(?i)\b(?:explicit (?:user )?(?:'?yes'?|confirmation|consent)|confirm(?:ation)? (?:with|from) the user before|"
    r"(?:get|obtain) (?:the user's )?(?:explicit )?(?:'yes'|yes|confirmation))\b"
)
_SIGNATURE = re.compile(r"(?:def|function|func|fn)\s+(?P<name>\w+)\s*\((?P<params>[^)]*)\)")
_SOURCE = re.compile(r"\.(?:py|js|ts|tsx|jsx|go|rs|java|rb|php|c|cc|cpp|h|cs|kt|swift)$")
_FINAL_PREFIX = re.compile(r"(?i)^\W*(?:final(?: answer)?|answer)\s*:\s*")
_LOOKUP = re.compile(r"(?i)^(?:get|find|list|search|read|view|show|check|calculate|think)")


def _instructions(trace: Trace) -> str:
    first_user = next((e.content for e in trace.events if e.role == "user" and e.content), "")
    system = next((e.content for e in trace.events[:3] if e.role == "system" and e.content), "")
    return " ".join(x for x in (trace.task, first_user, system) if x)


def _paths(call: Event) -> set[str]:
    """Files a change names: path-like arguments, and redirect targets / arguments of its commands."""
    if call.tool_call is None:
        return set()
    args = call.tool_call.arguments
    found: set[str] = set()
    if isinstance(args, dict):
        for key in ("path", "file", "file_path", "filename", "target"):
            if isinstance(args.get(key), str):
                found.add(args[key])
    for c in call_commands(call.tool_call):
        found.update(c.writes_to)
        found.update(a for a in c.argv[1:] if "/" in a or _SOURCE.search(a))
    return found


def _final_answer(trace: Trace, live: list[Event]) -> Event | None:
    msgs = [e for e in live if e.kind == "message" and e.is_agent_step() and e.content]
    return msgs[-1] if msgs else None


def _sentences(text: str) -> int:
    return len([s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s.strip()])


def _changes(live: list[Event]) -> list[Event]:
    return [
        e
        for e in live
        if e.tool_call is not None
        and e.is_agent_step()
        and is_state_change(e.tool_call)
        and not re.search(r"(?i)transfer|submit|finish|done|think", e.tool_call.name)
    ]


def _signature_change(call: Event) -> str | None:
    args = call.tool_call.arguments if call.tool_call is not None else None
    if not isinstance(args, dict):
        return None
    old = next(
        (args[k] for k in ("old", "old_str", "old_string", "search") if isinstance(args.get(k), str)), None
    )
    new = next(
        (args[k] for k in ("new", "new_str", "new_string", "replace") if isinstance(args.get(k), str)), None
    )
    if old is None or new is None:
        return None
    before = {m.group("name"): m.group("params") for m in _SIGNATURE.finditer(old)}
    after = {m.group("name"): m.group("params") for m in _SIGNATURE.finditer(new)}
    changed = [n for n in before if n in after and " ".join(before[n].split()) != " ".join(after[n].split())]
    return changed[0] if changed else None


def _unconfirmed(live: list[Event], changes: list[Event]) -> Evidence | None:
    for call in changes:
        if call.tool_call is None or call_commands(call.tool_call) or _LOOKUP.match(call.tool_call.name):
            continue
        before = [e for e in live if e.seq < call.seq and e.kind == "message" and e.content]
        # The user's last word before the call must be a yes; agent messages after it that ask
        # nothing ("I'll proceed now") do not void it, a new question does.
        last_user = next((e for e in reversed(before) if e.role == "user"), None)
        reopened = last_user is not None and any(
            e.seq > last_user.seq and e.is_agent_step() and "?" in (e.content or "") for e in before
        )
        if last_user is None or reopened or not affirms(last_user.content or ""):
            return evidence_at(
                [call],
                note=f"{call.tool_call.name} runs without the user's explicit confirmation the policy requires",
            )
    return None


Check = Callable[[], Evidence | None]


def disobey_task(trace: Trace) -> ModeVerdict:
    """The run breaks an explicit, checkable constraint of the task or policy."""
    text = _instructions(trace)
    if not text:
        return unknown(CODE, NAME, "no task text")
    live = live_events(trace)
    changes = _changes(live)
    checks: list[tuple[str, Check]] = []
    if _NO_CHANGES.search(text):
        checks.append(
            (
                "no changes",
                lambda: evidence_at([changes[0]], note="the task forbids changes") if changes else None,
            )
        )
    if _NO_TESTS.search(text):

        def tests() -> Evidence | None:
            hit = next(
                (
                    c
                    for c in changes
                    if any(re.search(r"(?i)(?:^|/)tests?\b|test_|_test\.|\.test\.", p) for p in _paths(c))
                ),
                None,
            )
            return evidence_at([hit], note="changes a test file the task said not to modify") if hit else None

        checks.append(("tests untouched", tests))
    for m in _NO_PATH.finditer(text):
        path = m.group("path")

        def touched(path: str = path) -> Evidence | None:
            hit = next(
                (c for c in changes if any(p == path or p.endswith("/" + path) for p in _paths(c))), None
            )
            return (
                evidence_at([hit], note=f"changes {path}, which the task said not to touch") if hit else None
            )

        checks.append((f"{path} untouched", touched))
    if _ONE_MODULE.search(text):

        def one_module() -> Evidence | None:
            files = sorted({p for c in changes for p in _paths(c) if _SOURCE.search(p)})
            if len(files) < 2:
                return None
            hits = [c for c in changes if any(p in files for p in _paths(c))]
            return evidence_at(
                hits, note=f"changes {len(files)} source files ({', '.join(files)}); the task allows one"
            )

        checks.append(("one module", one_module))
    if _KEEP_SIGNATURE.search(text):

        def signature() -> Evidence | None:
            for c in changes:
                name = _signature_change(c)
                if name:
                    return evidence_at(
                        [c], note=f"changes the signature of {name}, which the task said to keep"
                    )
            return None

        checks.append(("signature kept", signature))
    final = _final_answer(trace, live)
    if final is not None and _ONE_SENTENCE.search(text):
        body = _FINAL_PREFIX.sub("", final.content or "")
        checks.append(
            (
                "one sentence",
                lambda: (
                    evidence_at([final], note=f"the answer has {_sentences(body)} sentences; one was asked")
                    if _sentences(body) > 1
                    else None
                ),
            )
        )
    words = _MAX_WORDS.search(text)
    if final is not None and words:
        limit = int(words.group("n"))
        count = len(_FINAL_PREFIX.sub("", final.content or "").split())
        checks.append(
            (
                "word limit",
                lambda: (
                    evidence_at([final], note=f"the answer has {count} words; at most {limit} were asked")
                    if count > limit
                    else None
                ),
            )
        )
    if _CONFIRM_POLICY.search(text) and changes:
        checks.append(("confirmation", lambda: _unconfirmed(live, changes)))
    if not checks:
        return unknown(CODE, NAME, "the task states no constraint the rules can check")
    findings = [ev for _name, check in checks if (ev := check()) is not None]
    if findings:
        return present(CODE, NAME, findings, "; ".join(f.note or "" for f in findings))
    return absent(
        CODE, NAME, "the run keeps the task's checkable constraints: " + ", ".join(n for n, _c in checks)
    )


# Registered by a call, not a decorator: mutmut does not mutate decorated functions.
detector(CODE, NAME)(disobey_task)
