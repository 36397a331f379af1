"""Scripted judges for calibration tests: FakeLLMServer handlers that answer from the set's gold labels."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from tests.annotate._judgekit import trace_id_of

from mastkit.calibration import load_calibration_set
from mastkit.taxonomy import load_taxonomy
from mastkit.traces.model import Trace

CODES = [m.code for m in load_taxonomy("mast").modes]
WHOLE = {"window_tokens": 2_000_000}
"""Judge options that put every calibration trace in one window (one decide request per trace)."""


def _quote(trace: Trace) -> tuple[int, str]:
    """A quote the evidence check finds: the start of the first long enough event text."""
    for e in trace.events:
        text = (e.content or "").strip()
        if len(text) >= 20 and "\n" not in text[:20]:
            return e.seq, text[:20]
    raise AssertionError(f"no quotable event in {trace.trace_id}")


def reply_for(trace: Trace, present: set[str], agent: str | None = None, step: int | None = None) -> str:
    seq, quote = _quote(trace)
    modes = []
    for code in CODES:
        verdict = "present" if code in present else "absent"
        modes.append(
            {
                "code": code,
                "verdict": verdict,
                "confidence": 0.9,
                "evidence": [{"seq_start": seq, "seq_end": seq, "agent": None, "quote": quote}]
                if verdict == "present"
                else [],
                "rationale": f"{code} {verdict}",
            }
        )
    return json.dumps(
        {
            "summary": "s",
            "task_success": False,
            "modes": modes,
            "responsible_agent": agent,
            "responsible_step": step,
        }
    )


def gold_handler(*, with_step: bool = True) -> Callable[[Any], str]:
    """Answers every request with the human majority labels (and Who&When's agent and, with
    ``with_step``, its step)."""
    cs = load_calibration_set()
    by_id = {t.trace_id: t for t in cs.traces}

    def handle(payload: Any) -> str:
        tid = trace_id_of(payload)
        assert tid is not None and tid in by_id, tid
        trace = by_id[tid]
        present = {c for c, v in cs.gold.labels.get(tid, {}).items() if v}
        label = next((lab for lab in trace.labels if lab.kind == "attribution"), None)
        step = label.step if label and with_step else None
        return reply_for(trace, present, label.agent if label else None, step)

    return handle


def absent_handler() -> Callable[[Any], str]:
    """Answers every mode absent and names no responsible agent."""
    cs = load_calibration_set()
    by_id = {t.trace_id: t for t in cs.traces}

    def handle(payload: Any) -> str:
        tid = trace_id_of(payload)
        assert tid is not None
        return reply_for(by_id[tid], set())

    return handle
