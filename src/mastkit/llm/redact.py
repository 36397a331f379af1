"""Redact a whole trace (or annotation) once, before anything is rendered, cut or elided.

Providers redact each outgoing message, but by then the trace has been cut into windows,
parts and head/tail elisions: a secret that straddles a cut loses its vendor prefix and goes
out in halves that no pattern recognises. :func:`redact_trace` redacts every string that came
from the trace as a whole string first, so no cut can split a secret; the provider's message
redaction stays as a second net.

Dict values are redacted knowing their key: ``{"password": "hunter2x"}`` or
``{"SecretAccessKey": "..."}`` lose the value even though the value alone looks like any word
(:meth:`~mastkit.providers.Redactor.redact_field`).

Counts: each distinct string is redacted once per call (a tool output repeated in the event's
``raw`` record is counted once).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable
from typing import Any, NamedTuple, TypeVar

from mastkit.providers.redact import Redactor, is_credential_name
from mastkit.traces.model import AgentInfo, Event, Label, Trace

__all__ = ["RedactedTrace", "Scrubber", "redact_trace"]

_T = TypeVar("_T")
_MIN_LEN = 6
"""Shorter strings are left alone unless their field name says they are credentials."""


class RedactedTrace(NamedTuple):
    """A redacted copy of a trace and what was removed."""

    trace: Trace
    counts: Counter[str]
    """Secrets removed, by kind."""


class Scrubber:
    """Redacts strings and nested JSON-like values with one :class:`Redactor`, remembering each
    distinct string's result (so repeated text costs nothing and is counted once) and summing
    the counts in :attr:`counts`."""

    def __init__(self, redactor: Redactor | None = None) -> None:
        self.redactor = redactor or Redactor()
        self.counts: Counter[str] = Counter()
        self._seen: dict[str, str] = {}
        self._fields: dict[tuple[str, str], str] = {}
        self._names: dict[str, bool] = {}

    def text(self, value: str) -> str:
        """``value`` redacted."""
        if len(value) < _MIN_LEN:
            return value
        done = self._seen.get(value)
        if done is None:
            done, found = self.redactor.redact(value)
            self.counts.update(found)
            self._seen[value] = done
            self._seen.setdefault(done, done)  # idempotent: the result needs no second pass
        return done

    def opt(self, value: str | None) -> str | None:
        return None if value is None else self.text(value)

    def field(self, name: str, value: str) -> str:
        """``value`` held under the key ``name`` (a credential name takes the whole value)."""
        credential = self._names.get(name)
        if credential is None:
            credential = self._names[name] = is_credential_name(name)
        if not credential:
            return self.text(value)
        key = (name, value)
        done = self._fields.get(key)
        if done is None:
            done, found = self.redactor.redact_field(name, value)
            self.counts.update(found)
            self._fields[key] = done
        return done

    def value(self, obj: Any) -> Any:
        """A JSON-like value (dicts, lists, strings, anything else kept) with every string
        redacted; unchanged parts are returned as they are, not copied."""
        if isinstance(obj, str):
            return self.text(obj)
        if isinstance(obj, dict):
            out: dict[Any, Any] | None = None
            for i, (k, v) in enumerate(obj.items()):
                nk = self.text(k) if isinstance(k, str) else k
                if isinstance(v, str) and isinstance(k, str):
                    nv: Any = self.field(k, v)
                else:
                    nv = self.value(v)
                if out is None and (nk is not k or nv is not v):
                    out = dict(list(obj.items())[:i])
                if out is not None:
                    out[nk] = nv
            return obj if out is None else out
        if isinstance(obj, (list, tuple)):
            items = [self.value(v) for v in obj]
            if all(a is b for a, b in zip(items, obj, strict=True)):
                return obj
            return items if isinstance(obj, list) else tuple(items)
        return obj

    def strings(self, values: list[str] | None) -> list[str] | None:
        if values is None:
            return None
        out = [self.text(v) for v in values]
        return values if all(a is b for a, b in zip(out, values, strict=True)) else out

    # -- trace parts --------------------------------------------------------------------------

    def event(self, e: Event) -> Event:
        changes: dict[str, Any] = {}
        set_changed(changes, "actor", e.actor, self.opt)
        set_changed(changes, "content", e.content, self.opt)
        set_changed(changes, "phase", e.phase, self.opt)
        set_changed(changes, "recipients", e.recipients, self.strings)
        set_changed(changes, "raw", e.raw, self.value)
        set_changed(changes, "extra", e.extra, self.value)
        if e.tool_call is not None:
            c = e.tool_call
            tc: dict[str, Any] = {}
            set_changed(tc, "name", c.name, self.text)
            set_changed(tc, "arguments", c.arguments, self.value)
            set_changed(tc, "arguments_raw", c.arguments_raw, self.opt)
            set_changed(tc, "namespace", c.namespace, self.opt)
            if tc:
                changes["tool_call"] = dataclasses.replace(c, **tc)
        if e.tool_result is not None:
            r = e.tool_result
            tr: dict[str, Any] = {}
            set_changed(tr, "name", r.name, self.opt)
            set_changed(tr, "output", r.output, self.opt)
            set_changed(tr, "status", r.status, self.opt)
            if tr:
                changes["tool_result"] = dataclasses.replace(r, **tr)
        return dataclasses.replace(e, **changes) if changes else e

    def agent(self, a: AgentInfo) -> AgentInfo:
        changes: dict[str, Any] = {}
        for name in ("name", "role_description", "system_prompt", "parent"):
            set_changed(changes, name, getattr(a, name), self.opt)
        set_changed(changes, "tools", a.tools, self.value)
        set_changed(changes, "extra", a.extra, self.value)
        return a.model_copy(update=changes) if changes else a

    def label(self, lab: Label) -> Label:
        changes: dict[str, Any] = {}
        for name in ("agent", "reason", "native_code", "annotator"):
            set_changed(changes, name, getattr(lab, name), self.opt)
        set_changed(changes, "extra", lab.extra, self.value)
        return dataclasses.replace(lab, **changes) if changes else lab

    def trace(self, t: Trace) -> Trace:
        changes: dict[str, Any] = {}
        set_changed(changes, "task", t.task, self.opt)
        events = [self.event(e) for e in t.events]
        if any(a is not b for a, b in zip(events, t.events, strict=True)):
            changes["events"] = events
        agents = [self.agent(a) for a in t.agents]
        if any(a is not b for a, b in zip(agents, t.agents, strict=True)):
            changes["agents"] = agents
        labels = [self.label(lab) for lab in t.labels]
        if any(a is not b for a, b in zip(labels, t.labels, strict=True)):
            changes["labels"] = labels
        if t.termination is not None:
            term: dict[str, Any] = {}
            set_changed(term, "reason", t.termination.reason, self.opt)
            set_changed(term, "native", t.termination.native, self.opt)
            if term:
                changes["termination"] = t.termination.model_copy(update=term)
        if t.outcome is not None:
            out: dict[str, Any] = {}
            set_changed(out, "final_output", t.outcome.final_output, self.opt)
            set_changed(out, "ground_truth", t.outcome.ground_truth, self.opt)
            set_changed(out, "metrics", t.outcome.metrics, self.value)
            if out:
                changes["outcome"] = t.outcome.model_copy(update=out)
        set_changed(changes, "raw", t.raw, self.value)
        set_changed(changes, "extra", t.extra, self.value)
        return t.model_copy(update=changes) if changes else t


def set_changed(changes: dict[str, Any], name: str, value: _T, fn: Callable[[_T], Any]) -> None:
    """Record ``fn(value)`` under ``name`` when it differs from ``value`` (None stays None)."""
    if value is None:
        return
    new = fn(value)
    if new is not value:
        changes[name] = new


def redact_trace(trace: Trace, redactor: Redactor | None = None) -> RedactedTrace:
    """A copy of ``trace`` with every string that came from it redacted, and the counts.

    Covered: the task, each event's actor, content, phase, recipients, tool call (name, raw and
    parsed arguments, recursively), tool result (name, output, status), native record and
    extra fields; the agents (name, description, system prompt, tools, extra); labels;
    termination; outcome (final output, ground truth, metrics); the trace's raw record and
    extra. Ids, formats, models and the chat role are kept (they identify, they do not carry
    text). Unchanged parts are shared with ``trace``, not copied: treat the result as read-only.
    Redacting the result again changes nothing.
    """
    s = Scrubber(redactor)
    return RedactedTrace(s.trace(trace), s.counts)
