"""The judge's golden set: each case in ``golden/`` is a trace, the judge's scripted replies per
request and the verdicts that must come out, run through the real judge and FakeLLMServer.

The case format is described in ``golden/README.md``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from mastkit.annotate import annotate
from mastkit.annotate.detectors._precision import confidence_for
from mastkit.annotate.judge.judge import JudgeAnnotator, JudgeOptions
from mastkit.providers import get_provider
from mastkit.testing import FakeLLMServer
from mastkit.traces.model import Trace

from ._judgekit import CODES, FAST_RETRY, TAX, user_text

GOLDEN = Path(__file__).parent / "golden"
CASES = sorted(GOLDEN.glob("*.json"))
_FILLER = " lorem ipsum dolor sit amet" * 40
_WINDOW = re.compile(r"\(window (\d+) of \d+\)")


def _trace(spec: dict[str, Any]) -> Trace:
    events = []
    for e in spec["events"]:
        e = dict(e)
        pad = e.pop("pad_to", None)
        if pad is not None:
            e["content"] = (e["content"] + _FILLER)[:pad]
        events.append(e)
    return Trace.model_validate({"source_format": "golden", **spec, "events": events})


def _reply_text(reply: str | dict[str, Any]) -> str:
    if isinstance(reply, str):
        return reply
    reply = dict(reply)
    given: dict[str, Any] = reply.pop("modes")
    fill = reply.pop("fill", None)
    modes = []
    for code in CODES:
        if code in given:
            if given[code] is not None:
                modes.append({"code": code, "evidence": [], **given[code]})
        elif fill is not None:
            modes.append({"code": code, "evidence": [], "reasoning": "", "verdict": fill, "confidence": 0.9})
    return json.dumps({**reply, "modes": modes})


def _request_key(payload: dict[str, Any]) -> str:
    """Which scripted request a chat request is: decide, window N or adjudication (+ /repair)."""
    msgs = payload["messages"]
    first = user_text({"messages": [next(m for m in msgs if m["role"] == "user")]})
    if "## Findings of the window reviews" in first:
        key = "adjudication"
    elif m := _WINDOW.search(first):
        key = f"window {int(m.group(1)) - 1}"
    else:
        key = "decide"
    return key + "/repair" if any(m["role"] == "assistant" for m in msgs) else key


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_golden_case(path: Path) -> None:
    case = json.loads(path.read_text(encoding="utf-8"))
    replies = case["replies"]
    asked: list[str] = []

    def handler(payload: dict[str, Any]) -> str:
        key = _request_key(payload)
        asked.append(key)
        return _reply_text(replies[key][payload.get("seed") or 0])

    expect = case["expect"]
    with FakeLLMServer(handler=handler) as srv:
        provider = get_provider("openai:x", base_url=srv.openai_base_url, api_key="k", retry=FAST_RETRY)
        judge = JudgeAnnotator(TAX, provider, options=JudgeOptions(**case["options"]))
        report = annotate([_trace(case["trace"])], judge)
    assert sorted(set(asked)) == sorted(replies), "every scripted request is asked, and no other"
    if expect["failed"]:
        assert report.progress.failed == 1 and report.annotations == []
        (err,) = report.errors
        assert expect["error_contains"] in err["reason"]
        return
    assert not report.errors, report.errors
    (ann,) = report.annotations
    assert ann.extra["windows"] == expect["windows"]
    assert ann.extra["requests"] == expect["requests"]
    if "coverage" in expect:
        assert ann.extra["coverage"] == expect["coverage"]
    assert ann.errors == expect["errors"]
    for problem in expect.get("problems", []):
        assert problem in ann.extra["problems"]
    if "success" in expect:
        assert ann.predicted_success is expect["success"]
    if "attribution" in expect:
        assert ann.attribution is not None
        assert (ann.attribution.agent, ann.attribution.step) == (
            expect["attribution"]["agent"],
            expect["attribution"]["step"],
        )
    assert [v.code for v in ann.verdicts] == CODES
    for v in ann.verdicts:
        want = {"evidence": [], **expect["default"], **expect["verdicts"].get(v.code, {})}
        if str(want.get("confidence", "")).startswith("rule:"):  # a rule's measured precision
            want["confidence"] = confidence_for(want["confidence"].removeprefix("rule:"), "present").value
        got = {
            "verdict": v.verdict,
            "confidence": v.confidence,
            "evidence": [e.seq_start for e in v.evidence],
            "downgraded": v.extra.get("downgraded_from") == "present",
            "filled_from_rules": bool(v.extra.get("filled_from_rules")),
        }
        if "notes" in want:
            got["notes"] = [e.note for e in v.evidence]
        if "rationale" in want:
            got["rationale"] = v.rationale
        want.setdefault("downgraded", False)
        want.setdefault("filled_from_rules", False)
        assert got == want, v.code
