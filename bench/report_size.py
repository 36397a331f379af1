"""Report benchmark: size and render time of the HTML report for 1,000 annotated traces.

Generates synthetic traces (20-200 events, log-normal text lengths with some very long tool
outputs) and rule-style annotations with evidence into a temporary store, then times, in the
same process:
  * baseline : json.dumps of the same annotations (list of Annotation.model_dump(mode="json"))
  * data     : build_report_data(store) — reading the store and running all analyses
  * html     : render_html(data)
and prints sizes (MB, and gzip MB for mailing), times and the report / baseline ratios.
The Markdown and JSON renderings are measured too.

    python bench/report_size.py               # 1,000 traces
    python bench/report_size.py --traces 200  # quicker
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import tempfile
import time
from pathlib import Path

from mastkit.annotate.model import Annotation, AnnotatorConfig, Evidence, ModeVerdict
from mastkit.attribute.model import Attribution
from mastkit.report import build_report_data, render_html, render_json, render_markdown
from mastkit.store import Store
from mastkit.taxonomy import load_taxonomy
from mastkit.traces.model import Event, Outcome, ToolCall, ToolResult, Trace

MODELS = ["gpt-4o", "claude-3-5-sonnet", "llama-3.1-70b", "qwen2.5-72b", "o3-mini"]
FRAMEWORKS = ["AG2", "ChatDev", "MetaGPT", "OpenHands"]
BENCHMARKS = ["GAIA", "SWE-bench", "ProgramDev"]
AGENTS = ["Planner", "Coder", "Reviewer", "Executor"]
WORDS = [
    "the",
    "agent",
    "runs",
    "tests",
    "fails",
    "again",
    "retry",
    "patch",
    "file",
    "error",
    "verify",
    "output",
    "done",
    "plan",
    "step",
    "result",
]


def _text(rnd: random.Random, mean_chars: float) -> str:
    n = max(10, int(rnd.lognormvariate(0, 1.0) * mean_chars))
    words: list[str] = []
    size = 0
    while size < n:
        w = rnd.choice(WORDS)
        words.append(w)
        size += len(w) + 1
    return " ".join(words)[:n]


def make_trace(i: int, rnd: random.Random) -> Trace:
    n = rnd.randint(20, 200)
    events: list[Event] = []
    seq = 0
    while seq < n:
        actor = rnd.choice(AGENTS)
        r = rnd.random()
        if r < 0.3 and seq + 1 < n:
            call_id = f"c{seq}"
            events.append(
                Event(
                    seq=seq,
                    kind="tool_call",
                    actor=actor,
                    tool_call=ToolCall(name="bash", call_id=call_id, arguments_raw=_text(rnd, 60)),
                )
            )
            big = rnd.random() < 0.05
            events.append(
                Event(
                    seq=seq + 1,
                    kind="tool_result",
                    actor=actor,
                    tool_result=ToolResult(
                        call_id=call_id,
                        output=_text(rnd, 20_000 if big else 600),
                        is_error=rnd.random() < 0.2,
                    ),
                )
            )
            seq += 2
        else:
            kind = "reasoning" if r < 0.45 else "message"
            events.append(Event(seq=seq, kind=kind, actor=actor, content=_text(rnd, 400)))
            seq += 1
    return Trace(
        trace_id=f"synthetic-{i:05d}",
        source_format="synthetic",
        framework=rnd.choice(FRAMEWORKS),
        model=rnd.choice(MODELS),
        benchmark=rnd.choice(BENCHMARKS),
        task_id=f"task-{i % 97}",
        task=_text(rnd, 300),
        outcome=Outcome(success=rnd.random() < 0.4),
        events=events,
    )


def make_annotation(
    trace: Trace, codes: list[str], config: AnnotatorConfig, rnd: random.Random
) -> Annotation:
    failed = trace.outcome is not None and trace.outcome.success is False
    n = len(trace.events)
    verdicts = []
    for code in codes:
        p = 0.25 if failed else 0.08
        if rnd.random() < p:
            lo = rnd.randrange(n)
            hi = min(n - 1, lo + rnd.choice([0, 0, 1, 3]))
            verdicts.append(
                ModeVerdict(
                    code=code,
                    verdict="present",
                    confidence=round(rnd.uniform(0.5, 1.0), 2),
                    evidence=[
                        Evidence(
                            seq_start=lo,
                            seq_end=hi,
                            agent=trace.events[lo].actor,
                            quote=trace.events[lo].text()[:80],
                        )
                    ],
                    rationale=_text(rnd, 120),
                    source="rule:synthetic",
                )
            )
        elif rnd.random() < 0.03:
            verdicts.append(
                ModeVerdict(code=code, verdict="unknown", rationale="cannot judge", source="rule:synthetic")
            )
        else:
            verdicts.append(ModeVerdict(code=code, verdict="absent", source="rule:synthetic"))
    return Annotation(
        trace_id=trace.trace_id,
        config=config,
        config_hash=config.config_hash(),
        verdicts=verdicts,
        summary=_text(rnd, 200),
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--traces", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--keep", type=Path, default=None, help="Also write the HTML report here.")
    args = ap.parse_args()

    rnd = random.Random(args.seed)
    tax = load_taxonomy("mast")
    codes = [m.code for m in tax.modes]
    config = AnnotatorConfig(
        kind="rules", prompt_version="bench", taxonomy_id="mast", taxonomy_version=tax.version
    )
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "bench.db")
        store.register_run(config)
        t0 = time.perf_counter()
        annotations = []
        total_events = 0
        for i in range(args.traces):
            trace = make_trace(i, rnd)
            total_events += len(trace.events)
            h = store.upsert_trace(trace)
            ann = make_annotation(trace, codes, config, rnd)
            store.put_annotation(ann, h)
            annotations.append(ann)
            if trace.outcome is not None and trace.outcome.success is False and rnd.random() < 0.8:
                step = rnd.randrange(len(trace.events))
                store.put_attribution(
                    trace.trace_id,
                    h,
                    "rules",
                    "bench",
                    Attribution(
                        agent=trace.events[step].actor, step=step, method="rules", reason=_text(rnd, 100)
                    ),
                )
        print(
            f"store: {args.traces} traces, {total_events} events, built in {time.perf_counter() - t0:.1f}s "
            f"({(Path(tmp) / 'bench.db').stat().st_size / 1e6:.1f} MB SQLite)"
        )

        t0 = time.perf_counter()
        baseline = json.dumps([a.model_dump(mode="json") for a in annotations])
        t_base = time.perf_counter() - t0

        t0 = time.perf_counter()
        data = build_report_data(store)
        t_data = time.perf_counter() - t0
        t0 = time.perf_counter()
        html = render_html(data)
        t_html = time.perf_counter() - t0
        t0 = time.perf_counter()
        md = render_markdown(data)
        t_md = time.perf_counter() - t0
        t0 = time.perf_counter()
        js = render_json(data)
        t_json = time.perf_counter() - t0
        store.close()

    mb = len(html.encode()) / 1e6
    gz = len(gzip.compress(html.encode(), 6)) / 1e6
    base_mb = len(baseline.encode()) / 1e6
    print(f"baseline json.dumps(annotations): {base_mb:.2f} MB in {t_base:.2f}s")
    print(
        f"build_report_data:                {t_data:.2f}s (per-event text allowance {data.limits.event_chars} chars)"
    )
    print(
        f"HTML report:                      {mb:.2f} MB ({gz:.2f} MB gzipped) in {t_html:.2f}s "
        f"-> size x{mb / base_mb:.2f}, time x{(t_data + t_html) / max(t_base, 1e-9):.1f} vs baseline"
    )
    print(f"Markdown summary:                 {len(md.encode()) / 1e3:.1f} kB in {t_md:.3f}s")
    print(f"JSON report:                      {len(js.encode()) / 1e6:.2f} MB in {t_json:.2f}s")
    shown = sum(len(d.events) for d in data.details)
    print(
        f"events shown: {shown} of {sum(d.events_total for d in data.details)}; target < 10 MB: {'ok' if mb < 10 else 'OVER'}"
    )
    if args.keep:
        args.keep.write_text(html, encoding="utf-8")
        print(f"written to {args.keep}")


if __name__ == "__main__":
    main()
