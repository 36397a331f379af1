"""The last-resort text importer: speaker turns, unsegmented text, what it never claims."""

from __future__ import annotations

from pathlib import Path

import pytest

from mastkit.errors import TraceLoadError
from mastkit.traces import iter_load, load_traces
from mastkit.traces.registry import candidates, get_importer
from mastkit.traces.source import Source


def test_speaker_turns_become_messages(tmp_path: Path) -> None:
    path = tmp_path / "chat.txt"
    path.write_text(
        "Run of 2025-01-01\nUser: the build fails\nAssistant: let me look\nat the log\n[Reviewer]: approved\n"
    )
    (t,) = list(load_traces(path))
    assert t.source_format == "plain_text" and t.segmentation == "heuristic"
    assert [(e.kind, e.actor, e.role, e.content) for e in t.events] == [
        ("system", None, None, "Run of 2025-01-01"),
        ("message", "User", "user", "the build fails"),
        ("message", "Assistant", "assistant", "let me look\nat the log"),
        ("message", "Reviewer", "assistant", "approved"),
    ]
    assert t.events[2].source is not None and (t.events[2].source.line, t.events[2].source.end_line) == (3, 4)


def test_unsegmented_text_is_one_event(tmp_path: Path) -> None:
    path = tmp_path / "run.log"
    text = "starting\nretrying after error\nexit 1\n"
    path.write_text(text)
    (t,) = list(load_traces(path))
    assert t.segmentation == "raw_unsegmented" and [e.content for e in t.events] == [text]


def test_long_turn_loads(tmp_path: Path) -> None:
    path = tmp_path / "long.txt"
    # many short turns, then one turn of 50,000 lines (was quadratic: the body was copied per line)
    path.write_text("User: go\nAgent: ok\n" * 1500 + "Agent: start\n" + "output line\n" * 50_000)
    (t,) = list(load_traces(path))
    assert t.segmentation == "heuristic" and len(t.events) == 3001
    assert t.events[-1].content is not None and t.events[-1].content.count("\n") == 50_000


@pytest.mark.parametrize(
    ("data", "reason"),
    [(b"", "empty file"), (b"User: caf\xe9 ok\nAgent: fine\n", "at byte 9")],
)
def test_bad_text_gives_a_clear_error(tmp_path: Path, data: bytes, reason: str) -> None:
    path = tmp_path / "bad.txt"
    path.write_bytes(data)
    (err,) = list(iter_load(path))
    assert isinstance(err, TraceLoadError) and reason in str(err)


def test_never_claims_json_or_binary_and_comes_last(tmp_path: Path) -> None:
    imp = get_importer("plain_text")
    assert imp.fallback
    for name, data in (
        ("a.json", b'{"a": 1}'),
        ("b.bin", b"\x00\x01\x02" * 100),
        ("c.jsonl", b'{"a": 1}\n{"a": 2}\n'),
    ):
        (tmp_path / name).write_bytes(data)
        assert imp.sniff(Source(tmp_path / name)) == 0
    chatdev_like = tmp_path / "x.log"
    chatdev_like.write_text(
        "[2023-10-15 00:37:23 INFO] **[Preprocessing]**\n\n**ChatDev Starts** (20231015003723)\n"
    )
    names = [i.name for _s, i in candidates(Source(chatdev_like))]
    assert names[0] == "chatdev" and names[-1] == "plain_text"
