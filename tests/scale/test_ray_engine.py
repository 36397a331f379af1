"""The Ray engine on a local cluster gives the local engine's results: the same stored verdicts,
call log, failures, stops and resume; the rate limit and the budget hold over all workers.

One local cluster (2 CPUs, no dashboard) for the whole module; skipped when Ray is absent.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ray = pytest.importorskip("ray", reason="the Ray extra is not installed (pip install 'mastkit[ray]')")

from tests.annotate._judgekit import (  # noqa: E402
    CODES,
    EXAMPLES,
    FAST_RETRY,
    reply_json,
    simple_trace,
    trace_id_of,
)
from typer.testing import CliRunner  # noqa: E402

from mastkit.annotate import RunReport, annotate  # noqa: E402
from mastkit.annotate.factory import make_annotator  # noqa: E402
from mastkit.attribute import attribute  # noqa: E402
from mastkit.scale import AnnotateJob, AttributeJob  # noqa: E402
from mastkit.scale.ray_engine import RayEngine  # noqa: E402
from mastkit.store import Store  # noqa: E402
from mastkit.testing import FakeLLMServer, Reply  # noqa: E402
from mastkit.traces.load import load_traces  # noqa: E402
from mastkit.traces.model import Trace  # noqa: E402
from mastkit.traces.ops import to_json  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def cluster() -> Iterator[None]:
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield
    if started:
        ray.shutdown()


def _engine(**kw: Any) -> RayEngine:
    return RayEngine(**{"workers": 1, "batch_size": 4, **kw})


def _traces(n: int) -> list[Trace]:
    return [simple_trace(f"t{i}", [f"Please fix bug {i}.", "Done, I fixed it.", "Great."]) for i in range(n)]


def _reply(payload: Any) -> Reply | str:
    """The model: which modes are present depends on the trace (so traces differ)."""
    tid = trace_id_of(payload) or "t0"
    i = int(tid[1:]) if tid[1:].isdigit() else 0
    return reply_json(present=(CODES[i % len(CODES)],), summary=f"summary of {tid}", success=i % 2 == 0)


def _llm_settings(srv: FakeLLMServer, **kw: Any) -> dict[str, Any]:
    return {
        "model": "openai:x",
        "base_url": srv.openai_base_url,
        "api_key": "test-key",
        "timeout": 10.0,
        "provider_options": {"retry": FAST_RETRY},
        **kw,
    }


def _no_id(text: str | None) -> str:
    """``text`` without the fake server's request ids (a counter over both engines' requests)."""
    return re.sub(r"req_fake_\d+", "req_fake_N", text or "")


def _stored(store: Store) -> dict[str, Any]:
    """Everything a run leaves that must not depend on the engine (times and ids left out)."""
    anns = {a.trace_id: a.model_dump(mode="json", exclude={"created_at"}) for a in store.annotations()}
    return {
        "annotations": anns,
        "verdicts": sorted((tuple(sorted(r.items())) for r in store.verdict_rows()), key=repr),
        "calls": sorted(
            (
                tuple(_no_id(x) if isinstance(x, str) else x for x in r)
                for r in store._query(
                    "SELECT trace_id, config_hash, provider, model, input_tokens, output_tokens, cost_usd,"
                    " status, error, cached FROM calls"
                )
            ),
            key=repr,
        ),
        "responses": sorted(tuple(r) for r in store._query("SELECT request_hash, text FROM responses")),
        "errors": sorted(
            ((e["stage"], e["trace_id"], _no_id(e["reason"]), e["config_hash"]) for e in store.errors()),
            key=repr,
        ),
    }


def _seeded(tmp_path: Path, name: str) -> Store:
    """A store sharing the fence secret of ``seed.db`` (prompts are then the same in both)."""
    seed = tmp_path / "seed.db"
    if not seed.exists():
        with Store(seed) as s:
            s.fence_secret()
    path = tmp_path / name
    path.write_bytes(seed.read_bytes())
    return Store(path)


def _annotate_both(
    tmp_path: Path,
    traces: list[Trace],
    kind: str,
    settings: dict[str, Any],
    in_flight: int | None = None,
    **engine: Any,
) -> tuple[RunReport, RunReport, Store, Store]:
    local, remote = _seeded(tmp_path, "local.db"), _seeded(tmp_path, "ray.db")
    ann = make_annotator(kind, cache=local, **settings)  # type: ignore[arg-type]
    r_local = annotate(traces, ann, store=local)
    with _engine(**engine) as eng:
        proxy = eng.annotator(AnnotateJob(kind, settings), config=ann.config, store=remote)
        r_ray = annotate(traces, proxy, store=remote, concurrency=in_flight or eng.in_flight)
    return r_local, r_ray, local, remote


def test_rule_annotations_match_the_local_engine(tmp_path: Path) -> None:
    traces = [*load_traces(EXAMPLES), *_traces(10)]
    r_local, r_ray, local, remote = _annotate_both(tmp_path, traces, "rules", {})
    assert r_ray.progress.done == r_local.progress.done == len(traces)
    assert _stored(remote) == _stored(local)
    assert len(_stored(remote)["annotations"]) == len(traces)


def test_judge_annotations_calls_and_resume_match_the_local_engine(tmp_path: Path) -> None:
    traces = _traces(12)
    with FakeLLMServer(handler=_reply) as srv:
        r_local, r_ray, local, remote = _annotate_both(tmp_path, traces, "llm", _llm_settings(srv))
        assert len(srv.chat_requests) == 24  # each engine asked once per trace
        assert r_ray.progress.model_calls == r_local.progress.model_calls == 12
        assert r_ray.progress.input_tokens == r_local.progress.input_tokens > 0
        got = _stored(remote)
        assert got == _stored(local)
        assert {a["verdicts"][0]["verdict"] for a in got["annotations"].values()} >= {"present", "absent"}
        # a second Ray run on the same store is answered from it: no request, all cached
        settings = _llm_settings(srv)
        ann = make_annotator("llm", cache=remote, **settings)
        with _engine() as eng:
            proxy = eng.annotator(AnnotateJob("llm", settings), config=ann.config, store=remote)
            again = annotate(traces, proxy, store=remote, concurrency=eng.in_flight)
        assert (again.progress.cached, again.progress.done) == (12, 0)
        assert len(srv.chat_requests) == 24


def test_failures_are_recorded_as_locally_and_retried_next_run(tmp_path: Path) -> None:
    broken = {"t3", "t7"}

    def reply(payload: Any) -> Reply | str:
        return (
            Reply.error(400, "this trace breaks the model")
            if trace_id_of(payload) in broken
            else _reply(payload)
        )

    traces = _traces(10)
    with FakeLLMServer(handler=reply) as srv:
        r_local, r_ray, local, remote = _annotate_both(tmp_path, traces, "llm", _llm_settings(srv))
        assert (
            sorted(o.trace_id for o in r_ray.failed)
            == sorted(o.trace_id for o in r_local.failed)
            == sorted(broken)
        )
        assert [_no_id(o.reason) for o in r_ray.failed] == [_no_id(o.reason) for o in r_local.failed]
        assert "this trace breaks the model" in str(r_ray.failed[0].reason)
        assert _stored(remote) == _stored(local)
        broken.clear()  # the model is fixed: the next run retries only the failed traces
        settings = _llm_settings(srv)
        ann = make_annotator("llm", cache=remote, **settings)
        with _engine() as eng:
            proxy = eng.annotator(AnnotateJob("llm", settings), config=ann.config, store=remote)
            again = annotate(traces, proxy, store=remote, concurrency=eng.in_flight)
    assert (again.progress.done, again.progress.cached, again.progress.failed) == (2, 8, 0)
    assert again.complete


def test_a_rejected_key_stops_the_run_as_locally(tmp_path: Path) -> None:
    traces = _traces(40)
    rejected = dataclasses.replace(Reply.error(401, "invalid api key"), delay_s=0.05)
    with FakeLLMServer(handler=lambda _: rejected) as srv:
        # all 40 traces sent at once: 20 batches of 2 queued on one worker
        r_local, r_ray, local, remote = _annotate_both(
            tmp_path, traces, "llm", _llm_settings(srv), in_flight=40, batch_size=2
        )
        n_requests = len(srv.chat_requests)
    for r in (r_local, r_ray):
        assert r.stop is not None and r.stop.kind == "auth"
        assert r.progress.failed == 0 and r.progress.done == 0
        assert r.progress.not_done == 40
    assert n_requests < 8 + 20  # local: at most its 8 in flight; Ray: the queued batches were dropped
    assert [e[:2] for e in _stored(remote)["errors"]] == [e[:2] for e in _stored(local)["errors"]]


def test_the_rate_limit_holds_over_all_workers(tmp_path: Path) -> None:
    traces = _traces(8)
    with FakeLLMServer(handler=_reply) as srv:
        settings = _llm_settings(srv)
        store = Store(tmp_path / "m.db")
        ann = make_annotator("llm", cache=store, **settings)
        with _engine(rpm=600, batch_size=2, workers=2) as eng:  # 0.1 s apart over the cluster
            proxy = eng.annotator(AnnotateJob("llm", settings), config=ann.config, store=store)
            report = annotate(traces, proxy, store=store, concurrency=eng.in_flight)
        arrivals = sorted(r.arrived_at for r in srv.chat_requests)
    assert report.complete
    assert len(arrivals) == 8
    # 8 requests booked 0.1 s apart; a send can be late after its slot (a new worker's first
    # request opens its client), never early. Without the shared limit all 8 come within ~0.1 s.
    assert arrivals[-1] - arrivals[0] >= 0.5, arrivals
    busiest = max(sum(1 for b in arrivals if a <= b < a + 0.25) for a in arrivals)
    assert busiest <= 4, arrivals


def test_the_budget_is_shared_by_the_workers(tmp_path: Path) -> None:
    traces = _traces(30)
    with FakeLLMServer(handler=_reply) as srv:
        settings = _llm_settings(srv, price_in=1000.0, price_out=1000.0)  # USD per million tokens
        store = Store(tmp_path / "m.db")
        ann = make_annotator("llm", cache=store, budget_usd=20.0, **settings)
        budget = getattr(ann, "budget", None)
        assert budget is not None
        with _engine(concurrency=2, batch_size=2, workers=2) as eng:
            proxy = eng.annotator(AnnotateJob("llm", settings), config=ann.config, store=store, budget=budget)
            report = annotate(traces, proxy, store=store, concurrency=eng.in_flight)
    assert report.stop is not None and report.stop.kind == "budget"
    assert 0 < report.progress.done < 30 and report.progress.not_done > 0
    assert report.progress.cost_usd <= 20.0  # each worker alone would have spent up to the cap


def test_attributions_match_the_local_engine(tmp_path: Path) -> None:
    from tests.attribute.test_llm_attribution import Oracle, make_trace

    traces = [make_trace(f"t{i}") for i in range(6)]
    oracle = Oracle({f"t{i}": 1 + i % 5 for i in range(6)})
    examples = list(load_traces(EXAMPLES))
    with FakeLLMServer(handler=oracle) as srv:
        settings = {
            "base_url": srv.openai_base_url,
            "api_key": "test",
            "provider_options": {"retry": FAST_RETRY},
        }
        from mastkit.attribute import LLMAttributor

        for method, batch in (("rules", examples), ("all-at-once", traces)):
            local, remote = _seeded(tmp_path, f"l-{method}.db"), _seeded(tmp_path, f"r-{method}.db")
            judge = (
                LLMAttributor.from_spec("openai:x", cache=local, **settings) if method != "rules" else None
            )
            r_local = attribute(batch, method, store=local, judge=judge)
            with _engine() as eng:
                proxy = eng.attributor(
                    AttributeJob(method, False, "openai:x" if judge else None, settings if judge else {}),
                    store=remote,
                    version=getattr(judge, "version", "llm"),
                    model_id=getattr(judge, "model_id", None),
                )
                r_ray = attribute(batch, method, store=remote, judge=proxy)
            assert r_ray.method_hash == r_local.method_hash
            assert r_ray.by_hash == r_local.by_hash and len(r_ray.by_hash) > 0
            assert r_ray.skipped_successful == r_local.skipped_successful
            assert _stored(remote)["calls"] == _stored(local)["calls"]


def test_the_cli_gives_the_same_results_and_exit_codes(tmp_path: Path) -> None:
    from mastkit.cli.main import app

    src = tmp_path / "traces"
    src.mkdir()
    for t in _traces(6):
        (src / f"{t.trace_id}.json").write_bytes(to_json(t))

    def reply(payload: Any) -> Reply | str:
        return Reply.error(400, "no") if trace_id_of(payload) == "t2" else _reply(payload)

    with FakeLLMServer(handler=reply) as srv:
        stores = {}
        for engine in ("local", "ray"):
            db = tmp_path / f"{engine}.db"
            _seeded(tmp_path, db.name).close()
            args = ["annotate", str(src), "--annotator", "llm", "--model", "openai:x", "--base-url",
                    srv.openai_base_url, "--db", str(db), "--engine", engine, "--yes", "--max-attempts", "1"]  # fmt: skip
            result = CliRunner(env={"MASTKIT_API_KEY": "k"}).invoke(app, args)
            assert result.exit_code == 1, result.output  # one trace failed
            assert "5 annotated" in result.output and "1 failed" in result.output
            stores[engine] = Store(db)
            rules = CliRunner().invoke(app, ["attribute", str(src), "--db", str(db), "--engine", engine])
            assert rules.exit_code == 0, rules.output
    assert _stored(stores["ray"]) == _stored(stores["local"])
    assert stores["ray"].attributions() == stores["local"].attributions()
