"""Pattern A: the taxonomy as a tool an agent calls on its own partial trace while it runs, and
a compact in-prompt block.

* :func:`tool_schema` — the function-calling declaration, generated from :class:`CheckArgs`,
  in the OpenAI ``tools`` shape (``{"type": "function", "function": {...}}``, strict) or the
  Anthropic one (``{"name", "description", "input_schema"}``).
* :func:`handle_tool_call` — the handler: annotates the trace so far (the rule annotator by
  default, any annotator — an LLM judge from :func:`mastkit.annotate.factory.make_annotator`
  — when given) and answers, in a few lines, which modes show, where, and what to do instead.
  It never raises on bad arguments: the agent gets an error text it can act on.
* :func:`prompt_block` — the taxonomy's modes, one line each, most severe first, within a
  token budget (whole lines only).

The trace so far is a :class:`~mastkit.traces.Trace` or a list of OpenAI-style chat messages
(what an agent loop holds), read by the ``chat_messages`` importer.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mastkit.annotate.model import Annotation
from mastkit.annotate.rule_annotator import annotate_rules
from mastkit.feedback.modes import category_weight, do_instead, severity, severity_rank
from mastkit.feedback.reflection import quote_text
from mastkit.llm.reply import strict_schema
from mastkit.providers import estimate_tokens
from mastkit.taxonomy import FailureMode, Taxonomy, load_taxonomy
from mastkit.traces.load import load_traces
from mastkit.traces.model import Trace

__all__ = [
    "TOOL_NAME",
    "CheckArgs",
    "TraceAnnotator",
    "ahandle_tool_call",
    "as_trace",
    "handle_tool_call",
    "prompt_block",
    "tool_schema",
]

TOOL_NAME = "mast_self_check"

TOOL_DESCRIPTION = (
    "Check your own run so far against the {name} failure modes. Returns which modes show, at "
    "which steps, and what to do instead. Call it before declaring the task done, after a tool "
    "error, or when you are unsure whether you are stuck."
)


class CheckArgs(BaseModel):
    """The tool's arguments (the source of its JSON schema)."""

    model_config = ConfigDict(extra="forbid")

    modes: list[str] | None = Field(
        description="Mode codes to check (e.g. FM-1.3); null checks every mode of the taxonomy."
    )
    planned_action: str | None = Field(
        description="What you are about to do next, in one sentence (echoed back; null if nothing)."
    )


class TraceAnnotator(Protocol):
    """Anything with ``async annotate(trace) -> Annotation`` (the rule annotator, the judge)."""

    async def annotate(self, trace: Trace) -> Annotation: ...


def tool_schema(
    style: Literal["openai", "anthropic"] = "openai", taxonomy: Taxonomy | str = "mast"
) -> dict[str, Any]:
    """The tool declaration to put in a request's ``tools`` list, in ``style``'s shape."""
    tax = load_taxonomy(taxonomy)
    params = strict_schema(CheckArgs)
    description = TOOL_DESCRIPTION.format(name=tax.name)
    if style == "openai":
        return {
            "type": "function",
            "function": {
                "name": TOOL_NAME,
                "description": description,
                "parameters": params,
                "strict": True,
            },
        }
    if style == "anthropic":
        return {"name": TOOL_NAME, "description": description, "input_schema": params}
    raise ValueError(f"unknown tool style {style!r}: use openai or anthropic")


def as_trace(trace_so_far: Trace | Sequence[Mapping[str, Any]], trace_id: str = "self-check") -> Trace:
    """``trace_so_far`` as a trace: a trace as it is, a list of chat messages through the
    ``chat_messages`` importer."""
    if isinstance(trace_so_far, Trace):
        return trace_so_far
    messages = list(trace_so_far)
    if not messages:
        return Trace(trace_id=trace_id, source_format="chat_messages", events=[])
    with tempfile.TemporaryDirectory(prefix="mastkit-check-") as tmp:
        path = Path(tmp) / "messages.json"
        path.write_text(json.dumps({"id": trace_id, "messages": messages}, default=str), encoding="utf-8")
        (trace,) = load_traces(path, format="chat_messages")
    return trace


def _parse_args(arguments: str | Mapping[str, Any] | None) -> CheckArgs:
    if arguments is None or arguments == "":
        return CheckArgs(modes=None, planned_action=None)
    raw = json.loads(arguments) if isinstance(arguments, str) else dict(arguments)
    if not isinstance(raw, dict):
        raise ValueError("the arguments must be a JSON object")
    raw.setdefault("modes", None)
    raw.setdefault("planned_action", None)
    return CheckArgs.model_validate(raw)


def _where(steps: list[int], agents: list[str]) -> str:
    out = ""
    if steps:
        first, last = min(steps), max(steps)
        out = f" at step {first}" if first == last else f" at steps {first}-{last}"
    if agents:
        out += f" ({', '.join(agents[:2])})"
    return out


def answer(annotation: Annotation, taxonomy: Taxonomy, args: CheckArgs, n_events: int) -> str:
    """The tool's text answer for ``annotation`` of the trace so far."""
    codes = [taxonomy.mode(c).code for c in args.modes] if args.modes else taxonomy.codes
    wanted = [v for v in annotation.verdicts if v.code in codes]
    present = [v for v in wanted if v.verdict == "present"]
    unknown = [v.code for v in wanted if v.verdict == "unknown"]
    present.sort(
        key=lambda v: (
            -severity_rank(taxonomy.mode(v.code), taxonomy),
            -category_weight(taxonomy.mode(v.code), taxonomy),
            codes.index(v.code),
        )
    )
    lines = [
        f"{taxonomy.id.upper()} self-check of your run so far ({n_events} events, {len(codes)} modes checked): "
        + (
            f"{len(present)} failure modes show."
            if len(present) > 1
            else "1 failure mode shows."
            if present
            else "none shows."
        )
    ]
    for v in present:
        mode = taxonomy.mode(v.code)
        steps = sorted({s for e in v.evidence for s in (e.seq_start, e.seq_end) if s is not None})
        agents = list(dict.fromkeys(e.agent for e in v.evidence if e.agent))
        quote = next((e.quote for e in v.evidence if e.quote), None)
        seen = f' Seen: "{quote_text(quote, 100)}".' if quote else ""
        lines.append(
            f"- {mode.code} {mode.name} [{severity(mode, taxonomy)}]{_where(steps, agents)}.{seen} "
            f"Do instead: {do_instead(mode, taxonomy)}"
        )
    if unknown:
        lines.append(f"Not decidable from this run yet: {', '.join(unknown)}.")
    if args.planned_action:
        lines.append(f"Your planned action: {quote_text(args.planned_action, 200)}")
    if not present:
        lines.append("Keep going; check again before you declare the task done.")
    return "\n".join(lines)


async def ahandle_tool_call(
    arguments: str | Mapping[str, Any] | None,
    trace_so_far: Trace | Sequence[Mapping[str, Any]],
    *,
    taxonomy: Taxonomy | str = "mast",
    annotator: TraceAnnotator | None = None,
) -> str:
    """:func:`handle_tool_call` for code already inside an event loop."""
    tax = load_taxonomy(taxonomy)
    try:
        args = _parse_args(arguments)
        for code in args.modes or ():
            tax.mode(code)
    except (ValueError, ValidationError) as exc:
        return f"error: bad arguments for {TOOL_NAME}: {' '.join(str(exc).split())[:300]}"
    except KeyError:
        return f"error: unknown mode code in {args.modes}; known codes: {', '.join(tax.codes)}"
    trace = as_trace(trace_so_far)
    annotation = await annotator.annotate(trace) if annotator is not None else annotate_rules(trace, tax)
    return answer(annotation, tax, args, len(trace.events))


def handle_tool_call(
    arguments: str | Mapping[str, Any] | None,
    trace_so_far: Trace | Sequence[Mapping[str, Any]],
    *,
    taxonomy: Taxonomy | str = "mast",
    annotator: TraceAnnotator | None = None,
) -> str:
    """Answer a call of the :data:`TOOL_NAME` tool: annotate ``trace_so_far`` (a trace, or the
    agent's chat messages) and say compactly which modes show, where, and what to do instead.

    ``arguments`` is the call's arguments as the API gives them (a JSON string from OpenAI, a
    dict from Anthropic, or None). Without ``annotator`` the rule detectors run (offline);
    with one (e.g. ``make_annotator("llm", model=...)``) that annotator decides. Bad arguments
    give an ``error: ...`` text, not an exception. Inside a running event loop use
    :func:`ahandle_tool_call`."""
    return asyncio.run(ahandle_tool_call(arguments, trace_so_far, taxonomy=taxonomy, annotator=annotator))


def _mode_line(mode: FailureMode, taxonomy: Taxonomy) -> str:
    return f"- {mode.code} {mode.name}: {do_instead(mode, taxonomy)}"


def prompt_block(
    taxonomy: Taxonomy | str = "mast", *, max_tokens: int | None = 600, tool: bool = False
) -> str:
    """The taxonomy as a compact block for a system prompt: one line per mode (what to do
    instead of committing it), most severe first, at most ``max_tokens`` (whole lines only; the
    least severe modes are left out first, and a last line says how many). ``tool`` adds a line
    telling the agent to call :data:`TOOL_NAME`."""
    tax = load_taxonomy(taxonomy)
    order = {m.code: i for i, m in enumerate(tax.modes)}
    modes = sorted(tax.modes, key=lambda m: (-severity_rank(m, tax), -category_weight(m, tax), order[m.code]))
    head = [f"Known ways agent runs fail ({tax.name}); avoid them, most severe first:"]
    tail = (
        [f"Call the tool {TOOL_NAME} on your run so far when unsure, and before you finish."] if tool else []
    )
    lines = [_mode_line(m, tax) for m in modes]
    for keep in range(len(lines), -1, -1):
        left = len(lines) - keep
        note = [f"({left} less severe mode{'s' if left != 1 else ''} left out.)"] if left else []
        text = "\n".join(head + lines[:keep] + note + tail)
        if max_tokens is None or estimate_tokens(text) <= max_tokens:
            return text if keep else ""
    return ""
