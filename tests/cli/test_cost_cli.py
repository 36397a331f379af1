"""The CLI's cost controls: price required for budgets, run vs total caps, estimate and confirmation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from mastkit.cli._cost import confirm_cost
from mastkit.cli.main import app
from mastkit.llm.estimate import Estimate
from mastkit.providers.pricing import PriceInfo
from mastkit.store import Store
from mastkit.taxonomy import load_taxonomy
from mastkit.testing import FakeLLMServer, Reply, Usage
from mastkit.traces.model import Event, Trace

CODES = [m.code for m in load_taxonomy("mast").modes]
REPLY = json.dumps(
    {
        "summary": "s",
        "task_success": False,
        "modes": [
            {"code": c, "verdict": "absent", "confidence": 0.9, "evidence": [], "rationale": "r"}
            for c in CODES
        ],
        "responsible_agent": None,
        "responsible_step": None,
    }
)
USAGE = Usage(100_000, 1_000)  # at $1/$2 per M: $0.102 per call


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("MASTKIT_BUDGET", "MASTKIT_MODEL", "MASTKIT_BASE_URL", "MASTKIT_PRICES", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")


def _traces(path: Path, *ids: str) -> Path:
    lines = []
    for tid in ids:
        events = [
            Event(seq=0, kind="message", actor="user", role="user", content=f"Please fix bug {tid}."),
            Event(seq=1, kind="message", actor="coder", role="assistant", content="Done, fixed."),
        ]
        lines.append(Trace(trace_id=tid, source_format="test", events=events).model_dump_json())
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _annotate(
    srv: FakeLLMServer, src: Path, db: Path, *extra: str, model: str = "openai:mystery"
) -> list[str]:
    return ["annotate", str(src), "--annotator", "llm", "--model", model, "--base-url", srv.openai_base_url,
            "--db", str(db), *extra]  # fmt: skip


def test_budget_without_price_exits_2_before_any_call(tmp_path: Path) -> None:
    src = _traces(tmp_path / "t.jsonl", "a")
    with FakeLLMServer(default=Reply(REPLY)) as srv:
        res = CliRunner().invoke(app, _annotate(srv, src, tmp_path / "m.db", "--budget", "0.0001"))
        assert srv.request_count == 0
    assert res.exit_code == 2, res.output
    assert "no known price for openai:mystery" in res.output
    assert "Traceback" not in res.output


def test_attribute_budget_without_price_exits_2(tmp_path: Path) -> None:
    src = _traces(tmp_path / "t.jsonl", "a")
    with FakeLLMServer(default=Reply("{}")) as srv:
        args = ["attribute", str(src), "--method", "all-at-once", "--model", "openai:mystery", "--base-url",
                srv.openai_base_url, "--db", str(tmp_path / "m.db"), "--budget", "1"]  # fmt: skip
        res = CliRunner().invoke(app, args)
        assert srv.request_count == 0
    assert res.exit_code == 2 and "no known price" in res.output, res.output


def test_assumed_price_runs_and_says_upper_bound(tmp_path: Path) -> None:
    src = _traces(tmp_path / "t.jsonl", "a")
    with FakeLLMServer(default=Reply(REPLY, usage=USAGE)) as srv:
        args = _annotate(srv, src, tmp_path / "m.db", "--budget", "5", "--assume-price", "3")
        res = CliRunner().invoke(app, args)
        assert srv.request_count == 1
    assert res.exit_code == 0, res.output
    assert "cost is an upper bound: price of openai:mystery unknown" in res.output
    with Store(tmp_path / "m.db") as store:  # 101,000 tokens at $3 per M
        assert store.call_stats()["cost_usd"] == pytest.approx(0.303)


def test_budget_total_stops_a_second_run(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    price = ("--price-in", "1", "--price-out", "2")
    second_traces = _traces(tmp_path / "2.jsonl", "c", "d")
    with FakeLLMServer(default=Reply(REPLY, usage=USAGE)) as srv:
        first = CliRunner().invoke(
            app, _annotate(srv, _traces(tmp_path / "1.jsonl", "a", "b"), db, *price, "--budget-total", "1")
        )
        assert first.exit_code == 0, first.output
        assert srv.request_count == 2  # $0.204 spent on this store
        second = CliRunner().invoke(app, _annotate(srv, second_traces, db, *price, "--budget-total", "0.2"))
        assert srv.request_count == 2, second.output  # nothing sent: the store already spent the total
        # a per-run cap of the same size does not count earlier runs: this run goes through
        third = CliRunner().invoke(app, _annotate(srv, second_traces, db, *price, "--budget", "0.25"))
        assert srv.request_count == 4, third.output
    flat = " ".join(second.output.split())
    assert "total budget: $0.2040 of $0.2000 already spent" in flat
    assert "total budget of $0.2000 reached" in flat, flat
    assert "2 trace(s) not annotated" in flat


def test_estimate_is_printed_and_confirmation_needs_yes(tmp_path: Path) -> None:
    src = _traces(tmp_path / "t.jsonl", "a", "b")
    db = tmp_path / "m.db"
    with FakeLLMServer(default=Reply(REPLY)) as srv:
        refused = CliRunner().invoke(
            app, _annotate(srv, src, db, "--confirm-above", "0.001", model="openai:gpt-4o")
        )
        assert srv.request_count == 0
        assert refused.exit_code == 2, refused.output
        assert "pass --yes" in refused.output
        assert (
            "~2 calls for 2 trace(s)" in refused.output
            and "price: gpt-4o $2.50/$10.00 per M" in refused.output
        )
        ok = CliRunner().invoke(
            app, _annotate(srv, src, db, "--confirm-above", "0.001", "--yes", model="openai:gpt-4o")
        )
        assert ok.exit_code == 0, ok.output
        assert srv.request_count == 2
        # a rerun is answered by the store: nothing to estimate, no confirmation needed
        again = CliRunner().invoke(
            app, _annotate(srv, src, db, "--confirm-above", "0.001", model="openai:gpt-4o")
        )
        assert again.exit_code == 0, again.output
        assert "2 trace(s) already in the store" in again.output
    # under the default threshold ($1) the same run needs no --yes
    with FakeLLMServer(default=Reply(REPLY)) as srv:
        res = CliRunner().invoke(app, _annotate(srv, src, tmp_path / "n.db", model="openai:gpt-4o"))
        assert res.exit_code == 0 and srv.request_count == 2, res.output


def test_confirm_cost_on_a_terminal_asks() -> None:
    est = Estimate(calls=10, input_tokens=1_000_000, output_tokens=0, usd=2.5, traces=3)
    price = PriceInfo("openai:gpt-4o", "table", 2.5, 10.0)
    asked: list[str] = []

    def yes(q: str) -> bool:
        asked.append(q)
        return True

    confirm_cost(est, price, confirm_above=1.0, yes=False, interactive=True, ask=yes)
    assert asked and "$2.5000" in asked[0]
    with pytest.raises(typer.Exit) as info:
        confirm_cost(est, price, confirm_above=1.0, yes=False, interactive=True, ask=lambda q: False)
    assert info.value.exit_code == 2
    asked.clear()
    confirm_cost(est, price, confirm_above=5.0, yes=False, interactive=True, ask=yes)  # below: no question
    confirm_cost(est, price, confirm_above=1.0, yes=True, interactive=True, ask=yes)  # --yes: no question
    assert asked == []
