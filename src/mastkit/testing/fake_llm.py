"""``FakeLLMServer``: a real HTTP/1.1 server on 127.0.0.1 that speaks the OpenAI and
Anthropic chat protocols with scripted replies, for offline tests and benchmarks.

The real ``openai``/``anthropic`` SDKs (and therefore mastkit's providers) talk to it over
real sockets, so retries, timeouts, connection reuse, structured-output requests and
redaction are exercised end to end::

    from mastkit.testing import FakeLLMServer, Reply

    with FakeLLMServer([Reply.rate_limited(retry_after=0.05), Reply('{"ok": true}')]) as srv:
        provider = get_provider("openai:gpt-4o-mini", base_url=srv.openai_base_url, api_key="test")
        ...
        assert srv.requests[1].json["model"] == "gpt-4o-mini"

Endpoints: ``POST /v1/chat/completions`` (OpenAI), ``POST /v1/messages`` (Anthropic),
``GET /v1/models``. Each connection is served on its own thread, so concurrent requests
with artificial latency (``Reply.delay_s``) overlap instead of queueing.

Which reply a request gets: the next scripted :class:`Reply` (consumed in order), else
``handler(request_json)``, else ``default``; with none of them the server answers 500
"script exhausted" (so a test making more calls than it scripted fails loudly).

Every request is recorded (:class:`RecordedRequest`): method, path, headers, the exact
body bytes, the parsed JSON and the arrival time.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from socketserver import TCPServer
from typing import Any, Literal

__all__ = ["FakeLLMServer", "RecordedRequest", "Reply", "Usage"]

ApiProtocol = Literal["openai", "anthropic", "other"]


@dataclass(frozen=True)
class Usage:
    """Token usage the fake server reports for a reply."""

    input_tokens: int
    output_tokens: int
    cached_input_tokens: int = 0


@dataclass
class Reply:
    """One scripted answer.

    The defaults give a normal, successful completion whose text is ``text``.
    """

    text: str = "OK"
    """Assistant text (for Anthropic forced-tool requests, a JSON object text becomes the tool input)."""
    status: int = 200
    """HTTP status; >= 400 produces an error body in the protocol's shape."""
    headers: dict[str, str] = field(default_factory=dict)
    """Extra response headers (e.g. ``retry-after``)."""
    delay_s: float = 0.0
    """Artificial latency before the response is written (other requests are served meanwhile)."""
    body_override: bytes | None = None
    """Send these exact bytes as the body instead of a well-formed one (malformed JSON...)."""
    drop_connection: bool = False
    """Close the connection without sending any response."""
    truncate_at: int | None = None
    """Announce the full Content-Length but send only this many body bytes, then close."""
    usage: Usage | None = None
    """Reported usage; default: ~4 characters per token of the request and the reply."""
    finish_reason: str = "stop"
    """OpenAI finish reason (``stop``, ``length``...); mapped to Anthropic ``stop_reason``."""
    model: str | None = None
    """Model name in the response; default: the model the request named."""
    error_message: str | None = None
    """Message inside the error body (status >= 400)."""

    @classmethod
    def rate_limited(cls, retry_after: float | None = 1.0, *, retry_after_ms: float | None = None) -> Reply:
        """429 with ``retry-after`` (seconds) and/or ``retry-after-ms``."""
        headers: dict[str, str] = {}
        if retry_after is not None:
            headers["retry-after"] = f"{retry_after:g}"
        if retry_after_ms is not None:
            headers["retry-after-ms"] = f"{retry_after_ms:g}"
        return cls(status=429, headers=headers, error_message="Rate limit reached; please retry later.")

    @classmethod
    def server_error(
        cls, status: int = 500, message: str = "The server had an error processing your request."
    ) -> Reply:
        """A 5xx error (500 by default)."""
        return cls(status=status, error_message=message)

    @classmethod
    def unavailable(cls, retry_after: float | None = None) -> Reply:
        """503 Service Unavailable (optionally with ``retry-after``)."""
        headers = {"retry-after": f"{retry_after:g}"} if retry_after is not None else {}
        return cls(status=503, headers=headers, error_message="Service temporarily unavailable.")

    @classmethod
    def error(cls, status: int, message: str = "error") -> Reply:
        """Any error status with a protocol-shaped error body (401, 400, 404...)."""
        return cls(status=status, error_message=message)

    @classmethod
    def timeout(cls, delay_s: float = 5.0, text: str = "OK (too late)") -> Reply:
        """A good reply that arrives after ``delay_s`` (set it longer than the client timeout)."""
        return cls(text=text, delay_s=delay_s)

    @classmethod
    def malformed(cls) -> Reply:
        """200 with a body that is not valid JSON."""
        return cls(body_override=b'{"id": "broken", "choices": [{"message": {"content": "unterminated')

    @classmethod
    def truncated(cls, text: str = "OK", keep_bytes: int = 16) -> Reply:
        """200 whose body stops after ``keep_bytes`` bytes (Content-Length promised more)."""
        return cls(text=text, truncate_at=keep_bytes)

    @classmethod
    def dropped(cls) -> Reply:
        """The connection is closed without any response."""
        return cls(drop_connection=True)


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server received it."""

    method: str
    path: str
    headers: dict[str, str]
    """Header names in lower case."""
    body: bytes
    """The exact body bytes on the wire."""
    json: Any
    """The parsed body (None when it is not JSON)."""
    arrived_at: float
    """``time.monotonic()`` when the request line was read."""
    protocol: ApiProtocol

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The chat messages in the request (empty when there are none)."""
        if isinstance(self.json, dict) and isinstance(self.json.get("messages"), list):
            return list(self.json["messages"])
        return []


_ERROR_TYPES_OPENAI = {
    400: "invalid_request_error",
    401: "invalid_request_error",
    403: "permission_error",
    404: "invalid_request_error",
    409: "conflict_error",
    422: "invalid_request_error",
    429: "rate_limit_error",
}
_ERROR_TYPES_ANTHROPIC = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}
_STOP_REASONS = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use"}


def _approx_tokens(text: str) -> int:
    return len(text) // 4 + 1


def _request_text(payload: Any) -> str:
    if not isinstance(payload, dict):
        return ""
    parts: list[str] = []
    system = payload.get("system")
    if isinstance(system, str):
        parts.append(system)
    elif isinstance(system, list):
        parts.extend(str(b.get("text", "")) for b in system if isinstance(b, dict))
    for m in payload.get("messages") or []:
        if not isinstance(m, dict):
            continue
        content = m.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return "\n".join(parts)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 256
    owner: FakeLLMServer

    def server_bind(self) -> None:
        # HTTPServer.server_bind does a reverse DNS lookup (getfqdn); not needed on loopback.
        TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name = str(host)
        self.server_port = int(port)

    def process_request(self, request: Any, client_address: Any) -> None:
        self.owner._track(request, add=True)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        self.owner._track(request, add=False)
        super().shutdown_request(request)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "FakeLLM/1.0"
    timeout = 60  # idle keep-alive connections are closed after this
    server: _Server

    def setup(self) -> None:
        super().setup()
        # headers and body go out in separate writes: without TCP_NODELAY, Nagle's algorithm
        # and the client's delayed ACK add ~40 ms to every request on a kept-alive connection.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        owner = self.server.owner
        arrived = time.monotonic()
        owner._record(RecordedRequest("GET", self.path, self._headers(), b"", None, arrived, "other"))
        if self.path.rstrip("/").endswith("/models"):
            data = [{"id": m, "object": "model", "created": 0, "owned_by": "fake"} for m in owner.models]
            self._send(200, json.dumps({"object": "list", "data": data}).encode(), {})
        else:
            self._send(404, b'{"error": {"message": "not found", "type": "invalid_request_error"}}', {})

    def do_POST(self) -> None:
        owner = self.server.owner
        arrived = time.monotonic()
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        try:
            payload: Any = json.loads(body) if body else None
        except ValueError:
            payload = None
        path = self.path.split("?", 1)[0].rstrip("/")
        protocol: ApiProtocol
        if path.endswith("/chat/completions"):
            protocol = "openai"
        elif path.endswith("/messages"):
            protocol = "anthropic"
        else:
            protocol = "other"
        headers = self._headers()
        owner._record(RecordedRequest("POST", self.path, headers, body, payload, arrived, protocol))
        owner._enter()
        try:
            if protocol == "other":
                self._send(
                    404, b'{"error": {"message": "unknown endpoint", "type": "invalid_request_error"}}', {}
                )
                return
            if owner.api_key is not None and not self._authorised(headers, owner.api_key):
                reply = Reply.error(401, "Incorrect API key provided.")
            else:
                reply = owner._next_reply(payload)
            self._respond(reply, protocol, payload)
        finally:
            owner._leave()

    # -- helpers ---------------------------------------------------------------------------

    def _headers(self) -> dict[str, str]:
        return {k.lower(): v for k, v in self.headers.items()}

    @staticmethod
    def _authorised(headers: dict[str, str], key: str) -> bool:
        return headers.get("authorization") == f"Bearer {key}" or headers.get("x-api-key") == key

    def _respond(self, reply: Reply, protocol: ApiProtocol, payload: Any) -> None:
        owner = self.server.owner
        if reply.delay_s > 0 and owner._stopping.wait(reply.delay_s):
            self.close_connection = True
            return
        if reply.drop_connection:
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)
            return
        n = owner._next_id()
        headers = dict(reply.headers)
        if protocol == "openai":
            headers.setdefault("x-request-id", f"req_fake_{n}")
        else:
            headers.setdefault("request-id", f"req_fake_{n}")
        if reply.body_override is not None:
            body = reply.body_override
        elif reply.status >= 400:
            body = self._error_body(reply, protocol)
        elif protocol == "openai":
            body = self._openai_body(reply, payload, n)
        else:
            body = self._anthropic_body(reply, payload, n)
        self._send(reply.status, body, headers, truncate_at=reply.truncate_at)

    @staticmethod
    def _usage(reply: Reply, payload: Any) -> Usage:
        if reply.usage is not None:
            return reply.usage
        return Usage(_approx_tokens(_request_text(payload)), _approx_tokens(reply.text))

    def _openai_body(self, reply: Reply, payload: Any, n: int) -> bytes:
        usage = self._usage(reply, payload)
        model = reply.model or (payload.get("model") if isinstance(payload, dict) else None) or "fake-model"
        doc = {
            "id": f"chatcmpl-fake{n}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "system_fingerprint": "fp_fake",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply.text, "refusal": None},
                    "logprobs": None,
                    "finish_reason": reply.finish_reason,
                }
            ],
            "usage": {
                "prompt_tokens": usage.input_tokens,
                "completion_tokens": usage.output_tokens,
                "total_tokens": usage.input_tokens + usage.output_tokens,
                "prompt_tokens_details": {"cached_tokens": usage.cached_input_tokens},
            },
        }
        return json.dumps(doc).encode()

    def _anthropic_body(self, reply: Reply, payload: Any, n: int) -> bytes:
        usage = self._usage(reply, payload)
        model = reply.model or (payload.get("model") if isinstance(payload, dict) else None) or "fake-model"
        content: list[dict[str, Any]] = [{"type": "text", "text": reply.text}]
        stop_reason = _STOP_REASONS.get(reply.finish_reason, reply.finish_reason)
        choice = payload.get("tool_choice") if isinstance(payload, dict) else None
        if isinstance(choice, dict) and choice.get("type") == "tool":
            try:
                tool_input = json.loads(reply.text)
            except ValueError:
                tool_input = None
            if isinstance(tool_input, dict):
                content = [
                    {
                        "type": "tool_use",
                        "id": f"toolu_fake{n}",
                        "name": choice.get("name"),
                        "input": tool_input,
                    }
                ]
                if reply.finish_reason == "stop":
                    stop_reason = "tool_use"
        doc = {
            "id": f"msg_fake{n}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": {
                # Anthropic reports input tokens excluding cache reads.
                "input_tokens": usage.input_tokens - usage.cached_input_tokens,
                "output_tokens": usage.output_tokens,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": usage.cached_input_tokens,
            },
        }
        return json.dumps(doc).encode()

    @staticmethod
    def _error_body(reply: Reply, protocol: ApiProtocol) -> bytes:
        message = reply.error_message or f"HTTP {reply.status}"
        if protocol == "anthropic":
            etype = _ERROR_TYPES_ANTHROPIC.get(reply.status, "api_error")
            return json.dumps({"type": "error", "error": {"type": etype, "message": message}}).encode()
        etype = _ERROR_TYPES_OPENAI.get(reply.status, "server_error")
        code = {401: "invalid_api_key", 404: "model_not_found", 429: "rate_limit_exceeded"}.get(reply.status)
        return json.dumps(
            {"error": {"message": message, "type": etype, "param": None, "code": code}}
        ).encode()

    def _send(
        self, status: int, body: bytes, headers: dict[str, str], *, truncate_at: int | None = None
    ) -> None:
        try:
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            for k, v in headers.items():
                self.send_header(k, v)
            if truncate_at is not None:
                self.send_header("connection", "close")
            self.end_headers()
            if truncate_at is not None:
                self.wfile.write(body[: max(0, truncate_at)])
                self.wfile.flush()
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            self.wfile.write(body)
            self.wfile.flush()
        except OSError:  # the client went away (e.g. it timed out first)
            self.close_connection = True


class FakeLLMServer:
    """A scripted OpenAI/Anthropic-compatible HTTP server on 127.0.0.1 (ephemeral port).

    Args:
        replies: scripted replies consumed in order (a ``str`` is ``Reply(text=...)``).
        handler: called with the request JSON when the script is empty; returns a
            :class:`Reply` or a text.
        default: the reply when neither script nor handler applies (None: 500 "script exhausted").
        api_key: when set, requests without this key (``Authorization: Bearer`` or
            ``x-api-key``) get 401.
        models: what ``GET /v1/models`` lists.

    Use it as a context manager (or call :meth:`start` / :meth:`stop`).
    """

    def __init__(
        self,
        replies: Iterable[Reply | str] = (),
        *,
        handler: Callable[[Any], Reply | str] | None = None,
        default: Reply | None = None,
        api_key: str | None = None,
        models: Iterable[str] = ("fake-model",),
    ) -> None:
        self._script: deque[Reply] = deque(self._as_reply(r) for r in replies)
        self.handler = handler
        self.default = default
        self.api_key = api_key
        self.models = list(models)
        self._lock = threading.Lock()
        self._requests: list[RecordedRequest] = []
        self._handler_errors: list[BaseException] = []
        self._in_flight = 0
        self._max_in_flight = 0
        self._ids = 0
        self._connections: set[Any] = set()
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @staticmethod
    def _as_reply(r: Reply | str) -> Reply:
        return Reply(text=r) if isinstance(r, str) else r

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> FakeLLMServer:
        """Bind 127.0.0.1 on a free port and serve in a background thread."""
        if self._server is not None:
            return self
        self._stopping.clear()
        server = _Server(("127.0.0.1", 0), _Handler)
        server.owner = self
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="FakeLLMServer", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, wake delayed replies and close every connection."""
        server = self._server
        if server is None:
            return
        self._stopping.set()
        server.shutdown()
        with self._lock:
            conns = list(self._connections)
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None
        self._thread = None

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- addresses ---------------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("FakeLLMServer is not running: use it as a context manager or call start()")
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_base_url(self) -> str:
        """Base URL for OpenAI-compatible clients (``.../v1``)."""
        return f"{self.url}/v1"

    @property
    def anthropic_base_url(self) -> str:
        """Base URL for the Anthropic client (it appends ``/v1/messages`` itself)."""
        return self.url

    # -- script ------------------------------------------------------------------------------

    def push(self, *replies: Reply | str) -> None:
        """Append replies to the script (thread-safe; allowed while serving)."""
        with self._lock:
            self._script.extend(self._as_reply(r) for r in replies)

    @property
    def pending(self) -> int:
        """Scripted replies not yet consumed."""
        with self._lock:
            return len(self._script)

    def _next_reply(self, payload: Any) -> Reply:
        with self._lock:
            if self._script:
                return self._script.popleft()
        if self.handler is not None:
            try:
                return self._as_reply(self.handler(payload))
            except Exception as exc:
                with self._lock:
                    self._handler_errors.append(exc)
                return Reply.server_error(500, f"FakeLLMServer handler raised {type(exc).__name__}: {exc}")
        if self.default is not None:
            return self.default
        return Reply.server_error(
            500, "FakeLLMServer: script exhausted (more requests than scripted replies)"
        )

    # -- records and counters ------------------------------------------------------------------

    def _record(self, req: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(req)

    def _next_id(self) -> int:
        with self._lock:
            self._ids += 1
            return self._ids

    def _enter(self) -> None:
        with self._lock:
            self._in_flight += 1
            self._max_in_flight = max(self._max_in_flight, self._in_flight)

    def _leave(self) -> None:
        with self._lock:
            self._in_flight -= 1

    def _track(self, conn: Any, *, add: bool) -> None:
        with self._lock:
            if add:
                self._connections.add(conn)
            else:
                self._connections.discard(conn)

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, in arrival order (a copy)."""
        with self._lock:
            return list(self._requests)

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        """Only the chat requests (OpenAI or Anthropic protocol)."""
        return [r for r in self.requests if r.protocol != "other"]

    @property
    def request_count(self) -> int:
        with self._lock:
            return len(self._requests)

    @property
    def in_flight(self) -> int:
        """Chat requests being handled right now."""
        with self._lock:
            return self._in_flight

    @property
    def max_in_flight(self) -> int:
        """The most chat requests handled at the same time."""
        with self._lock:
            return self._max_in_flight

    @property
    def handler_errors(self) -> list[BaseException]:
        """Exceptions raised by ``handler`` (each was answered with a 500)."""
        with self._lock:
            return list(self._handler_errors)

    def reset(self) -> None:
        """Forget recorded requests and counters (the script is kept)."""
        with self._lock:
            self._requests.clear()
            self._handler_errors.clear()
            self._max_in_flight = self._in_flight
