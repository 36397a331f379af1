"""The Ray-free parts of a worker: the token bucket, pacing a provider, the buffered call log,
one batch with per-trace failures."""

from __future__ import annotations

import asyncio
import time

import pytest
from tests.annotate._judgekit import FAST_RETRY, make_judge, reply_json, simple_trace, trace_id_of

from mastkit.annotate import annotate
from mastkit.providers import ChatMessage, ChatRequest, get_provider
from mastkit.scale import AnnotateJob, LocalPacer, TokenBucket, pace_provider
from mastkit.scale.worker import BufferCache, replay_rows, run_batch
from mastkit.store import Store
from mastkit.testing import FakeLLMServer, Reply


def test_token_bucket_spaces_requests() -> None:
    now = [100.0]
    bucket = TokenBucket(120, clock=lambda: now[0])  # one request every 0.5 s
    assert [bucket.reserve() for _ in range(4)] == [0.0, 0.5, 1.0, 1.5]
    now[0] = 110.0  # idle for a while: the next one goes at once, no burst is saved up
    assert [bucket.reserve(), bucket.reserve()] == [0.0, 0.5]
    with pytest.raises(ValueError):
        TokenBucket(0)


def test_paced_provider_keeps_the_rate() -> None:
    with FakeLLMServer(default=Reply(text="ok")) as srv:
        provider = get_provider("openai:x", base_url=srv.openai_base_url, api_key="k", concurrency=8)
        req = ChatRequest(messages=[ChatMessage(role="user", content="hi")])

        async def go() -> float:
            try:
                await provider.complete(req)  # opens the connection, unpaced
                pace_provider(provider, LocalPacer(rpm=600))  # 0.1 s apart
                t0 = time.monotonic()
                await asyncio.gather(*(provider.complete(req) for _ in range(5)))
                return time.monotonic() - t0
            finally:
                await provider.aclose()

        assert asyncio.run(go()) >= 0.39
        arrivals = sorted(r.arrived_at for r in srv.requests)[1:]
    assert len(arrivals) == 5
    assert arrivals[-1] - arrivals[0] >= 0.35, arrivals


def test_buffered_rows_replayed_give_the_local_call_log() -> None:
    """A judge writing into a BufferCache, its rows replayed into a store, leaves the same
    calls and cached replies as the judge writing into the store itself."""
    traces = [simple_trace(f"t{i}") for i in range(3)]
    with FakeLLMServer(handler=lambda p: reply_json(summary=str(trace_id_of(p)))) as srv:
        local = Store.memory()
        annotate(traces, make_judge(srv, cache=local), store=local)
        remote = Store.memory()
        buffer = BufferCache(remote.fence_secret())
        job = AnnotateJob(
            "llm",
            {
                "model": "openai:x",
                "base_url": srv.openai_base_url,
                "api_key": "test-key",
                "timeout": 10.0,
                "provider_options": {"retry": FAST_RETRY},
            },
        )(buffer)
        results = run_batch(job, traces)
        replay_rows(remote, buffer.drain())
    assert all(ok for ok, _ in results)
    assert buffer.drain() == []

    def calls(s: Store) -> list[tuple]:
        rows = s._query("SELECT trace_id, model, input_tokens, output_tokens, status, cached FROM calls")
        return sorted(tuple(r) for r in rows)

    assert calls(remote) == calls(local)
    assert len(calls(remote)) == 3
    resp = "SELECT request_hash, text FROM responses ORDER BY request_hash"
    assert [tuple(r) for r in remote._query(resp)] != []
    # different fence secrets, different prompts: only the texts are compared
    assert sorted(r[1] for r in remote._query(resp)) == sorted(r[1] for r in local._query(resp))


def test_run_batch_fails_traces_one_by_one_in_order() -> None:
    def reply(p: object) -> Reply | str:
        return Reply.error(400, "bad trace") if trace_id_of(p) == "t1" else reply_json()

    traces = [simple_trace(f"t{i}") for i in range(3)]
    with FakeLLMServer(handler=reply) as srv:
        job = AnnotateJob(
            "llm",
            {"model": "openai:x", "base_url": srv.openai_base_url, "api_key": "test-key",
             "provider_options": {"retry": FAST_RETRY}},
        )(BufferCache(b"s" * 32))  # fmt: skip
        results = run_batch(job, traces, concurrency=2)
    assert [ok for ok, _ in results] == [True, False, True]
    assert [r.trace_id for ok, r in results if ok] == ["t0", "t2"]
    assert "bad trace" in str(results[1][1])
