"""``demo``: the main job on the bundled example traces, offline — load, annotate with the rule
detectors, store, and write the HTML and Markdown reports."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from mastkit.annotate import annotate
from mastkit.annotate.rule_annotator import RuleAnnotator
from mastkit.errors import TraceLoadError
from mastkit.store import Store
from mastkit.taxonomy import load_taxonomy
from mastkit.traces import load_traces

EXAMPLES = Path(__file__).resolve().parent / "examples"


@dataclass
class DemoResult:
    traces: int
    failed_traces: int
    """Traces with at least one failure mode found."""
    mode_counts: dict[str, int]
    db: Path
    html: Path
    markdown: Path
    load_errors: list[TraceLoadError] = field(default_factory=list)


def demo(output: str | Path = "mastkit-out", *, examples: str | Path = EXAMPLES) -> DemoResult:
    """Annotate the bundled examples with the rule detectors and write the reports into ``output``.

    Re-running reuses the store in ``output`` (annotations are cached by trace content).
    """
    from mastkit.report import report

    out = Path(output)
    out.mkdir(parents=True, exist_ok=True)
    db = out / "mastkit.db"
    errors: list[TraceLoadError] = []
    taxonomy = load_taxonomy("mast")
    with Store(db) as store:
        run = annotate(load_traces(examples, on_error=errors.append), RuleAnnotator(taxonomy), store=store)
        html = report(store, out / "report.html", fmt="html", run=run.config_hash)
        md = report(store, out / "report.md", fmt="md", run=run.config_hash)
    counts: dict[str, int] = {}
    for a in run.annotations:
        for code in a.present():
            counts[code] = counts.get(code, 0) + 1
    return DemoResult(
        traces=len(run.annotations),
        failed_traces=sum(1 for a in run.annotations if a.present()),
        mode_counts=dict(sorted(counts.items())),
        db=db,
        html=html,
        markdown=md,
        load_errors=errors,
    )
