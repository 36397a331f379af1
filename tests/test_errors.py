from __future__ import annotations

import pickle

import pytest

from mastkit.errors import (
    FormatError,
    MissingDependencyError,
    NotThisFormat,
    TraceLoadError,
    UnknownFormatError,
)
from mastkit.providers.errors import BudgetExceeded, ProviderUnavailableError


def test_the_message_follows_the_attributes() -> None:
    """The loader adds the importers tried after the error was made; the message must say them."""
    err = TraceLoadError("runs/a.jsonl", "invalid JSON on line 2", line=2)
    assert str(err) == "runs/a.jsonl:2: invalid JSON on line 2"
    err.tried = ["chat_messages"]
    assert str(err) == "runs/a.jsonl:2: invalid JSON on line 2 [tried: chat_messages]"
    assert str(TraceLoadError("x.bin", "truncated", offset=17)) == "x.bin (byte 17): truncated"
    err.tried, err.importer = ["otel_logs", "otlp"], "otel_logs"  # the reason is not the last one's
    assert str(err).endswith("[tried: otel_logs, otlp; reason from otel_logs]")


@pytest.mark.parametrize(
    "err",
    [
        TraceLoadError("a.json", "bad", tried=["x", "y"], line=3, offset=40, internal=True, importer="x"),
        UnknownFormatError("b.json", "no importer recognises this file"),
        FormatError("no log records found", line=4, offset=9),
        NotThisFormat("spans further down", line=700),
        MissingDependencyError("the Ray runner", "ray"),
        BudgetExceeded(1.0, 0.75, 0.2, 0.1),
        ProviderUnavailableError("503 after 5 attempts", provider="openai", status=503, attempts=5),
    ],
)
def test_errors_survive_pickling(err: Exception) -> None:
    """Errors cross process boundaries whole (a worker pool returns them to the parent)."""
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is type(err)
    assert str(back) == str(err)
    assert vars(back) == vars(err) and vars(err)  # every attribute: path, reason, tried, line, ...
