"""``mastkit feedback``: feedback for the next attempt (pattern A: self-check tool and prompt
block; pattern B: a reflection from the stored failure vector)."""

from __future__ import annotations

import asyncio
import json as jsonlib
from pathlib import Path
from typing import Annotated, Any, Literal

import typer
from rich.text import Text

from mastkit.cli._common import EXIT_NOTHING, EXIT_USAGE, err, error_printer, write_bytes
from mastkit.errors import MastkitError
from mastkit.feedback.reflection import Reflection
from mastkit.feedback.service import areflection_for
from mastkit.feedback.tool import ahandle_tool_call, prompt_block, tool_schema
from mastkit.store import Store
from mastkit.taxonomy import load_taxonomy
from mastkit.traces.load import load_traces


def feedback_cmd(
    trace: Annotated[Path | None, typer.Argument(help="The trace of the attempt (a file).")] = None,
    pattern: Annotated[str, typer.Option(help="a: self-check and prompt block; b: reflection.")] = "b",
    db: Annotated[Path, typer.Option(help="Store file.", envvar="MASTKIT_DB")] = Path("mastkit.db"),
    run: Annotated[
        str | None,
        typer.Option(help="Pattern b: the annotation run to reflect on (hash prefix, kind, model)."),
    ] = None,
    max_tokens: Annotated[int, typer.Option(min=1, help="Token budget of the feedback text.")] = 400,
    model: Annotated[
        str | None,
        typer.Option(
            help="provider:model: a: the judge checks the trace; b: the model writes the reflection."
        ),
    ] = None,
    base_url: Annotated[str | None, typer.Option(envvar="MASTKIT_BASE_URL")] = None,
    taxonomy: Annotated[str, typer.Option(help="Taxonomy name or file.")] = "mast",
    block: Annotated[
        bool, typer.Option("--block", help="Pattern a: print only the in-prompt block.")
    ] = False,
    schema: Annotated[
        str | None, typer.Option(help="Pattern a: print the tool declaration (openai or anthropic).")
    ] = None,
    json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Feedback for an agent's next attempt at a task.

    Pattern a: the self-check tool's answer on TRACE (rule detectors; the LLM judge with --model),
    the in-prompt block (--block) or the tool declaration (--schema openai|anthropic).
    Pattern b: a reflection on TRACE from the failure vector in --db (the trace is annotated
    with the rule detectors and stored when the store has none), most severe problem first,
    within --max-tokens; written by a model with --model.

    Exit codes: 0 done; 2 bad usage; 3 the trace could not be read.
    """
    if pattern not in ("a", "b"):
        err.print("--pattern must be a or b")
        raise typer.Exit(EXIT_USAGE)
    try:
        tax = load_taxonomy(taxonomy)
    except MastkitError as exc:
        err.print(Text("error: ", style="bold red") + Text(str(exc)))
        raise typer.Exit(EXIT_USAGE) from None
    if pattern == "a" and (block or schema):
        if schema is not None and schema not in ("openai", "anthropic"):
            err.print("--schema must be openai or anthropic")
            raise typer.Exit(EXIT_USAGE)
        style: Literal["openai", "anthropic"] = "anthropic" if schema == "anthropic" else "openai"
        result: Any = (
            tool_schema(style, tax) if schema else prompt_block(tax, max_tokens=max_tokens, tool=True)
        )
        _emit(result if json or schema else None, result if isinstance(result, str) else "")
        return
    if trace is None:
        err.print("a TRACE file is needed (or, with --pattern a, --block or --schema)")
        raise typer.Exit(EXIT_USAGE)
    errors, on_error = error_printer()
    traces = list(load_traces(trace, on_error=on_error))
    if not traces:
        if not errors:
            err.print(f"{trace}: no trace found")
        raise typer.Exit(EXIT_NOTHING)
    if len(traces) > 1:
        err.print(
            f"{trace} holds {len(traces)} traces; feedback is given on the first ({traces[0].trace_id})"
        )
    one = traces[0]
    try:
        with Store(db) as store:
            if pattern == "a":
                annotator = _judge(model, base_url, tax, store) if model else None
                text = asyncio.run(ahandle_tool_call(None, one, taxonomy=tax, annotator=annotator))
                _emit({"pattern": "a", "trace_id": one.trace_id, "answer": text} if json else None, text)
                return
            reflector = None
            if model:
                from mastkit.feedback.llm_reflect import make_reflector

                reflector = make_reflector(model, taxonomy=tax, base_url=base_url, cache=store)
            reflection = asyncio.run(areflection_for(one, tax, store=store, run=run, reflector=reflector))
    except MastkitError as exc:
        err.print(Text("error: ", style="bold red") + Text(str(exc)))
        raise typer.Exit(EXIT_USAGE) from None
    text = reflection.render(max_tokens)
    _emit(_reflection_json(reflection, text) if json else None, text)


def _judge(model: str, base_url: str | None, tax: Any, store: Store) -> Any:
    from mastkit.annotate.factory import make_annotator

    return make_annotator("llm", taxonomy=tax, model=model, base_url=base_url, cache=store)


def _reflection_json(reflection: Reflection, text: str) -> dict[str, Any]:
    return {"pattern": "b", "text": text, "reflection": reflection.model_dump(mode="json")}


def _emit(obj: Any, text: str) -> None:
    if obj is not None:
        write_bytes(jsonlib.dumps(obj, indent=2, ensure_ascii=False).encode() + b"\n")
    else:
        write_bytes(text.encode() + b"\n")
