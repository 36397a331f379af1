"""What the LLM attributor sends, word for word, and what it makes of the replies.

Each scenario runs one method of :class:`mastkit.attribute.LLMAttributor` on a small failed
trace against the loopback FakeLLMServer, with replies chosen by the question asked. Every
request (system and user message, temperature, seed, output cap, reply schema name) and the
final attribution are written out and compared with ``golden/attribution/<scenario>.txt``; the
fence nonce is replaced by ``FENCE``. A deliberate change of wording regenerates the files
(``MASTKIT_UPDATE_GOLDEN=1``) and bumps ``ATTRIBUTION_PROMPT_VERSION``.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from tests.attribute._miles import RETRY, miles_events

from mastkit.attribute import LLMAttributor
from mastkit.attribute.llm import AttributionOptions
from mastkit.providers import get_provider
from mastkit.testing import FakeLLMServer, Reply
from mastkit.traces.model import AgentInfo, Outcome, Trace

GOLDEN = Path(__file__).parent / "golden" / "attribution"
_FENCE = re.compile(r"trace-[0-9a-f]{16}")
_STEP = re.compile(r"step (\d+) by")


def _trace() -> Trace:
    events = miles_events()
    return Trace(
        trace_id="miles",
        source_format="test",
        framework="autogen",
        task="Convert 5 miles to kilometres.",
        agents=[AgentInfo(name="planner"), AgentInfo(name="coder"), AgentInfo(name="verifier")],
        events=events,
        outcome=Outcome(success=False, ground_truth="8.05 km"),
    )


def _reply(payload: Any, *, flagged: int = 2, succeed: bool = True) -> Reply:
    question = payload["messages"][-1]["content"]
    if "Identify the agent that made the decisive mistake" in question:
        body: dict[str, Any] = {
            "reason": "The coder used 1.5 instead of 1.609.",
            "agent": "coder",
            "step": 2,
            "mode": "FM-2.6",
            "confidence": 0.8,
            "alternatives": [{"agent": "planner", "step": 1}, {"agent": "verifier", "step": 5}],
        }
    elif "Does step" in question:
        step = int(_STEP.search(question).group(1))  # type: ignore[union-attr]
        body = {
            "reason": f"step {step} reviewed",
            "mode": "FM-2.6" if step == flagged else None,
            "error_probability": 0.9 if step == flagged else 0.1,
            "decisive_error": step == flagged,
        }
    elif "Which half" in question:
        body = {"reason": "the factor is wrong", "mode": "FM-2.6", "half": "first", "confidence": 0.7}
    else:
        assert "Counterfactual check" in question
        body = {"reason": "with 1.609 it works", "would_succeed": succeed, "confidence": 0.9}
    return Reply(json.dumps(body))


def _run(method: str, *, succeed: bool = True, **options: Any) -> str:
    with FakeLLMServer(handler=lambda p: _reply(p, succeed=succeed)) as srv:
        provider = get_provider("openai:x", base_url=srv.openai_base_url, api_key="k", retry=RETRY)
        attributor = LLMAttributor(provider, options=AttributionOptions(**options))
        result = attributor.attribute(_trace(), method=method, ground_truth="8.05 km")
        requests = srv.chat_requests
    out = [f"method: {method}; options: {options}", f"version: {attributor.version}", ""]
    for i, r in enumerate(requests):
        body = r.json
        msgs = body["messages"]
        schema = body.get("response_format", {}).get("json_schema", {}).get("name")
        out.append(
            f"=== request {i + 1}: temperature={body.get('temperature')} seed={body.get('seed')} "
            f"max_tokens={body.get('max_tokens') or body.get('max_completion_tokens')} schema={schema}"
        )
        for m in msgs if i == 0 else msgs[1:]:  # the system message is the same in every request
            out.append(f"--- {m['role']}\n{m['content']}")
    out.append("=== result")
    out.append(result.model_dump_json(indent=1))
    return _FENCE.sub("FENCE", "\n".join(out)) + "\n"


SCENARIOS: dict[str, tuple[str, dict[str, Any]]] = {
    "all_at_once": ("all-at-once", {}),
    "all_at_once_counterfactual": ("all-at-once", {"counterfactual": True}),
    "all_at_once_rejected": ("all-at-once", {"counterfactual": True, "succeed": False}),
    "step_by_step": ("step-by-step", {}),
    "step_by_step_counterfactual": ("step-by-step", {"counterfactual": True}),
    "binary_search": ("binary-search", {}),
    "binary_search_counterfactual": ("binary-search", {"counterfactual": True, "succeed": False}),
}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_requests_and_result_match_the_golden_text(name: str) -> None:
    method, options = SCENARIOS[name]
    opts = dict(options)
    succeed = opts.pop("succeed", True)
    text = _run(method, succeed=succeed, **opts)
    path = GOLDEN / f"{name}.txt"
    if os.environ.get("MASTKIT_UPDATE_GOLDEN"):
        GOLDEN.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8"), f"attribution requests for {name} changed"
