"""``AnthropicProvider``: Claude through the official ``anthropic`` SDK (the
``mastkit[anthropic]`` extra; imported only when this provider is created).

Structured output (``ChatRequest.json_schema``), by ``json_mode``:

- ``"tool"`` (default): a forced tool call — ``tools=[{"name": schema_name,
  "input_schema": schema}]`` with ``tool_choice={"type": "tool", "name": schema_name}``.
  The model must answer by calling that tool, so the reply is a JSON object; its
  ``input`` is returned as ``ChatResponse.text`` (JSON), ``finish_reason="stop"``. The
  schema's top level must be an object; otherwise ``"prompt"`` is used.
- ``"json_schema"``: Anthropic's native structured outputs,
  ``output_config={"format": {"type": "json_schema", "schema": schema}}`` (the schema
  must follow Anthropic's structured-output rules, e.g. ``additionalProperties: false``).
- ``"prompt"``: the schema is appended to the system prompt as an instruction (proxies
  and gateways that support neither).

Either way the caller still validates the JSON (the judge does). Messages are mapped to
Anthropic's shape: system messages go to ``system``, consecutive messages of one role are
joined, and a conversation must start with a user turn. ``max_tokens`` defaults to 4096.
``seed`` and ``temperature`` are not sent: the Messages API of current SDKs (2.x) has no
sampling parameters; ``send_temperature=True`` adds ``temperature`` (clamped to [0, 1]) to
the body for older deployments and proxies that still accept it.
Usage is normalised: ``input_tokens`` includes cache reads and writes.
"""

from __future__ import annotations

import os
import re
from typing import Any, ClassVar, Literal

import orjson

from mastkit.errors import MissingDependencyError
from mastkit.providers.base import (
    AttemptFailure,
    AttemptReply,
    BaseProvider,
    error_message_from_body,
    schema_instruction,
    status_failure,
    with_system_note,
)
from mastkit.providers.retry import parse_retry_after
from mastkit.providers.types import ChatMessage, ChatRequest

__all__ = ["AnthropicJsonMode", "AnthropicProvider"]

AnthropicJsonMode = Literal["tool", "json_schema", "prompt"]

ANTHROPIC_BASE_URL = "https://api.anthropic.com"
DEFAULT_MAX_TOKENS = 4096
_TOOL_NAME = re.compile(r"[^A-Za-z0-9_-]")
_FINISH = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length", "tool_use": "tool_calls",
           "refusal": "content_filter", "pause_turn": "length"}  # fmt: skip


def _import_anthropic() -> Any:
    try:
        import anthropic
    except ImportError:
        raise MissingDependencyError("Anthropic provider", "anthropic") from None
    return anthropic


class AnthropicProvider(BaseProvider):
    """Claude models over Anthropic's Messages API.

    Args:
        model: e.g. ``claude-sonnet-4-5``.
        base_url: default: ``ANTHROPIC_BASE_URL`` or ``https://api.anthropic.com``.
        api_key: default: ``ANTHROPIC_API_KEY``, then ``MASTKIT_API_KEY``; required for
            api.anthropic.com.
        json_mode: ``tool`` (forced tool call, default), ``json_schema`` (native) or ``prompt``.
        send_temperature: include ``temperature`` in the request body (older API versions).
        extra_headers: sent with every request (e.g. ``anthropic-beta``).
        **options: see :class:`~mastkit.providers.base.BaseProvider`.

    Raises:
        MissingDependencyError: the ``anthropic`` package is not installed.
    """

    default_context_window: ClassVar[int] = 200_000

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        name: str = "anthropic",
        json_mode: AnthropicJsonMode = "tool",
        send_temperature: bool = False,
        extra_headers: dict[str, str] | None = None,
        key_env: tuple[str, ...] = ("ANTHROPIC_API_KEY", "MASTKIT_API_KEY"),
        key_required: bool | None = None,
        **options: Any,
    ) -> None:
        self._sdk = _import_anthropic()
        if json_mode not in ("tool", "json_schema", "prompt"):
            from mastkit.providers.errors import ProviderConfigError

            raise ProviderConfigError(
                f"json_mode must be tool, json_schema or prompt, got {json_mode!r}", provider=name
            )
        url = base_url or os.environ.get("ANTHROPIC_BASE_URL") or ANTHROPIC_BASE_URL
        if key_required is None:
            key_required = "api.anthropic.com" in url
        super().__init__(
            model,
            name=name,
            base_url=url.rstrip("/"),
            api_key=api_key,
            key_env=key_env,
            key_required=key_required,
            **options,
        )
        self.json_mode: AnthropicJsonMode = json_mode
        self.send_temperature = send_temperature
        self.extra_headers = dict(extra_headers or {})

    def _make_client(self) -> Any:
        return self._sdk.AsyncAnthropic(
            base_url=self.base_url,
            api_key=self._api_key.get(),
            timeout=self.timeout,
            max_retries=0,
            default_headers=self.extra_headers or None,
        )

    def build_params(self, messages: list[ChatMessage], req: ChatRequest) -> dict[str, Any]:
        """The request body that will be sent for these (already redacted) messages."""
        schema = req.json_schema
        use_tool = schema is not None and self.json_mode == "tool" and schema.get("type") == "object"
        native = schema is not None and self.json_mode == "json_schema"
        if schema is not None and not (use_tool or native):
            messages = with_system_note(messages, schema_instruction(schema))
        system = "\n\n".join(m.content for m in messages if m.role == "system")
        turns: list[dict[str, Any]] = []
        for m in messages:
            if m.role == "system":
                continue
            if turns and turns[-1]["role"] == m.role:
                turns[-1]["content"] += "\n\n" + m.content
            else:
                turns.append({"role": m.role, "content": m.content})
        if not turns or turns[0]["role"] != "user":
            turns.insert(0, {"role": "user", "content": "(see the instructions)" if system else "(start)"})
        params: dict[str, Any] = {
            "model": self.model,
            "max_tokens": req.max_tokens or DEFAULT_MAX_TOKENS,
            "messages": turns,
        }
        if self.send_temperature:
            params["extra_body"] = {"temperature": min(1.0, max(0.0, req.temperature))}
        if system:
            params["system"] = system
        if use_tool and schema is not None:
            name = _TOOL_NAME.sub("_", req.schema_name)[:64] or "response"
            params["tools"] = [
                {
                    "name": name,
                    "description": "Record your answer: call this tool with the reply as its input.",
                    "input_schema": schema,
                }
            ]
            params["tool_choice"] = {"type": "tool", "name": name}
        elif native and schema is not None:
            params["output_config"] = {"format": {"type": "json_schema", "schema": schema}}
        return params

    async def _attempt(self, messages: list[ChatMessage], req: ChatRequest) -> AttemptReply:
        sdk = self._sdk
        params = self.build_params(messages, req)
        client = self._client()
        try:
            raw = await client.messages.with_raw_response.create(**params)
        except sdk.APIStatusError as exc:
            headers = dict(exc.response.headers)
            raise status_failure(
                int(exc.status_code),
                self._clean(error_message_from_body(exc.body, str(exc.message))),
                retry_after=parse_retry_after(headers),
                request_id=headers.get("request-id"),
            ) from None
        except sdk.APITimeoutError:
            raise AttemptFailure("timeout", f"no response within {self.timeout:g}s", retryable=True) from None
        except sdk.APIConnectionError as exc:
            cause = exc.__cause__
            detail = f"{type(cause).__name__}: {cause}" if cause is not None else str(exc)
            raise AttemptFailure("connection", self._clean(detail), retryable=True) from None
        except sdk.AnthropicError as exc:
            raise AttemptFailure(
                "unexpected", self._clean(f"{type(exc).__name__}: {exc}"), retryable=False
            ) from None
        request_id = raw.headers.get("request-id")
        tool = params["tool_choice"]["name"] if "tool_choice" in params else None
        return self._parse(raw.http_response.content, request_id, tool)

    def _parse(self, body: bytes, request_id: str | None, tool: str | None) -> AttemptReply:
        try:
            doc = orjson.loads(body)
        except orjson.JSONDecodeError as exc:
            raise AttemptFailure(
                "malformed",
                f"response body is not valid JSON ({exc}); {len(body)} bytes starting {body[:80]!r}",
                retryable=True,
                status=200,
                request_id=request_id,
            ) from None
        if not isinstance(doc, dict) or not isinstance(doc.get("content"), list):
            msg = error_message_from_body(doc, "no 'content' in the response")
            raise AttemptFailure(
                "malformed", self._clean(msg), retryable=True, status=200, request_id=request_id
            )
        blocks = [b for b in doc["content"] if isinstance(b, dict)]
        stop = doc.get("stop_reason")
        finish = _FINISH.get(str(stop), str(stop)) if stop is not None else None
        tool_input = next(
            (
                b.get("input")
                for b in blocks
                if b.get("type") == "tool_use" and (tool is None or b.get("name") == tool)
            ),
            None,
        )
        if tool is not None and isinstance(tool_input, dict):
            text = orjson.dumps(tool_input).decode()
            if finish == "tool_calls":
                finish = "stop"  # the forced tool call *is* the answer
        else:
            text = "".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
        usage = _obj(doc.get("usage"))
        fresh = _int(usage.get("input_tokens"))
        read = _int(usage.get("cache_read_input_tokens")) or 0
        written = _int(usage.get("cache_creation_input_tokens")) or 0
        return AttemptReply(
            text=text,
            model=str(doc.get("model") or self.model),
            input_tokens=None if fresh is None else fresh + read + written,
            output_tokens=_int(usage.get("output_tokens")),
            cached_input_tokens=read,
            cache_write_tokens=written,
            finish_reason=finish,
            request_id=request_id or (str(doc["id"]) if doc.get("id") else None),
            raw=doc,
        )


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _int(value: Any) -> int | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None
