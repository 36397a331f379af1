"""Exports against real loopback receivers (an OTLP/HTTP collector and a Langfuse ingestion API)."""

from __future__ import annotations

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
from mastkit.export import ExportError, export_langfuse, export_otlp, otel_trace_id
from mastkit.store import Store

SECRET = "sk-proj-Abc123def456ghi789jkl012mno345"


class Receiver:
    """A loopback HTTP server recording POSTs; ``statuses`` scripts the first replies."""

    def __init__(self, statuses: list[int] | None = None) -> None:
        self.requests: list[tuple[str, dict[str, str], Any]] = []
        self.statuses = list(statuses or [])
        outer = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a: object) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                outer.requests.append((self.path, dict(self.headers), json.loads(body)))
                status = outer.statuses.pop(0) if outer.statuses else 200
                self.send_response(status)
                if status == 503:
                    self.send_header("retry-after", "0")
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

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
    assert second["events"] == [] and first["status"]["code"] == 2 and second["status"]["code"] == 1


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
