"""``learn_taxonomy``: traces → notes (persisted, so a run resumes) → a validated taxonomy."""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterable
from pathlib import Path

from mastkit.learn.induce import LearnOptions, LearnResult, induce_taxonomy
from mastkit.learn.notes import OFFLINE_NOTES_VERSION, Note, is_failed, offline_notes
from mastkit.traces.model import Trace

__all__ = ["NoteBook", "learn_taxonomy", "select_traces"]

NoteMaker = Callable[[list[Trace]], dict[str, list[Note]]]
"""Makes the notes of a batch of traces (returns them by trace id)."""


class NoteBook:
    """Notes already made, in a JSONL file: one line per trace (its content hash, the
    note-maker's version and its notes), appended as each trace is done."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._done: dict[tuple[str, str], list[Note]] = {}
        if path is not None and path.exists():
            for line in path.read_text(encoding="utf-8").splitlines():
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                    self._done[(row["hash"], row["maker"])] = [Note.model_validate(n) for n in row["notes"]]
                except (ValueError, KeyError, TypeError):
                    continue  # a line cut short by a killed run: that trace is done again

    def get(self, t_hash: str, maker: str) -> list[Note] | None:
        return self._done.get((t_hash, maker))

    def put(self, t_hash: str, maker: str, notes: list[Note]) -> None:
        self._done[(t_hash, maker)] = notes
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            row = {"hash": t_hash, "maker": maker, "notes": [n.model_dump() for n in notes]}
            with self.path.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(row) + "\n")


def select_traces(
    traces: Iterable[Trace], *, contrast: int = 20, seed: int = 0
) -> tuple[list[Trace], list[Trace]]:
    """The failed traces (outcome false, or not recorded) and a random sample of up to
    ``contrast`` successful ones."""
    failed: list[Trace] = []
    ok: list[Trace] = []
    for t in traces:
        (ok if is_failed(t) is False else failed).append(t)
    rng = random.Random(seed)
    return failed, rng.sample(ok, min(contrast, len(ok)))


def learn_taxonomy(
    traces: Iterable[Trace],
    *,
    options: LearnOptions | None = None,
    notes_path: Path | None = None,
    note_maker: NoteMaker | None = None,
    maker_version: str = OFFLINE_NOTES_VERSION,
    contrast: int = 20,
    source: str = "",
) -> LearnResult:
    """Learn a taxonomy from ``traces``.

    Notes come from ``note_maker`` (a model, see :func:`mastkit.learn.llm.llm_note_maker`) or
    the offline note-maker; with ``notes_path`` they are kept there and a rerun makes notes
    only for traces not yet done (keyed by content hash and ``maker_version``)."""
    opts = options or LearnOptions()
    failed, ok = select_traces(traces, contrast=contrast, seed=opts.seed)
    book = NoteBook(notes_path)
    notes: list[Note] = []
    todo: list[Trace] = []
    flags = {t.trace_id: True for t in failed} | {t.trace_id: False for t in ok}
    for t in [*failed, *ok]:
        got = book.get(t.content_hash(), maker_version)
        if got is None:
            todo.append(t)
        else:
            notes.extend(n.model_copy(update={"failed": flags[t.trace_id]}) for n in got)
    if note_maker is None:
        for t in todo:
            made = offline_notes(t, failed=flags[t.trace_id])
            book.put(t.content_hash(), maker_version, made)
            notes.extend(made)
    elif todo:
        by_id = note_maker(todo)
        for t in todo:
            made = [n.model_copy(update={"failed": flags[t.trace_id]}) for n in by_id.get(t.trace_id, [])]
            if t.trace_id in by_id:
                book.put(t.content_hash(), maker_version, made)
            notes.extend(made)
    failed_ids = [t.trace_id for t in failed]
    return induce_taxonomy(notes, failed_ids, opts, source=source)
