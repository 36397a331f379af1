"""Scale benchmark: the local engine vs the Ray engine on synthetic traces, on this machine.

  (a) rules  N synthetic multi-agent traces (generated in-process, each different), annotated
             by the rule annotator into a fresh SQLite store: wall time, throughput, CPU
             seconds per trace (the driver and every process it started: Ray's workers,
             raylet and GCS included), peak RSS of that process tree, store bytes per trace.
  (b) judge  a smaller M traces through the LLM judge against the loopback FakeLLMServer
             (``--latency`` seconds per reply): the same figures, model-bound, with the same
             requests in flight in both engines (``--concurrency``, split over the workers).

Ratios are against the local engine measured in the same process. Both engines run with
``keep=False`` (results go to the store only), as a huge run should. The Ray cluster is a
local one (``ray.init`` with this machine's CPUs), started before the timed run: its start
is reported on its own.

    .venv/bin/python bench/scale.py                          # 100k rules, 2k judged
    .venv/bin/python bench/scale.py --n 2000 --judge-n 200   # quick
    .venv/bin/python bench/scale.py --json figures.json
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psutil

from mastkit.annotate import annotate
from mastkit.annotate.factory import make_annotator
from mastkit.providers import RetryPolicy
from mastkit.scale import AnnotateJob
from mastkit.store import Store
from mastkit.taxonomy import load_taxonomy
from mastkit.testing import FakeLLMServer, Reply
from mastkit.traces.model import AgentInfo, Event, Outcome, ToolCall, Trace

AGENTS = ("Planner", "Coder", "Reviewer")
WORDS = [
    *[
        "check",
        "the",
        "logs",
        "deploy",
        "the",
        "fix",
        "run",
        "the",
        "tests",
        "the",
        "build",
        "failed",
        "retry",
        "the",
        "step",
        "verify",
    ],
    *[
        "the",
        "output",
        "the",
        "pod",
        "restarted",
        "memory",
        "limit",
        "reached",
        "rollback",
        "done",
        "looks",
        "good",
        "I",
        "will",
        "stop",
    ],
]


def synthetic_trace(i: int, rng: random.Random) -> Trace:
    """A small multi-agent run: a task, 5-13 messages and tool calls, every fifth with a loop."""
    events = [
        Event(seq=0, kind="message", actor="user", role="user", content=f"Task {i}: fix service {i % 97}.")
    ]
    for seq in range(1, rng.randint(6, 14)):
        agent = AGENTS[seq % 3]
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 30)))
        if rng.random() < 0.2:
            call = ToolCall(name="shell", arguments={"cmd": text})
            events.append(Event(seq=seq, kind="tool_call", actor=agent, role="assistant", tool_call=call))
        else:
            events.append(Event(seq=seq, kind="message", actor=agent, role="assistant", content=text))
    if i % 5 == 0:  # a loop: the last step done twice more (FM-1.3 needs three in a row)
        events += [dataclasses.replace(events[-1], seq=len(events) + k) for k in range(2)]
    return Trace(
        trace_id=f"syn-{i:07d}",
        source_format="synthetic",
        agents=[AgentInfo(name=a) for a in AGENTS],
        events=events,
        outcome=Outcome(success=i % 3 == 0),
    )


def traces(n: int, seed: int = 7) -> Iterator[Trace]:
    rng = random.Random(seed)
    for i in range(n):
        yield synthetic_trace(i, rng)


class TreeSampler:
    """CPU seconds and peak RSS of this process and all its descendants (sampled every 0.1 s)."""

    def __init__(self) -> None:
        self.me = psutil.Process()
        self.peak_rss = 0
        self._stop = threading.Event()
        self._cpu: dict[int, float] = {}
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _procs(self) -> list[psutil.Process]:
        try:
            return [self.me, *self.me.children(recursive=True)]
        except psutil.Error:
            return [self.me]

    def _sample(self) -> None:
        rss = 0
        for p in self._procs():
            try:
                t = p.cpu_times()
                self._cpu[p.pid] = t.user + t.system
                rss += p.memory_info().rss
            except psutil.Error:
                continue
        self.peak_rss = max(self.peak_rss, rss)

    def _run(self) -> None:
        while not self._stop.wait(0.1):
            self._sample()

    def __enter__(self) -> TreeSampler:
        self._sample()
        self.cpu0 = sum(self._cpu.values())
        self.rss0 = self.peak_rss
        self._cpu0 = dict(self._cpu)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()

    @property
    def cpu_s(self) -> float:
        """CPU seconds used since entering (processes that ended in between are not counted)."""
        return sum(v - self._cpu0.get(pid, 0.0) for pid, v in self._cpu.items())


def store_bytes(path: Path) -> int:
    with Store(path) as s:
        s._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))


def measure(label: str, n: int, run: Callable[[Store], Any], db: Path) -> dict[str, Any]:
    with Store(db) as store, TreeSampler() as tree:
        t0 = time.perf_counter()
        report = run(store)
        wall = time.perf_counter() - t0
    p = report.progress
    assert p.done == n and p.failed == 0, (label, p)
    size = store_bytes(db)
    return {
        "traces": n,
        "wall_s": round(wall, 2),
        "traces_per_s": round(n / wall, 1),
        "cpu_s": round(tree.cpu_s, 2),
        "cpu_ms_per_trace": round(1e3 * tree.cpu_s / n, 3),
        "peak_rss_mb": round(tree.peak_rss / 2**20, 1),
        "rss_growth_kb_per_trace": round((tree.peak_rss - tree.rss0) / 1024 / n, 3),
        "store_bytes_per_trace": round(size / n),
    }


def bench_rules(n: int, tmp: Path, workers: int | None, batch: int) -> dict[str, dict[str, Any]]:
    from mastkit.scale.ray_engine import RayEngine

    ann = make_annotator("rules")
    out = {
        "local": measure(
            "local",
            n,
            lambda store: annotate(traces(n), ann, store=store, keep=False, concurrency=8),
            tmp / "rules-local.db",
        )
    }
    t0 = time.perf_counter()
    with RayEngine(workers=workers, batch_size=batch) as eng:
        start = time.perf_counter() - t0

        def on_ray(store: Store) -> Any:
            proxy = eng.annotator(AnnotateJob("rules"), config=ann.config, store=store)
            return annotate(traces(n), proxy, store=store, keep=False, concurrency=eng.in_flight)

        out["ray"] = measure("ray", n, on_ray, tmp / "rules-ray.db")
        out["ray"]["cluster_start_s"] = round(start, 2)
        out["ray"]["workers"] = eng.workers
    return out


def bench_judge(n: int, tmp: Path, latency: float, concurrency: int, workers: int | None) -> dict[str, Any]:
    from mastkit.scale.ray_engine import RayEngine

    modes = [
        {"code": m.code, "verdict": "absent", "confidence": 0.9, "evidence": [], "rationale": "no sign"}
        for m in load_taxonomy("mast").modes
    ]
    reply = json.dumps(
        {
            "summary": "s",
            "task_success": False,
            "modes": modes,
            "responsible_agent": None,
            "responsible_step": None,
        }
    )
    out: dict[str, Any] = {}
    with FakeLLMServer(default=Reply(text=reply, delay_s=latency)) as srv:
        settings = {
            "model": "openai:fake",
            "base_url": srv.openai_base_url,
            "api_key": "k",
            "concurrency": concurrency,
            "structured_output": False,
            "provider_options": {"retry": RetryPolicy(max_attempts=2, initial_delay_s=0.01, jitter=0.0)},
        }
        ann = make_annotator("llm", **settings)  # type: ignore[arg-type]
        out["local"] = measure(
            "judge local",
            n,
            lambda store: annotate(
                traces(n, seed=11),
                make_annotator("llm", cache=store, **settings),  # type: ignore[arg-type]
                store=store,
                keep=False,
                concurrency=concurrency,
            ),
            tmp / "judge-local.db",
        )
        per_worker = max(1, concurrency // (workers or os.cpu_count() or 1))  # the same requests in flight
        with RayEngine(workers=workers, batch_size=per_worker, concurrency=per_worker) as eng:

            def on_ray(store: Store) -> Any:
                proxy = eng.annotator(AnnotateJob("llm", settings), config=ann.config, store=store)
                return annotate(traces(n, seed=11), proxy, store=store, keep=False, concurrency=eng.in_flight)

            out["ray"] = measure("judge ray", n, on_ray, tmp / "judge-ray.db")
            out["ray"]["workers"] = eng.workers
        out["requests"] = len(srv.chat_requests)
    return out


def ratios(block: dict[str, Any]) -> dict[str, float]:
    loc, ray = block["local"], block["ray"]
    return {
        "throughput_ray_over_local": round(ray["traces_per_s"] / loc["traces_per_s"], 2),
        "cpu_per_trace_ray_over_local": round(ray["cpu_ms_per_trace"] / loc["cpu_ms_per_trace"], 2),
        "peak_rss_ray_over_local": round(ray["peak_rss_mb"] / loc["peak_rss_mb"], 2),
    }


def print_block(title: str, block: dict[str, Any]) -> None:
    keys = [k for k in block["local"] if k != "traces"]
    print(f"\n{title} ({block['local']['traces']:,} traces)")
    print(f"  {'':26} {'local':>12} {'ray':>12}")
    for k in keys + [k for k in block["ray"] if k not in keys]:
        print(f"  {k:26} {block['local'].get(k, '-')!s:>12} {block['ray'].get(k, '-')!s:>12}")
    for k, v in ratios(block).items():
        print(f"  {k:26} {v}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=100_000, help="traces for the rules part (0: skip)")
    ap.add_argument("--judge-n", type=int, default=2_000, help="traces for the judge part (0: skip)")
    ap.add_argument("--latency", type=float, default=0.2, help="seconds per fake model reply")
    ap.add_argument("--concurrency", type=int, default=32, help="judge: requests in flight per process")
    ap.add_argument("--workers", type=int, default=None, help="Ray workers (default: one per CPU)")
    ap.add_argument("--batch", type=int, default=256, help="rules: traces per Ray batch")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = ap.parse_args(argv)
    try:
        import ray  # noqa: F401
    except ImportError:
        print("bench/scale.py needs Ray: pip install 'mastkit[ray]'", file=sys.stderr)
        return 2
    figures: dict[str, Any] = {"machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0]}}
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        if args.n:
            figures["rules"] = bench_rules(args.n, tmp, args.workers, args.batch)
            print_block("rules annotator", figures["rules"])
        if args.judge_n:
            figures["judge"] = bench_judge(args.judge_n, tmp, args.latency, args.concurrency, args.workers)
            print_block(f"LLM judge, FakeLLMServer {args.latency:g} s/reply", figures["judge"])
    for part in ("rules", "judge"):
        if part in figures:
            figures[part]["ratios"] = ratios(figures[part])
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
