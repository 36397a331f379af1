"""``OpenAIProvider``: OpenAI and every OpenAI-compatible chat endpoint (vLLM, Ollama,
LM Studio, llama.cpp server, OpenRouter...), through the official ``openai`` SDK.

Structured output (``ChatRequest.json_schema``), by ``json_mode``:

- ``"json_schema"`` (default): ``response_format={"type": "json_schema", "json_schema":
  {"name", "schema", "strict"}}``. OpenAI, vLLM, Ollama (>= 0.5), LM Studio and llama.cpp
  server accept it; ``strict_schema=True`` turns on OpenAI's strict mode (the schema must
  then meet OpenAI's strict-mode rules).
- ``"json_object"``: ``response_format={"type": "json_object"}`` plus the schema in the
  system prompt (servers that know JSON mode but not schemas).
- ``"none"``: only the schema in the system prompt.

Reasoning models (``o1``/``o3``/``o4``/``gpt-5`` and later families) get ``max_completion_tokens``
instead of ``max_tokens`` and no ``temperature`` (they reject both).

The response body is read and parsed here (not by the SDK), so a malformed body becomes a
clear :class:`~mastkit.providers.ProviderResponseError` and ``ChatResponse.raw`` is exactly
what the server sent.
"""

from __future__ import annotations

import os
import re
from typing import Any, ClassVar, Literal

import openai
import orjson

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

__all__ = ["OpenAIJsonMode", "OpenAIProvider"]

OpenAIJsonMode = Literal["json_schema", "json_object", "none"]

OPENAI_BASE_URL = "https://api.openai.com/v1"
_REASONING = re.compile(r"^(?:o\d|gpt-[5-9])(?:$|[-.:])")
_SCHEMA_NAME = re.compile(r"[^A-Za-z0-9_-]")


class OpenAIProvider(BaseProvider):
    """Chat completions over the OpenAI protocol.

    Args:
        model: model name as the server knows it.
        base_url: endpoint ending in ``/v1`` (default: ``OPENAI_BASE_URL`` or
            ``https://api.openai.com/v1``).
        api_key: default: ``OPENAI_API_KEY``, then ``MASTKIT_API_KEY`` (see ``key_env``).
            Required for api.openai.com; other servers get a dummy key when none is set.
        name: provider name in records (``openai``, ``ollama``, ``vllm``...).
        json_mode: how structured output is requested (module docstring).
        strict_schema: OpenAI strict structured outputs.
        max_tokens_param: ``auto`` picks ``max_completion_tokens`` for reasoning models.
        extra_headers: sent with every request (e.g. OpenRouter's ``HTTP-Referer``).
        extra_body: merged into every request body (server-specific parameters).
        **options: see :class:`~mastkit.providers.base.BaseProvider` (timeout, retry,
            concurrency, redact, prices, context_window, on_call...).
    """

    default_base_url: ClassVar[str | None] = None
    default_context_window: ClassVar[int] = 128_000

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        name: str = "openai",
        json_mode: OpenAIJsonMode = "json_schema",
        strict_schema: bool = False,
        max_tokens_param: Literal["auto", "max_tokens", "max_completion_tokens"] = "auto",
        extra_headers: dict[str, str] | None = None,
        extra_body: dict[str, Any] | None = None,
        key_env: tuple[str, ...] = ("OPENAI_API_KEY", "MASTKIT_API_KEY"),
        key_required: bool | None = None,
        **options: Any,
    ) -> None:
        if json_mode not in ("json_schema", "json_object", "none"):
            from mastkit.providers.errors import ProviderConfigError

            raise ProviderConfigError(
                f"json_mode must be json_schema, json_object or none, got {json_mode!r}", provider=name
            )
        url = base_url or (os.environ.get("OPENAI_BASE_URL") if name == "openai" else None) or OPENAI_BASE_URL
        if key_required is None:
            key_required = "api.openai.com" in url
        super().__init__(
            model,
            name=name,
            base_url=url.rstrip("/"),
            api_key=api_key,
            key_env=key_env,
            key_required=key_required,
            **options,
        )
        self.json_mode: OpenAIJsonMode = json_mode
        self.strict_schema = strict_schema
        self.max_tokens_param = max_tokens_param
        self.extra_headers = dict(extra_headers or {})
        self.extra_body = dict(extra_body or {})

    def _make_client(self) -> openai.AsyncOpenAI:
        return openai.AsyncOpenAI(
            base_url=self.base_url,
            api_key=self._api_key.get(),
            timeout=self.timeout,
            max_retries=0,
            default_headers=self.extra_headers or None,
        )

    def _reasoning(self) -> bool:
        if self.max_tokens_param != "auto":
            return self.max_tokens_param == "max_completion_tokens"
        return bool(_REASONING.match(self.model.rsplit("/", 1)[-1].lower()))

    def build_params(self, messages: list[ChatMessage], req: ChatRequest) -> dict[str, Any]:
        """The request body that will be sent for these (already redacted) messages."""
        schema = req.json_schema
        if schema is not None and self.json_mode != "json_schema":
            messages = with_system_note(messages, schema_instruction(schema))
        params: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
        }
        reasoning = self._reasoning()
        if not reasoning:
            params["temperature"] = req.temperature
        if req.max_tokens is not None:
            params["max_completion_tokens" if reasoning else "max_tokens"] = req.max_tokens
        if req.seed is not None:
            params["seed"] = req.seed
        if schema is not None:
            if self.json_mode == "json_schema":
                spec: dict[str, Any] = {
                    "name": _SCHEMA_NAME.sub("_", req.schema_name)[:64] or "response",
                    "schema": schema,
                }
                if self.strict_schema:
                    spec["strict"] = True
                params["response_format"] = {"type": "json_schema", "json_schema": spec}
            elif self.json_mode == "json_object":
                params["response_format"] = {"type": "json_object"}
        return params

    async def _attempt(self, messages: list[ChatMessage], req: ChatRequest) -> AttemptReply:
        params = self.build_params(messages, req)
        client = self._client()
        try:
            raw = await client.chat.completions.with_raw_response.create(
                **params, extra_body=self.extra_body or None
            )
        except openai.APIStatusError as exc:
            headers = dict(exc.response.headers)
            raise status_failure(
                exc.status_code,
                self._clean(error_message_from_body(exc.body, exc.message)),
                retry_after=parse_retry_after(headers),
                request_id=exc.request_id,
            ) from None
        except openai.APITimeoutError:
            raise AttemptFailure("timeout", f"no response within {self.timeout:g}s", retryable=True) from None
        except openai.APIConnectionError as exc:
            cause = exc.__cause__
            detail = f"{type(cause).__name__}: {cause}" if cause is not None else str(exc)
            raise AttemptFailure("connection", self._clean(detail), retryable=True) from None
        except openai.OpenAIError as exc:
            raise AttemptFailure(
                "unexpected", self._clean(f"{type(exc).__name__}: {exc}"), retryable=False
            ) from None
        request_id = raw.headers.get("x-request-id")
        return self._parse(raw.http_response.content, request_id)

    def _parse(self, body: bytes, request_id: str | None) -> AttemptReply:
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
        if not isinstance(doc, dict):
            raise AttemptFailure(
                "malformed",
                f"response body is a {type(doc).__name__}, not an object",
                retryable=True,
                status=200,
            )
        choices = doc.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            msg = error_message_from_body(doc, "no 'choices' in the response")
            raise AttemptFailure(
                "malformed", self._clean(msg), retryable=True, status=200, request_id=request_id
            )
        choice = choices[0]
        message = _obj(choice.get("message"))
        content = message.get("content")
        if isinstance(content, list):  # some servers return content parts
            content = "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
        text = content if isinstance(content, str) else ""
        usage = _obj(doc.get("usage"))
        details = _obj(usage.get("prompt_tokens_details"))
        cached = details.get("cached_tokens") or 0
        finish = choice.get("finish_reason")
        if not text and message.get("refusal"):
            finish = "content_filter"
        return AttemptReply(
            text=text,
            model=str(doc.get("model") or self.model),
            input_tokens=_int(usage.get("prompt_tokens")),
            output_tokens=_int(usage.get("completion_tokens")),
            cached_input_tokens=_int(cached) or 0,
            finish_reason=str(finish) if finish is not None else None,
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
