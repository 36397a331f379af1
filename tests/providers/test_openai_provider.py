"""OpenAIProvider: the real openai SDK against the real loopback FakeLLMServer."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest

from mastkit.providers import (
    CallRecord,
    ChatMessage,
    ChatRequest,
    OpenAIProvider,
    ProviderAuthError,
    ProviderRequestError,
    ProviderResponseError,
    ProviderUnavailableError,
    RetryPolicy,
    get_provider,
)
from mastkit.testing import FakeLLMServer, Reply, Usage

from ._helpers import KEY, Sleeps

SCHEMA = {
    "type": "object",
    "properties": {"verdict": {"type": "string"}},
    "required": ["verdict"],
    "additionalProperties": False,
}


def req(text: str = "hello", **kw: Any) -> ChatRequest:
    return ChatRequest(
        messages=[
            ChatMessage(role="system", content="You are a judge."),
            ChatMessage(role="user", content=text),
        ],
        **kw,
    )


def make(server: FakeLLMServer, sleeps: Sleeps | None = None, **kw: Any) -> OpenAIProvider:
    kw.setdefault("api_key", KEY)
    kw.setdefault("timeout", 5.0)
    provider = get_provider("openai:gpt-4o-mini", base_url=server.openai_base_url, sleep=sleeps, **kw)
    assert isinstance(provider, OpenAIProvider)
    return provider


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def test_success_text_usage_cost(server: FakeLLMServer) -> None:
    server.push(Reply("hi there", usage=Usage(input_tokens=1000, output_tokens=200, cached_input_tokens=400)))
    resp = run(make(server).complete(req(max_tokens=50)))
    assert resp.text == "hi there"
    assert resp.provider == "openai" and resp.model == "gpt-4o-mini"
    assert (resp.input_tokens, resp.output_tokens, resp.cached_input_tokens) == (1000, 200, 400)
    # gpt-4o-mini: 0.15 in, 0.075 cached in, 0.60 out per million
    assert resp.cost_usd == pytest.approx((600 * 0.15 + 400 * 0.075 + 200 * 0.60) / 1e6)
    assert resp.price_known
    assert resp.attempts == 1 and resp.finish_reason == "stop"
    assert resp.request_id == "req_fake_1"
    assert resp.raw["object"] == "chat.completion"
    assert resp.prompt_hash.startswith("p1:")
    sent = server.chat_requests[0]
    assert sent.path == "/v1/chat/completions"
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    assert sent.json["messages"] == [
        {"role": "system", "content": "You are a judge."},
        {"role": "user", "content": "hello"},
    ]
    assert sent.json["max_tokens"] == 50 and sent.json["temperature"] == 0
    assert "response_format" not in sent.json


def test_unknown_model_cost_is_none_not_zero(server: FakeLLMServer) -> None:
    provider = get_provider("openai:my-finetune", base_url=server.openai_base_url, api_key=KEY)
    resp = run(provider.complete(req()))
    assert resp.cost_usd is None and not resp.price_known
    assert provider.estimate_cost(1000, 100) is None


def test_local_server_is_free_and_needs_no_key(server: FakeLLMServer) -> None:
    provider = get_provider("vllm:some/model", base_url=server.openai_base_url)
    resp = run(provider.complete(req()))
    assert resp.cost_usd == 0.0 and resp.price_known
    assert server.chat_requests[0].headers["authorization"] == "Bearer not-needed"


def test_structured_output_json_schema(server: FakeLLMServer) -> None:
    server.push(Reply('{"verdict": "present"}'))
    resp = run(make(server).complete(req(json_schema=SCHEMA, schema_name="failure vector", seed=7)))
    assert json.loads(resp.text) == {"verdict": "present"}
    body = server.chat_requests[0].json
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "failure_vector", "schema": SCHEMA},
    }
    assert body["seed"] == 7
    # the prompt itself is untouched in json_schema mode
    assert body["messages"][0]["content"] == "You are a judge."


def test_structured_output_strict(server: FakeLLMServer) -> None:
    run(make(server, strict_schema=True).complete(req(json_schema=SCHEMA)))
    assert server.chat_requests[0].json["response_format"]["json_schema"]["strict"] is True


@pytest.mark.parametrize("mode", ["json_object", "none"])
def test_structured_output_fallbacks_put_schema_in_prompt(server: FakeLLMServer, mode: str) -> None:
    run(make(server, json_mode=mode).complete(req(json_schema=SCHEMA)))
    body = server.chat_requests[0].json
    if mode == "json_object":
        assert body["response_format"] == {"type": "json_object"}
    else:
        assert "response_format" not in body
    system = body["messages"][0]
    assert system["role"] == "system" and system["content"].startswith("You are a judge.")
    assert "JSON schema" in system["content"] and json.dumps(SCHEMA) in system["content"]


def test_reasoning_models_use_max_completion_tokens(server: FakeLLMServer) -> None:
    provider = get_provider("openai:o4-mini", base_url=server.openai_base_url, api_key=KEY)
    run(provider.complete(req(max_tokens=99, temperature=0.5)))
    body = server.chat_requests[0].json
    assert body["max_completion_tokens"] == 99
    assert "max_tokens" not in body and "temperature" not in body


def test_429_retry_after_is_honoured(server: FakeLLMServer, sleeps: Sleeps) -> None:
    server.push(Reply.rate_limited(retry_after=7), Reply.rate_limited(None, retry_after_ms=250), Reply("ok"))
    resp = run(make(server, sleeps).complete(req()))
    assert resp.text == "ok" and resp.attempts == 3
    assert sleeps.waits == [7.0, 0.25]
    assert len(server.chat_requests) == 3


def test_retry_after_is_capped(server: FakeLLMServer, sleeps: Sleeps) -> None:
    server.push(Reply.rate_limited(retry_after=3600), Reply("ok"))
    run(make(server, sleeps, retry=RetryPolicy(max_retry_after_s=2.5)).complete(req()))
    assert sleeps.waits == [2.5]


def test_real_wait_is_honoured_without_injected_sleep(server: FakeLLMServer) -> None:
    server.push(Reply.rate_limited(retry_after=0.3), Reply("ok"))
    resp = run(make(server).complete(req()))
    first, second = server.chat_requests
    assert second.arrived_at - first.arrived_at >= 0.28
    assert resp.attempts == 2


def test_500_then_success_with_exponential_backoff(server: FakeLLMServer, sleeps: Sleeps) -> None:
    server.push(Reply.server_error(500), Reply.unavailable(), Reply.server_error(502), Reply("fine"))
    policy = RetryPolicy(initial_delay_s=1.0, multiplier=2.0, jitter=0.0)
    resp = run(make(server, sleeps, retry=policy).complete(req()))
    assert resp.text == "fine" and resp.attempts == 4
    assert sleeps.waits == [1.0, 2.0, 4.0]


def test_backoff_jitter_and_cap() -> None:
    policy = RetryPolicy(initial_delay_s=1.0, multiplier=2.0, max_delay_s=5.0, jitter=0.5)
    assert policy.backoff(1, 0.0) == 1.0
    assert policy.backoff(1, 0.999) == pytest.approx(0.5005)
    assert policy.backoff(10, 0.0) == 5.0
    assert policy.delay(3, 0.0, 0.5) == 0.0


def test_timeout_then_success(server: FakeLLMServer, sleeps: Sleeps) -> None:
    server.push(Reply.timeout(delay_s=3.0), Reply("in time"))
    resp = run(make(server, sleeps, timeout=0.3).complete(req()))
    assert resp.text == "in time" and resp.attempts == 2
    assert len(sleeps.waits) == 1


def test_dropped_connection_then_success(server: FakeLLMServer, sleeps: Sleeps) -> None:
    server.push(Reply.dropped(), Reply("back"))
    resp = run(make(server, sleeps).complete(req()))
    assert resp.text == "back" and resp.attempts == 2


def test_persistent_500_gives_up_after_n_attempts(server: FakeLLMServer, sleeps: Sleeps) -> None:
    server.default = Reply.server_error(500, "boom")
    records: list[CallRecord] = []
    provider = make(server, sleeps, max_attempts=3, on_call=records.append)
    with pytest.raises(ProviderUnavailableError) as info:
        run(provider.complete(req(metadata={"trace_id": "t1"})))
    err = info.value
    assert err.attempts == 3 and err.status == 500 and err.kind == "server"
    assert "gave up after 3 attempts" in str(err) and "boom" in str(err)
    assert len(server.chat_requests) == 3
    assert len(sleeps.waits) == 2
    assert err.record is not None and err.record.status == "error" and err.record.attempts == 3
    assert len(err.record.attempt_errors) == 3
    assert records == [err.record] and records[0].metadata == {"trace_id": "t1"}


def test_401_fails_at_once_and_names_the_env_var(server: FakeLLMServer, sleeps: Sleeps) -> None:
    server.push(Reply.error(401, "Incorrect API key provided."))
    with pytest.raises(ProviderAuthError) as info:
        run(make(server, sleeps).complete(req()))
    assert info.value.attempts == 1 and info.value.status == 401
    assert "OPENAI_API_KEY" in str(info.value) and "MASTKIT_API_KEY" in str(info.value)
    assert len(server.chat_requests) == 1 and sleeps.waits == []


def test_server_enforced_key(sleeps: Sleeps) -> None:
    with FakeLLMServer(api_key="right-key-123456", default=Reply("welcome")) as srv:
        with pytest.raises(ProviderAuthError):
            run(make(srv, sleeps, api_key="wrong-key-123456").complete(req()))
        assert run(make(srv, sleeps, api_key="right-key-123456").complete(req())).text == "welcome"


@pytest.mark.parametrize(("status", "hint"), [(400, "json_mode"), (404, "GET /v1/models"), (422, "rejected")])
def test_other_4xx_fail_at_once(server: FakeLLMServer, sleeps: Sleeps, status: int, hint: str) -> None:
    server.push(Reply.error(status, "nope"))
    with pytest.raises(ProviderRequestError) as info:
        run(make(server, sleeps).complete(req()))
    assert info.value.attempts == 1 and info.value.status == status
    assert hint in str(info.value)
    assert len(server.chat_requests) == 1


@pytest.mark.parametrize(
    "bad", [Reply.malformed(), Reply.truncated(), Reply(body_override=b'{"object": "x"}')]
)
def test_unusable_body_is_retried(server: FakeLLMServer, sleeps: Sleeps, bad: Reply) -> None:
    server.push(bad, Reply("good"))
    resp = run(make(server, sleeps).complete(req()))
    assert resp.text == "good" and resp.attempts == 2


def test_persistent_malformed_body_is_a_clear_error(server: FakeLLMServer, sleeps: Sleeps) -> None:
    server.default = Reply.malformed()
    with pytest.raises(ProviderResponseError) as info:
        run(make(server, sleeps, max_attempts=2).complete(req()))
    assert info.value.attempts == 2 and info.value.kind == "malformed"
    assert "not valid JSON" in str(info.value)


def test_malformed_not_retried_when_disabled(server: FakeLLMServer, sleeps: Sleeps) -> None:
    server.push(Reply.malformed(), Reply("never"))
    with pytest.raises(ProviderResponseError) as info:
        run(make(server, sleeps, retry=RetryPolicy(retry_malformed=False)).complete(req()))
    assert info.value.attempts == 1


def test_connection_refused_is_retried_then_reported(sleeps: Sleeps) -> None:
    with FakeLLMServer() as srv:
        url = srv.openai_base_url
    provider = get_provider("openai:gpt-4o-mini", base_url=url, api_key=KEY, sleep=sleeps, max_attempts=2)
    with pytest.raises(ProviderUnavailableError) as info:
        run(provider.complete(req()))
    assert info.value.kind == "connection" and info.value.attempts == 2
    assert "is the server running" in str(info.value)


def test_on_call_record_on_success(server: FakeLLMServer, sleeps: Sleeps) -> None:
    records: list[CallRecord] = []
    server.push(Reply.rate_limited(0.01), Reply("x", usage=Usage(10, 5)))
    resp = run(make(server, sleeps, on_call=records.append).complete(req(metadata={"window": 2})))
    (rec,) = records
    assert rec.status == "ok" and rec.attempts == 2 and rec.retry_wait_s == pytest.approx(0.01)
    assert rec.input_tokens == 10 and rec.output_tokens == 5 and rec.cost_usd == resp.cost_usd
    assert rec.prompt_hash == resp.prompt_hash and rec.metadata == {"window": 2}
    assert rec.attempt_errors[0].startswith("HTTP 429 rate_limit")
    fields = rec.log_fields()
    assert fields["request_hash"] == resp.prompt_hash and fields["attempts"] == 2 and fields["status"] == "ok"


def test_provider_reused_across_event_loops(server: FakeLLMServer) -> None:
    provider = make(server)
    assert provider.complete_sync(req()).text == "OK"
    assert provider.complete_sync(req()).text == "OK"
    assert run(provider.complete(req())).text == "OK"


def test_api_key_never_leaks(server: FakeLLMServer, sleeps: Sleeps, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    records: list[CallRecord] = []
    provider = make(server, sleeps, on_call=records.append, max_attempts=2)
    # a server that echoes the key in its error message (some do, partly masked or not)
    server.push(Reply.server_error(500, f"bad things with key {KEY}"), Reply(f"echo {KEY}"))
    resp = run(provider.complete(req(f"my key is {KEY}")))
    server.push(Reply.error(401, f"Incorrect API key provided: {KEY}"))
    with pytest.raises(ProviderAuthError) as info:
        run(provider.complete(req()))
    texts = [
        repr(provider),
        str(provider),
        repr(vars(provider)),
        resp.model_dump_json(exclude={"raw", "text"}),
        str(info.value),
        repr(info.value.record),
        caplog.text,
        *(r.model_dump_json() for r in records),
    ]
    for text in texts:
        assert KEY not in text
    # the key typed into a prompt is redacted before sending
    assert KEY.encode() not in server.chat_requests[0].body
    assert server.chat_requests[0].headers["authorization"] == f"Bearer {KEY}"
