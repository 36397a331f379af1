"""FM-1.3 Step Repetition: the same tool call (or the same message) repeated without progress.

Present when, ignoring replayed context:
* an identical call (same tool, same arguments) is made 3+ times and the repeats return the
  same output as the first, with no state-changing call in between (twice is too common in
  healthy runs — a re-read, a status poll — to count; a test run again after a reboot or a
  settings change is a re-check, even when it fails the same way); or
* an agent sends the same substantive message (40+ characters, not a log line) 3+ times —
  short courtesy lines ("Can I help with anything else?") repeated after the work is done are
  a termination problem (FM-1.5), not a repeated step; or
* an agent's message and the message that follows it (each 20+ characters) are both repeated
  word for word later (the same step, answered the same way: e.g. the same code meeting the
  same error).
Repeated words are no repeated step when each time they come with new work: when every
occurrence makes tool calls (those before the next message) and no two make the same ones — the
same lead-in line before calls on different records ("Let me check the next reservation.", each
time another reservation id) is a scan making progress.
Absent when the trace has enough structured steps and neither happens.
"""

from __future__ import annotations

import itertools
from collections import defaultdict

from mastkit.annotate.detectors._base import absent, detector, evidence_at, live_events, present, unknown
from mastkit.annotate.detectors._signals import (
    canonical_call,
    is_log_line,
    is_state_change,
    structured_enough,
)
from mastkit.annotate.model import Evidence, ModeVerdict
from mastkit.traces.model import Event, Trace

CODE, NAME = "FM-1.3", "step_repetition"

_MIN_MESSAGE = 40
"""A message sent 3+ times must be this long: short courtesy lines repeat in healthy runs."""
_MIN_EXCHANGE = 20
"""Each side of a repeated message + reply must be this long (a pair repeating is stronger)."""


def _substantive(text: str, minimum: int = _MIN_MESSAGE) -> bool:
    return len(text) >= minimum and not is_log_line(text)


def _output(result: Event | None) -> str | None:
    return (
        None
        if result is None or result.tool_result is None
        else " ".join((result.tool_result.output or "").split())
    )


def _calls_after(trace: Trace, live: set[int]) -> dict[int, tuple[str, ...]]:
    """For each live message (by seq): the calls made after it, up to the next message."""
    out: dict[int, tuple[str, ...]] = {}
    current: int | None = None
    made: list[str] = []
    for e in trace.events:
        if e.seq not in live:
            continue
        if e.kind == "message" and e.content:
            if current is not None:
                out[current] = tuple(made)
            current, made = e.seq, []
        elif e.tool_call is not None and current is not None:
            made.append(canonical_call(e.tool_call))
    if current is not None:
        out[current] = tuple(made)
    return out


def _new_work_each_time(messages: list[Event], calls: dict[int, tuple[str, ...]]) -> bool:
    """Whether every one of these messages makes tool calls and no two make the same ones."""
    made = [calls.get(e.seq, ()) for e in messages]
    return all(made) and len(set(made)) == len(made)


def _repeated_exchanges(trace: Trace, live: set[int], calls: dict[int, tuple[str, ...]]) -> list[Evidence]:
    """An agent message + its reply, both seen before verbatim (a step redone with the same outcome)."""
    msgs = [e for e in trace.events if e.seq in live and e.kind == "message" and e.content]
    folded = [" ".join((e.content or "").split()) for e in msgs]
    norm = [text.lower() for text in folded]
    seen: dict[tuple[str, str], int] = {}
    found: list[Evidence] = []
    for i in range(len(msgs) - 1):
        first = msgs[i]
        if (
            first.role in ("user", "system")
            or not _substantive(folded[i], _MIN_EXCHANGE)
            or not _substantive(folded[i + 1], _MIN_EXCHANGE)
        ):
            continue
        key = (norm[i], norm[i + 1])
        if key in seen and not _new_work_each_time([msgs[seen[key]], first], calls):
            j = seen[key]
            found.append(
                evidence_at(
                    [msgs[i], msgs[i + 1]],
                    note=f"events {msgs[j].seq}-{msgs[j + 1].seq} repeated word for word",
                    text=first.text(),
                )
            )
        elif key not in seen:
            seen[key] = i
    return found


def step_repetition(trace: Trace) -> ModeVerdict:
    """Same tool call repeated with the same result, or the same message sent again and again."""
    if not structured_enough(trace, 4):
        return unknown(CODE, NAME, "too few structured events to judge repetition")
    live = {e.seq for e in live_events(trace)}
    calls: dict[str, list[tuple[Event, Event | None]]] = defaultdict(list)
    order: list[str] = []
    changes: list[int] = []
    for call, result in trace.tool_calls():
        if call.seq not in live or call.tool_call is None:
            continue
        key = canonical_call(call.tool_call)
        calls[key].append((call, result))
        order.append(key)
        if is_state_change(call.tool_call):
            changes.append(call.seq)
    findings: list[Evidence] = []
    for hits in calls.values():
        # a state change between two identical calls starts a new run: the same check again
        # after a reboot or a settings change is a re-check
        runs: list[list[tuple[Event, Event | None]]] = [[hits[0]]]
        for prev, cur in itertools.pairwise(hits):
            if any(prev[0].seq < x < cur[0].seq for x in changes):
                runs.append([])
            runs[-1].append(cur)
        for run in runs:
            first_out = _output(run[0][1])
            same = [c for c, r in run[1:] if _output(r) == first_out]
            if len(same) >= 2:
                events = [run[0][0], *same]
                findings.append(
                    evidence_at(
                        events,
                        note=f"{len(events)} identical calls with identical output",
                        text=events[0].text(),
                    )
                )
    made = _calls_after(trace, live)
    texts: dict[tuple[str, str], list[Event]] = defaultdict(list)
    n_msgs = 0
    for e in trace.events:
        if e.seq in live and e.kind == "message" and e.content and e.role != "user":
            n_msgs += 1
            folded = " ".join(e.content.split())
            if _substantive(folded):  # before lower-casing: a log line's level is in capitals
                texts[(e.actor or "", folded.lower())].append(e)
    for hits2 in texts.values():
        if len(hits2) >= 3 and not _new_work_each_time(hits2, made):
            findings.append(evidence_at(hits2, note=f"same message sent {len(hits2)} times"))
    findings.extend(_repeated_exchanges(trace, live, made))
    if findings:
        findings.sort(key=lambda ev: ev.seq_start or 0)
        return present(CODE, NAME, findings, f"{len(findings)} repeated step(s) without a change of state")
    if len(order) >= 3 or n_msgs >= 6:
        return absent(CODE, NAME, "no tool call or message is repeated without progress")
    return unknown(CODE, NAME, "too few tool calls or messages to judge repetition")


# Registered by a call, not a decorator: mutmut does not mutate decorated functions.
detector(CODE, NAME)(step_repetition)
