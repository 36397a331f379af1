"""The ``rules`` attribution method: which agent and step caused a failure, without an LLM.

The signals are the single heuristics of :mod:`mastkit.attribute.heuristics`, tried in a fixed
order; the first that fires names the step, and the blamed agent is that step's actor (the
simulated user included). The order was tuned on the tuning sets of ``bench/attribution.py``
(Who&When Algorithm-Generated, the dev half of Who&When Hand-Crafted, the dev half of the
hand-labelled tau-bench airline runs and the first tau2-bench set of Grok runs); the held-out
halves and the blind sets are reported, not tuned on:

1. ``user_dispute`` — the user says the record the agent just looked up is wrong, naming a code
   or number that record shows and the agent relayed: the user's account, not the record, is
   blamed (a user correcting the agent with a value the agent never said is not).
2. ``user_withholds`` — the simulated user says it lacks an identifier its own instructions give
   it (the task field, where tau-bench and tau2-bench put them), never says it, and nothing is
   written: the user's claim is blamed.
3. ``user_ends_on_yes`` — the run ends on a user message that approves what the agent's last
   message proposed (not a hand-off), and no one else ended the run: the user is blamed.
4. ``error_step`` — the first agent action whose direct result is an error (a failing tool call,
   a terminal reply with a traceback or non-zero exit) or a silent run (exit code 0, nothing
   printed): the agent step that acted is blamed.
5. ``first_write`` — the first state-changing action (a tool named with a write verb). When its
   arguments hold a value nobody gave before (no user message, tool result or system prompt
   stated it), the write itself is the unverified assumption and is blamed; otherwise the
   decision was made where the agent proposed it, so the agent's last message before the write
   is blamed when only the user's confirmation sits between them (a greeting the agent sent
   before the user's request is not a proposal).
6. ``accepted_report`` — in a supervised run (an agent keeps a progress ledger), the supervisor
   declares the request satisfied: the worker report it accepted is blamed, since the run failed.
7. ``stall_report`` — the supervisor reports no progress or a loop: the last step of another
   agent before the report.
8. ``wrong_answer`` (only with the ground truth) — the first stated answer that does not contain
   the expected one.
9. Fallback, chosen by the run's structure: ``first_report`` — in a supervised run, the first
   step of a worker (the supervisor's plan and ledger are bookkeeping); otherwise
   ``first_action`` — the first agent step after the task statement, where an opening agent
   message whose code is run counts as that step.

``user_pivot`` (the user asks for another kind of change after the agent declined) is not in
the order: on blind tau-bench runs it blamed the user rightly in 1 of 5 firings, since whether the
user departed from its goal or followed the agent's wrong refusal is not visible in the events.
``user_quit`` (the run ends on the user's message while the agent waits for an answer, nothing
written) is not in it either: written from the first tau2 set, where it was right 4 times of 4,
it was right once in 4 firings on runs not used to write it (the gpt-4o fresh2 set and the
second, blind tau2 set): a user who leaves after the agent's wrong answer or needless transfer
ends the run the same way.

The rule detectors are no longer consulted: as the signal before the fallback they named the
labelled step in none of the tuning runs where they decided (0 of 5).

Only the events, who ended the run and the simulated user's instructions (``user_withholds``)
are read: never the outcome, the labels or the raw record, so the answer does not change with
the grade.
"""

from __future__ import annotations

from mastkit.annotate.detectors._claims import affirms
from mastkit.attribute import heuristics as h
from mastkit.attribute.model import Attribution
from mastkit.traces.model import Event, Trace

__all__ = ["CONFIDENCE", "attribute_by_rules", "decision_step"]

CONFIDENCE = {
    "user_dispute": 0.5,  # 0 of 0: decided no tuning run
    "user_withholds": 0.67,  # 1 of 1
    "user_ends_on_yes": 0.67,  # 1 of 1
    "error_step": 0.44,  # 35 of 80
    "first_write": 0.57,  # 22 of 38
    "unverified": 0.4,  # 1 of 3
    "accepted_report": 0.4,  # 3 of 8
    "stall_report": 0.18,  # 2 of 15
    "wrong_answer": 0.56,  # 8 of 14, with the ground truth
    "first_report": 0.57,  # 3 of 5
    "first_action": 0.44,  # 26 of 60
}
"""Confidence reported per signal: its measured exact-step precision on the tuning sets.

Of the tuning runs (Who&When Algorithm-Generated, Hand-Crafted dev, tau dev, tau2 grok) where the signal
decided the answer, the share where it named the labelled step, with one hit and one miss added
((hits + 1) / (runs + 2)) so that a signal seen in a handful of runs does not claim 0 or 1.
The counts are in the comments; ``wrong_answer`` is measured with the ground truth given.
"""


def decision_step(events: list[Event], write: Event) -> Event:
    """Where the decision to make ``write`` was taken.

    Walking back from the write: the agent's last text message, if nothing but the agent's own
    tool calls and at most one user confirmation ("yes", "go ahead", ...) lie in between and,
    in a run with a user, the user had spoken before that message (a greeting sent before the
    user's request decides nothing); otherwise the write itself.
    """
    first_user = next((i for i, e in enumerate(events) if h.is_user(e)), -1)
    confirmed = False
    for i in range(events.index(write) - 1, -1, -1):
        e = events[i]
        if h.is_user(e):
            if confirmed or not affirms(e.content or ""):
                return write
            confirmed = True
        elif h.is_step(e) and e.tool_call is None:
            return e if i > first_user else write
    return write


def _first_write(events: list[Event]) -> h.Finding | None:
    write = h.first_write_attempt(events)
    if write is None:
        return None
    unverified = h.unverified_action(events)
    if unverified is not None and unverified.step is write:
        return unverified
    name = write.tool_call.name if write.tool_call else "?"
    step = decision_step(events, write)
    where = "" if step is write else f", decided at event {step.seq}"
    return h.Finding("first_write", step, f"first state-changing action {name} at event {write.seq}{where}")


def _fallback(events: list[Event]) -> h.Finding | None:
    """No signal fired: the first report in a supervised run, else the first agent step that acts."""
    report = h.first_report(events)
    if report is not None:
        return h.Finding("first_report", report.step, f"no failure signal found; {report.reason}")
    first = h.first_action(events)
    if first is None:
        return None
    return h.Finding("first_action", first.step, f"no failure signal found; {first.reason}")


def attribute_by_rules(trace: Trace, *, ground_truth: str | None = None) -> Attribution:
    """Blame an agent and a step of a failed ``trace`` using the rule signals (see module doc)."""
    events = h.live_events(trace)
    if not events:
        return Attribution(method="rules", reason="empty trace", confidence=0.0)
    ended_by = trace.termination.by if trace.termination is not None else None
    found = (
        h.user_dispute(events)
        or h.user_withholds(events, trace.task)
        or h.user_ends_on_yes(events, ended_by=ended_by)
        or h.first_bad_result(events)
        or _first_write(events)
        or h.accepted_report(events)
        or h.stall_report(events)
        or h.wrong_answer(events, ground_truth)
    )
    if found is None:
        found = _fallback(events)
        if found is None:
            return Attribution(method="rules", reason="no agent step found", confidence=0.0)
    return Attribution(
        agent=found.agent,
        step=found.step.seq,
        reason=f"{found.signal}: {found.reason}",
        confidence=CONFIDENCE[found.signal],
        method="rules",
    )
