"""Redaction that holds: a corpus of fake, format-valid secrets in realistic trace events goes
through the real judge, the LLM attributor, the HTML report and the exports, and no piece of
any secret (8+ characters of it, vendor prefix excluded) comes out.

The judge runs with small windows, so the trace is cut into several windows, long events are
elided head+tail and a raw unsegmented log is cut into parts: a key across a part cut, a PEM
block across windows and a key inside an elided middle are all in the corpus. What is checked
is the exact bytes the loopback server received, and the parsed message texts.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from mastkit.annotate import annotate
from mastkit.annotate.factory import make_annotator
from mastkit.annotate.redact import redact_annotation
from mastkit.attribute.llm import LLM_METHODS, AttributionOptions, LLMAttributor
from mastkit.llm.redact import redact_trace
from mastkit.providers import Redactor, RetryPolicy, get_provider
from mastkit.report import build_report_data, report
from mastkit.store import Store
from mastkit.taxonomy import load_taxonomy
from mastkit.testing import FakeLLMServer
from mastkit.traces.model import Event, Outcome, ToolCall, Trace

from ._corpus import Secret, corpus_trace, leaks

FAST_RETRY = RetryPolicy(max_attempts=2, initial_delay_s=0.01, max_delay_s=0.05, jitter=0.0)
CODES = [m.code for m in load_taxonomy("mast").modes]


def _corpus() -> tuple[list[Secret], Trace, Trace]:
    return corpus_trace()


def _haystacks(bodies: list[bytes]) -> str:
    """Raw bodies plus every message text parsed out of them (JSON escapes decoded)."""
    out = []
    for body in bodies:
        out.append(body.decode("utf-8", "replace"))
        payload = json.loads(body)
        for m in payload.get("messages", []):
            content = m.get("content")
            out.append(content if isinstance(content, str) else json.dumps(content, ensure_ascii=False))
        if isinstance(payload.get("system"), str):
            out.append(payload["system"])
    return "\n\x00\n".join(out)


def test_corpus_is_big_and_varied() -> None:
    secrets, trace, raw = _corpus()
    assert len(secrets) >= 55
    assert len({s.kind for s in secrets}) >= 25
    # every secret really is in the traces it is meant to be in
    text = trace.model_dump_json() + raw.model_dump_json()
    for s in secrets:
        for part in s.parts:
            assert json.dumps(part)[1:-1] in text, s.kind


def test_redact_trace_removes_every_secret_once_and_is_idempotent() -> None:
    secrets, trace, raw = _corpus()
    for t in (trace, raw):
        red, counts = redact_trace(t)
        dumped = red.model_dump_json()
        assert leaks(secrets, dumped) == []
        assert leaks(secrets, json.dumps(json.loads(dumped), ensure_ascii=False)) == []
        again, counts2 = redact_trace(red)
        assert again.model_dump_json() == dumped and not counts2
        assert red.trace_id == t.trace_id and len(red.events) == len(t.events)
    red, counts = redact_trace(trace)
    # each kind of the corpus is reported under its own name
    expected = Counter(s.kind for s in secrets[:-3])  # the last three are the straddle cases
    assert set(expected) <= set(counts)
    assert counts["email"] == 2 and counts["private_key"] >= 2 and counts["jwt"] == 3
    # the parsed tool argument under a credential key went, the others stayed
    db_call = red.events[-3].tool_call
    assert db_call is not None and db_call.arguments == {
        "host": "db.internal",
        "user": "app",
        "password": "[REDACTED:password]",
    }
    # the original is not touched
    assert trace.events[-3].tool_call is not None
    assert trace.events[-3].tool_call.arguments["password"] != "[REDACTED:password]"


def test_redact_trace_shares_what_has_no_secret() -> None:
    t = Trace(
        trace_id="plain",
        source_format="test",
        task="Add two numbers.",
        events=[
            Event(seq=0, kind="message", actor="user", role="user", content="What is 2 + 2? max_tokens=10"),
            Event(
                seq=1,
                kind="tool_call",
                actor="coder",
                tool_call=ToolCall(name="calc", arguments={"expr": "2+2", "token_count": 3}),
            ),
        ],
        outcome=Outcome(success=True, ground_truth="4"),
    )
    red, counts = redact_trace(t)
    assert red is t and not counts


def test_every_trace_field_is_redacted() -> None:
    key = "ghp_" + "Ab1" * 12
    t = Trace.model_validate(
        {
            "trace_id": "fields",
            "source_format": "test",
            "task": f"use {key}",
            "agents": [
                {
                    "name": "coder",
                    "system_prompt": f"token {key}",
                    "role_description": f"holds {key}",
                    "extra": {"k": [key]},
                }
            ],
            "events": [
                {
                    "seq": 0,
                    "kind": "message",
                    "actor": "coder",
                    "content": "hi",
                    "recipients": [f"to {key}"],
                    "raw": {"text": key},
                    "extra": {"x": key},
                },
                {"seq": 1, "kind": "tool_result", "tool_result": {"output": key, "status": f"ok {key}"}},
            ],
            "termination": {"reason": f"stopped {key}"},
            "outcome": {"ground_truth": f"gt {key}", "final_output": key, "metrics": {"note": key}},
            "labels": [{"reason": f"because {key}", "extra": {"x": key}}],
            "raw": {"header": key},
            "extra": {"meta": {"deep": [key]}},
        }
    )
    red, counts = redact_trace(t)
    assert key[4:12] not in red.model_dump_json()
    # nine distinct strings hold it (the bare key, repeated in seven places, is counted once)
    assert counts == {"github_token": 9}


def _judge_reply(secrets: list[Secret]) -> str:
    """A judge reply that echoes secrets it saw (a model quoting the trace): the report and the
    exports must redact it too."""
    quote = next(s.value for s in secrets if s.kind == "github_token")
    email = next(s.value for s in secrets if s.kind == "email")
    modes = [
        {
            "code": c,
            "verdict": "present" if c == CODES[0] else "absent",
            "confidence": 0.9,
            "evidence": [{"seq_start": 2, "seq_end": 2, "agent": "coder", "quote": f"GITHUB_TOKEN={quote}"}]
            if c == CODES[0]
            else [],
            "rationale": f"{c}: mailed {email}",
        }
        for c in CODES
    ]
    return json.dumps(
        {
            "summary": f"The agent printed {quote} to the log.",
            "task_success": False,
            "modes": modes,
            "responsible_agent": "coder",
            "responsible_step": 2,
        }
    )


def test_judge_sends_no_piece_of_any_secret(tmp_path: Path) -> None:
    secrets, trace, raw = _corpus()
    db = tmp_path / "m.db"
    reply = _judge_reply(secrets)
    with Store(db) as store, FakeLLMServer(handler=lambda _p: reply) as srv:
        judge = make_annotator(
            "llm",
            model="openai:gpt-4o-mini",
            base_url=srv.openai_base_url,
            api_key="test",
            window_tokens=700,
            timeout=10,
            provider_options={"retry": FAST_RETRY},
        )
        result = annotate([trace, raw], judge, store=store)
        bodies = [r.body for r in srv.chat_requests]
        anns = {a.trace_id: a for a in result.annotations}
    # several windows, nothing of the traces left out, parts and elisions really happened
    assert anns[trace.trace_id].extra["windows"] >= 3 and anns[raw.trace_id].extra["windows"] >= 3
    # one request per window, then one adjudication request per trace
    assert len(bodies) == anns[trace.trace_id].extra["requests"] + anns[raw.trace_id].extra["requests"]
    assert anns[trace.trace_id].extra["requests"] == anns[trace.trace_id].extra["windows"] + 1
    sent = _haystacks(bodies)
    assert leaks(secrets, sent) == []
    assert "chars elided]" in sent and "(part 2/" in sent and "(part 3/" in sent
    for e in trace.events:
        assert f"[{e.seq}] " in sent
    assert b"[REDACTED:anthropic_key]" in b"".join(bodies)
    counts = Counter(anns[trace.trace_id].extra["redactions"]) + Counter(
        anns[raw.trace_id].extra["redactions"]
    )
    assert set(Counter(s.kind for s in secrets)) <= set(counts)
    assert anns[trace.trace_id].extra["redacted"] == sum(anns[trace.trace_id].extra["redactions"].values())

    # the HTML report and the exports of the same store: redacted by default
    with Store(db) as store:
        html = report(store, tmp_path / "r.html").read_text(encoding="utf-8")
        store.export(tmp_path / "a.jsonl")
        store.export(tmp_path / "v.csv")
        unredacted = build_report_data(store, redact=False).model_dump_json()
        store.export(tmp_path / "raw.jsonl", redact=False)
    assert leaks(secrets, html) == []
    assert "Redacted before display" in html and "github_token" in html
    for name in ("a.jsonl", "v.csv"):
        assert leaks(secrets, (tmp_path / name).read_text(encoding="utf-8")) == []
    assert "[REDACTED:github_token]" in (tmp_path / "a.jsonl").read_text(encoding="utf-8")
    # opting out shows them: the checks above can fail
    assert leaks(secrets, unredacted) != []
    assert leaks(secrets, (tmp_path / "raw.jsonl").read_text(encoding="utf-8")) != []


def _attribution_reply(_payload: Any) -> str:
    return json.dumps(
        {
            "agent": "coder",
            "step": 1,
            "reason": "r",
            "mode": None,
            "confidence": 0.5,
            "alternatives": [],
            "decisive_error": False,
            "error_probability": 0.1,
            "half": "first",
            "would_succeed": True,
        }
    )


@pytest.mark.parametrize("method", LLM_METHODS)
def test_attributor_sends_no_piece_of_any_secret(method: str) -> None:
    secrets, trace, _raw = _corpus()
    gt = next(s.value for s in secrets if s.kind == "email")
    trace = trace.model_copy(update={"outcome": Outcome(success=False, ground_truth=f"mail {gt}")})
    with FakeLLMServer(handler=_attribution_reply) as srv:
        provider = get_provider(
            "openai:gpt-4o-mini", base_url=srv.openai_base_url, api_key="test", retry=FAST_RETRY
        )
        attributor = LLMAttributor(
            provider, options=AttributionOptions(trace_tokens=1000, counterfactual=True, max_candidates=1)
        )
        attributor.attribute(trace, method=method, ground_truth=trace.outcome.ground_truth)  # type: ignore[union-attr]
        bodies = [r.body for r in srv.chat_requests]
    sent = _haystacks(bodies)
    assert bodies and "[REDACTED:email]" in sent
    assert leaks(secrets, sent) == []
    found = attributor.redactions[trace.trace_id]
    assert found["email"] == 3 and found["private_key"] >= 2  # two events and the ground truth


def test_redact_annotation_covers_its_free_text() -> None:
    secrets, _trace, _raw = _corpus()
    ann = _annotation_with_secrets(secrets)
    red, counts = redact_annotation(ann, Redactor())
    assert leaks(secrets, red.model_dump_json()) == []
    assert counts["github_token"] == 2 and counts["email"] == len(CODES) + 1
    assert leaks(secrets, ann.model_dump_json()) != []


def _annotation_with_secrets(secrets: list[Secret]) -> Any:
    from mastkit.annotate.judge.parse import parse_reply
    from mastkit.annotate.model import Annotation, AnnotatorConfig
    from mastkit.attribute.model import Attribution

    parsed = parse_reply(_judge_reply(secrets), load_taxonomy("mast"), source="judge", n_events=40)
    cfg = AnnotatorConfig(kind="llm")
    email = next(s.value for s in secrets if s.kind == "email")
    return Annotation(
        trace_id="t",
        config=cfg,
        config_hash=cfg.config_hash(),
        verdicts=parsed.verdicts,
        summary=parsed.summary,
        attribution=Attribution(agent=email, step=2, reason=f"leaked {secrets[0].value}"),
        errors=[f"server said {secrets[1].value}"],
    )


def test_langfuse_and_otel_exports_redact_by_default(tmp_path: Path) -> None:
    from mastkit.export.langfuse import export_langfuse
    from mastkit.export.otel import annotation_spans

    secrets, _trace, _raw = _corpus()
    ann = _annotation_with_secrets(secrets)
    export_langfuse([ann], tmp_path / "s.jsonl")
    export_langfuse([ann], tmp_path / "raw.jsonl", redact=False)
    assert leaks(secrets, (tmp_path / "s.jsonl").read_text(encoding="utf-8")) == []
    assert leaks(secrets, (tmp_path / "raw.jsonl").read_text(encoding="utf-8")) != []
    spans = json.dumps(annotation_spans([ann], redactor=Redactor()))
    assert leaks(secrets, spans) == []
    assert "[REDACTED:email]" in spans  # the attribution's agent name too
    assert leaks(secrets, json.dumps(annotation_spans([ann]))) != []


def test_cli_report_redacts_unless_told_not_to(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from mastkit.cli.main import app

    secrets, trace, raw = _corpus()
    db = tmp_path / "m.db"
    with Store(db) as store:
        annotate([trace, raw], make_annotator("rules"), store=store)
    runner = CliRunner()
    for fmt in ("html", "json", "md"):
        out = tmp_path / f"r.{fmt}"
        res = runner.invoke(app, ["report", "--db", str(db), "--out", str(out)])
        assert res.exit_code == 0, res.output
        text = out.read_text(encoding="utf-8")
        assert leaks(secrets, text) == []
        assert "Redacted before display" in text or '"redacted": true' in text
    res = runner.invoke(app, ["report", "--db", str(db), "--out", str(tmp_path / "o.html"), "--no-redact"])
    assert res.exit_code == 0, res.output
    text = (tmp_path / "o.html").read_text(encoding="utf-8")
    assert leaks(secrets, text) != [] and "Redaction was turned off" in text
