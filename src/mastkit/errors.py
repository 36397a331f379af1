"""Errors raised by mastkit.

Every error subclasses :class:`MastkitError`, and its message says what went
wrong and, where it can, what to do next. The library never prints or exits;
the CLI turns these into messages and exit codes.

::

    MastkitError
    ├── TraceLoadError        a file or record could not be read as a trace
    │   └── UnknownFormatError    no importer recognised the input
    ├── FormatError           raised inside an importer; the loader turns it into a TraceLoadError
    │   └── NotThisFormat         the file turned out to belong to another importer
    ├── TaxonomyError         a taxonomy file is invalid
    ├── StoreError            the store file cannot be opened or written (read-only, full, locked)
    └── MissingDependencyError    an optional extra is not installed
"""

from __future__ import annotations

from pathlib import Path


class MastkitError(Exception):
    """Base class of every error mastkit raises on purpose."""


class TraceLoadError(MastkitError):
    """A file (or one record in it) could not be loaded as a trace.

    Attributes:
        path: the file or folder that failed.
        reason: what was wrong, in one line.
        tried: the importers that were tried, in order.
        line: 1-based line number of the bad record, when known.
        offset: byte offset of the problem, when known.
        internal: True when the importer crashed with an unexpected exception
            (a bug in mastkit, not a problem with the file).
        importer: the importer whose reason this is (with several tried, the most confident
            claim's; see :func:`mastkit.traces.load.iter_source`).
    """

    def __init__(
        self,
        path: str | Path,
        reason: str,
        *,
        tried: list[str] | None = None,
        line: int | None = None,
        offset: int | None = None,
        internal: bool = False,
        importer: str | None = None,
    ) -> None:
        self.path = str(path)
        self.reason = reason
        self.tried = list(tried or [])
        self.line = line
        self.offset = offset
        self.internal = internal
        self.importer = importer
        # ``args`` are the positional arguments, so the default pickling rebuilds the error (the
        # other fields come back from ``__dict__``); the message is made when asked, because the
        # loader fills ``tried`` and ``importer`` in after the importer made the error.
        super().__init__(self.path, reason)

    def __str__(self) -> str:
        where = self.path
        if self.line is not None:
            where += f":{self.line}"
        elif self.offset is not None:
            where += f" (byte {self.offset})"
        msg = f"{where}: {self.reason}"
        if self.tried:
            by = f"; reason from {self.importer}" if self.importer and self.importer != self.tried[-1] else ""
            msg += f" [tried: {', '.join(self.tried)}{by}]"
        return msg

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready view for reports and logs."""
        return {
            "path": self.path,
            "reason": self.reason,
            "tried": self.tried,
            "line": self.line,
            "offset": self.offset,
            "internal": self.internal,
            "importer": self.importer,
        }


class UnknownFormatError(TraceLoadError):
    """No importer recognised the file."""


class FormatError(MastkitError):
    """Raised inside an importer when the input does not match its format.

    The loader turns it into a :class:`TraceLoadError` that names the file and
    the importer. ``line``/``offset`` locate the problem when known.
    """

    def __init__(self, reason: str, *, line: int | None = None, offset: int | None = None) -> None:
        self.reason = reason
        self.line = line
        self.offset = offset
        super().__init__(reason)


class NotThisFormat(FormatError):
    """Raised inside an importer that finds, past the head its format was chosen on, that the file
    belongs to another format (say, trace spans further down a file of log records).

    The loader then tries the next importer that claimed the file, and reports this reason only if
    no other importer gave one.
    """


class TaxonomyError(MastkitError):
    """A taxonomy definition is invalid (duplicate codes, unknown category, bad file)."""


class StoreError(MastkitError):
    """The store file cannot be opened or written: read-only, disk full, locked by another
    process for longer than the busy timeout, or not a database. What was committed before stays.

    Defined here, below every layer, so the per-trace runner can tell a broken store (which stops
    the whole run) from one trace's failure; :mod:`mastkit.store` raises it.
    """


class MissingDependencyError(MastkitError):
    """An optional dependency is missing; the message names the extra to install."""

    def __init__(self, feature: str, extra: str) -> None:
        self.feature = feature
        self.extra = extra
        super().__init__(feature, extra)  # the constructor's arguments: pickles by default

    def __str__(self) -> str:
        return f"{self.feature} needs an optional dependency: pip install 'mastkit[{self.extra}]'"
