"""OpenHands V0 trajectories and evaluation output records."""

from __future__ import annotations

import builtins
import io
import json
import os
import pickle
import random
import shutil
import tempfile
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import assert_loads_cleanly, shared_path
from mastkit.errors import TraceLoadError
from mastkit.traces import Source, Trace, get_importer, iter_load, load_traces

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "openhands_v0"


def _check(t: Trace) -> None:
    assert t.source_format == "openhands_v0"
    assert Trace.model_validate_json(t.model_dump_json()) == t


def _one(path: Path) -> Trace:
    traces = list(load_traces(path))
    assert len(traces) == 1
    _check(traces[0])
    return traces[0]


def test_shared_sample_counts() -> None:
    t = _one(shared_path("trace_samples", "openhands_v0_trajectory", "basic_gui_mode.json"))
    raws = [e.raw for e in t.events if e.raw is not None]
    assert len(raws) == 18  # every event kept once
    assert sum("action" in r for r in raws) == 7 and sum("observation" in r for r in raws) == 11
    assert Counter(r["source"] for r in raws).keys() == {"agent", "user", "environment"}
    calls = [e for e in t.events if e.tool_call is not None]
    assert Counter(e.extra.get("action", e.tool_call.name if e.tool_call else "") for e in calls) == {
        "run": 2,
        "edit": 2,
    }
    assert Counter(e.tool_call.name for e in calls if e.tool_call) == {
        "execute_bash": 2,
        "str_replace_editor": 2,
    }
    pairs = list(t.tool_calls())
    assert len(pairs) == 4 and all(r is not None for _c, r in pairs)
    for c, r in pairs:
        assert (
            r is not None and c.tool_call and r.tool_result and r.tool_result.call_id == c.tool_call.call_id
        )
    # exit code -1: the http.server command timed out
    assert [r.tool_result.exit_code for _c, r in pairs if r and r.tool_result] == [0, None, None, -1]
    assert not any(e.kind == "termination" for e in t.events)  # no finish action
    assert t.termination is not None
    assert (t.termination.native, t.termination.reason) == ("awaiting_user_input", "awaiting_user_input")
    assert t.termination.at_seq == len(t.events) - 1
    assert t.model == "claude-3-5-sonnet-20241022"
    assert t.task and t.task.startswith("I want to create a VueJS app")
    # usage once per model response (4 tool-call responses + final message has none)
    assert sum(1 for e in t.events if e.usage is not None) == 4
    assert t.events[0].started_at is not None and t.started_at is not None
    obs = [e for e in t.events if e.parent_id is not None]
    assert all(e.raw and "cause" in e.raw for e in obs)


def test_finish_and_cumulative_metrics() -> None:
    t = _one(FIX / "finish_with_metrics.json")
    assert t.termination is not None and (t.termination.reason, t.termination.by) == ("final_answer", "agent")
    end = t.termination.at_seq
    assert end is not None and t.events[end].kind == "termination"
    assert t.events[end].raw is not None and t.events[end].raw["action"] == "finish"
    assert t.outcome is not None and t.outcome.final_output == "README.md has 42 lines."
    usages = [e.usage for e in t.events if e.usage is not None]
    # llm_metrics are cumulative: per-call deltas
    assert [(u.input_tokens, u.output_tokens) for u in usages] == [(1000, 50), (1200, 30)]
    assert usages[1].cost_usd == pytest.approx(0.015)
    err = next(e for e in t.events if e.tool_result is not None and e.tool_result.is_error)
    assert err.tool_result is not None and err.tool_result.call_id == "toolu_2"
    call = next(e for e in t.events if e.tool_call is not None)
    assert call.tool_call is not None and call.tool_call.arguments == {"command": "wc -l README.md"}


def test_output_jsonl_with_bad_line() -> None:
    results = list(iter_load(FIX / "output.jsonl"))
    assert [type(r).__name__ for r in results] == ["Trace", "TraceLoadError", "Trace"]
    bad = results[1]
    assert isinstance(bad, TraceLoadError) and bad.line == 2
    first = results[0]
    assert isinstance(first, Trace)
    _check(first)
    assert first.trace_id == "repo__repo-1" and first.task == "Fix the bug"
    assert first.termination is not None and first.termination.by == "error"
    assert [e.subtype for e in first.events if e.kind == "system"] == [
        "context_compaction",
        "agent_state_changed",
    ]
    assert first.outcome is not None and first.outcome.metrics["test_result"] == {"git_patch": "diff"}
    assert (
        first.raw is not None
        and "history" not in first.raw
        and first.raw["metrics"] == {"accumulated_cost": 0.1}
    )
    assert isinstance(results[2], Trace) and results[2].trace_id == "repo__repo-2"


def test_sniff() -> None:
    imp = get_importer("openhands_v0")
    assert imp.sniff(Source(FIX / "finish_with_metrics.json")) >= 0.9
    assert imp.sniff(Source(FIX / "output.jsonl")) >= 0.8
    assert imp.sniff(Source(FIX.parent / "mini_swe_agent" / "legacy_list.traj.json")) == 0


def test_eval_output_with_action_observation_pairs() -> None:
    # OpenHands <= 0.9 evaluation outputs: `history` is a list of [action, observation] pairs
    path = FIX / "output_pairs.jsonl"
    assert get_importer("openhands_v0").sniff(Source(path)) >= 0.85
    (t,) = load_traces(path)
    _check(t)
    assert t.trace_id == "demo__demo-3" and t.task == "Fix the bug in a.py"
    assert sum(1 for e in t.events if e.raw is not None) == 8  # every event of every pair kept once
    pairs = [(c.seq, r.seq if r else None) for c, r in t.tool_calls()]
    assert pairs == [(3, 4), (5, 6)]
    codes = [e.tool_result.exit_code for e in t.events if e.tool_result is not None]
    assert codes == [0, 1]
    assert t.events[3].source is not None and t.events[3].source.pointer == "/history/1/0"
    assert t.events[4].source is not None and t.events[4].source.pointer == "/history/1/1"
    assert t.termination is not None and t.termination.reason == "final_answer"
    # model and whole-run cost from the record's metadata / metrics
    assert t.model == "gpt-4o-2024-05-13"
    assert t.usage is not None and t.usage.cost_usd == 0.12


def test_event_with_non_text_source_does_not_fail_the_file(tmp_path: Path) -> None:
    # `source` a list used to raise TypeError (unhashable) and lose the whole trajectory
    events = json.loads((FIX / "finish_with_metrics.json").read_text())
    events[0]["source"] = ["user"]
    path = tmp_path / "traj.json"
    path.write_text(json.dumps(events))
    (t,) = list(get_importer("openhands_v0").load(Source(path)))
    assert isinstance(t, Trace)
    assert sum(1 for e in t.events if e.raw is not None) == len(events)


# -- conversation folders of the V0 file store (sessions/<sid>/events/<id>.json) -----------------

SESSIONS = FIX / "sessions"
SID = "4c8e1f0a9b2d4e67a1c35f7d2b9e8a06"  # fix calc.py: 15 events, metadata.json, finish
SID_SHORT = "9d27be5c30f14a8e86b1c4f05e7a2d93"  # question and answer: 5 events, no metadata.json
CONV = SESSIONS / SID


def _events_by_id(conv: Path) -> list[dict[str, Any]]:
    files = sorted((conv / "events").glob("*.json"), key=lambda p: int(p.stem))
    return [json.loads(p.read_text()) for p in files]


def _copy(tmp_path: Path, sid: str = SID) -> Path:
    dst = tmp_path / "sessions" / sid
    shutil.copytree(SESSIONS / sid, dst)
    return dst


def _split(results: list[Trace | TraceLoadError]) -> tuple[list[Trace], list[TraceLoadError]]:
    traces = [r for r in results if isinstance(r, Trace)]
    errors = [r for r in results if isinstance(r, TraceLoadError)]
    assert not any(e.internal for e in errors), errors
    return traces, errors


def _no_source(t: Trace) -> list[Any]:
    return [e.replace(source=None) for e in t.events]


def test_conversation_folder_counts_and_order() -> None:
    t = _one(CONV)
    assert t.trace_id == SID
    ids = [e.raw["id"] for e in t.events if e.raw is not None]
    assert ids == list(range(15))  # every event once, by numeric id: 10.json after 9.json, not after 1.json
    for e in t.events:
        assert e.source is not None and e.source.path is not None
        assert Path(e.source.path).parent == CONV / "events" and e.source.pointer is None
    assert t.kind_counts() == Counter(
        {"system": 5, "message": 1, "reasoning": 4, "tool_call": 4, "tool_result": 4, "termination": 1}
    )
    assert [e.subtype for e in t.events if e.kind == "system"] == [
        "system", "recall", "agent_state_changed", "recall", "agent_state_changed",
    ]  # fmt: skip
    pairs = list(t.tool_calls())
    assert [(c.tool_call.name, r.tool_result.exit_code if r and r.tool_result else "none")
            for c, r in pairs if c.tool_call] == [
        ("execute_bash", 0), ("execute_bash", 1), ("str_replace_editor", None), ("execute_bash", 0),
    ]  # fmt: skip
    edit = pairs[2][0].tool_call
    assert edit is not None and edit.arguments == {
        "command": "str_replace", "path": "/workspace/calc.py", "old_str": "    return a - b",
        "new_str": "    return a + b",
    }  # fmt: skip
    assert [r.tool_result.is_error for _c, r in pairs if r and r.tool_result] == [False, True, None, False]
    assert t.task == "The tests in tests/test_calc.py fail. Fix add() in calc.py so that they pass."
    assert t.termination is not None
    assert (t.termination.reason, t.termination.by, t.termination.native) == (
        "final_answer",
        "agent",
        "finish",
    )
    end = t.termination.at_seq
    assert end is not None and t.events[end].kind == "termination"
    assert t.events[end].raw is not None and t.events[end].raw["action"] == "finish"
    assert t.events[end].raw["id"] == 13  # 13.json, not the last file (14.json)
    assert (
        t.outcome is not None and t.outcome.final_output and t.outcome.final_output.startswith("Fixed add()")
    )
    # one usage per model response (5 responses), from the response's own usage
    usages = [e.usage for e in t.events if e.usage is not None]
    assert [(u.input_tokens, u.output_tokens) for u in usages] == [
        (6120, 96), (6388, 88), (6782, 131), (7005, 79), (7142, 64),
    ]  # fmt: skip
    assert t.model == "claude-sonnet-4-20250514"  # the responses' model, before metadata's llm_model


def test_folder_gives_the_trajectory_events(tmp_path: Path) -> None:
    # the same events exported as a trajectory list (what /api/conversations/<id>/trajectory returns)
    for sid in (SID, SID_SHORT):
        traj = tmp_path / f"{sid}.json"
        traj.write_text(json.dumps(_events_by_id(SESSIONS / sid)))
        from_list, from_folder = _one(traj), _one(SESSIONS / sid)
        assert len(from_folder.events) == len(from_list.events)
        assert _no_source(from_folder) == _no_source(from_list)
        assert from_folder.termination == from_list.termination
        assert (from_folder.task, from_folder.model) == (from_list.task, from_list.model)
        assert [e.source.pointer for e in from_list.events if e.source and e.raw] == [
            f"/{i}" for i in range(len(_events_by_id(SESSIONS / sid)))
        ]


def test_events_folder_alone_is_the_same_trace() -> None:
    whole, events_only = _one(CONV), _one(CONV / "events")
    assert events_only.trace_id == SID  # metadata.json is read from the folder above
    assert events_only.events == whole.events and events_only.usage == whole.usage


def test_metadata_mapping() -> None:
    t = _one(CONV)
    meta = json.loads((CONV / "metadata.json").read_text())
    assert t.raw == {"metadata": meta}
    assert t.started_at == datetime(2025, 5, 12, 9, 13, 1, 884512, tzinfo=UTC)
    assert t.ended_at == datetime(2025, 5, 12, 9, 13, 24, 530917, tzinfo=UTC)
    assert t.usage is not None
    assert (t.usage.input_tokens, t.usage.output_tokens, t.usage.total_tokens) == (33437, 458, 33895)
    assert t.usage.cost_usd == pytest.approx(0.04782)
    assert t.extra == {"title": "Fix add() in calc.py", "trigger": "gui"}
    assert t.source_paths[:2] == [str(CONV), str(CONV / "metadata.json")]
    assert len(t.source_paths) == 2 + 15


def test_no_metadata_and_metadata_model_fallback(tmp_path: Path) -> None:
    t = _one(SESSIONS / SID_SHORT)
    assert t.trace_id == SID_SHORT and t.raw is None and t.usage is None and t.model is None
    assert t.started_at == datetime(2025, 5, 13, 16, 40, 11, 203117)  # the first event (no zone)
    assert t.termination is not None and t.termination.native == "awaiting_user_input"
    conv = _copy(tmp_path, SID_SHORT)
    (conv / "metadata.json").write_text(json.dumps({
        "conversation_id": "other-id", "selected_repository": "octo/cli", "created_at": "2025-05-13T14:40:10Z",
        "llm_model": "openai/gpt-4.1", "accumulated_cost": 0.0, "prompt_tokens": 0, "completion_tokens": 0,
        "total_tokens": 0,
    }))  # fmt: skip
    t = _one(conv)
    assert t.trace_id == "other-id" and t.model == "openai/gpt-4.1"
    assert t.usage is None  # counters never updated (all 0)
    assert t.extra == {"selected_repository": "octo/cli"}
    # no last_updated_at: the events' end is local time without a zone, not mixed with UTC
    assert t.started_at == datetime(2025, 5, 13, 14, 40, 10, tzinfo=UTC) and t.ended_at is None


def test_bad_event_files_are_reported_and_the_rest_loads(tmp_path: Path) -> None:
    conv = _copy(tmp_path)
    events = conv / "events"
    (events / "7.json").write_text((events / "7.json").read_text()[:200])  # cut off
    (events / "3.json").write_text("[1, 2]")
    (events / "11.json").write_text('{"id": 11, "note": "no action"}')
    traces, errors = _split(list(iter_load(conv)))
    assert sorted(Path(e.path).name for e in errors) == ["11.json", "3.json", "7.json"]
    by_name = {Path(e.path).name: e for e in errors}
    assert "invalid JSON" in by_name["7.json"].reason and by_name["7.json"].line == 1
    assert "not an OpenHands V0 event" in by_name["3.json"].reason and "list" in by_name["3.json"].reason
    assert "not an OpenHands V0 event" in by_name["11.json"].reason
    (t,) = traces
    _check(t)
    assert [e.raw["id"] for e in t.events if e.raw] == [i for i in range(15) if i not in (3, 7, 11)]
    assert str(events / "7.json") not in t.source_paths
    # the same errors when the folder is met in a walk, and no trace from the files on their own
    results = list(iter_load(tmp_path))
    assert sum(isinstance(r, Trace) for r in results) == 1 and len(results) == 4


def test_first_event_file_bad_still_detected(tmp_path: Path) -> None:
    conv = _copy(tmp_path)
    (conv / "events" / "0.json").write_bytes(b"\x00\x01garbage")
    assert get_importer("openhands_v0").sniff(Source(conv)) >= 0.9
    traces, errors = _split(list(iter_load(tmp_path)))
    assert len(traces) == 1 and [Path(e.path).name for e in errors] == ["0.json"]


def test_empty_events_folder_is_one_error(tmp_path: Path) -> None:
    conv = _copy(tmp_path)
    for f in (conv / "events").iterdir():
        f.unlink()
    results = list(iter_load(conv))
    assert len(results) == 1 and isinstance(results[0], TraceLoadError)
    assert results[0].path == str(conv / "events") and "no <id>.json event files" in results[0].reason
    assert not results[0].internal
    # walking the sessions folder: still that one error (metadata.json is not loaded on its own)
    results = list(iter_load(tmp_path / "sessions"))
    assert len(results) == 1 and isinstance(results[0], TraceLoadError)
    # without metadata.json either: a conversation folder under sessions/ is still recognised
    (conv / "metadata.json").unlink()
    results = list(iter_load(tmp_path / "sessions"))
    assert len(results) == 1 and isinstance(results[0], TraceLoadError)
    assert results[0].path == str(conv / "events")


def test_sessions_folder_one_trace_per_conversation_no_double_loading() -> None:
    traces = list(load_traces(SESSIONS))
    assert sorted(t.trace_id for t in traces) == sorted([SID, SID_SHORT])
    forced = list(load_traces(SESSIONS, format="openhands_v0"))
    assert [t.trace_id for t in forced] == [t.trace_id for t in traces]
    direct = list(get_importer("openhands_v0").load(Source(SESSIONS)))
    assert [t.trace_id for t in direct if isinstance(t, Trace)] == [t.trace_id for t in traces]
    # the whole fixture folder: conversations, trajectory and eval files, each loaded once
    errors: list[TraceLoadError] = []
    walked = list(load_traces(FIX, on_error=errors.append))
    assert len(errors) == 1 and Path(errors[0].path).name == "output.jsonl"  # its known bad line
    # 2 conversations + finish_with_metrics + 2 output.jsonl + output_pairs + resolver_output
    assert len(walked) == 7
    roots = [t.source_paths[0] for t in walked]
    assert len({t.trace_id for t in walked}) == len(walked) and not any("/events/" in r for r in roots)
    event_paths = [e.source.path for t in walked for e in t.events if e.source and e.source.path and e.raw]
    assert len(event_paths) == len(set(event_paths)) == 15 + 5


def _synthetic(conv: Path, n: int) -> list[dict[str, Any]]:
    (conv / "events").mkdir(parents=True)
    events: list[dict[str, Any]] = []
    for i in range(n):
        src = "user" if i % 2 == 0 else "agent"
        text = f"{src} turn {i}"
        e = {"id": i, "timestamp": f"2025-05-14T10:00:{i:02d}.000000", "source": src, "message": text,
             "action": "message", "args": {"content": text, "image_urls": [], "wait_for_response": src == "agent"}}  # fmt: skip
        (conv / "events" / f"{i}.json").write_text(json.dumps(e))
        events.append(e)
    return events


def test_cache_pages_never_duplicate_and_fill_missing_ids(tmp_path: Path) -> None:
    conv = tmp_path / "sessions" / "c0ffee"
    events = _synthetic(conv, 27)
    full = _one(conv)
    (conv / "event_cache").mkdir()
    (conv / "event_cache" / "0-25.json").write_text(json.dumps(events[:25]))  # as EventStream writes it
    t = _one(conv)
    assert [e.raw["id"] for e in t.events if e.raw] == list(range(27))  # not 52
    assert t.events == full.events and not any("event_cache" in p for p in t.source_paths)
    # a lost file and a broken one: their copies in the page are used, the broken file reported
    (conv / "events" / "3.json").unlink()
    (conv / "events" / "4.json").write_text("{")
    traces, errors = _split(list(iter_load(conv)))
    (t,) = traces
    assert [e.raw["id"] for e in t.events if e.raw] == list(range(27))
    assert _no_source(t) == _no_source(full)
    page = str(conv / "event_cache" / "0-25.json")
    assert [(e.source.path, e.source.pointer) for e in t.events[3:5] if e.source] == [
        (page, "/3"),
        (page, "/4"),
    ]
    assert page in t.source_paths
    assert [Path(e.path).name for e in errors] == ["4.json"] and "event_cache/0-25.json" in errors[0].reason
    # the page is not loaded on its own in a walk (it would read as a trajectory list)
    traces, errors = _split(list(iter_load(tmp_path)))
    assert len(traces) == 1 and len(errors) == 1
    # every single file lost, the page left, in a folder no longer under sessions/: recognised by
    # the page and read from it alone
    kept = tmp_path / "backup" / "c0ffee"
    shutil.copytree(conv / "event_cache", kept / "event_cache")
    (kept / "events").mkdir()
    assert get_importer("openhands_v0").sniff(Source(kept)) == 0.5
    traces, errors = _split(list(iter_load(kept)))
    (t,) = traces
    assert not errors and [e.raw["id"] for e in t.events if e.raw] == list(range(25))


def test_pickles_and_settings_are_never_opened(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    conv = _copy(tmp_path)
    (conv / "agent_state.pkl").write_bytes(b"\x80\x04\x95 not for reading")
    (conv / "conversation_stats.pkl").write_bytes(b"\x80\x04\x95 not for reading")
    (conv / "init.json").write_text('{"llm_api_key": "**********"}')
    opened: list[str] = []
    real_open, real_os_open = builtins.open, os.open

    def spy(file: Any, *args: Any, **kwargs: Any) -> Any:
        opened.append(str(file))
        return real_open(file, *args, **kwargs)

    def os_spy(file: Any, *args: Any, **kwargs: Any) -> Any:  # file heads are read with os.open
        opened.append(str(file))
        return real_os_open(file, *args, **kwargs)

    def refuse(*_args: Any, **_kwargs: Any) -> Any:
        raise AssertionError("a pickle was loaded")

    monkeypatch.setattr(builtins, "open", spy)
    monkeypatch.setattr(io, "open", spy)  # what Path.read_text / read_bytes / open call
    monkeypatch.setattr(os, "open", os_spy)
    monkeypatch.setattr(pickle, "load", refuse)
    monkeypatch.setattr(pickle, "loads", refuse)
    traces, errors = _split(list(iter_load(tmp_path)))
    assert len(traces) == 1 and not errors
    assert opened and not any(p.endswith((".pkl", "init.json")) for p in opened)
    raw = traces[0].raw
    assert raw is not None and raw["files_not_read"] == [
        "agent_state.pkl",
        "conversation_stats.pkl",
        "init.json",
    ]


def test_folder_sniff_by_content(tmp_path: Path) -> None:
    imp = get_importer("openhands_v0")
    assert imp.sniff(Source(CONV)) >= 0.9 and imp.sniff(Source(CONV / "events")) >= 0.9
    assert imp.sniff(Source(SESSIONS)) == 0  # the walker goes down to each conversation
    assert imp.sniff(Source(FIX.parent / "openhands_v1" / "conv_finish")) == 0
    assert imp.sniff(Source(FIX.parent / "openhands_v1" / "conv_finish" / "events")) == 0
    v1 = get_importer("openhands_v1")
    assert v1.sniff(Source(CONV)) == 0 and v1.sniff(Source(CONV / "events")) == 0
    # numbered files that are whole trajectories stay files of their own
    trajs = tmp_path / "trajs"
    trajs.mkdir()
    for i in range(2):
        (trajs / f"{i}.json").write_text(json.dumps(_events_by_id(SESSIONS / SID_SHORT)))
    assert imp.sniff(Source(trajs)) == 0
    assert len(list(load_traces(trajs))) == 2
    # a conversations/<id>/events/ folder of another tool, beside a trace of its own: not claimed
    # by where it sits (it was, and the trace beside it was never loaded)
    other = tmp_path / "conversations" / "abc"
    (other / "events").mkdir(parents=True)
    (other / "events" / "stream.ndjson").write_text('{"type": "x"}\n')
    (other / "chat.json").write_text(json.dumps({"messages": [{"role": "user", "content": "hi"}]}))
    assert imp.sniff(Source(other)) == 0
    assert [t.source_format for t in load_traces(other, on_error=lambda e: None)] == ["chat_messages"]
    for i in range(2):  # numbered files that are not V0 events either
        (other / "events" / f"{i}.json").write_text(json.dumps({"history": [], "question": "q"}))
    assert imp.sniff(Source(other)) == 0
    (other / "events" / "stream.ndjson").unlink()
    for i in range(2):
        (other / "events" / f"{i}.json").unlink()
    assert imp.sniff(Source(other)) == 0.5  # empty: a conversation not written yet
    # V1 conversations, each beside a metadata.json a V0 conversation could have (which alone would
    # make the folder a V0 conversation whose events cannot be read, 0.7): a base_state.json with an
    # empty events folder, V1 event-NNNNN-<id>.json files, V1 event objects in <id>.json files
    v1conv = tmp_path / "v1" / "conv"
    (v1conv / "events").mkdir(parents=True)
    (v1conv / "metadata.json").write_text(
        json.dumps(
            {"conversation_id": "x", "created_at": "2025-05-13T14:40:10Z", "conversation_version": "V1"}
        )
    )
    (v1conv / "base_state.json").write_text('{"id": "x"}')
    assert imp.sniff(Source(v1conv)) == 0
    (v1conv / "base_state.json").unlink()
    v1_event = {"kind": "ActionEvent", "id": "a", "source": "agent", "action": {"kind": "ExecuteBashAction"}}
    (v1conv / "events" / "event-00000-a.json").write_text(json.dumps(v1_event))
    assert imp.sniff(Source(v1conv)) == 0
    (v1conv / "events" / "event-00000-a.json").rename(v1conv / "events" / "0.json")
    assert imp.sniff(Source(v1conv)) == 0


def test_v1_sample_still_loads_as_v1() -> None:
    folder = shared_path("trace_samples", "openhands_v1_events")
    traces = list(load_traces(folder))
    assert traces and all(t.source_format == "openhands_v1" for t in traces)
    imp = get_importer("openhands_v0")
    for sub in [folder, *(p for p in folder.rglob("*") if p.is_dir())]:
        assert imp.sniff(Source(sub)) == 0


_FUZZ = settings(
    max_examples=int(os.environ.get("MASTKIT_FUZZ_EXAMPLES", "40")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)


@_FUZZ
@given(seed=st.integers(0, 2**32 - 1), data=st.binary(max_size=512))
def test_fuzz_conversation_folder(seed: int, data: bytes) -> None:
    # mutated event files and metadata inside a conversation folder: errors, never a crash
    rnd = random.Random(seed)
    root = Path(tempfile.mkdtemp())
    try:
        conv = root / "sessions" / SID
        shutil.copytree(CONV, conv)
        files = sorted(conv.rglob("*.json"))
        for target in rnd.sample(files, rnd.randint(1, 3)):
            raw = target.read_bytes()
            i, j = sorted(rnd.randrange(len(raw) + 1) for _ in range(2))
            op = rnd.randrange(4)
            if op == 0:
                target.write_bytes(raw[:i])
            elif op == 1:
                target.write_bytes(raw[:i] + data + raw[j:])
            elif op == 2:
                doc = json.loads(raw)
                key = rnd.choice(list(doc)) if isinstance(doc, dict) and doc else None
                if key is not None:
                    doc[key] = rnd.choice([None, 0, -1, "", [], {}, [None], {"": None}, 2**63, "2025-13-45"])
                target.write_text(json.dumps(doc))
            else:
                target.write_bytes(data)
        if rnd.random() < 0.2:
            (conv / "event_cache").mkdir()
            (conv / "event_cache" / "0-25.json").write_bytes(data or b"[]")
        for path, fmt in (
            (conv, None),
            (root, None),
            (conv, "openhands_v0"),
            (conv / "events", "openhands_v0"),
        ):
            assert_loads_cleanly(path, format=fmt)
    finally:
        shutil.rmtree(root)


def test_resolver_output_flat_events() -> None:
    # openhands-resolver output.jsonl (2024): flat events, no source/id/timestamp, args at the top
    path = FIX / "resolver_output.jsonl"
    assert get_importer("openhands_v0").sniff(Source(path)) >= 0.8
    [t] = load_traces(path)
    assert Trace.model_validate_json(t.model_dump_json()) == t
    assert (t.trace_id, t.task_id) == ("neubig/pr-viewer#5", "neubig/pr-viewer#5")
    assert t.kind_counts() == {
        "message": 1,
        "reasoning": 3,
        "tool_call": 3,
        "tool_result": 3,
        "termination": 1,
    }
    assert [a.name for a in t.agents] == ["agent"]
    assert (t.events[0].kind, t.events[0].actor) == ("message", "user")
    assert t.task is not None and t.task.startswith("Please fix the following issue")
    calls = list(t.tool_calls())
    assert [c.tool_call.name for c, _ in calls if c.tool_call] == ["run", "run_ipython", "run"]
    first_call, first_result = calls[0]
    assert first_call.tool_call is not None and first_call.tool_call.arguments["command"] == "touch LICENSE"
    assert first_result is not None and first_result.tool_result is not None
    assert (first_result.tool_result.exit_code, first_result.tool_result.is_error) == (0, False)
    assert first_result.seq == first_call.seq + 1 and first_result.raw["observation"] == "run"
    assert "source" not in first_call.raw if isinstance(first_call.raw, dict) else True
    assert t.termination is not None and (t.termination.reason, t.termination.at_seq) == ("final_answer", 10)
    assert t.outcome is not None and t.outcome.metrics["resolver_success"] is True
    assert t.usage is not None and t.usage.cost_usd == pytest.approx(0.070713)
    assert all(e.started_at is None for e in t.events)  # the flat events carry no time


def test_flat_agent_message_waiting_for_reply_is_the_agents(tmp_path: Path) -> None:
    rec = {"issue": {"owner": "o", "repo": "r", "number": 1}, "history": [
        {"action": "message", "content": "Fix it", "wait_for_response": False},
        {"action": "message", "content": "Which branch?", "wait_for_response": True},
        {"observation": "agent_state_changed", "content": "", "agent_state": "awaiting_user_input"},
    ]}  # fmt: skip
    path = tmp_path / "output.jsonl"
    path.write_text(json.dumps(rec) + "\n")
    [t] = load_traces(path)
    assert [(e.kind, e.actor) for e in t.events] == [
        ("message", "user"),
        ("message", "agent"),
        ("system", "environment"),
    ]


def test_history_without_action_or_observation_says_so(tmp_path: Path) -> None:
    path = tmp_path / "output.json"
    path.write_text(json.dumps({"instance_id": "x", "history": [{"command": "ls", "thought": "look"}]}))
    with pytest.raises(TraceLoadError) as err:
        list(load_traces(path, format="openhands_v0"))
    assert "neither an 'action' nor an 'observation'" in str(err.value) and "command, thought" in str(
        err.value
    )


def test_trajectory_api_response_object(tmp_path: Path) -> None:
    # GET /api/conversations/<id>/trajectory answers {"trajectory": [events]}; saved as it came
    events = [
        {"id": 0, "timestamp": "2025-03-01T11:00:00", "source": "user", "message": "Fix it", "action": "message",
         "args": {"content": "Fix it"}},
        {"id": 1, "timestamp": "2025-03-01T11:00:01", "source": "agent", "message": "ls", "action": "run",
         "args": {"command": "ls", "thought": ""}},
        {"id": 2, "timestamp": "2025-03-01T11:00:02", "source": "environment", "cause": 1, "observation": "run",
         "content": "a.py", "extras": {"metadata": {"exit_code": 0}}, "message": "ran"},
    ]  # fmt: skip
    path = tmp_path / "trajectory.json"
    path.write_text(json.dumps({"trajectory": events}))
    assert get_importer("openhands_v0").sniff(Source(path)) == 0.85
    [t] = load_traces(path)
    assert [e.kind for e in t.events] == ["message", "tool_call", "tool_result"]
    assert t.events[2].source is not None and t.events[2].source.pointer == "/trajectory/2"
    assert t.task == "Fix it"


def test_swe_agent_like_steps_are_not_flat_events(tmp_path: Path) -> None:
    # SWE-agent history entries carry "action" with a "role": never OpenHands flat events
    rec = {"history": [{"role": "assistant", "content": "x", "action": "ls", "thought": "t"}]}
    path = tmp_path / "run.json"
    path.write_text(json.dumps(rec))
    assert get_importer("openhands_v0").sniff(Source(path)) == 0.0
