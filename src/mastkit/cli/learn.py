"""``mastkit learn``: learn a failure taxonomy from traces (offline, or with a model)."""

from __future__ import annotations

import json as jsonlib
from pathlib import Path
from typing import Annotated

import typer

from mastkit.cli._common import EXIT_NOTHING, EXIT_USAGE, err, error_printer
from mastkit.errors import MastkitError


def learn_cmd(
    paths: Annotated[list[Path], typer.Argument(help="Trace files or folders.")],
    output: Annotated[Path, typer.Option("-o", "--output", help="Taxonomy YAML to write.")] = Path(
        "taxonomy.yaml"
    ),
    update: Annotated[
        Path | None, typer.Option("--update", help="Refine this taxonomy: keep its mode codes stable.")
    ] = None,
    adamast: Annotated[
        Path | None, typer.Option("--adamast", help="Also write the AdaMAST JSON shape here.")
    ] = None,
    taxonomy_id: Annotated[str, typer.Option("--id", help="Id of the learned taxonomy.")] = "learned",
    name: Annotated[str | None, typer.Option(help="Display name.")] = None,
    threshold: Annotated[float, typer.Option(help="Cosine distance of the first round's cut.")] = 0.6,
    rounds: Annotated[int, typer.Option(min=1, help="Rounds (coarser cut each) while a gate fails.")] = 4,
    min_support: Annotated[int, typer.Option(min=1, help="Failed traces a mode needs.")] = 2,
    contrast: Annotated[int, typer.Option(min=0, help="Successful traces sampled as contrast.")] = 20,
    notes: Annotated[
        Path | None, typer.Option(help="Notes JSONL (resume file; default: <output>.notes.jsonl).")
    ] = None,
    model: Annotated[str | None, typer.Option(help="provider:model: a model writes notes and names.")] = None,
    base_url: Annotated[str | None, typer.Option(envvar="MASTKIT_BASE_URL")] = None,
    db: Annotated[Path, typer.Option(help="Store (response cache) for --model.", envvar="MASTKIT_DB")] = Path(
        "mastkit.db"
    ),
    budget: Annotated[float | None, typer.Option(help="USD cap of this run (with --model).")] = None,
    concurrency: Annotated[int, typer.Option(min=1, help="Traces in flight (with --model).")] = 8,
    json: Annotated[bool, typer.Option("--json", help="Print the gates and modes as JSON.")] = False,
) -> None:
    """Learn a failure taxonomy from PATHS and write it to --output.

    Failed traces (and a sample of successful ones as contrast) become short domain-free notes:
    offline from the traces' own signals, or written by --model. The notes are clustered,
    each cluster becomes a mode (name, definition, when to use, cues, severity, examples,
    nearest MAST mode) and the gates are reported: coverage, distinctness, stability.

    Exit codes: 0 all gates passed; 1 written, but a gate failed; 2 bad usage; 3 nothing learned.
    """
    from mastkit.learn import LearnOptions
    from mastkit.learn.export import to_adamast, to_yaml
    from mastkit.learn.pipeline import learn_taxonomy
    from mastkit.learn.update import update_taxonomy
    from mastkit.taxonomy import load_taxonomy
    from mastkit.traces.load import load_traces

    errors, on_error = error_printer()
    traces = list(load_traces([str(p) for p in paths], on_error=on_error))
    if not traces:
        err.print("no traces loaded")
        raise typer.Exit(EXIT_NOTHING)
    opts = LearnOptions(
        distance_threshold=threshold,
        max_rounds=rounds,
        min_support=min_support,
        taxonomy_id=taxonomy_id,
        name=name or f"Taxonomy learned from {', '.join(p.name for p in paths)}",
    )
    notes_path = notes or output.with_name(output.name + ".notes.jsonl")
    kwargs: dict[str, object] = {}
    store = None
    if model is not None:
        from mastkit.learn.llm import make_llm_learner
        from mastkit.store import Store

        store = Store(db)
        learner = make_llm_learner(model, base_url=base_url, cache=store, budget_usd=budget,
                                   concurrency=concurrency)  # fmt: skip
        kwargs = {"note_maker": learner.make_notes, "maker_version": learner.version}
    try:
        result = learn_taxonomy(traces, options=opts, notes_path=notes_path, contrast=contrast,
                                source=f"learned from {len(traces)} traces ({', '.join(map(str, paths))})",
                                **kwargs)  # type: ignore[arg-type]  # fmt: skip
        taxonomy = result.taxonomy
        if model is not None:
            taxonomy = learner.name_modes(taxonomy)
    except (ValueError, MastkitError) as exc:
        err.print(f"nothing learned: {exc}")
        raise typer.Exit(EXIT_NOTHING) from None
    finally:
        if store is not None:
            store.close()
    if update is not None:
        try:
            taxonomy = update_taxonomy(load_taxonomy(update), taxonomy, prefix=opts.prefix)
        except MastkitError as exc:
            err.print(str(exc))
            raise typer.Exit(EXIT_USAGE) from None
    output.write_text(to_yaml(taxonomy), encoding="utf-8")
    if adamast is not None:
        adamast.write_text(jsonlib.dumps(to_adamast(taxonomy), indent=2), encoding="utf-8")
    if json:
        typer.echo(jsonlib.dumps({
            "output": str(output),
            "gates": [g.model_dump() for g in result.gates],
            "rounds": [r.model_dump() for r in result.rounds],
            "modes": [{"code": m.code, "name": m.name, "definition": m.definition, "severity": m.severity,
                       **{k: m.extra.get(k) for k in ("share_of_failed", "mast_match", "mast_similarity")}}
                      for m in taxonomy.modes],
        }, indent=2))  # fmt: skip
    else:
        typer.echo(f"{len(taxonomy.modes)} modes from {result.failed_traces} failed traces "
                   f"({result.notes} notes, {len(result.rounds)} rounds) -> {output}")  # fmt: skip
        for g in result.gates:
            state = "n/a " if g.passed is None else "PASS" if g.passed else "FAIL"
            value = "-" if g.value is None else f"{g.value:.3f}"
            typer.echo(f"  gate {g.name:<20} {state} {value} (threshold {g.threshold}) {g.detail}")
        for m in taxonomy.modes:
            match = m.extra.get("mast_match", "?")
            typer.echo(f"  {m.code:<10} {m.severity or '':<6} {m.name[:48]:<48} MAST {match} "
                       f"({m.extra.get('mast_similarity', 0)})")  # fmt: skip
    failed_gate = [g.name for g in result.gates if g.passed is False]
    if failed_gate:
        err.print(f"gate failed: {', '.join(failed_gate)}")
    raise typer.Exit(1 if failed_gate or errors else 0)
