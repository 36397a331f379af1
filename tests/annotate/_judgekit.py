"""Helpers for judge tests: traces, scripted judge replies, annotators pointed at FakeLLMServer."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from mastkit.annotate.factory import make_annotator
from mastkit.annotate.run import Annotator
from mastkit.providers import RetryPolicy
from mastkit.taxonomy import load_taxonomy
from mastkit.testing import FakeLLMServer
from mastkit.traces.load import load_traces
from mastkit.traces.model import Event, Trace

TAX = load_taxonomy("mast")
CODES = [m.code for m in TAX.modes]
EXAMPLES = Path(__file__).resolve().parents[2] / "src" / "mastkit" / "examples"

FAST_RETRY = RetryPolicy(max_attempts=3, initial_delay_s=0.01, max_delay_s=0.05, jitter=0.0)
"""Retries without the default 1 s backoff (server retry-after is still honoured)."""


def example_trace(trace_id: str | None = None) -> Trace:
    (trace,) = load_traces(EXAMPLES / "01_sre_cart_oomkilled.json")
    return trace if trace_id is None else trace.model_copy(update={"trace_id": trace_id})


def simple_trace(trace_id: str = "t1", texts: list[str] | None = None, **kw: Any) -> Trace:
    texts = texts or ["Please fix the checkout bug.", "Done, I fixed it.", "Great."]
    events = [
        Event(
            seq=i,
            kind="message",
            actor="user" if i % 2 == 0 else "coder",
            role="user" if i % 2 == 0 else "assistant",
            content=t,
        )
        for i, t in enumerate(texts)
    ]
    return Trace(trace_id=trace_id, source_format="test", events=events, **kw)


def reply_json(
    present: tuple[str, ...] = (),
    *,
    omit: tuple[str, ...] = (),
    unknown: tuple[str, ...] = (),
    summary: str = "s",
    success: bool | None = False,
) -> str:
    modes = []
    for code in CODES:
        if code in omit:
            continue
        verdict = "present" if code in present else "unknown" if code in unknown else "absent"
        modes.append(
            {
                "code": code,
                "verdict": verdict,
                "confidence": 0.9,
                "evidence": [{"seq_start": 1, "seq_end": 1, "agent": "coder", "quote": "Done, I fixed it"}]
                if verdict == "present"
                else [],
                "rationale": f"{code} {verdict}",
            }
        )
    return json.dumps(
        {
            "summary": summary,
            "task_success": success,
            "modes": modes,
            "responsible_agent": None,
            "responsible_step": None,
        }
    )


def make_judge(
    srv: FakeLLMServer,
    protocol: str = "openai",
    *,
    model: str | None = None,
    cache: Any = None,
    kind: str = "llm",
    timeout: float = 10.0,
    retry: RetryPolicy = FAST_RETRY,
    **kw: Any,
) -> Annotator:
    if protocol == "anthropic":
        spec, url = model or "anthropic:claude-test", srv.anthropic_base_url
    else:
        spec, url = model or "openai:x", srv.openai_base_url
    return make_annotator(
        kind,  # type: ignore[arg-type]
        model=spec,
        base_url=url,
        api_key="test-key",
        cache=cache,
        timeout=timeout,
        provider_options={"retry": retry},
        **kw,
    )


def user_text(payload: Any) -> str:
    """The user message text of an OpenAI or Anthropic request body."""
    msgs = payload.get("messages", []) if isinstance(payload, dict) else []
    return "\n".join(
        m["content"] if isinstance(m.get("content"), str) else json.dumps(m.get("content"))
        for m in msgs
        if m.get("role") == "user"
    )


_TRACE_ID = re.compile(r"trace id: ([^;\s)]+)")


def trace_id_of(payload: Any) -> str | None:
    m = _TRACE_ID.search(user_text(payload))
    return m.group(1) if m else None
