"""The canonical trace model: one :class:`Trace` per agent run, an ordered list of :class:`Event`.

Design rules (see ``docs/schema.md``):

* ``Event.seq`` (0..n-1) is the ordering truth; timestamps are optional.
* ``actor`` is the agent identity (``"Programmer"``, ``"WebSurfer"``), ``role``
  the chat role (``user``/``assistant``/...). They are not the same thing:
  AG2 records an assistant's turn with role ``user`` when another agent logs it.
* Nothing is thrown away: every event keeps its native record in ``raw`` and a
  pointer to where it came from in ``source``; fields a format has that the
  model does not are kept in ``extra``; the parts of a file that are not events
  (headers, envelopes) are kept in ``Trace.raw``.
* Replayed history (a resumed session re-sending earlier turns, a compaction
  summary) is kept, flagged ``is_copied_context``, so detectors can ignore it.
* Token counts are per call. Sources with cumulative counters are converted to
  deltas; the raw record keeps the original.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, model_validator

_T = TypeVar("_T")

SCHEMA_VERSION = "1.0"
"""Version of the canonical JSONL format written by ``mastkit traces convert``."""

EventKind = Literal[
    "message",
    "reasoning",
    "tool_call",
    "tool_result",
    "llm_call",
    "handoff",
    "plan",
    "system",
    "error",
    "termination",
    "artifact",
]
EVENT_KINDS: tuple[str, ...] = EventKind.__args__  # type: ignore[attr-defined]

Role = Literal["system", "user", "assistant", "tool", "environment"]

TerminatedBy = Literal["agent", "harness", "limit", "error", "user", "unknown"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=False, ser_json_inf_nan="constants")


# pydantic's settings for the dataclasses (events and their parts), the same as the models'
_DATA_CONFIG = ConfigDict(extra="forbid", ser_json_inf_nan="constants")
_NONE = type(None)
_OPT_STR: frozenset[type] = frozenset((str, _NONE))
_OPT_INT: frozenset[type] = frozenset((int, _NONE))
_OPT_BOOL: frozenset[type] = frozenset((bool, _NONE))
_OPT_FLOAT: frozenset[type] = frozenset((float, _NONE))


NON_AGENT_NAMES = frozenset({"user", "human", "system", "environment", "tool"})
"""Actor names (case-insensitive) that stand for people, the environment or tools, not agents."""


def is_agent_name(name: str | None) -> bool:
    """True for an actor name that is an agent: not empty and not one of :data:`NON_AGENT_NAMES`.

    The one rule for "who is an agent" — importers (which agents a trace lists), detectors,
    attributors, the report and the scorer all use it, so they agree on the set of agents.
    """
    return bool(name and name.strip()) and name.strip().lower() not in NON_AGENT_NAMES  # type: ignore[union-attr]


def _revalidate(obj: Any) -> None:
    """For a small dataclass whose values are not all of exactly the declared types: pydantic
    validates them, coercing what it can (``"3"`` for an int, as it did when these were models),
    and the results replace them; or it raises ``ValidationError``."""
    names = [f.name for f in dataclasses.fields(obj)]
    valid = _adapter(obj.__class__).validate_python({n: getattr(obj, n) for n in names})
    for n in names:
        object.__setattr__(obj, n, getattr(valid, n))


class Usage(_Model):
    """Token usage and cost of one model call (on an event) or of a whole run (on a trace)."""

    input_tokens: int | None = None
    """Prompt tokens, including cached ones."""
    output_tokens: int | None = None
    """Completion tokens, including reasoning tokens."""
    cached_input_tokens: int | None = None
    """Prompt tokens read from the provider's cache."""
    cache_write_tokens: int | None = None
    """Prompt tokens written to the provider's cache."""
    reasoning_tokens: int | None = None
    """Hidden reasoning tokens, when reported separately."""
    total_tokens: int | None = None
    """Total as reported by the source (not recomputed)."""
    cost_usd: float | None = None
    """Cost in US dollars, when the source reports it."""

    def __add__(self, other: Usage) -> Usage:
        def add(a: int | float | None, b: int | float | None) -> Any:
            if a is None:
                return b
            if b is None:
                return a
            return a + b

        return Usage(**{f: add(getattr(self, f), getattr(other, f)) for f in Usage.model_fields})

    def is_empty(self) -> bool:
        return all(getattr(self, f) is None for f in Usage.model_fields)


@dataclass(slots=True, frozen=True)
class SourceRef:
    """Where an event came from in the source, so evidence can link back to it. Immutable: events
    of different traces may share one (``/history/3``)."""

    __pydantic_config__ = _DATA_CONFIG

    path: str | None = None
    """The file, when it differs from the trace's first source path (multi-file traces)."""
    line: int | None = None
    """1-based line number (JSONL line, first line of a text-log block)."""
    end_line: int | None = None
    """Last line of a multi-line block."""
    offset: int | None = None
    """Byte offset of the record in the file, when known."""
    pointer: str | None = None
    """A JSON pointer (RFC 6901) to the record, e.g. ``/history/3``, or a native id (span id)."""

    def __post_init__(self) -> None:
        if not (
            type(self.path) in _OPT_STR and type(self.line) in _OPT_INT and type(self.end_line) in _OPT_INT
            and type(self.offset) in _OPT_INT and type(self.pointer) in _OPT_STR
        ):  # fmt: skip
            _revalidate(self)


@dataclass(slots=True)
class ToolCall:
    """One tool or function invocation issued by an agent."""

    __pydantic_config__ = _DATA_CONFIG

    name: str
    """Tool/function name (``bash`` for shell actions)."""
    call_id: str | None = None
    """Native call id, used to pair the call with its result."""
    arguments: Any = None
    """Parsed arguments (usually a dict); None when they could not be parsed."""
    arguments_raw: str | None = None
    """The arguments exactly as recorded (JSON string, command text)."""
    namespace: str | None = None
    """MCP server or tool set, when the format names one."""

    def __post_init__(self) -> None:
        if not (
            type(self.name) is str and type(self.call_id) in _OPT_STR and type(self.arguments_raw) in _OPT_STR
            and type(self.namespace) in _OPT_STR
        ):  # fmt: skip
            _revalidate(self)


@dataclass(slots=True)
class ToolResult:
    """The result of a tool call, as the agent saw it."""

    __pydantic_config__ = _DATA_CONFIG

    call_id: str | None = None
    """Id of the :class:`ToolCall` this answers."""
    name: str | None = None
    """Tool name, when recorded with the result."""
    output: str | None = None
    """Text rendering of the output."""
    is_error: bool | None = None
    """True when the tool reported failure; None when unknown."""
    exit_code: int | None = None
    """Process exit code for shell tools."""
    status: str | None = None
    """Native status word (completed, failed, rejected, timeout, ...)."""
    duration_ms: float | None = None
    """How long the tool ran."""

    def __post_init__(self) -> None:
        if not (
            type(self.call_id) in _OPT_STR and type(self.name) in _OPT_STR and type(self.output) in _OPT_STR
            and type(self.is_error) in _OPT_BOOL and type(self.exit_code) in _OPT_INT
            and type(self.status) in _OPT_STR and type(self.duration_ms) in _OPT_FLOAT
        ):  # fmt: skip
            _revalidate(self)


@dataclass(slots=True)
class Event:
    """One thing that happened in a run: a message, a tool call, a result, an error, ...

    Events (with :class:`ToolCall`, :class:`ToolResult` and :class:`SourceRef`) are slotted
    dataclasses, not pydantic models: a load builds one per message, and a pydantic instance
    costs several times more to create. They are validated where they come in: by the
    importers' builder (``mastkit.traces._build.make_event``), whenever a :class:`Trace` is
    validated (canonical JSONL, the store), and by :meth:`validate`. Constructing one directly
    checks only that a tool call / result payload matches ``kind``.
    """

    # a Trace built from Event objects validates them too (pydantic trusts dataclass instances)
    __pydantic_config__ = ConfigDict(_DATA_CONFIG, revalidate_instances="always")  # type: ignore[misc]

    seq: int
    """Position in the trace, 0..n-1: the ordering truth."""
    kind: EventKind
    """What the event is."""
    actor: str | None = None
    """Agent identity that produced the event (not the chat role)."""
    role: Role | None = None
    """Chat role, when the source has one."""
    content: str | None = None
    """Text: message body, reasoning, plan, error message, ..."""
    id: str | None = None
    """Native id (uuid, span id, event id)."""
    parent_id: str | None = None
    """Native id of the parent (span parent, Claude parentUuid, OpenHands cause)."""
    llm_call_id: str | None = None
    """Groups the events produced by one model response."""
    thread_id: str | None = None
    """Sub-agent, sidechain or branch the event belongs to."""
    segment: int = 0
    """Index of the file/continuation the event came from (resumed sessions)."""
    subtype: str | None = None
    """Finer kind, e.g. ``context_compaction``, ``rate_limit``, ``phase_start``."""
    recipients: list[str] | None = None
    """Addressees of a message or handoff in multi-agent systems."""
    phase: str | None = None
    """Phase/stage/node name (ChatDev phase, LangGraph node)."""
    tool_call: ToolCall | None = None
    """Set when ``kind == 'tool_call'``."""
    tool_result: ToolResult | None = None
    """Set when ``kind == 'tool_result'``."""
    model: str | None = None
    """Model that produced the event."""
    usage: Usage | None = None
    """Token usage of the model call that produced this event (counted once per call)."""
    started_at: datetime | None = None
    """When the event started (or happened)."""
    ended_at: datetime | None = None
    """When the event ended, for spans."""
    is_copied_context: bool = False
    """True for replayed history (resumed sessions, re-sent transcripts, compaction input)."""
    source: SourceRef | None = None
    """Where in the source the event came from."""
    raw: Any = None
    """The native record, unchanged (dict, list or text)."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Format-specific fields the model has no place for."""

    def __post_init__(self) -> None:
        if self.tool_call is not None and self.kind != "tool_call":
            raise ValueError(f"event {self.seq}: tool_call is set but kind is {self.kind!r}")
        if self.tool_result is not None and self.kind != "tool_result":
            raise ValueError(f"event {self.seq}: tool_result is set but kind is {self.kind!r}")

    @classmethod
    def validate(cls, data: Any) -> Event:
        """An event from a dict (or an event), every field checked as pydantic checks a model;
        raises :class:`pydantic.ValidationError`."""
        event: Event = _adapter(Event).validate_python(data)
        return event

    def replace(self, **changes: Any) -> Event:
        """A copy with some fields changed (not validated, like ``model_copy(update=...)``)."""
        return dataclasses.replace(self, **changes)

    def is_agent_step(self) -> bool:
        """A live step taken by an agent: not replayed context, not a tool's output, not written by a
        user, the system or a tool (by role), and by an actor that :func:`is_agent_name` accepts."""
        return (
            not self.is_copied_context
            and self.kind != "tool_result"
            and self.role not in ("user", "system", "tool")
            and is_agent_name(self.actor)
        )

    def is_user_message(self) -> bool:
        """A message written by a person or simulated user: role ``user``, kind ``message``, and an
        actor that :func:`is_agent_name` does not count as an agent (``user``, ``human``)."""
        return (
            bool(self.actor)
            and self.role == "user"
            and self.kind == "message"
            and not is_agent_name(self.actor)
        )

    def text(self) -> str:
        """A one-string rendering of the event for search and display."""
        if self.tool_call is not None:
            args = self.tool_call.arguments_raw
            if args is None and self.tool_call.arguments is not None:
                args = str(self.tool_call.arguments)
            return f"{self.tool_call.name}({args or ''})"
        if self.tool_result is not None:
            return self.tool_result.output or ""
        return self.content or ""


class AgentInfo(_Model):
    """An agent taking part in the run."""

    name: str
    """Agent identity, as used in ``Event.actor``."""
    role_description: str | None = None
    """What the agent is for, when stated."""
    model: str | None = None
    """Model behind the agent."""
    system_prompt: str | None = None
    """The agent's system prompt."""
    tools: list[Any] | None = None
    """Tool definitions available to the agent."""
    parent: str | None = None
    """The agent that spawned this one (sub-agents)."""
    extra: dict[str, Any] = Field(default_factory=dict)
    """Other per-agent fields."""


class Termination(_Model):
    """How the run ended."""

    reason: str | None = None
    """Normalised reason: submitted, final_answer, max_steps, cost_limit, context_limit, timeout,
    error, aborted, user, unknown, ..."""
    by: TerminatedBy = "unknown"
    """Who ended it: the agent itself, the harness, a limit, an error, the user."""
    native: str | None = None
    """The source's own termination value, verbatim (exit_status, stop_reason, ...)."""
    at_seq: int | None = None
    """Event seq of the termination signal, when there is one."""


class Outcome(_Model):
    """Whether the run achieved its task, as recorded by the source."""

    success: bool | None = None
    """Benchmark or user verdict; None when not recorded."""
    score: float | None = None
    """Reward, score or recall, when recorded."""
    metrics: dict[str, Any] = Field(default_factory=dict)
    """Other metrics (pass@1, recall, TGC, ...)."""
    final_output: str | None = None
    """The run's final answer or submission."""
    ground_truth: str | None = None
    """Expected answer, when the source carries one."""


LabelKind = Literal["failure_mode", "attribution", "other"]
LabelSource = Literal["human", "llm", "dataset", "unknown"]


@dataclass(slots=True)
class Label:
    """An annotation that came with the source (human or model labels, attribution).

    A slotted dataclass like :class:`Event` (a MAST-Data trace carries ~50): values of exactly
    the declared types are taken as they are, anything else is validated by pydantic, which
    coerces what it can or raises ``ValidationError``."""

    __pydantic_config__ = _DATA_CONFIG

    kind: LabelKind = "failure_mode"
    """What is labelled: a failure mode, the responsible agent/step, or something else."""
    taxonomy: str | None = None
    """Taxonomy id for failure-mode labels, e.g. ``mast``."""
    code: str | None = None
    """Mode code in that taxonomy (``FM-1.3``), after mapping legacy codes."""
    native_code: str | None = None
    """The label exactly as the source wrote it."""
    present: bool | None = None
    """Verdict; None when the source says the label is unavailable."""
    annotator: str | None = None
    """Who labelled: ``annotator_1``, ``o1``, ``who_and_when``, ..."""
    source: LabelSource = "unknown"
    """Kind of labeller."""
    agent: str | None = None
    """Responsible agent (attribution labels)."""
    step: int | None = None
    """Responsible step: the Event.seq it points at (attribution labels)."""
    reason: str | None = None
    """Free-text reason or note."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Other label fields."""

    def __post_init__(self) -> None:
        if not (
            type(self.kind) is str and self.kind in _LABEL_KINDS and type(self.taxonomy) in _OPT_STR
            and type(self.code) in _OPT_STR and type(self.native_code) in _OPT_STR
            and type(self.present) in _OPT_BOOL and type(self.annotator) in _OPT_STR
            and type(self.source) is str and self.source in _LABEL_SOURCES and type(self.agent) in _OPT_STR
            and type(self.step) in _OPT_INT and type(self.reason) in _OPT_STR and type(self.extra) is dict
            and all(type(k) is str for k in self.extra)
        ):  # fmt: skip
            _revalidate(self)


_LABEL_KINDS = frozenset(LabelKind.__args__)  # type: ignore[attr-defined]
_LABEL_SOURCES = frozenset(LabelSource.__args__)  # type: ignore[attr-defined]


Segmentation = Literal["structured", "heuristic", "raw_unsegmented"]


class Trace(_Model):
    """One agent run, in canonical form."""

    schema_version: str = SCHEMA_VERSION
    """Canonical format version."""
    trace_id: str
    """Stable id: the native run/session id when there is one, else derived from the file."""
    source_format: str
    """Importer that produced the trace (``claude_code``, ``mast_data``, ...)."""
    source_paths: list[str] = Field(default_factory=list)
    """Files the trace was read from."""
    framework: str | None = None
    """Agent framework or harness (ChatDev, AG2, Codex, ...)."""
    framework_version: str | None = None
    """Its version, when recorded."""
    model: str | None = None
    """Main model of the run, when one is recorded."""
    benchmark: str | None = None
    """Benchmark or data set the task comes from."""
    task_id: str | None = None
    """Task id within the benchmark."""
    task: str | None = None
    """The instruction or question given to the system."""
    agents: list[AgentInfo] = Field(default_factory=list)
    """Agents taking part."""
    events: list[Event] = Field(default_factory=list)
    """What happened, in order."""
    started_at: datetime | None = None
    """Start of the run."""
    ended_at: datetime | None = None
    """End of the run."""
    usage: Usage | None = None
    """Whole-run totals as recorded by the source (see :meth:`total_usage` for the sum over events)."""
    termination: Termination | None = None
    """How the run ended."""
    outcome: Outcome | None = None
    """Whether it succeeded."""
    labels: list[Label] = Field(default_factory=list)
    """Labels that came with the source."""
    segmentation: Segmentation = "structured"
    """How events were found: from a structured format, by heuristics over text, or not at all."""
    raw: Any = None
    """The parts of the source record that are not events (header, envelope, summary)."""
    extra: dict[str, Any] = Field(default_factory=dict)
    """Other trace-level fields."""

    @model_validator(mode="before")
    @classmethod
    def _check_version(cls, data: Any) -> Any:
        if isinstance(data, dict):
            version = data.get("schema_version", SCHEMA_VERSION)
            if not isinstance(version, str) or version.split(".")[0] != SCHEMA_VERSION.split(".")[0]:
                raise ValueError(
                    f"unsupported canonical schema_version {version!r}; "
                    f"this mastkit reads {SCHEMA_VERSION} (upgrade mastkit)"
                )
        return data

    @model_validator(mode="after")
    def _check_seq(self) -> Trace:
        for i, event in enumerate(self.events):
            if event.seq != i:
                raise ValueError(f"event seq must be 0..n-1 in order; event {i} has seq {event.seq}")
        return self

    # -- derived views -------------------------------------------------------------

    def content_hash(self) -> str:
        """Hash of what the trace says, not of where it was read from: the annotation cache key and
        the identity of a stored trace.

        It covers the canonical JSON without ``source_paths``, each event's ``source`` pointer and
        the native ``raw`` records (trace and events). Those say where the trace came from (and
        some importers keep the file name in ``raw``); annotators never read them. So a folder
        moved or copied elsewhere hashes the same, while any change to events, task, agents,
        outcome, labels, ids or ``extra`` gives a new hash. (The trace id is content: an importer
        that derives it from a folder name, as Who&When's does, gives a new hash when that
        folder is renamed.) The ``t2:`` prefix names this recipe
        (``t1:`` hashed the whole JSON, locations included).
        """
        content = self.model_dump_json(exclude=_PROVENANCE)
        return "t2:" + hashlib.sha256(content.encode()).hexdigest()[:32]

    def agent_names(self) -> list[str]:
        """The agents of the run: the listed agents that are agents (:func:`is_agent_name`), else the
        agent actors of the events, in order of first appearance."""
        listed = [a.name for a in self.agents if is_agent_name(a.name)]
        return listed or [a for a in self.actors() if is_agent_name(a)]

    def actors(self) -> list[str]:
        """Distinct event actors, in order of first appearance."""
        seen: dict[str, None] = {}
        for e in self.events:
            if e.actor is not None:
                seen.setdefault(e.actor, None)
        return list(seen)

    def kind_counts(self) -> Counter[str]:
        """Number of events of each kind."""
        return Counter(e.kind for e in self.events)

    def tool_calls(self) -> Iterator[tuple[Event, Event | None]]:
        """Each tool call paired with its result: matched by call id, else the next result.

        Call ids are not always unique (models and SDKs reuse them within a run), so a call takes
        the first result with its id that comes after it and no earlier call has taken. A result
        whose id no call has is paired like one without an id."""
        call_ids = {
            e.tool_call.call_id for e in self.events if e.tool_call is not None and e.tool_call.call_id
        }
        results: dict[str, list[Event]] = {}
        unmatched: list[Event] = []
        for e in self.events:
            if e.tool_result is not None:
                if e.tool_result.call_id in call_ids:
                    results.setdefault(e.tool_result.call_id, []).append(e)
                else:
                    unmatched.append(e)
        for e in self.events:
            if e.tool_call is None:
                continue
            same_id = results.get(e.tool_call.call_id or "", [])
            result = next((r for r in same_id if r.seq > e.seq), same_id[0] if same_id else None)
            if result is not None:
                same_id.remove(result)
            else:
                result = next((r for r in unmatched if r.seq > e.seq), None)
                if result is not None:
                    unmatched.remove(result)
            yield e, result

    def total_usage(self) -> Usage:
        """Sum of per-event usage; falls back to the recorded trace total when events carry none."""
        total = Usage()
        for e in self.events:
            if e.usage is not None:
                total = total + e.usage
        if total.is_empty() and self.usage is not None:
            return self.usage
        return total


_PROVENANCE: Any = {"source_paths": True, "raw": True, "events": {"__all__": {"source", "raw"}}}
"""Fields :meth:`Trace.content_hash` leaves out: where the trace and its events were read from."""


@cache
def _adapter(cls: type[_T]) -> TypeAdapter[_T]:
    return TypeAdapter(cls)
