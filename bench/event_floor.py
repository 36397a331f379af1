"""How close to the plain-parse floor can loading get, when every message becomes a Python object?

``bench/ingest.py`` compares mastkit with ``json.loads`` of the same bytes. For event-dense data
(one event per ~1 KB) most of the time is spent creating event objects, not parsing. This script
measures, on a synthetic chat-message JSONL (the shape of ``bench/ingest.py``'s), in one process
and interleaved rounds (best of N), with the collector paused as the loader does:

  * json           : json.loads of each line (the floor)
  * orjson         : orjson.loads of each line
  * +tuples        : orjson, then one tuple per event: the least any Python importer must build
  * +bare events   : orjson, then the canonical Event objects with none of mastkit's checks or
                     mapping (the dataclasses' own constructors): the least an importer to this
                     model can do
  * mastkit        : load_traces end to end (sniffing, mapping, checks, Trace objects)

    python bench/event_floor.py [--mb 20] [--runs 7]
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from mastkit import load_traces
from mastkit.traces import _build
from mastkit.traces.model import Event, ToolCall, ToolResult

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ingest import synthetic_jsonl


def _paused(fn: Callable[[], int]) -> Callable[[], int]:
    def run() -> int:
        gc.disable()
        try:
            return fn()
        finally:
            gc.enable()

    return run


def _event(seq: int, kind: str, fields: dict[str, Any]) -> Event:
    return Event(seq, kind, **fields)  # type: ignore[arg-type]


def bare_events(doc: dict[str, Any]) -> list[Event]:
    """The canonical events of one chat record, with no checks and no mapping beyond the shape."""
    events: list[Event] = []
    for i, m in enumerate(doc["messages"]):
        ref = _build.source_ref(pointer=f"/messages/{i}")
        role = m["role"]
        if role == "tool":
            result = ToolResult(call_id=m.get("tool_call_id"), output=m["content"])
            fields = {"actor": "environment", "role": "tool", "tool_result": result, "source": ref, "raw": m}
            events.append(_event(len(events), "tool_result", fields))
            continue
        fields = {"actor": role, "role": role, "content": m["content"], "source": ref, "raw": m}
        events.append(_event(len(events), "message", fields))
        for call in m.get("tool_calls") or ():
            fn = call["function"]
            tool_call = ToolCall(
                name=fn["name"], call_id=call["id"], arguments=orjson.loads(fn["arguments"]),
                arguments_raw=fn["arguments"],
            )  # fmt: skip
            fields = {"actor": role, "role": "assistant", "tool_call": tool_call, "source": ref}
            events.append(_event(len(events), "tool_call", fields))
    return events


def tuples(doc: dict[str, Any]) -> int:
    out: list[tuple[Any, ...]] = []
    for i, m in enumerate(doc["messages"]):
        out.append((i, m["role"], m["content"], m))
        for call in m.get("tool_calls") or ():
            out.append((i, call["id"], call["function"]["name"], orjson.loads(call["function"]["arguments"])))
    return len(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=float, default=20.0, help="size of the synthetic JSONL")
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "chat.jsonl"
        synthetic_jsonl(path, args.mb / 1000)
        data = path.read_bytes()
        lines = data.splitlines()
        n_events = sum(len(bare_events(orjson.loads(line))) for line in lines)
        steps: dict[str, Callable[[], int]] = {
            "json": lambda: sum(1 for line in lines if json.loads(line)),
            "orjson": lambda: sum(1 for line in lines if orjson.loads(line)),
            "+tuples": _paused(lambda: sum(tuples(orjson.loads(line)) for line in lines)),
            "+bare events": _paused(lambda: sum(len(bare_events(orjson.loads(line))) for line in lines)),
            "mastkit": lambda: sum(1 for _ in load_traces(path)),
        }
        best = dict.fromkeys(steps, float("inf"))
        for _ in range(args.runs):
            for name, fn in steps.items():
                t0 = time.perf_counter()
                fn()
                best[name] = min(best[name], time.perf_counter() - t0)
    print(
        f"synthetic chat JSONL: {len(data) / 1e6:.1f} MB, {len(lines)} traces, {n_events} events (best of {args.runs})"
    )
    for name, t in best.items():
        print(
            f"  {name:<14} {t * 1e3:8.1f} ms  {t / n_events * 1e6:5.2f} us/event  "
            f"x{best['json'] / t:.2f} of json"
        )


if __name__ == "__main__":
    main()
