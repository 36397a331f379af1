"""Library verbs behind ``mastkit traces ls|show|stats|convert`` (the CLI wraps these, same names)."""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any

import orjson
from pydantic import BaseModel, Field

from mastkit.errors import TraceLoadError
from mastkit.traces.load import PathLike, iter_load
from mastkit.traces.model import Event, Trace


class TraceSummary(BaseModel):
    """One line of ``mastkit traces ls``."""

    trace_id: str
    source_format: str
    path: str
    framework: str | None
    model: str | None
    events: int
    agents: list[str]
    tool_calls: int
    success: bool | None
    termination: str | None
    labels: int


def summarize(trace: Trace) -> TraceSummary:
    """A one-line summary of a trace."""
    return TraceSummary(
        trace_id=trace.trace_id,
        source_format=trace.source_format,
        path=trace.source_paths[0] if trace.source_paths else "",
        framework=trace.framework,
        model=trace.model,
        events=len(trace.events),
        agents=trace.agent_names(),
        tool_calls=sum(1 for e in trace.events if e.kind == "tool_call"),
        success=trace.outcome.success if trace.outcome else None,
        termination=trace.termination.reason if trace.termination else None,
        labels=len(trace.labels),
    )


def ls(
    paths: PathLike | Iterable[PathLike], *, format: str | None = None
) -> Iterator[TraceSummary | TraceLoadError]:
    """Summaries of the traces found in ``paths`` (errors inline, one per bad file or record)."""
    for item in iter_load(paths, format=format):
        yield item if isinstance(item, TraceLoadError) else summarize(item)


def show(
    trace: Trace, *, agents: Iterable[str] | None = None, kinds: Iterable[str] | None = None
) -> list[Event]:
    """The events of ``trace`` for a timeline, optionally only some agents and/or event kinds."""
    agent_set = {a.lower() for a in agents} if agents else None
    kind_set = set(kinds) if kinds else None
    return [
        e
        for e in trace.events
        if (agent_set is None or (e.actor or "").lower() in agent_set)
        and (kind_set is None or e.kind in kind_set)
    ]


class TraceStats(BaseModel):
    """Counts over a set of traces (``mastkit traces stats``)."""

    traces: int = 0
    events: int = 0
    errors: int = 0
    by_format: dict[str, int] = Field(default_factory=dict)
    by_framework: dict[str, int] = Field(default_factory=dict)
    by_agent: dict[str, int] = Field(default_factory=dict)
    """Events per actor."""
    by_kind: dict[str, int] = Field(default_factory=dict)
    """Events per kind."""
    tool_calls: dict[str, int] = Field(default_factory=dict)
    """Tool calls per tool name."""
    tool_errors: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    outcomes: dict[str, int] = Field(default_factory=dict)
    """success / failure / unknown."""
    error_list: list[dict[str, Any]] = Field(default_factory=list)


def stats(
    paths: PathLike | Iterable[PathLike],
    *,
    format: str | None = None,
    on_error: Callable[[TraceLoadError], None] | None = None,
) -> TraceStats:
    """Counts by format, framework, agent, event kind, tool, tokens and outcome over all traces in ``paths``."""
    fmt: Counter[str] = Counter()
    fw: Counter[str] = Counter()
    agent: Counter[str] = Counter()
    kind: Counter[str] = Counter()
    tools: Counter[str] = Counter()
    outcomes: Counter[str] = Counter()
    s = TraceStats()
    for item in iter_load(paths, format=format):
        if isinstance(item, TraceLoadError):
            s.errors += 1
            s.error_list.append(item.to_dict())
            if on_error is not None:
                on_error(item)
            continue
        s.traces += 1
        s.events += len(item.events)
        fmt[item.source_format] += 1
        fw[item.framework or "unknown"] += 1
        for e in item.events:
            kind[e.kind] += 1
            agent[e.actor or "-"] += 1
            if e.tool_call is not None:
                tools[e.tool_call.name] += 1
            if e.tool_result is not None and e.tool_result.is_error:
                s.tool_errors += 1
        usage = item.total_usage()
        s.input_tokens += usage.input_tokens or 0
        s.output_tokens += usage.output_tokens or 0
        s.cost_usd += usage.cost_usd or 0.0
        success = item.outcome.success if item.outcome else None
        outcomes["unknown" if success is None else "success" if success else "failure"] += 1
    s.by_format, s.by_framework, s.by_agent = (
        dict(fmt.most_common()),
        dict(fw.most_common()),
        dict(agent.most_common()),
    )
    s.by_kind, s.tool_calls, s.outcomes = dict(kind.most_common()), dict(tools.most_common()), dict(outcomes)
    return s


class ConvertReport(BaseModel):
    """What ``convert`` wrote."""

    traces: int = 0
    events: int = 0
    bytes: int = 0
    errors: list[dict[str, Any]] = Field(default_factory=list)


def dump_trace(trace: Trace, *, drop_raw: bool = False) -> bytes:
    """One canonical JSONL line (with trailing newline) for ``trace``."""
    if drop_raw:
        trace = trace.model_copy(update={"events": [e.replace(raw=None) for e in trace.events], "raw": None})
    return trace.model_dump_json().encode() + b"\n"


def convert(
    paths: PathLike | Iterable[PathLike],
    out: IO[bytes] | Path | str,
    *,
    format: str | None = None,
    drop_raw: bool = False,
    on_error: Callable[[TraceLoadError], None] | None = None,
) -> ConvertReport:
    """Write every trace found in ``paths`` as canonical JSONL (one Trace per line) to ``out``.

    The output loads back identical with :func:`mastkit.load_traces` (``drop_raw`` trades that
    for size by leaving out the native records).
    """
    report = ConvertReport()
    with contextlib.ExitStack() as stack:
        fh = stack.enter_context(Path(out).open("wb")) if isinstance(out, (str, Path)) else out
        for item in iter_load(paths, format=format):
            if isinstance(item, TraceLoadError):
                report.errors.append(item.to_dict())
                if on_error is not None:
                    on_error(item)
                continue
            line = dump_trace(item, drop_raw=drop_raw)
            fh.write(line)
            report.traces += 1
            report.events += len(item.events)
            report.bytes += len(line)
    return report


def to_json(value: Any) -> bytes:
    """JSON bytes for CLI ``--json`` output. Pydantic models anywhere in ``value`` (also inside an
    event, which is a dataclass orjson writes itself) are written as pydantic writes them."""
    if isinstance(value, BaseModel):
        return value.model_dump_json(indent=2).encode()
    options = (
        orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS | orjson.OPT_UTC_Z
    )  # UTC as "Z", as pydantic writes it
    return orjson.dumps(value, option=options, default=_json_default)


def _json_default(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    return str(value)
