"""``Trace.content_hash``: what a trace says, not where it was read from."""

from __future__ import annotations

import shutil
from pathlib import Path

from mastkit.traces import Event, Label, Outcome, SourceRef, Trace, load_traces

EXAMPLES = Path(__file__).resolve().parents[2] / "src" / "mastkit" / "examples"


def _trace(path: str = "/runs/a/run.jsonl", **kw: object) -> Trace:
    fields: dict[str, object] = {
        "trace_id": "run-1",
        "source_format": "chat_messages",
        "source_paths": [path],
        "task": "fix it",
        "events": [
            Event(seq=0, kind="message", actor="user", content="fix it", source=SourceRef(path=path, line=1)),
            Event(seq=1, kind="message", actor="coder", content="done", raw={"file": path}),
        ],
        "outcome": Outcome(success=False),
        "labels": [Label(code="FM-3.2", present=True)],
        "raw": {"header": {"path": path}},
    }
    fields.update(kw)
    return Trace.model_validate(fields)


def test_provenance_does_not_change_the_hash() -> None:
    a, b = _trace(), _trace("/elsewhere/moved/run.jsonl")
    assert a.content_hash() == b.content_hash()
    assert a.content_hash().startswith("t2:") and len(a.content_hash()) == 35


def test_content_changes_the_hash() -> None:
    base = _trace().content_hash()
    changed = [
        _trace(task="other"),
        _trace(trace_id="run-2"),
        _trace(outcome=Outcome(success=True)),
        _trace(labels=[Label(code="FM-3.2", present=False)]),
        _trace(events=[Event(seq=0, kind="message", actor="user", content="fix it!")]),
        _trace(extra={"k": 1}),
    ]
    assert len({base, *(t.content_hash() for t in changed)}) == 1 + len(changed)


def test_a_moved_folder_loads_with_the_same_hashes(tmp_path: Path) -> None:
    # The bundled examples (12 files, several formats) copied to two places of different depth. The
    # folder keeps its name: some importers take the id from it (Who&When's subset folder), and the
    # id is content.
    first, second = tmp_path / "a" / "examples", tmp_path / "b" / "deeper" / "examples"
    shutil.copytree(EXAMPLES, first)
    shutil.copytree(EXAMPLES, second)
    one = sorted((t.trace_id, t.content_hash()) for t in load_traces([first]))
    two = sorted((t.trace_id, t.content_hash()) for t in load_traces([second]))
    assert len(one) >= 12 and one == two
