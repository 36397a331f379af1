"""FakeLLMServer on its own: protocol shapes, script order, recording, faults, concurrency.

These use plain ``http.client`` (and the real SDKs where the point is SDK compatibility).
"""

from __future__ import annotations

import asyncio
import http.client
import json
import socket
import threading
import time
from typing import Any

import anthropic
import openai
import pytest

from mastkit.testing import FakeLLMServer, Reply, Usage


def post(
    srv: FakeLLMServer, path: str, payload: Any, headers: dict[str, str] | None = None, timeout: float = 5
) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=timeout)
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    conn.request("POST", path, body=body, headers={"content-type": "application/json", **(headers or {})})
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    return resp.status, {k.lower(): v for k, v in resp.getheaders()}, data


CHAT = {"model": "gpt-x", "messages": [{"role": "user", "content": "hello there"}]}
MSG = {"model": "claude-x", "max_tokens": 10, "messages": [{"role": "user", "content": "hello there"}]}


def test_openai_response_shape() -> None:
    with FakeLLMServer([Reply("hi", usage=Usage(12, 3, 2), finish_reason="length")]) as srv:
        status, headers, body = post(srv, "/v1/chat/completions", CHAT)
    assert status == 200 and headers["content-type"] == "application/json"
    assert headers["x-request-id"] == "req_fake_1"
    doc = json.loads(body)
    assert doc["object"] == "chat.completion" and doc["id"].startswith("chatcmpl-")
    assert doc["model"] == "gpt-x"
    assert doc["choices"][0]["message"] == {"role": "assistant", "content": "hi", "refusal": None}
    assert doc["choices"][0]["finish_reason"] == "length"
    assert doc["usage"] == {
        "prompt_tokens": 12,
        "completion_tokens": 3,
        "total_tokens": 15,
        "prompt_tokens_details": {"cached_tokens": 2},
    }


def test_anthropic_response_shape() -> None:
    with FakeLLMServer([Reply("hi", usage=Usage(12, 3, 2), finish_reason="length")]) as srv:
        status, headers, body = post(srv, "/v1/messages", MSG)
    assert status == 200 and headers["request-id"] == "req_fake_1"
    doc = json.loads(body)
    assert doc["type"] == "message" and doc["role"] == "assistant" and doc["id"].startswith("msg_")
    assert doc["content"] == [{"type": "text", "text": "hi"}]
    assert doc["stop_reason"] == "max_tokens"
    assert doc["usage"] == {
        "input_tokens": 10,
        "output_tokens": 3,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 2,
    }


def test_anthropic_forced_tool_reply() -> None:
    payload = {**MSG, "tools": [{"name": "out", "input_schema": {"type": "object"}}]}
    payload["tool_choice"] = {"type": "tool", "name": "out"}
    with FakeLLMServer(['{"a": 1}']) as srv:
        _, _, body = post(srv, "/v1/messages", payload)
    doc = json.loads(body)
    assert doc["content"][0]["type"] == "tool_use" and doc["content"][0]["input"] == {"a": 1}
    assert doc["content"][0]["name"] == "out" and doc["stop_reason"] == "tool_use"


def test_error_bodies_follow_each_protocol() -> None:
    with FakeLLMServer([Reply.rate_limited(2), Reply.error(529, "Overloaded")]) as srv:
        status, headers, body = post(srv, "/v1/chat/completions", CHAT)
        assert status == 429 and headers["retry-after"] == "2"
        assert json.loads(body)["error"]["type"] == "rate_limit_error"
        status, _, body = post(srv, "/v1/messages", MSG)
        assert status == 529
        assert json.loads(body) == {
            "type": "error",
            "error": {"type": "overloaded_error", "message": "Overloaded"},
        }


def test_default_usage_is_derived_from_text() -> None:
    with FakeLLMServer(["x" * 40]) as srv:
        _, _, body = post(srv, "/v1/chat/completions", CHAT)
    usage = json.loads(body)["usage"]
    assert usage["prompt_tokens"] == len("hello there") // 4 + 1
    assert usage["completion_tokens"] == 11


def test_models_endpoint_and_unknown_paths() -> None:
    with FakeLLMServer(models=["a", "b"]) as srv:
        conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=5)
        conn.request("GET", "/v1/models")
        doc = json.loads(conn.getresponse().read())
        assert [m["id"] for m in doc["data"]] == ["a", "b"]
        assert post(srv, "/v1/embeddings", {})[0] == 404
        assert srv.chat_requests == []
        assert [r.path for r in srv.requests] == ["/v1/models", "/v1/embeddings"]


def test_script_then_handler_then_default_then_exhausted() -> None:
    seen: list[Any] = []

    def handler(req: Any) -> Reply | str:
        seen.append(req)
        if len(seen) > 1:
            raise RuntimeError("handler broke")
        return "from handler"

    with FakeLLMServer(["one", Reply("two")], handler=handler) as srv:
        texts = [
            json.loads(post(srv, "/v1/chat/completions", CHAT)[2])["choices"][0]["message"]["content"]
            for _ in range(3)
        ]
        assert texts == ["one", "two", "from handler"]
        status, _, body = post(srv, "/v1/chat/completions", CHAT)
        assert status == 500 and b"handler broke" in body
        assert len(srv.handler_errors) == 1 and seen[0] == CHAT
    with FakeLLMServer(default=Reply("dflt")) as srv:
        assert b"dflt" in post(srv, "/v1/chat/completions", CHAT)[2]
    with FakeLLMServer() as srv:
        status, _, body = post(srv, "/v1/chat/completions", CHAT)
        assert status == 500 and b"script exhausted" in body
        srv.push("late")
        assert srv.pending == 1
        assert b"late" in post(srv, "/v1/chat/completions", CHAT)[2]


def test_records_exact_bytes_headers_and_time() -> None:
    raw = b'{"model":"m","messages":[{"role":"user","content":"caf\\u00e9 \xe2\x82\xac"}]}'
    with FakeLLMServer(["ok"]) as srv:
        t0 = time.monotonic()
        post(srv, "/v1/chat/completions?x=1", raw, headers={"X-Custom": "Yes"})
        (rec,) = srv.requests
    assert rec.body == raw and rec.method == "POST" and rec.path == "/v1/chat/completions?x=1"
    assert rec.protocol == "openai" and rec.headers["x-custom"] == "Yes"
    assert rec.json["messages"][0]["content"] == "café €"
    assert rec.messages == rec.json["messages"]
    assert t0 <= rec.arrived_at <= time.monotonic()


def test_api_key_check() -> None:
    with FakeLLMServer(api_key="secret-key", default=Reply("ok")) as srv:
        assert post(srv, "/v1/chat/completions", CHAT)[0] == 401
        assert post(srv, "/v1/chat/completions", CHAT, {"authorization": "Bearer secret-key"})[0] == 200
        assert post(srv, "/v1/messages", MSG, {"x-api-key": "secret-key"})[0] == 200


def test_malformed_truncated_and_dropped() -> None:
    with FakeLLMServer([Reply.malformed(), Reply.truncated(keep_bytes=10), Reply.dropped(), "fine"]) as srv:
        status, _, body = post(srv, "/v1/chat/completions", CHAT)
        assert status == 200
        with pytest.raises(json.JSONDecodeError):
            json.loads(body)
        with pytest.raises(http.client.IncompleteRead):
            post(srv, "/v1/chat/completions", CHAT)
        with pytest.raises((http.client.RemoteDisconnected, ConnectionError)):
            post(srv, "/v1/chat/completions", CHAT)
        assert post(srv, "/v1/chat/completions", CHAT)[0] == 200


def test_delay_is_per_request_and_requests_overlap() -> None:
    """32 raw clients at 300 ms each are served concurrently (overlap is checked by the server's
    in-flight count, not by wall time, which depends on the machine's load)."""
    with FakeLLMServer(default=Reply("slow", delay_s=0.3)) as srv:
        results: list[int] = []
        lock = threading.Lock()

        def one() -> None:
            status = post(srv, "/v1/chat/completions", CHAT)[0]
            with lock:
                results.append(status)

        threads = [threading.Thread(target=one) for _ in range(32)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert results == [200] * 32
        assert srv.max_in_flight >= 16
        # A client can read the last byte before the server thread leaves its handler: give the
        # handlers a moment to finish instead of racing them.
        deadline = time.monotonic() + 5
        while srv.in_flight and time.monotonic() < deadline:
            time.sleep(0.01)
        assert srv.in_flight == 0


def test_keep_alive_reuses_one_connection() -> None:
    with FakeLLMServer(default=Reply("ok")) as srv:
        conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=5)
        for _ in range(3):
            conn.request(
                "POST",
                "/v1/chat/completions",
                body=json.dumps(CHAT),
                headers={"content-type": "application/json"},
            )
            resp = conn.getresponse()
            assert resp.status == 200 and resp.getheader("connection") != "close"
            resp.read()
        conn.close()
        assert srv.request_count == 3


def test_stop_interrupts_pending_delays() -> None:
    srv = FakeLLMServer(default=Reply("never", delay_s=30)).start()
    sock = socket.create_connection(("127.0.0.1", srv.port))
    body = json.dumps(CHAT).encode()
    sock.sendall(
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        + f"Content-Length: {len(body)}\r\n\r\n".encode()
        + body
    )
    while srv.in_flight == 0:
        time.sleep(0.01)
    t0 = time.monotonic()
    srv.stop()
    assert time.monotonic() - t0 < 3
    sock.close()
    with pytest.raises(RuntimeError, match="not running"):
        _ = srv.port


def test_reset_keeps_script() -> None:
    with FakeLLMServer(["a", "b"]) as srv:
        post(srv, "/v1/chat/completions", CHAT)
        srv.reset()
        assert srv.requests == [] and srv.pending == 1


def test_real_sdks_parse_the_responses() -> None:
    async def main(srv: FakeLLMServer) -> tuple[str | None, str]:
        oa = openai.AsyncOpenAI(base_url=srv.openai_base_url, api_key="k", max_retries=0)
        completion = await oa.chat.completions.create(
            model="gpt-x", messages=[{"role": "user", "content": "hi"}]
        )
        an = anthropic.AsyncAnthropic(base_url=srv.anthropic_base_url, api_key="k", max_retries=0)
        message = await an.messages.create(
            model="claude-haiku-4-5", max_tokens=5, messages=[{"role": "user", "content": "hi"}]
        )
        block = message.content[0]
        assert block.type == "text"
        assert completion.usage is not None and message.usage.output_tokens >= 1
        return completion.choices[0].message.content, block.text

    with FakeLLMServer(["from openai", "from anthropic"]) as srv:
        assert asyncio.run(main(srv)) == ("from openai", "from anthropic")
