"""OpenCode storage folders (``~/.local/share/opencode/storage``).

The fixture ``tests/fixtures/opencode/storage`` is hand-written from OpenCode's public source
(``Storage.write`` keys, ``Identifier`` ids, the session/message/part schemas): project
``5b1e…`` holds root session A (tools completed and errored, a ``task`` tool whose child session C
is in the same project, a truncated part file, a message with no part folder) and project
``global`` holds root session B, also written as ``export_storage_session_b.json``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from _opencode_fixture import FIX, NO_PARTS, PROJECT, SES_A, SES_B, SES_C, STORAGE, assert_same_trace, load

from mastkit.errors import TraceLoadError
from mastkit.traces import Source, Trace, get_importer, iter_load, load_traces
from mastkit.traces.load import walk

BAD_PART = STORAGE / "part" / "msg_9c82cd770001c360a9Y6yNd14t" / "prt_9c82cd78e001iAX1DyyXN9iYw1.json"


def _load(path: Path) -> tuple[dict[str, Trace], list[TraceLoadError]]:
    return load(path, source_format="opencode_storage")


def test_storage_folder_one_trace_per_root_session() -> None:
    traces, errors = _load(STORAGE)
    assert list(traces) == [SES_A, SES_B]  # C is merged into A; roots in creation order
    # the truncated part file is reported by name, with the reason; everything else loads
    assert [e.path for e in errors] == [str(BAD_PART)]
    assert "part file" in errors[0].reason and "JSON" in errors[0].reason
    assert not errors[0].internal


def test_session_with_child_tools_usage_and_abort() -> None:
    traces, _errors = _load(STORAGE)
    t = traces[SES_A]
    assert t.framework == "OpenCode" and t.framework_version == "1.1.10"
    assert t.task == "Find why checkout totals are off by one cent and fix it"
    assert t.model == "claude-sonnet-4-5" and t.extra["projectID"] == PROJECT
    assert t.kind_counts() == {"message": 5, "reasoning": 1, "tool_call": 4, "tool_result": 4, "error": 1}
    results = {
        c.tool_call.name: r.tool_result.is_error
        for c, r in t.tool_calls()
        if c.tool_call is not None and r is not None and r.tool_result is not None
    }
    assert results == {"bash": False, "read": True, "task": False, "grep": False}
    read = next(r for c, r in t.tool_calls() if c.tool_call is not None and c.tool_call.name == "read")
    assert read is not None and read.tool_result is not None
    assert read.tool_result.output == "File not found: /home/dev/shop/totals.py"
    # child session merged: thread_id, sub-agent actor, parent agent
    sub = [e for e in t.events if e.thread_id == SES_C]
    assert {e.actor for e in sub if e.role == "assistant"} == {"general"} and len(sub) == 4
    assert next(a for a in t.agents if a.name == "general").parent == "build"
    # the task result is placed where the tool ended: after the sub-agent's work
    _call, task_res = next(
        (c, r) for c, r in t.tool_calls() if c.tool_call is not None and c.tool_call.name == "task"
    )
    assert task_res is not None and task_res.seq > max(e.seq for e in sub)
    # step-finish tokens/cost: usage on the first event of each model call
    with_usage = [e for e in t.events if e.usage is not None]
    assert len(with_usage) == 3 and len({e.llm_call_id for e in with_usage}) == 3
    first = with_usage[0].usage
    assert first is not None and (first.input_tokens, first.output_tokens, first.cost_usd) == (
        1200 + 8000 + 500,
        300 + 40,
        0.0123,
    )
    assert t.total_usage().cost_usd == 0.0123 + 0.002 + 0.004
    # the aborted last message (its part folder was never written) ends the run
    assert t.termination is not None and (t.termination.reason, t.termination.native) == (
        "aborted",
        "MessageAbortedError",
    )
    storage = t.raw["storage"]
    assert storage["messages_without_parts"] == [NO_PARTS]
    assert storage["project"]["worktree"] == "/home/dev/shop"
    assert storage["todos"][SES_A][0]["content"] == "Find rounding bug"
    # every event points at the file it came from; the trace lists the files read
    assert all(e.source is not None and e.source.path for e in t.events)
    assert str(BAD_PART) not in t.source_paths and t.source_paths[0] == str(STORAGE)
    assert any(p.endswith(f"{SES_C}.json") for p in t.source_paths)


def test_same_events_as_export_of_the_session() -> None:
    traces, _errors = _load(STORAGE)
    stored = traces[SES_B]
    exported = next(iter(load_traces(FIX / "export_storage_session_b.json")))
    assert exported.source_format == "opencode"
    assert_same_trace(stored, exported)


def test_data_folder_and_project_folder(tmp_path: Path) -> None:
    data = tmp_path / "opencode"
    shutil.copytree(STORAGE, data / "storage")
    (data / "log").mkdir()
    (data / "auth.json").write_text("{}")
    assert get_importer("opencode_storage").sniff(Source(data)) >= 0.9
    traces, errors = _load(data)
    assert list(traces) == [SES_A, SES_B] and len(errors) == 1
    assert [s.path for s in walk([data])] == [data]  # log/, auth.json ... are not walked
    # one project's session folder: its sessions only (children live in the same project)
    traces, errors = _load(data / "storage" / "session" / "global")
    assert list(traces) == [SES_B] and not errors
    traces, _errors = _load(data / "storage" / "session" / PROJECT)
    assert list(traces) == [SES_A]


def test_data_folder_markers(tmp_path: Path) -> None:
    # storage/ beside one other thing OpenCode keeps in its data folder, a channel's database too
    data = tmp_path / "opencode"
    shutil.copytree(STORAGE, data / "storage")
    (data / "notes.txt").write_text("mine")
    imp = get_importer("opencode_storage")
    assert imp.sniff(Source(data)) == 0.0  # storage/ next to other files: walked
    (data / "opencode-dev.db").write_bytes(b"")  # no database in it (else opencode_db's)
    assert imp.sniff(Source(data)) == 0.95
    assert [s.path for s in walk([data])] == [data]


def test_sniff_claims_storage_folders_only(tmp_path: Path) -> None:
    imp = get_importer("opencode_storage")
    assert imp.handles_dirs and not imp.accepts_files
    assert imp.sniff(Source(STORAGE)) >= 0.9
    assert imp.sniff(Source(STORAGE / "session" / PROJECT)) >= 0.9
    assert imp.sniff(Source(STORAGE / "message")) == 0.0
    # the fixtures folder holds storage/ beside other traces, but none of the data folder's other
    # entries (auth.json, opencode.db, log/, snapshot/, bin/): walked, not taken whole
    assert imp.sniff(Source(FIX)) == 0.0
    unrelated = tmp_path / "proj"
    (unrelated / "session").mkdir(parents=True)
    (unrelated / "session" / "a.json").write_text("{}")
    assert imp.sniff(Source(unrelated)) == 0.0  # a session/ folder alone is not OpenCode storage
    assert imp.sniff(Source(FIX / "export_storage_session_b.json")) == 0.0
    # a session/<projectID> folder holding only dotfiles (editor leftovers) has no session file
    hidden = tmp_path / "storage"
    (hidden / "message").mkdir(parents=True)
    (hidden / "session" / "p").mkdir(parents=True)
    (hidden / "session" / "p" / ".ses_x.json").write_text("{}")
    assert imp.sniff(Source(hidden / "session" / "p")) == 0.0


def test_storage_files_not_loaded_one_by_one(tmp_path: Path) -> None:
    # a folder holding a storage folder and another trace: the storage folder is taken whole
    shutil.copytree(STORAGE, tmp_path / "storage")
    shutil.copy(FIX / "bus_events.jsonl", tmp_path / "bus_events.jsonl")
    sources = list(walk([tmp_path]))
    assert sorted(s.path.name for s in sources) == ["bus_events.jsonl", "storage"]
    items = list(iter_load(tmp_path))
    formats = sorted(i.source_format for i in items if isinstance(i, Trace))
    assert formats == ["opencode", "opencode_storage", "opencode_storage"]
    bad = tmp_path / "storage" / BAD_PART.relative_to(STORAGE)
    assert [i.path for i in items if isinstance(i, TraceLoadError)] == [str(bad)]
    # message/, part/, todo/ ... given alone are read only through their session, never file by file
    assert list(walk([tmp_path / "storage" / "part"])) == []
    assert list(walk([tmp_path / "storage" / "message"])) == []
    # session/ given alone: each session/<projectID> folder is claimed
    names = sorted(s.path.name for s in walk([tmp_path / "storage" / "session"]))
    assert names == ["5b1e9d0c3a7f4e2b8c6d1a0f9e8d7c6b5a4f3e2d", "global"]


def test_bad_files_reported_by_name(tmp_path: Path) -> None:
    root = tmp_path / "storage"
    shutil.copytree(STORAGE, root)
    bad_session = root / "session" / "global" / "ses_zzz.json"
    bad_session.write_text("[1, 2]")
    bad_msg = root / "message" / SES_B / "msg_zzz.json"
    bad_msg.write_text(json.dumps({"id": "msg_zzz", "role": 7}))
    odd_part = root / "part" / "msg_9c82e4704001dr0UwfMpf5rg7w" / "prt_zzz.json"
    odd_part.write_text(json.dumps({"id": "prt_zzz", "text": "no type"}))
    traces, errors = _load(root)
    assert list(traces) == [SES_A, SES_B]
    by_path = {e.path: e.reason for e in errors}
    assert set(by_path) == {
        str(p) for p in (root / BAD_PART.relative_to(STORAGE), bad_session, bad_msg, odd_part)
    }
    assert (
        "session" in by_path[str(bad_session)]
        and "message" in by_path[str(bad_msg)]
        and "part" in by_path[str(odd_part)]
    )
    # B is unchanged by the files it could not read
    assert traces[SES_B].kind_counts() == {"message": 2, "tool_call": 1, "tool_result": 1}


def test_empty_or_broken_storage(tmp_path: Path) -> None:
    root = tmp_path / "storage"
    (root / "session").mkdir(parents=True)
    (root / "message").mkdir()
    items = list(iter_load(root))
    assert len(items) == 1 and isinstance(items[0], TraceLoadError)
    assert "no OpenCode session files" in items[0].reason and not items[0].internal
    # ids that carry no time (hand-made files) keep their file-name order, whatever order the
    # folder lists them in (written here in the reverse order)
    (root / "session" / "p").mkdir()
    (root / "session" / "p" / "s1.json").write_text(json.dumps({"id": "s1", "time": {"created": "x"}}))
    (root / "message" / "s1").mkdir()
    (root / "message" / "s1" / "m1.json").write_text(json.dumps({"id": "m1", "role": "user"}))
    (root / "part" / "m1").mkdir(parents=True)
    for i, text in reversed(list(enumerate(["one", "two"]))):
        (root / "part" / "m1" / f"p{i}.json").write_text(json.dumps({"type": "text", "text": text}))
    [t] = list(load_traces(root))
    assert [e.content for e in t.events] == ["one", "two"] and t.task == "one"
    assert Trace.model_validate_json(t.model_dump_json()) == t


def test_project_file_read_once_for_its_sessions(tmp_path: Path) -> None:
    # two root sessions of one project and a broken project file: one error, not one per session
    storage = tmp_path / "storage"
    shutil.copytree(STORAGE, storage)
    (storage / "project" / f"{PROJECT}.json").write_text("{broken")
    child = storage / "session" / PROJECT / f"{SES_C}.json"
    info = json.loads(child.read_text())
    info.pop("parentID", None)  # C becomes a root session of the same project
    child.write_text(json.dumps(info))
    traces, errors = _load(storage)
    assert SES_A in traces and SES_C in traces
    assert [e.path for e in errors if "project file" in e.reason] == [
        str(storage / "project" / f"{PROJECT}.json")
    ]
    assert traces[SES_A].raw["storage"]["project"] is None and traces[SES_C].raw["storage"]["project"] is None
