"""The cost estimate before LLM scoring: printed first, confirmation above the threshold, nothing
sent when it is declined (checked on the loopback FakeLLMServer), cached requests not counted."""

from __future__ import annotations

import json
import types
from pathlib import Path
from typing import Any

import pytest
from tests.verify._rollouts import rollout
from typer.testing import CliRunner

import mastkit.cli._cost as cost_cli
from mastkit.cli.main import app
from mastkit.store import Store
from mastkit.testing import FakeLLMServer
from mastkit.traces.ops import dump_trace
from mastkit.verify.llm import LLMScorer, PairwiseJudge

runner = CliRunner()
REPLY = json.dumps({"reasoning": "fine", "success_probability": 0.6})
PAIR = json.dumps({"reasoning": "A did it", "better": "A", "confidence": 0.7})
PRICE = ["--price-in", "2.5", "--price-out", "10"]


def _file(tmp_path: Path) -> Path:
    f = tmp_path / "r.jsonl"
    traces = [rollout(f"t{i}", j, success=(i + j) % 2 == 0, turns=1 + j) for i in range(3) for j in range(2)]
    f.write_bytes(b"".join(dump_trace(t) for t in traces))
    return f


def _args(srv: FakeLLMServer, f: Path, db: Path, *extra: str) -> list[str]:
    return [
        "verify",
        str(f),
        "--scorer",
        "llm_plain",
        "--model",
        "openai:x",
        "--base-url",
        srv.openai_base_url,
        "--db",
        str(db),
        *PRICE,
        *extra,
    ]


def test_above_the_threshold_nothing_is_sent_without_yes(tmp_path: Path) -> None:
    f, db = _file(tmp_path), tmp_path / "m.db"
    with FakeLLMServer(handler=lambda body: REPLY) as srv:
        refused = runner.invoke(app, _args(srv, f, db, "--confirm-above", "0.0001"))
        assert refused.exit_code == 2, refused.output
        assert srv.request_count == 0
        flat = " ".join(refused.output.split())
        assert "estimate: ~6 calls for 6 trace(s)" in flat and "pass --yes" in flat
        ok = runner.invoke(app, _args(srv, f, db, "--confirm-above", "0.0001", "--yes"))
        assert ok.exit_code == 0, ok.output
        assert srv.request_count == 6
        # a rerun on the same store is answered by the cache: nothing to estimate, nothing to confirm
        again = runner.invoke(app, _args(srv, f, db, "--confirm-above", "0.0001"))
        assert again.exit_code == 0, again.output
        assert srv.request_count == 6
        assert "~0 calls" in again.output and "6 trace(s) already in the store" in " ".join(
            again.output.split()
        )


def test_a_user_who_declines_at_the_prompt_sends_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    f, db = _file(tmp_path), tmp_path / "m.db"
    monkeypatch.setattr(
        cost_cli, "sys", types.SimpleNamespace(stdin=types.SimpleNamespace(isatty=lambda: True))
    )
    with FakeLLMServer(handler=lambda body: REPLY) as srv:
        declined = runner.invoke(app, _args(srv, f, db, "--confirm-above", "0.0001", "--eval"), input="n\n")
        assert declined.exit_code == 2, declined.output
        assert "run anyway?" in declined.output and "nothing was sent" in declined.output
        assert srv.request_count == 0
        accepted = runner.invoke(app, _args(srv, f, db, "--confirm-above", "0.0001", "--eval"), input="y\n")
        assert accepted.exit_code == 0, accepted.output
        assert srv.request_count == 6


def test_below_the_threshold_it_runs_after_printing_the_estimate(tmp_path: Path) -> None:
    f, db = _file(tmp_path), tmp_path / "m.db"
    with FakeLLMServer(handler=lambda body: PAIR if "Run B" in json.dumps(body) else REPLY) as srv:
        res = runner.invoke(app, _args(srv, f, db, "--pairwise", "--json"))
        assert res.exit_code == 0, res.output
        # 6 rollouts + 3 tasks x 2 orders of the finalists
        assert "estimate: ~12 calls" in " ".join(res.stderr.split())
        assert srv.request_count == 12


def test_estimate_measures_the_requests_it_will_send(tmp_path: Path) -> None:
    traces = [rollout("a", i, turns=1 + 3 * i) for i in range(2)]
    with FakeLLMServer(handler=lambda body: REPLY) as srv, Store(tmp_path / "m.db") as store:
        kw: dict[str, Any] = {"base_url": srv.openai_base_url, "api_key": "k", "cache": store}
        s = LLMScorer.from_spec("openai:gpt-4o", **kw)
        est = s.estimate(traces)
        assert (est.calls, est.skipped) == (2, 0) and srv.request_count == 0
        s.assess_many(traces)
        chars = sum(len(m["content"]) for r in srv.chat_requests for m in r.json["messages"])
        assert est.input_tokens == pytest.approx(chars / 4, rel=0.05)
        assert est.usd is not None and est.usd > 0
        assert s.estimate(traces).calls == 0  # now cached
        judge = PairwiseJudge.from_spec("openai:gpt-4o", **kw)
        pair = judge.estimate([traces, traces[:1]])
        assert pair.calls == 2 and srv.request_count == 2
