"""The runner's small parts: breaker kinds, stop messages, error entries and the sync wrapper.

The work functions here are plain coroutines raising the providers' own errors: the runner is
exercised for real, with hand-computed expectations (see docs/mutation.md).
"""

from __future__ import annotations

import asyncio

import pytest

from mastkit.llm.runner import (
    RunProgress,
    Stop,
    TraceOutcome,
    _stop_message,
    breaker_kind,
    error_entries,
    run_per_trace,
    run_per_trace_sync,
)
from mastkit.providers.errors import (
    ProviderAuthError,
    ProviderError,
    ProviderRequestError,
    ProviderUnavailableError,
)
from mastkit.traces.model import Event, Trace


def tr(i: int) -> Trace:
    return Trace(
        trace_id=f"t{i}",
        source_format="test",
        events=[Event(seq=0, kind="message", actor="a", content=f"text {i}")],
    )


def test_breaker_kind_reads_status_or_kind() -> None:
    assert breaker_kind(ProviderRequestError("x", status=404, kind="bad_request")) == "not_found"
    assert breaker_kind(ProviderRequestError("x", status=400, kind="not_found")) == "not_found"
    assert breaker_kind(ProviderRequestError("x", status=405, kind="bad_request")) is None
    assert breaker_kind(ProviderAuthError("x", status=401)) == "auth"
    assert breaker_kind(ProviderUnavailableError("x", kind="connection")) == "unreachable"
    assert breaker_kind(ProviderUnavailableError("x", kind="timeout")) is None
    assert breaker_kind(ValueError("x")) is None


def test_stop_messages_word_for_word() -> None:
    auth = ProviderAuthError("denied", provider="openai", model="m", status=401)
    assert _stop_message("auth", auth, 0) == (
        "the provider rejected the API key (401): check the key and the base URL. denied"
    )
    no_status = ProviderAuthError("no key", provider="openai")
    assert _stop_message("auth", no_status, 0) == (
        "the provider rejected the API key: check the key and the base URL. no key"
    )
    assert _stop_message("auth", ValueError("v"), 0) == (
        "the provider rejected the API key: check the key and the base URL. v"
    )
    missing = ProviderRequestError("gone", provider="openai", model="gpt-x", status=404)
    assert _stop_message("not_found", missing, 0) == (
        "model gpt-x not found (404): check the model name and the base URL. gone"
    )
    no_model = ProviderRequestError("gone", provider="openai", status=404)
    assert _stop_message("not_found", no_model, 0) == (
        "model openai not found (404): check the model name and the base URL. gone"
    )
    assert _stop_message("not_found", ValueError("v"), 0) == (
        "model ? not found (404): check the model name and the base URL. v"
    )
    down = ProviderUnavailableError("refused", provider="ollama", model="llama", kind="connection")
    assert _stop_message("unreachable", down, 3) == (
        "cannot reach ollama:llama (3 traces in a row): is the server running? refused"
    )
    bare = ProviderUnavailableError("refused", provider="ollama", kind="connection")
    assert _stop_message("unreachable", bare, 2) == (
        "cannot reach ollama (2 traces in a row): is the server running? refused"
    )
    anonymous = ProviderUnavailableError("refused", kind="connection")
    assert _stop_message("unreachable", anonymous, 1) == (
        "cannot reach the provider (1 traces in a row): is the server running? refused"
    )
    assert _stop_message("unreachable", ValueError("v"), 1) == (
        "cannot reach the provider (1 traces in a row): is the server running? v"
    )
    assert _stop_message("budget", ValueError("cap"), 0) == "budget reached: cap"


def test_error_entries_list_failures_then_the_stop() -> None:
    outcomes: list[TraceOutcome[int]] = [
        TraceOutcome("a", "h1", "done", 1),
        TraceOutcome("b", "h2", "failed", reason="boom", path="/x.json"),
        TraceOutcome("c", "h3", "not_done", reason="stopped"),
    ]
    assert error_entries(outcomes, None) == [
        {"trace_id": "b", "trace_hash": "h2", "path": "/x.json", "reason": "boom"}
    ]
    assert error_entries(outcomes, Stop("auth", "bad key", "b"))[1] == {
        "trace_id": "b",
        "reason": "bad key",
        "stop": "auth",
        "budget": False,
    }
    assert error_entries([], Stop("budget", "spent", None)) == [
        {"trace_id": None, "reason": "spent", "stop": "budget", "budget": True}
    ]


def test_sync_runner_passes_every_option_through() -> None:
    seen: list[str] = []
    counts: list[int] = []
    progress = RunProgress()
    closed: list[bool] = []

    async def work(t: Trace) -> int:
        if t.trace_id == "t0":
            raise ProviderUnavailableError("refused", provider="p", kind="connection")
        return int(t.trace_id[1:])

    async def aclose() -> None:
        closed.append(True)

    result = run_per_trace_sync(
        [tr(i) for i in range(3)],
        work,
        key="k",
        concurrency=1,
        on_progress=lambda p: counts.append(p.finished),
        on_outcome=lambda o: seen.append(f"{o.trace_id}:{o.status}"),
        total=3,
        progress=progress,
        unreachable_after=1,
        aclose=aclose,
    )
    assert result.progress is progress and progress.total == 3
    assert seen == ["t0:failed", "t1:not_done", "t2:not_done"]
    assert counts == [1, 2, 3]
    assert result.stop is not None and result.stop.kind == "unreachable"
    assert closed == [True]


def test_eight_traces_at_most_in_flight_by_default() -> None:
    in_flight = 0
    peak = 0

    async def work(t: Trace) -> int:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.01)
        in_flight -= 1
        return 1

    assert run_per_trace_sync([tr(i) for i in range(20)], work, key="k").complete
    assert peak == 8
    peak = 0
    asyncio.run(run_per_trace([tr(i) for i in range(20)], work, key="k"))
    assert peak == 8


@pytest.mark.parametrize("exc", [ProviderError("plain", provider="p")])
def test_a_plain_provider_error_fails_only_its_trace(exc: ProviderError) -> None:
    async def work(t: Trace) -> int:
        raise exc

    result = run_per_trace_sync([tr(1), tr(2)], work, key="k")
    assert [o.status for o in result.outcomes] == ["failed", "failed"] and result.stop is None
