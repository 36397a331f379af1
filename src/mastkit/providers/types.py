"""Value types of the providers layer: a chat request, its response and the call record."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Role = Literal["system", "user", "assistant"]
CallStatus = Literal["ok", "error"]


class ChatMessage(BaseModel):
    """One chat message."""

    model_config = ConfigDict(frozen=True)

    role: Role
    """``system``, ``user`` or ``assistant``."""
    content: str
    """The message text."""


class ChatRequest(BaseModel):
    """What to ask the model. Provider-neutral; each provider maps it to its protocol."""

    messages: list[ChatMessage]
    """The conversation, oldest first (system messages anywhere are allowed)."""
    temperature: float = 0.0
    """Sampling temperature (0 = as deterministic as the model allows)."""
    max_tokens: int | None = None
    """Cap on output tokens (Anthropic requires one: 4096 when None)."""
    json_schema: dict[str, Any] | None = None
    """Ask for structured output matching this JSON schema (how depends on the provider)."""
    schema_name: str = "response"
    """Name of the schema (OpenAI ``json_schema.name``, Anthropic tool name)."""
    seed: int | None = None
    """Sampling seed, where the server supports one (OpenAI-compatible servers; ignored by Anthropic)."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Caller's bookkeeping (trace id, window...): never sent to the model, copied to the call record."""


class ChatResponse(BaseModel):
    """A completed call: the text, usage, cost and how it went."""

    text: str
    """The assistant's reply (for a forced Anthropic tool call: the tool input as JSON text)."""
    model: str
    """The model that answered, as the server reported it."""
    provider: str
    """Provider name (``openai``, ``anthropic``, ``ollama``...)."""
    input_tokens: int | None = None
    """Prompt tokens, including cached ones (None: the server reported no usage)."""
    output_tokens: int | None = None
    """Completion tokens (None: not reported)."""
    cached_input_tokens: int = 0
    """Prompt tokens served from the provider's prompt cache."""
    cost_usd: float | None = None
    """Cost from the price table; None when the model's price is unknown (never a silent 0)."""
    price_known: bool = False
    """False when the model is not in the price table (then ``cost_usd`` is None)."""
    latency_s: float = 0.0
    """Wall time of the whole call, retries and waits included."""
    attempts: int = 1
    """HTTP attempts made (1 = no retry)."""
    finish_reason: str | None = None
    """Why generation stopped, in OpenAI terms (``stop``, ``length``, ``tool_calls``, ``content_filter``)."""
    request_id: str | None = None
    """The provider's request id (for support tickets)."""
    prompt_hash: str = ""
    """Versioned hash of what was sent (after redaction); see :func:`prompt_hash`."""
    redactions: dict[str, int] = Field(default_factory=dict)
    """Secrets removed from the outgoing messages, by kind."""
    raw: dict[str, Any] = Field(default_factory=dict)
    """The provider's response JSON, untouched."""

    def to_record(self, metadata: dict[str, Any] | None = None) -> CallRecord:
        """The :class:`CallRecord` of this call (status ``ok``)."""
        return CallRecord(
            provider=self.provider,
            model=self.model,
            prompt_hash=self.prompt_hash,
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            cached_input_tokens=self.cached_input_tokens,
            cost_usd=self.cost_usd,
            price_known=self.price_known,
            latency_s=self.latency_s,
            attempts=self.attempts,
            status="ok",
            finish_reason=self.finish_reason,
            request_id=self.request_id,
            redactions=dict(self.redactions),
            metadata=dict(metadata or {}),
        )


class CallRecord(BaseModel):
    """Everything a store needs to log one model call (success or failure).

    It never holds the API key or the prompt text, only the prompt's hash.
    """

    provider: str
    """Provider name."""
    model: str
    """Model name (as answered, or as requested when the call failed)."""
    prompt_hash: str
    """Versioned hash of the request as sent."""
    input_tokens: int | None = None
    """Prompt tokens (None: unknown)."""
    output_tokens: int | None = None
    """Completion tokens (None: unknown)."""
    cached_input_tokens: int = 0
    """Prompt tokens served from cache."""
    cost_usd: float | None = None
    """Cost in USD; None when unknown (unpriced model, or failed call)."""
    price_known: bool = False
    """Whether the model was in the price table."""
    latency_s: float = 0.0
    """Wall time including retries and waits."""
    attempts: int = 1
    """HTTP attempts made."""
    retry_wait_s: float = 0.0
    """Total time spent waiting between attempts."""
    attempt_errors: list[str] = Field(default_factory=list)
    """One line per failed attempt (``429 rate_limit: ...``), in order."""
    status: CallStatus = "ok"
    """``ok`` or ``error``."""
    error: str | None = None
    """The final error message (status ``error``)."""
    error_kind: str | None = None
    """The final error's kind (``rate_limit``, ``server``, ``timeout``, ``auth``...)."""
    finish_reason: str | None = None
    """Why generation stopped."""
    request_id: str | None = None
    """Provider request id."""
    redactions: dict[str, int] = Field(default_factory=dict)
    """Secrets removed from the outgoing messages, by kind."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """The request's ``metadata``."""

    def log_fields(self) -> dict[str, Any]:
        """Keyword arguments for ``Store.log_call`` (add ``trace_id``/``config_hash``)."""
        return {
            "provider": self.provider,
            "model": self.model,
            "request_hash": self.prompt_hash,
            "input_tokens": self.input_tokens or 0,
            "output_tokens": self.output_tokens or 0,
            "cost_usd": self.cost_usd,
            "latency_s": self.latency_s,
            "attempts": self.attempts,
            "status": self.status,
            "error": self.error,
        }
