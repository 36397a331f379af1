"""The span-tree walk shared by the span-based importers (``otlp``, ``openai_agents``).

Both formats record a run as a tree of timed spans. Each importer reads its own format into its
own span class and decides which events each span gives; what is the same for both lives here:

* :func:`span_tree` puts the spans of one trace in a tree, children in start-time order;
* :func:`walk` visits that tree depth first and calls the importer at the start and at the end of
  each span;
* :class:`SpanContext` holds the state of one trace during the walk. Its ``emit`` turns a span
  into an event (the span's first event carries the span's id and record, later ones hang below
  it), and it turns the messages of a model call into events: the new input messages, then the
  output messages with their tool calls.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, Protocol, TypeVar

from mastkit.traces._build import TraceBuilder, parse_arguments, source_ref
from mastkit.traces.importers._llm_spans import Msg, PendingCalls, SeenContext
from mastkit.traces.model import ToolCall, ToolResult


class SpanLike(Protocol):
    """What the shared code reads of an importer's span."""

    span_id: str
    parent_id: str | None
    start: datetime | None
    end: datetime | None
    raw: Any
    """The span as recorded: the ``raw`` of its first event."""
    line: int | None
    """The JSONL line the span is on, if any."""
    pointer: str
    """A JSON pointer to the span in its record."""
    order: int
    """The span's place in the file, which breaks ties between equal start times."""


S = TypeVar("S", bound=SpanLike)
C = TypeVar("C")


def sort_key(span: SpanLike) -> tuple[bool, float, int]:
    """Spans by start time, those without one last, then in file order."""
    return (span.start is None, span.start.timestamp() if span.start else 0.0, span.order)


@dataclass
class SpanTree(Generic[S]):
    """The spans of one trace as a tree (see :func:`span_tree`)."""

    by_id: dict[str, S]
    """Each span by its id (the first copy when a span was exported twice), in file order."""
    roots: list[S]
    """The spans whose parent is not in the trace, in start-time order."""
    children: dict[str, list[S]]
    """The children of each span id, in start-time order."""
    duplicates: int
    """How many spans were left out as a second copy of a span id."""

    @property
    def spans(self) -> list[S]:
        """The spans (one copy of each id) in file order."""
        return list(self.by_id.values())


def span_tree(spans: list[S]) -> SpanTree[S]:
    """The tree of one trace's spans. A span whose parent is missing (or is itself) is a root."""
    by_id: dict[str, S] = {}
    for s in spans:
        by_id.setdefault(s.span_id, s)
    children: dict[str, list[S]] = {}
    roots: list[S] = []
    for s in by_id.values():
        if s.parent_id is not None and s.parent_id in by_id and s.parent_id != s.span_id:
            children.setdefault(s.parent_id, []).append(s)
        else:
            roots.append(s)
    for lst in children.values():
        lst.sort(key=sort_key)
    roots.sort(key=sort_key)
    return SpanTree(by_id, roots, children, len(spans) - len(by_id))


def walk(
    ctx: C,
    tree: SpanTree[S],
    begin: Callable[[C, S, str | None], str | None],
    end: Callable[[C, S, str | None], None],
) -> None:
    """Visit every span of the tree once, depth first from the roots, children in start-time order.

    ``begin(ctx, span, actor)`` is called when a span is entered, with the actor its parent passed
    down (None at a root), and returns the actor the span's children get; ``end(ctx, span, actor)``
    is called after the span's children, with the actor ``begin`` returned. Spans whose parents form
    a loop are below no root: the earliest of them then starts a walk of its own, until none is left.
    """
    visited: set[str] = set()
    children = tree.children
    todo = tree.roots
    while True:
        stack: list[tuple[bool, S, str | None]] = [(True, r, None) for r in reversed(todo)]
        while stack:
            enter, span, actor = stack.pop()
            if not enter:
                end(ctx, span, actor)
                continue
            if span.span_id in visited:
                continue
            visited.add(span.span_id)
            own = begin(ctx, span, actor)
            stack.append((False, span, own))
            for child in reversed(children.get(span.span_id, [])):
                stack.append((True, child, own))
        rest = [s for s in tree.by_id.values() if s.span_id not in visited]
        if not rest:
            return
        todo = [min(rest, key=sort_key)]


class SpanContext(ABC, Generic[S]):
    """The state of one trace while its span tree is walked, and the events every span format
    gives alike. An importer subclasses it to say what a span's first event records of the span
    (:meth:`span_extra`) and to add state of its own."""

    def __init__(self, b: TraceBuilder) -> None:
        self.b = b
        self.seen = SeenContext()
        """The messages already in the trace, to spot re-sent history."""
        self.pending = PendingCalls()
        """Tool calls a model output announced that no tool span has answered yet."""
        self.first_done: set[str] = set()
        """The ids of the spans that have given an event."""
        self.task: str | None = None
        """The first user message of the trace."""
        self.models: Counter[str] = Counter()
        """How many model calls each model made."""
        self.tool_call_ids: dict[str, str | None] = {}
        """The tool call id of each tool span that has started and not ended."""
        self.handed_from: dict[str, str] = {}
        """For each agent that was handed over to, the agent that handed over."""

    @abstractmethod
    def span_extra(self, span: S, extra: dict[str, Any]) -> None:
        """Add to ``extra`` what the first event of ``span`` records of the span (its type, name,
        status ...), keeping any key already set."""

    def emit(self, span: S, kind: str, *, at_end: bool = False, **fields: Any) -> int:
        """Add an event of ``span`` to the trace and return its ``seq``.

        The span's first event takes the span's id, parent, record and end time (with
        :meth:`span_extra` in its ``extra``); later events get the span as their parent. An event
        starts when its span starts, or with ``at_end`` when the span ends. Fields that are None
        are left out."""
        fields.setdefault("started_at", span.end if at_end else span.start)
        if span.span_id not in self.first_done:
            self.first_done.add(span.span_id)
            fields.update(id=span.span_id, parent_id=span.parent_id, raw=span.raw)
            fields.setdefault("ended_at", span.end)
            self.span_extra(span, fields.setdefault("extra", {}))
        else:
            fields.update(parent_id=span.span_id)
        fields["source"] = source_ref(line=span.line, pointer=span.pointer)
        return self.b.add_fields(kind, {k: v for k, v in fields.items() if v is not None}).seq

    def handoff(
        self,
        span: S,
        from_agent: str | None,
        to_agent: str | None,
        *,
        otherwise: str | None,
        extra: dict[str, Any],
    ) -> None:
        """A ``handoff`` event (subtype ``transfer``) of a span in which ``from_agent`` hands over
        to ``to_agent``; the content is ``handoff to <agent>``, or ``otherwise`` when the target is
        not known. The handover is remembered: the target's own agent span is below the hander."""
        if to_agent and from_agent:
            self.handed_from[to_agent] = from_agent
        self.emit(
            span,
            "handoff",
            actor=from_agent,
            subtype="transfer",
            recipients=[to_agent] if to_agent else None,
            content=f"handoff to {to_agent}" if to_agent else otherwise,
            extra=extra,
        )

    def input_events(self, span: S, inputs: list[Msg], actor: str | None) -> dict[str, Any]:
        """Events for the input messages of a model call (``span``, made by ``actor``) that are
        new to the trace; history the call re-sends is skipped. Returns the start of the call's
        ``extra``: how many input messages the call had and how many of them were re-sent."""
        copied = 0
        for m, is_copy in self.seen.split(inputs):
            if is_copy:
                copied += 1
                continue
            self.seen.add(m)
            self.input_event(span, m, actor)
        return {"input_messages": len(inputs), "copied_input_messages": copied}

    def input_event(self, span: S, m: Msg, actor: str | None) -> None:
        """The event of one new input message: a tool result (answering the pending call it
        names), the system prompt (also the actor's), a user message (the first one is the task),
        or an assistant turn the trace never produced, flagged as copied context."""
        extra: dict[str, Any] = {"input_of": span.span_id}
        if m.role == "tool":
            _found, cid = self.pending.take(m.tool_call_id, None)
            tr = ToolResult(call_id=cid, name=m.name, output=m.text)
            self.emit(span, "tool_result", actor="environment", role="tool", tool_result=tr, extra=extra)
        elif m.role == "system":
            if actor is not None and m.text:
                self.b.agent(actor, system_prompt=m.text)
            self.emit(
                span,
                "message",
                actor="system",
                role="system",
                subtype="system_prompt",
                content=m.text,
                extra=extra,
            )
        elif m.role == "user":
            if self.task is None and m.text:
                self.task = m.text
            self.emit(span, "message", actor=m.name or "user", role="user", content=m.text, extra=extra)
        else:
            # An assistant turn the trace never produced: earlier history replayed into this call.
            if m.calls:
                extra["tool_calls"] = [
                    {"name": c.name, "id": c.call_id, "arguments": c.arguments} for c in m.calls
                ]
            self.emit(
                span,
                "message",
                actor=actor,
                role="assistant",
                content=m.text or m.reasoning,
                is_copied_context=True,
                extra=extra,
            )

    def output_events(self, span: S, m: Msg, common: dict[str, Any]) -> None:
        """The events of one output message of a model call, at the span's end: its reasoning,
        its text (with the message's finish reason, if it has one, in ``extra``) and one
        ``tool_call`` per call (each now waits for its result). ``common`` holds the fields they
        all share (actor, role, model, llm_call_id)."""
        self.seen.add(m)
        if m.reasoning:
            self.emit(span, "reasoning", at_end=True, content=m.reasoning, **common)
        if m.text:
            fin = {"finish_reason": m.finish_reason} if m.finish_reason else {}
            self.emit(span, "message", at_end=True, content=m.text, extra=fin, **common)
        for c in m.calls:
            args, raw_args = parse_arguments(c.arguments)
            self.pending.add(c.call_id, c.name)
            tc = ToolCall(name=c.name, call_id=c.call_id, arguments=args, arguments_raw=raw_args)
            self.emit(span, "tool_call", at_end=True, tool_call=tc, **common)
