"""Annotation benchmark: rule detectors, judge prompt size, judge throughput and label recovery.

  (a) rules     load-only vs load + every rule detector on the shared data (best of N runs).
  (b) tokens    judge input tokens per trace (the exact requests mastkit sends, windows
                included) vs the MAST reference prompt (llm_judge_pipeline.ipynb / agentdash):
                len(instructions + trace + definitions.txt + examples.txt) / 4, with the byte
                sizes of definitions.txt (13,200) and examples.txt (67,500) from docs/mast.md
                and the reference's head truncation at 1,048,570 chars.
  (c) throughput 1,000 judged traces against the loopback FakeLLMServer, 300 ms per reply,
                concurrency 32: wall time vs the ideal N x latency / concurrency.
  (d) recovery  mastkit vs agentdash (PyPI, if installed), both pointed at the same loopback
                server returning the same known answers in several reply styles; per-mode
                recovery % (and silent-wrong %: a wrong verdict with no error).

Everything runs offline (the judge is FakeLLMServer). Reproduce:

    .venv/bin/python bench/annotate.py                  # all parts, ~2-3 min on 2 cores
    .venv/bin/python bench/annotate.py --parts a,b --runs 1
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mastkit import load_traces
from mastkit.annotate import annotate
from mastkit.annotate.factory import make_annotator
from mastkit.annotate.rule_annotator import run_detectors
from mastkit.providers import RetryPolicy
from mastkit.taxonomy import load_taxonomy
from mastkit.testing import FakeLLMServer, Reply
from mastkit.traces.model import Event, Trace

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("MASTKIT_SHARED_DATA", ROOT.parent / "shared" / "data"))
TAX = load_taxonomy("mast")
CODES = [m.code for m in TAX.modes]
SHORT = [c.removeprefix("FM-") for c in CODES]
DEFINITIONS_BYTES = 13_200  # docs/mast.md §1: definitions.txt ~13.2 KB
EXAMPLES_BYTES = 67_500  # docs/mast.md §1: examples.txt ~67.5 KB
REF_TRUNCATE = 1_048_570  # the notebook's / agentdash's head truncation (chars)
FAST_RETRY = RetryPolicy(max_attempts=3, initial_delay_s=0.01, max_delay_s=0.05, jitter=0.0)


def table(rows: list[list[Any]], header: list[str]) -> None:
    cells = [[str(c) for c in r] for r in [header, *rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    for j, r in enumerate(cells):
        print(
            "  "
            + "  ".join(
                c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))
            )
        )
        if j == 0:
            print("  " + "  ".join("-" * w for w in widths))


def reply_json(present: set[str]) -> str:
    modes = [
        {
            "code": c,
            "verdict": "present" if c in present else "absent",
            "confidence": 0.8,
            "evidence": [{"seq_start": 0, "seq_end": 0, "agent": None, "quote": "x"}] if c in present else [],
            "rationale": "r",
        }
        for c in CODES
    ]
    return json.dumps(
        {
            "summary": "s",
            "task_success": False,
            "modes": modes,
            "responsible_agent": None,
            "responsible_step": None,
        }
    )


# -- data ------------------------------------------------------------------------------------------


class Dataset:
    def __init__(self, name: str, path: Path, fmt: str | None, ref_chars: dict[str, int]) -> None:
        self.name, self.path, self.fmt, self.ref_chars = name, path, fmt, ref_chars

    def load(self) -> list[Trace]:
        return list(load_traces(self.path, format=self.fmt, on_error=lambda e: None))


def datasets(tmp: Path) -> list[Dataset]:
    out = []
    ww = SHARED / "who_and_when"
    if ww.exists():
        out.append(Dataset("who_and_when", ww, None, {}))
    mad = SHARED / "mast_mad_human" / "MAD_human_labelled_dataset.json"
    if mad.exists():
        # No importer reads the MAD file yet: each record's raw trace string becomes a text file,
        # read by the plain-text importer (what the reference judge is given: the raw string).
        d = tmp / "mad_human"
        d.mkdir()
        for i, rec in enumerate(json.loads(mad.read_bytes())):
            text = rec["trace"] if isinstance(rec["trace"], str) else json.dumps(rec["trace"])
            (d / f"mad_{i:02d}_{rec.get('mas_name', 'x')}.txt").write_text(text, encoding="utf-8")
        if not list(load_traces(mad, on_error=lambda e: None)):
            out.append(Dataset("mast_mad_human", d, "plain_text", {}))
        else:
            out.append(Dataset("mast_mad_human", mad, None, {}))
    ts = SHARED / "trace_samples"
    if ts.exists():
        out.append(Dataset("trace_samples", ts, None, {}))
    return out


# -- (a) rules vs ingest ----------------------------------------------------------------------------


def best(fn: Callable[[], Any], runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def part_a(sets: list[Dataset], runs: int) -> None:
    print(f"\n(a) rule detectors vs ingest alone (best of {runs} runs)")
    rows = []
    tot_load = tot_rules = 0.0
    for ds in sets:
        traces = ds.load()
        n_events = sum(len(t.events) for t in traces)
        load_s = best(ds.load, runs)

        def load_and_rules(ds: Dataset = ds) -> None:
            for t in ds.load():
                run_detectors(t, TAX)

        both_s = best(load_and_rules, runs)
        tot_load += load_s
        tot_rules += both_s
        rows.append(
            [
                ds.name,
                len(traces),
                n_events,
                f"{load_s * 1000:.0f}",
                f"{both_s * 1000:.0f}",
                f"{(both_s - load_s) / max(1, len(traces)) * 1000:.2f}",
                f"{both_s / load_s:.2f}x",
            ]
        )
    rows.append(
        [
            "all",
            "",
            "",
            f"{tot_load * 1000:.0f}",
            f"{tot_rules * 1000:.0f}",
            "",
            f"{tot_rules / tot_load:.2f}x",
        ]
    )
    table(rows, ["dataset", "traces", "events", "load ms", "load+rules ms", "rules ms/trace", "ratio"])


# -- (b) judge input tokens vs the reference prompt -----------------------------------------------------


def _agentdash() -> Any:
    """agentdash's ``annotator`` class, or None when the package is not installed."""
    try:
        from agentdash import annotator  # type: ignore[import-untyped]
    except ImportError:
        return None
    return annotator


def reference_instruction_chars() -> int:
    """The reference prompt without trace, definitions and examples (agentdash's copy of it)."""
    try:
        a = _agentdash()("unused-key", model="o1")
        a.definitions, a.examples = "", ""
        return len(a._create_evaluation_prompt(""))
    except Exception:
        return 3_300  # measured from agentdash 0.1.0 when it is not installed


def part_b(sets: list[Dataset], model: str) -> None:
    print(f"\n(b) judge input tokens per trace: mastkit ({model}, default windows) vs MAST reference prompt")
    instr = reference_instruction_chars()
    print(
        f"  reference = ({instr} instruction chars + trace + {DEFINITIONS_BYTES} definitions + "
        f"{EXAMPLES_BYTES} examples) / 4; trace cut at {REF_TRUNCATE - EXAMPLES_BYTES:,} chars as the notebook does"
    )
    per: list[tuple[str, int, int, int, int]] = []  # dataset, trace chars, ours, ref, windows
    for ds in sets:
        traces = ds.load()
        for t in traces:
            for sp in t.source_paths[:1]:
                _TRACES_PER_FILE[sp] = _TRACES_PER_FILE.get(sp, 0) + 1
        with FakeLLMServer(handler=lambda p: reply_json(set())) as srv:
            ann = make_annotator(
                "llm",
                model=model,
                base_url=srv.openai_base_url,
                api_key="k",
                concurrency=16,
                provider_options={"retry": FAST_RETRY},
            )
            annotate(traces, ann, concurrency=16, keep=False)
            reqs = srv.chat_requests
        ours: dict[str, int] = {}
        windows: dict[str, int] = {}
        for r in reqs:
            text = "\n".join(m["content"] for m in r.json["messages"])
            m = re.search(r"trace id: ([^;\s)]+)", text)
            tid = m.group(1) if m else "?"
            ours[tid] = ours.get(tid, 0) + len(text) // 4 + 1
            windows[tid] = windows.get(tid, 0) + 1
        for t in traces:
            chars = _source_chars(t)
            ref_trace = min(chars, REF_TRUNCATE - EXAMPLES_BYTES)
            ref = (instr + ref_trace + DEFINITIONS_BYTES + EXAMPLES_BYTES) // 4
            per.append((ds.name, chars, ours.get(t.trace_id, 0), ref, windows.get(t.trace_id, 0)))
    missing = [p for p in per if p[2] == 0]
    if missing:
        print(f"  warning: {len(missing)} trace(s) not matched to a request")
    per = [p for p in per if p[2] > 0]
    buckets = [
        ("< 10k chars", 0, 10_000),
        ("10k-50k", 10_000, 50_000),
        ("50k-200k", 50_000, 200_000),
        (">= 200k", 200_000, 10**12),
    ]
    rows = []
    for label, lo, hi in buckets:
        sel = [p for p in per if lo <= p[1] < hi]
        if not sel:
            continue
        rows.append(_token_row(label, sel))
    for name in dict.fromkeys(p[0] for p in per):
        rows.append(_token_row(name, [p for p in per if p[0] == name]))
    rows.append(_token_row("all", per))
    table(
        rows,
        [
            "bucket",
            "traces",
            "median chars",
            "ours med tok",
            "ref med tok",
            "median ratio",
            "sum ratio",
            "max windows",
            "ref > 200k tok",
        ],
    )
    longest = sorted(per, key=lambda p: -p[1])[:5]
    print("  longest traces:")
    table(
        [[p[0], f"{p[1]:,}", f"{p[2]:,}", f"{p[3]:,}", f"{p[2] / p[3]:.3f}", p[4]] for p in longest],
        ["dataset", "chars", "ours tok", "ref tok", "ratio", "windows"],
    )


_TRACES_PER_FILE: dict[str, int] = {}


def _source_chars(t: Trace) -> int:
    """Chars of the trace as the reference would paste it: its own source text (the record's text for
    MAST-Data, the file for one-trace files, the events' text for files holding several traces)."""
    if t.source_format == "mast_data" and isinstance(t.raw, dict):
        text = t.raw.get("trace")
        text = text.get("trajectory") if isinstance(text, dict) else text
        if isinstance(text, str):
            return len(text)
    if t.source_paths:
        p = Path(t.source_paths[0])
        if p.is_file() and p.suffix != ".jsonl" and _TRACES_PER_FILE.get(str(p), 1) == 1:
            return p.stat().st_size
    return sum(len(e.text()) for e in t.events)


def _token_row(label: str, sel: list[tuple[str, int, int, int, int]]) -> list[Any]:
    ratios = [p[2] / p[3] for p in sel]
    return [
        label,
        len(sel),
        f"{statistics.median(p[1] for p in sel):,.0f}",
        f"{statistics.median(p[2] for p in sel):,.0f}",
        f"{statistics.median(p[3] for p in sel):,.0f}",
        f"{statistics.median(ratios):.3f}",
        f"{sum(p[2] for p in sel) / sum(p[3] for p in sel):.3f}",
        max(p[4] for p in sel),
        sum(p[3] > 200_000 for p in sel),
    ]


# -- (c) throughput ----------------------------------------------------------------------------------


def tiny_trace(i: int) -> Trace:
    texts = [f"case {i}: please fix the bug", "I changed the code and it works now.", "thanks"]
    events = [
        Event(seq=j, kind="message", actor=["user", "coder"][j % 2], content=t) for j, t in enumerate(texts)
    ]
    return Trace(trace_id=f"tp-{i:04d}", source_format="bench", events=events)


def part_c(n: int, latency: float, concurrency: int) -> None:
    print(
        f"\n(c) throughput: {n} judged traces, {latency * 1000:.0f} ms per reply, concurrency {concurrency}"
    )
    body = reply_json({"FM-1.3"})
    traces = [tiny_trace(i) for i in range(n)]
    with FakeLLMServer(handler=lambda p: Reply(body, delay_s=latency)) as srv:
        ann = make_annotator(
            "llm",
            model="openai:x",
            base_url=srv.openai_base_url,
            api_key="k",
            concurrency=concurrency,
            provider_options={"retry": FAST_RETRY},
        )
        t0 = time.perf_counter()
        report = annotate(traces, ann, concurrency=concurrency, keep=False)
        wall = time.perf_counter() - t0
        peak = srv.max_in_flight
        n_req = srv.request_count
    ideal = n * latency / concurrency
    table(
        [
            [
                n,
                n_req,
                report.progress.done,
                report.progress.failed,
                f"{wall:.2f}",
                f"{ideal:.2f}",
                f"{wall / ideal:.3f}x",
                peak,
            ]
        ],
        ["traces", "requests", "done", "failed", "wall s", "ideal s", "wall/ideal", "server peak in-flight"],
    )


# -- (d) label recovery vs agentdash ------------------------------------------------------------------

REF_NAMES = [
    "Disobey Task Specification",
    "Disobey Role Specification",
    "Step Repetition",
    "Loss of Conversation History",
    "Unaware of Termination Conditions",
    "Conversation Reset",
    "Fail to Ask for Clarification",
    "Task Derailment",
    "Information Withholding",
    "Ignored Other Agent's Input",
    "Action-Reasoning Mismatch",
    "Premature Termination",
    "No or Incorrect Verification",
    "Weak Verification",
]
"""Label names exactly as the reference prompt's template prints them."""


def styled(style: str, truth: set[str]) -> str:
    yn = {c: ("yes" if c in truth else "no") for c in CODES}
    head_a = "A. The verifier did not check the output and the agents repeated steps."
    if style == "json":
        return reply_json(truth)
    if style == "reference-echo":  # the template filled in, one line per label (what the prompt asks for)
        lines = [f"{s} {n}: {yn[c]}" for c, s, n in zip(CODES, SHORT, REF_NAMES, strict=True)]
        return (
            "@@\n" + head_a + "\nB. Whether the task is successfully completed or not: no\n"
            "C. Whether you encounter any of the failure modes or inefficiencies:\n"
            + "\n".join(lines)
            + "\n@@"
        )
    if style == "reference-terse":  # the prompt's own example answer format
        return head_a + "\nB. no\nC.\n" + "\n".join(f"{s} {yn[c]}" for c, s in zip(CODES, SHORT, strict=True))
    if style == "markdown":
        lines = [
            f"- **{s} {n}:** {yn[c].capitalize()}" for c, s, n in zip(CODES, SHORT, REF_NAMES, strict=True)
        ]
        return "**A.** x\n**B.** No\n**C.** Failure modes:\n" + "\n".join(lines)
    if style == "run-together":  # the template's lines concatenated, as the prompt itself prints them
        return (
            "@@" + head_a + "B. Whether the task is successfully completed or not: no"
            "C. Whether you encounter any of the failure modes or inefficiencies:"
            + "".join(f"{s} {n}: {yn[c]}" for c, s, n in zip(CODES, SHORT, REF_NAMES, strict=True))
            + "@@"
        )
    raise ValueError(style)


STYLES = ["reference-echo", "reference-terse", "run-together", "markdown", "json"]


def part_d(cases: int, seed: int) -> None:
    print(
        f"\n(d) label recovery on {cases} known answers per reply style (same loopback server for both tools)"
    )
    rng = random.Random(seed)
    truths = [{c for c in CODES if rng.random() < 0.35} for _ in range(cases)]
    state = {"style": STYLES[0]}

    def handler(payload: Any) -> str:
        text = json.dumps(payload)
        m = re.search(r"case-(\d+)", text)
        return styled(state["style"], truths[int(m.group(1))]) if m else "no case marker"

    AgentDash = _agentdash()
    if AgentDash is None:
        print("  agentdash is not installed (pip install agentdash): only mastkit is measured")

    import logging

    logging.getLogger("agentdash").setLevel(logging.ERROR)
    rows = []
    per_mode: dict[str, dict[str, list[int]]] = {}
    with FakeLLMServer(handler=handler) as srv:
        traces = [
            Trace(
                trace_id=f"case-{i:02d}",
                source_format="bench",
                events=[Event(seq=0, kind="message", actor="agent", content=f"case-{i:02d}: did the work")],
            )
            for i in range(cases)
        ]
        ann = make_annotator(
            "llm",
            model="openai:x",
            base_url=srv.openai_base_url,
            api_key="k",
            provider_options={"retry": FAST_RETRY},
        )
        for style in STYLES:
            state["style"] = style
            # mastkit
            srv.reset()
            report = annotate(traces, ann, concurrency=8)
            ours_calls = srv.request_count
            ok = wrong = unk = 0
            pm = per_mode.setdefault(f"mastkit/{style}", {c: [0, 0] for c in CODES})
            for a, t in zip(report.annotations, truths, strict=True):
                for v in a.verdicts:
                    truth_present = v.code in t
                    pm[v.code][1] += 1
                    if v.verdict == "unknown":
                        unk += 1
                    elif (v.verdict == "present") == truth_present:
                        ok += 1
                        pm[v.code][0] += 1
                    else:
                        wrong += 1
            total = cases * len(CODES)
            rows.append(
                [
                    "mastkit",
                    style,
                    f"{100 * ok / total:.1f}",
                    f"{100 * wrong / total:.1f}",
                    f"{100 * unk / total:.1f}",
                    ours_calls,
                ]
            )
            # agentdash
            if AgentDash is None:
                continue
            os.environ["OPENAI_BASE_URL"] = srv.openai_base_url
            srv.reset()
            ad = AgentDash("k", model="gpt-4o")
            ok = wrong = 0
            pm = per_mode.setdefault(f"agentdash/{style}", {c: [0, 0] for c in CODES})
            for i, t in enumerate(truths):
                res = ad.produce_taxonomy(f"case-{i:02d}: did the work")
                for c, s in zip(CODES, SHORT, strict=True):
                    pm[c][1] += 1
                    if bool(res["failure_modes"].get(s, 0)) == (c in t):
                        ok += 1
                        pm[c][0] += 1
                    else:
                        wrong += 1
            rows.append(
                [
                    "agentdash",
                    style,
                    f"{100 * ok / total:.1f}",
                    f"{100 * wrong / total:.1f}",
                    "0.0 (never)",
                    srv.request_count,
                ]
            )
    os.environ.pop("OPENAI_BASE_URL", None)
    table(rows, ["tool", "reply style", "recovered %", "silently wrong %", "unknown %", "requests"])
    print("  per-mode recovery % (modes below 100 for either tool):")
    mrows = []
    for c in CODES:
        vals = {k: 100 * v[c][0] / max(1, v[c][1]) for k, v in per_mode.items()}
        if any(x < 100 for x in vals.values()):
            mrows.append([c, *(f"{vals[k]:.0f}" for k in per_mode)])
    if mrows:
        table(mrows, ["mode", *per_mode])
    else:
        print("  (all 100)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--parts", default="a,b,c,d")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument(
        "--model", default="openai:gpt-4o-mini", help="judge model for the token count (context window)"
    )
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--latency", type=float, default=0.3)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--cases", type=int, default=30)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    parts = set(args.parts.split(","))
    for k in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "MASTKIT_API_KEY"):
        os.environ.pop(k, None)
    print(f"mastkit annotate bench — python {sys.version.split()[0]}, {os.cpu_count()} CPUs, data {SHARED}")
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        sets = datasets(Path(tmp)) if parts & {"a", "b"} else []
        if "a" in parts:
            part_a(sets, args.runs)
        if "b" in parts:
            part_b(sets, args.model)
    if "c" in parts:
        part_c(args.n, args.latency, args.concurrency)
    if "d" in parts:
        part_d(args.cases, args.seed)
    print(f"\ntotal {time.perf_counter() - t0:.1f}s")


if __name__ == "__main__":
    main()
