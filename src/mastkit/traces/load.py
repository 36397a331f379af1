"""``load_traces``: files and folders in, canonical traces out, errors reported per file."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from pydantic import ValidationError

from mastkit.errors import FormatError, NotThisFormat, TraceLoadError, UnknownFormatError
from mastkit.traces.model import Trace
from mastkit.traces.registry import Importer, candidates, consumers, get_importer
from mastkit.traces.source import Source

# Files skipped when walking a folder: documentation and licences that sit beside traces.
_SKIP_NAMES = {
    "license", "licence", "copying", "notice", "readme", "changelog", "authors", "contributing", "manifest",
}  # fmt: skip
_SKIP_SUFFIXES = {
    ".md", ".rst", ".py", ".pyc", ".png", ".jpg", ".jpeg", ".gif", ".svg", ".pdf", ".toml", ".yaml", ".yml",
    ".cfg", ".ini", ".html", ".css", ".js", ".ts", ".sh", ".lock", ".gz", ".tar",
    ".db-wal", ".db-shm", ".db-journal", ".sqlite-wal", ".sqlite-shm", ".sqlite-journal",  # SQLite side files
}  # fmt: skip
# Databases met in a folder are loaded only when a format claims them (AG2's runtime ``logs.db``);
# any other database there (mastkit's own result store, an app's data) is passed over silently.
_CLAIMED_ONLY_SUFFIXES = {".db", ".sqlite", ".sqlite3"}

# Exceptions an importer raises when the data has an unexpected structure: reported as format errors.
_STRUCTURE_ERRORS = (
    FormatError, ValidationError, KeyError, TypeError, ValueError, IndexError, AttributeError, UnicodeError,
)  # fmt: skip

PathLike = str | Path


def _skip_in_walk(path: Path) -> bool:
    name = path.name
    if name.startswith((".", "_")):
        return True
    stem = name.split(".", 1)[0].lower()
    return stem in _SKIP_NAMES or path.suffix.lower() in _SKIP_SUFFIXES


def _claimed(src: Source) -> bool:
    try:
        return bool(candidates(src))
    except OSError:
        return True  # let the loader report it


def _as_error(exc: BaseException, path: Path, tried: list[str]) -> TraceLoadError:
    if isinstance(exc, TraceLoadError):
        return exc
    if isinstance(exc, FormatError):
        return TraceLoadError(path, exc.reason, tried=tried, line=exc.line, offset=exc.offset)
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first.get("loc", ()))
        return TraceLoadError(
            path, f"record does not fit the canonical model: {loc}: {first.get('msg')}", tried=tried
        )
    if isinstance(exc, OSError):
        return TraceLoadError(path, f"cannot read: {exc.strerror or exc}", tried=tried)
    if isinstance(exc, _STRUCTURE_ERRORS):
        return TraceLoadError(path, f"unexpected structure ({type(exc).__name__}: {exc})", tried=tried)
    return TraceLoadError(
        path, f"internal error in importer ({type(exc).__name__}: {exc})", tried=tried, internal=True
    )


def _load_with(imp: Importer, src: Source, tried: list[str]) -> Iterator[Trace | TraceLoadError]:
    for item in imp.load(src):
        if isinstance(item, TraceLoadError):
            item.tried = item.tried or list(tried)
            item.importer = item.importer or imp.name
        yield item


def _gc_paused(items: Iterator[Trace | TraceLoadError]) -> Iterator[Trace | TraceLoadError]:
    """Run the loader with the cyclic garbage collector paused while it reads and builds each trace.

    Building a trace allocates thousands of small containers (events, their dicts) that live on,
    which makes the collector run again and again over a growing heap for nothing (a canonical
    trace holds no reference cycles): up to a fifth of the loading time on Who&When. The collector
    is paused only inside ``next()`` -- never while the caller's code runs between traces -- and
    left alone when the caller has disabled it; memory stays bounded by one trace.
    """
    while True:
        paused = gc.isenabled()
        if paused:
            gc.disable()
        try:
            item = next(items)
        except StopIteration:
            return
        finally:
            if paused:
                gc.enable()
        yield item


def iter_source(src: Source, format: str | None = None) -> Iterator[Trace | TraceLoadError]:
    """Load one file or trace-folder. Yields traces and per-record errors; never raises for bad input."""
    path = src.path
    if format is not None:
        imps = [get_importer(format)]
    else:
        try:
            if not src.is_dir and (src.size == 0 or (src.size <= len(src.head) and src.head.isspace())):
                yield TraceLoadError(path, "empty file" if src.size == 0 else "empty file (only whitespace)")
                return
            scored = candidates(src)
            imps = [imp for _score, imp in scored]
            # A format that claimed the file with confidence and then failed is the answer: do not
            # hide its error behind a last-resort importer (plain text reads anything).
            if scored and scored[0][0] >= 0.8 and not scored[0][1].fallback:
                imps = [imp for imp in imps if not imp.fallback]
        except OSError as exc:
            yield _as_error(exc, path, [])
            return
        if not imps:
            yield _unknown(src)
            return
    tried: list[str] = []
    # When every importer fails, the file's error is the reason the most confident claim gave (the
    # candidates come best first), not the last-resort one's; a "this file is another format's"
    # reason is kept only when no importer gave another.
    reported: TraceLoadError | None = None
    handed_on: TraceLoadError | None = None
    for imp in imps:
        tried.append(imp.name)
        produced = 0
        try:
            for item in _load_with(imp, src, tried):
                produced += 1
                yield item
            if produced:
                return
            err = TraceLoadError(path, f"{imp.name}: no trace found in the file", importer=imp.name)
        except Exception as exc:
            err = _as_error(exc, path, list(tried))
            err.importer = err.importer or imp.name
            if produced:
                # Part of the file loaded: report the rest as an error, do not try other formats.
                yield err
                return
            if isinstance(exc, NotThisFormat):
                handed_on = handed_on or err
                continue
            if err.internal:
                reported = err  # a bug in mastkit: say so, and try no other format
                break
        reported = reported or err
    last = reported or handed_on
    assert last is not None
    last.tried = tried
    yield last


def _unknown(src: Source) -> TraceLoadError:
    """The clearest reason a file matched no importer (bad JSON is reported as such, with its position)."""
    if src.is_dir:
        return UnknownFormatError(src.path, "folder matches no trace format")
    if src.is_binary:
        return UnknownFormatError(src.path, "binary file that no importer recognises")
    shape = src.json_shape
    if shape in ("object", "array"):
        try:
            _ = src.json
        except FormatError as exc:
            return TraceLoadError(src.path, exc.reason, line=exc.line, offset=exc.offset)
        return UnknownFormatError(
            src.path, f"JSON {shape} with keys/shape no importer recognises{_keys(src)}"
        )
    if shape == "jsonl":
        return UnknownFormatError(src.path, f"JSON lines no importer recognises{_keys(src)}")
    return UnknownFormatError(src.path, "no importer recognises this file")


def _keys(src: Source) -> str:
    rec = src.first_record
    if isinstance(rec, dict):
        keys = ", ".join(list(rec)[:8])
        return f" (first record keys: {keys})"
    return ""


def walk(paths: Iterable[PathLike]) -> Iterator[Source]:
    """Expand paths into sources: files as given; folders recursively, except trace-folders."""
    for p in paths:
        path = Path(p)
        if not path.exists():
            yield Source(path)  # reported as an error by iter_source
            continue
        yield from _walk_one(path, top=True)


def _walk_one(path: Path, top: bool) -> Iterator[Source]:
    src = Source(path)
    if not src.is_dir:
        claimed_only = path.suffix.lower() in _CLAIMED_ONLY_SUFFIXES
        if top or (not _skip_in_walk(path) and (not claimed_only or _claimed(src))):
            yield src
        return
    if candidates(src):
        yield src  # the folder itself is one trace (or a set of them)
        return
    readers = consumers()
    for child in src.children():
        if child.name.startswith(".") or any(imp.consumes(child) for imp in readers):
            continue
        yield from _walk_one(child, top=False)


def iter_load(
    paths: PathLike | Iterable[PathLike], format: str | None = None
) -> Iterator[Trace | TraceLoadError]:
    """Like :func:`load_traces` but yields errors inline instead of raising them."""
    if isinstance(paths, (str, Path)):
        paths = [paths]
    return _gc_paused(_iter_load(paths, format))


def _iter_load(paths: Iterable[PathLike], format: str | None) -> Iterator[Trace | TraceLoadError]:
    for src in walk(paths):
        if not src.exists:
            yield TraceLoadError(src.path, "no such file or folder")
            continue
        yield from iter_source(src, format=format)


def load_traces(
    paths: PathLike | Iterable[PathLike],
    *,
    format: str | None = None,
    on_error: Callable[[TraceLoadError], None] | None = None,
) -> Iterator[Trace]:
    """Load traces from files and folders, in any supported format.

    Args:
        paths: a file, a folder, or several of them. Folders are walked recursively;
            README/LICENSE files and hidden files in them are skipped, and so are database
            files no format claims (an AG2 ``logs.db`` is loaded, another SQLite file is not).
        format: force one importer by name instead of sniffing the content.
        on_error: called with each :class:`TraceLoadError` (bad file or record), after
            which loading goes on. Without it the first error is raised.

    Yields:
        :class:`Trace` objects, lazily: a big file is streamed, not read whole.
    """
    for item in iter_load(paths, format=format):
        if isinstance(item, TraceLoadError):
            if on_error is None:
                raise item
            on_error(item)
        else:
            yield item
