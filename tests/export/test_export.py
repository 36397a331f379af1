"""Exports against real loopback receivers (an OTLP/HTTP collector and a Langfuse ingestion API)."""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from mastkit.annotate.model import Annotation, AnnotatorConfig, Evidence, ModeVerdict
from mastkit.cli.main import app
from mastkit.export import (
    ExportError,
    export_langfuse,
    export_otlp,
    export_run_langfuse,
    export_run_otlp,
    otel,
    otel_trace_id,
    root_span_ids,
    span_ids,
)
from mastkit.store import Store
from mastkit.traces.model import Event, Outcome, Trace

SECRET = "sk-proj-Abc123def456ghi789jkl012mno345"


class Receiver:
    """A loopback HTTP server recording POSTs; ``statuses`` scripts the first replies."""

    def __init__(self, statuses: list[int] | None = None, replies: list[Any] | None = None) -> None:
        self.requests: list[tuple[str, dict[str, str], Any]] = []
        self.statuses = list(statuses or [])
        self.replies = list(replies or [])
        """JSON bodies of the first successful replies (then ``{}``)."""
        outer = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a: object) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                outer.requests.append((self.path, dict(self.headers), json.loads(body)))
                status = outer.statuses.pop(0) if outer.statuses else 200
                reply = b"{}"
                if status < 300 and outer.replies:
                    reply = json.dumps(outer.replies.pop(0)).encode()
                self.send_response(status)
                if status == 429 or status >= 500:
                    self.send_header("retry-after", "0")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> Receiver:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def _annotations() -> list[Annotation]:
    cfg = AnnotatorConfig(kind="rules", taxonomy_version="1.0-paper-v3")
    h = cfg.config_hash()
    v_present = ModeVerdict(
        code="FM-3.2",
        verdict="present",
        confidence=0.75,
        evidence=[Evidence(quote=f"deployed with key {SECRET}", seq_start=9, seq_end=11, agent="sre")],
        rationale="no check after the patch",
    )
    return [
        Annotation(
            trace_id="0af7651916cd43dd8448eb211c80319c",
            config=cfg,
            config_hash=h,
            verdicts=[
                v_present,
                ModeVerdict(code="FM-1.3", verdict="absent"),
                ModeVerdict(code="FM-2.4", verdict="unknown"),
            ],
        ),
        Annotation(
            trace_id="run-2",
            config=cfg,
            config_hash=h,
            verdicts=[ModeVerdict(code="FM-3.2", verdict="absent")],
        ),
    ]


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with Receiver() as r:
        yield r


def test_otlp_payload_structure_and_trace_id_reuse(receiver: Receiver) -> None:
    formats = {"0af7651916cd43dd8448eb211c80319c": "otlp", "run-2": "chat_messages"}
    n = export_otlp(_annotations(), receiver.url, formats=formats, headers={"X-Tenant": "team-a"})
    assert n == 2
    path, headers, body = receiver.requests[0]
    assert path == "/v1/traces" and headers["X-Tenant"] == "team-a"
    spans = body["resourceSpans"][0]["scopeSpans"][0]["spans"]
    first, second = spans
    assert first["traceId"] == "0af7651916cd43dd8448eb211c80319c"  # lands in the agent's own trace
    assert second["traceId"] == otel_trace_id("run-2") and len(second["traceId"]) == 32
    attrs = {a["key"]: a["value"] for a in first["attributes"]}
    assert attrs["mastkit.modes.present"] == {"arrayValue": {"values": [{"stringValue": "FM-3.2"}]}}
    assert attrs["mastkit.modes.count"] == {"intValue": "1"}
    (event,) = first["events"]
    ev = {a["key"]: a["value"] for a in event["attributes"]}
    assert event["name"] == "mastkit.failure_mode"
    assert ev["mastkit.mode.name"] == {"stringValue": "No or Incomplete Verification"}
    assert ev["mastkit.evidence.seq_start"] == {"intValue": "9"}
    assert (
        SECRET not in json.dumps(body)
        and "[REDACTED:openai_key]" in ev["mastkit.evidence.quote"]["stringValue"]
    )
    assert second["events"] == [] and first["status"]["code"] == 0 == second["status"]["code"]


def test_otlp_retries_503_then_succeeds() -> None:
    with Receiver(statuses=[503, 200]) as r:
        assert export_otlp(_annotations(), r.url + "/v1/traces") == 2
        assert len(r.requests) == 2


def test_otlp_client_error_is_not_retried() -> None:
    with Receiver(statuses=[400]) as r:
        with pytest.raises(ExportError, match="HTTP 400"):
            export_otlp(_annotations(), r.url)
        assert len(r.requests) == 1


def test_langfuse_scores_file_and_ingestion(tmp_path: Path, receiver: Receiver) -> None:
    out = tmp_path / "scores.jsonl"
    n = export_langfuse(_annotations(), out, host=receiver.url, public_key="pk-lf-1", secret_key="sk-lf-2")
    scores = [json.loads(line) for line in out.read_text().splitlines()]
    assert n == len(scores) == 5  # 2 judged modes + count, 1 judged mode + count; unknown skipped
    by = {(s["traceId"], s["name"]): s for s in scores}
    assert by[("0af7651916cd43dd8448eb211c80319c", "FM-3.2")]["value"] == 1
    assert by[("0af7651916cd43dd8448eb211c80319c", "FM-1.3")]["value"] == 0
    assert ("0af7651916cd43dd8448eb211c80319c", "FM-2.4") not in by
    assert by[("run-2", "mastkit.modes_present")] == {
        **by[("run-2", "mastkit.modes_present")],
        "value": 0,
        "dataType": "NUMERIC",
    }
    assert SECRET not in out.read_text()
    path, headers, body = receiver.requests[0]
    assert path == "/api/public/ingestion" and headers["Authorization"].startswith("Basic ")
    assert [e["type"] for e in body["batch"]] == ["score-create"] * 5
    again = tmp_path / "again.jsonl"
    export_langfuse(_annotations(), again)
    assert [json.loads(x)["id"] for x in again.read_text().splitlines()] == [s["id"] for s in scores]


def test_export_cli(tmp_path: Path, receiver: Receiver) -> None:
    db = tmp_path / "m.db"
    anns = _annotations()
    with Store(db) as store:
        store.register_run(anns[0].config)
        for a in anns:
            store.put_annotation(a, a.trace_id)
    res = CliRunner().invoke(
        app, ["export", "otlp", "--endpoint", receiver.url, "--db", str(db), "-H", "X-A: b"]
    )
    assert res.exit_code == 0, res.output
    assert "sent 2 annotation spans" in res.stdout and receiver.requests[0][1]["X-A"] == "b"
    res = CliRunner().invoke(app, ["export", "langfuse", "-o", str(tmp_path / "s.jsonl"), "--db", str(db)])
    assert res.exit_code == 0, res.output and (tmp_path / "s.jsonl").exists()


OTLP_TRACE_ID = "0af7651916cd43dd8448eb211c80319c"


def _store_with_otlp_trace(db: Path) -> Store:
    """A store holding the annotations of :func:`_annotations`; the first trace came from OTLP."""
    events = [
        Event(seq=i, kind="message", actor="sre", content=f"step {i}", id=f"{i + 1:016x}") for i in range(12)
    ]
    # A later event of span 00f067aa0ba902b7: it carries the span id as its parent, not as its id.
    events[9] = Event(seq=9, kind="message", actor="sre", content="patched", parent_id="00f067aa0ba902b7")
    trace = Trace(trace_id=OTLP_TRACE_ID, source_format="otlp", events=events, outcome=Outcome(success=False))
    store = Store(db)
    anns = _annotations()
    store.register_run(anns[0].config)
    store.upsert_trace(trace)
    for a in anns:
        store.put_annotation(a, a.trace_id)
    return store


def test_otlp_success_attribute_timestamps_and_partial_success(tmp_path: Path) -> None:
    replies = [{"partialSuccess": {"rejectedSpans": "1", "errorMessage": "span too large"}}]
    with _store_with_otlp_trace(tmp_path / "m.db") as store, Receiver(replies=replies) as r:
        with pytest.raises(ExportError, match="rejected 1 of 2 spans: span too large"):
            export_run_otlp(store, r.url)
        config, n = export_run_otlp(store, r.url, batch_size=1)
    assert (config, n) == (_annotations()[0].config_hash, 2)
    assert len(r.requests) == 3  # one rejected-in-part request, then two batches of one span
    first = r.requests[1][2]["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    attrs = {a["key"]: a["value"] for a in first["attributes"]}
    assert attrs["mastkit.success"] == {"boolValue": False}
    assert attrs["mastkit.run"] == {"stringValue": config}
    second = r.requests[2][2]["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    assert "mastkit.success" not in {a["key"] for a in second["attributes"]}  # no trace row: unknown
    # In the agent's own trace: a child of its root span, evidence pointing at the span it starts in
    assert first["traceId"] == OTLP_TRACE_ID and first["parentSpanId"] == f"{1:016x}"
    evidence = {
        e["attributes"][0]["value"]["stringValue"]: {a["key"]: a["value"] for a in e["attributes"]}
        for e in first["events"]
    }
    assert evidence["FM-3.2"]["mastkit.evidence.span_id"] == {"stringValue": "00f067aa0ba902b7"}
    assert "parentSpanId" not in second  # its own derived trace: no span to hang under
    # Spans are stamped with the annotation time, so re-exports are identical.
    assert first["startTimeUnixNano"] == first["events"][0]["timeUnixNano"]
    assert r.requests[0][2]["resourceSpans"][0]["scopeSpans"][0]["spans"][0] == first


def test_otlp_retries_429_and_gives_up_on_persistent_5xx() -> None:
    with Receiver(statuses=[429, 429, 200]) as r:
        assert export_otlp(_annotations(), r.url) == 2
        assert len(r.requests) == 3
    with Receiver(statuses=[500, 502, 503, 200]) as r:
        with pytest.raises(ExportError, match="gave up after 3 attempts"):
            export_otlp(_annotations(), r.url)
        assert len(r.requests) == 3


def test_otlp_redaction_can_be_disabled_only_on_loopback(monkeypatch: pytest.MonkeyPatch) -> None:
    assert otel._is_loopback("http://127.0.0.1:4318") and otel._is_loopback("http://localhost:4318")
    assert not otel._is_loopback("https://otlp.example.com") and not otel._is_loopback("http://10.0.0.7")
    with Receiver() as r:
        export_otlp(_annotations(), r.url, redact=False)
        assert SECRET in json.dumps(r.requests[0][2])
        monkeypatch.setattr(otel, "_is_loopback", lambda endpoint: False)  # as if it were remote
        export_otlp(_annotations(), r.url, redact=False)
        assert SECRET not in json.dumps(r.requests[1][2])


def test_otlp_cli_env_headers_batch_size(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _store_with_otlp_trace(tmp_path / "m.db").close()
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "Authorization=Bearer%20tok,x-scope=a")
    with Receiver() as r:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", r.url)
        res = CliRunner().invoke(
            app, ["export", "otlp", "--db", str(tmp_path / "m.db"), "--batch-size", "1", "-H", "x-scope: b"]
        )
        assert res.exit_code == 0, res.output
        assert len(r.requests) == 2
        headers = {k.lower(): v for k, v in r.requests[0][1].items()}
        assert headers["authorization"] == "Bearer tok" and headers["x-scope"] == "b"  # -H wins
    res = CliRunner().invoke(app, ["export", "otlp", "--db", str(tmp_path / "m.db"), "-H", "nocolon"])
    assert res.exit_code == 2


def test_langfuse_observation_ids_and_fresh_event_ids(tmp_path: Path) -> None:
    with _store_with_otlp_trace(tmp_path / "m.db") as store, Receiver() as r:
        assert span_ids(store) == {
            OTLP_TRACE_ID: {i: f"{i + 1:016x}" for i in range(12) if i != 9} | {9: "00f067aa0ba902b7"}
        }
        assert root_span_ids(store) == {OTLP_TRACE_ID: f"{1:016x}"}
        export_run_langfuse(store, host=r.url, public_key="pk", secret_key="sk")
        export_run_langfuse(store, host=r.url, public_key="pk", secret_key="sk")
    first, again = (req[2]["batch"] for req in r.requests)
    scores = {(e["body"]["traceId"], e["body"]["name"]): e["body"] for e in first}
    # The present verdict's evidence starts at event 9: the score lands on that span.
    assert scores[(OTLP_TRACE_ID, "FM-3.2")]["observationId"] == "00f067aa0ba902b7"
    assert "observationId" not in scores[(OTLP_TRACE_ID, "FM-1.3")]
    assert "observationId" not in scores[("run-2", "FM-3.2")]
    # Same score ids (updates in place) but new event ids (Langfuse deduplicates on those).
    assert [e["body"]["id"] for e in first] == [e["body"]["id"] for e in again]
    assert not {e["id"] for e in first} & {e["id"] for e in again}
    assert base64.b64decode(r.requests[0][1]["Authorization"].split()[1]) == b"pk:sk"


def test_langfuse_207_errors_are_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    reply = {
        "successes": [{"id": "x", "status": 201}],
        "errors": [{"id": "y", "status": 400, "message": "Invalid request data"}],
    }
    monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", "pk-env")
    monkeypatch.setenv("LANGFUSE_SECRET_KEY", "sk-env")
    with (
        Receiver(statuses=[207], replies=[reply]) as r,
        pytest.raises(ExportError, match="rejected 1 of 5 scores: 400 Invalid request data"),
    ):
        export_langfuse(_annotations(), host=r.url)
    assert base64.b64decode(r.requests[0][1]["Authorization"].split()[1]) == b"pk-env:sk-env"
    monkeypatch.delenv("LANGFUSE_SECRET_KEY")
    with pytest.raises(ExportError, match="LANGFUSE_SECRET_KEY"):
        export_langfuse(_annotations(), host="http://127.0.0.1:9")
