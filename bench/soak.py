"""Soak run: thousands of synthetic traces through the LLM judge against a loopback server where a
share of the requests fault, with retries; memory is sampled as the run goes.

The judge is :class:`mastkit.testing.FakeLLMServer`. Faults are drawn per request (seeded): a
third each of 500 errors (with a short ``retry-after``), garbage replies (a 200 whose body is not
JSON, or judge text that is not the verdict JSON) and timeouts (the reply comes after the client
gave up). The first run goes through the faults with retries; every trace must end annotated or
with an error row in the store. A second run without faults must annotate exactly the traces the
first one failed on, asking the model only about them.

Memory: the process's resident set size (and, with ``--tracemalloc``, Python's own allocations)
is sampled every tenth of the first run; the growth over its second half is reported. The
server's request log is cleared as the run goes, so what grows is the run, not the fake server.

``tests/scale/test_soak.py`` runs :func:`soak` with a small ``n`` (``MASTKIT_SOAK_N``). The big
run, reproduce with:

    .venv/bin/python bench/soak.py --n 10000 --json soak.json
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import random
import re
import sys
import tempfile
import threading
import time
import tracemalloc
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from mastkit.annotate import annotate
from mastkit.annotate.factory import make_annotator
from mastkit.providers import RetryPolicy
from mastkit.store import Store
from mastkit.taxonomy import load_taxonomy
from mastkit.testing import FakeLLMServer, Reply
from mastkit.traces.model import Event, Trace

CODES = [m.code for m in load_taxonomy("mast").modes]
_TRACE_ID = re.compile(r"trace id: ([^;\s)]+)")
KEEP = False
RETRY = RetryPolicy(max_attempts=3, initial_delay_s=0.01, max_delay_s=0.05, jitter=0.0)
"""Three attempts per call, short backoff (the server's ``retry-after`` is honoured too)."""


def rss_mb() -> float | None:
    """Resident set size of this process in MB (Linux /proc), None elsewhere."""
    try:
        with open("/proc/self/statm", encoding="ascii") as fh:
            pages = int(fh.read().split()[1])
    except (OSError, ValueError, IndexError):
        return None
    import os

    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def make_trace(i: int) -> Trace:
    """A small synthetic three-message trace, different for every ``i``."""
    texts = [
        f"Task {i}: fix the checkout bug #{i * 7919 % 10007}.",
        f"Done with task {i}, I think.",
        "Thanks.",
    ]
    events = [
        Event(
            seq=k,
            kind="message",
            actor="user" if k % 2 == 0 else "coder",
            role="user" if k % 2 == 0 else "assistant",
            content=t,
        )
        for k, t in enumerate(texts)
    ]
    return Trace(trace_id=f"s{i:06d}", source_format="test", events=events)


def traces(n: int) -> Iterator[Trace]:
    """``n`` traces, made one at a time (the run reads them lazily)."""
    return (make_trace(i) for i in range(n))


def verdict_json(present: str | None) -> str:
    """A valid judge reply: ``present`` present, every other mode absent."""
    modes = [
        {
            "code": code,
            "verdict": "present" if code == present else "absent",
            "confidence": 0.9,
            "evidence": [{"seq_start": 1, "seq_end": 1, "agent": "coder", "quote": "I think"}]
            if code == present
            else [],
            "rationale": f"{code} checked",
        }
        for code in CODES
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


@dataclass
class FaultyJudge:
    """The server's handler: answers each request, faulting a share ``rate`` of them."""

    rate: float
    seed: int = 7
    timeout_delay_s: float = 1.0
    requests: Counter[str] = field(default_factory=Counter)
    """Chat requests per trace id."""
    faults: Counter[str] = field(default_factory=Counter)
    """Faults sent, by kind."""

    def __post_init__(self) -> None:
        self._rand = random.Random(self.seed)
        self._lock = threading.Lock()

    def __call__(self, payload: Any) -> Reply:
        text = "\n".join(
            m["content"] for m in payload.get("messages", []) if isinstance(m.get("content"), str)
        )
        m = _TRACE_ID.search(text)
        tid = m.group(1) if m else "?"
        with self._lock:
            self.requests[tid] += 1
            roll = self._rand.random()
            pick = self._rand.random()
        if roll < self.rate:
            kind = "server_error" if pick < 1 / 3 else "garbage" if pick < 2 / 3 else "timeout"
            with self._lock:
                self.faults[kind] += 1
            if kind == "server_error":
                return Reply(status=500, headers={"retry-after": "0.01"}, error_message="soak: server error")
            if kind == "garbage":
                return Reply.malformed() if pick < 0.5 else Reply("I cannot answer that in JSON, sorry.")
            return Reply.timeout(self.timeout_delay_s, verdict_json(None))
        return Reply(verdict_json(CODES[int(tid[1:]) % len(CODES)] if tid[1:].isdigit() else None))


@dataclass
class SoakResult:
    n: int
    fault_rate: float
    wall_s: float
    rate_per_s: float
    done: int
    failed: int
    requests: int
    faults: dict[str, int]
    error_rows: int
    """Traces the store lists as failed (an error row not followed by an annotation)."""
    annotated: int
    """Traces with an annotation in the store after the first run."""
    rss_mb: list[float]
    """Resident set size at each tenth of the first run."""
    traced_mb: list[float]
    """Python allocations at each tenth (``--tracemalloc``; empty otherwise)."""
    blocks: list[int]
    """Memory blocks held by Python's allocator at each tenth, after a garbage collection: a
    finer sign of objects kept per trace than the resident size."""
    rss_growth_second_half_mb: float
    blocks_growth_second_half: int
    rerun_done: int
    rerun_cached: int
    rerun_failed: int
    rerun_requests: int
    rerun_asked_only_failed: bool
    """The second run asked the model only about traces the first one failed on."""
    rerun_wall_s: float


def soak(
    n: int,
    db: Path,
    *,
    fault_rate: float = 0.3,
    concurrency: int = 32,
    client_timeout_s: float = 0.4,
    seed: int = 7,
    trace_memory: bool = False,
) -> SoakResult:
    """Run the soak (see the module docstring) with the store at ``db``; returns the figures."""
    judge = FaultyJudge(fault_rate, seed=seed, timeout_delay_s=client_timeout_s * 2.5)
    rss: list[float] = []
    traced: list[float] = []
    blocks: list[int] = []
    marks = {max(1, round(n * k / 10)) for k in range(1, 11)}
    with FakeLLMServer(handler=judge) as srv, Store(db) as store:

        def annotator() -> Any:
            return make_annotator(
                "llm",
                model="openai:soak",
                base_url=srv.openai_base_url,
                api_key="test-key",
                cache=store,
                timeout=client_timeout_s,
                concurrency=concurrency,
                provider_options={"retry": RETRY},
            )

        def sample(p: Any) -> None:
            if p.finished in marks:
                srv.reset()  # the server's own request log is not the run's memory
                value = rss_mb()
                if value is not None:
                    rss.append(round(value, 2))
                gc.collect()
                blocks.append(sys.getallocatedblocks())
                if trace_memory:
                    traced.append(round(tracemalloc.get_traced_memory()[0] / 2**20, 2))

        if trace_memory:
            tracemalloc.start()
        t0 = time.perf_counter()
        first = annotate(
            traces(n),
            annotator(),
            store=store,
            concurrency=concurrency,
            keep=KEEP,
            total=n,
            on_progress=sample,
        )
        wall = time.perf_counter() - t0
        if trace_memory:
            tracemalloc.stop()
        config_hash = first.config_hash
        failed_ids = {o.trace_id for o in first.failed}
        error_rows = store.failed_traces(config_hash)
        annotated = len(store.annotation_records(config_hash))
        requests = sum(judge.requests.values())

        judge.rate = 0.0
        judge.requests.clear()
        t0 = time.perf_counter()
        second = annotate(traces(n), annotator(), store=store, concurrency=concurrency, keep=False, total=n)
        rerun_wall = time.perf_counter() - t0
        asked = set(judge.requests)
    half = len(rss) // 2
    growth = rss[-1] - rss[half - 1] if len(rss) >= 2 else 0.0
    mid = len(blocks) // 2
    blocks_growth = blocks[-1] - blocks[mid - 1] if len(blocks) >= 2 else 0
    return SoakResult(
        n=n,
        fault_rate=fault_rate,
        wall_s=round(wall, 2),
        rate_per_s=round(n / wall, 1),
        done=first.progress.done,
        failed=first.progress.failed,
        requests=requests,
        faults=dict(judge.faults),
        error_rows=len({r["trace_id"] for r in error_rows}),
        annotated=annotated,
        rss_mb=rss,
        traced_mb=traced,
        blocks=blocks,
        rss_growth_second_half_mb=round(growth, 2),
        blocks_growth_second_half=blocks_growth,
        rerun_done=second.progress.done,
        rerun_cached=second.progress.cached,
        rerun_failed=second.progress.failed,
        rerun_requests=sum(judge.requests.values()),
        rerun_asked_only_failed=asked == failed_ids,
        rerun_wall_s=round(rerun_wall, 2),
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--fault-rate", type=float, default=0.3)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--tracemalloc", action="store_true", help="also sample Python allocations (slower)")
    ap.add_argument("--json", type=Path, help="write the figures here")
    args = ap.parse_args()
    logging.getLogger("mastkit").setLevel(logging.ERROR)  # else one warning per failed call
    with tempfile.TemporaryDirectory() as tmp:
        result = soak(
            args.n,
            Path(tmp) / "soak.db",
            fault_rate=args.fault_rate,
            concurrency=args.concurrency,
            trace_memory=args.tracemalloc,
        )
    figures = asdict(result)
    print(json.dumps(figures, indent=2))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    ok = result.done + result.failed == result.n and result.rerun_failed == 0
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
