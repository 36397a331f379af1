"""A file or folder handed to importers, with cheap cached reads for sniffing and loading.

Importers never open files themselves: they ask the :class:`Source` for its head
bytes, its text, its JSON document, or a stream of JSONL lines / array elements.
Whatever one importer parsed while sniffing is reused by the next, so a file is
parsed once however many importers look at it.
"""

from __future__ import annotations

import codecs
import json
import os
import re
import stat
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import orjson

from mastkit._util import sqlite
from mastkit._util.jsonstream import iter_json_array, iter_jsonl, loads, open_lines
from mastkit.errors import FormatError

HEAD_BYTES = 64 * 1024
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_BINARY", 0)  # O_BINARY: Windows only
WHOLE_FILE_LIMIT = 256 * 1024 * 1024
"""Above this size a JSON file is only streamed (JSONL lines or array elements), never parsed whole."""

_ARRAY_START = re.compile(
    r'\[\s*(?:[\[{"\]]|$|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?\s*(?:[,\]]|$)|(?:true|false|null)\s*(?:[,\]]|$))'
)

_ARRAY_START_BYTES = re.compile(_ARRAY_START.pattern.encode())
_NOT_JSON_SPACE = re.compile(rb"[^ \t\r\n]")
_NOT_BYTES_SPACE = re.compile(rb"[^ \t\n\r\x0b\x0c]")  # what bytes.strip() strips
_NOT_SPACE_TEXT = re.compile(r"[^ \t\r\n]")

JsonShape = Literal["object", "array", "jsonl", "none"]

_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)

_PATH_TYPE = type(Path())
_BOM_FIRST_BYTES = frozenset(bom[0] for bom, _enc in _BOMS)


if TYPE_CHECKING:
    from functools import cached_property

    from mastkit.traces.registry import Importer
else:

    class cached_property:  # stands in for functools.cached_property
        """``functools.cached_property`` without the per-class lock Python 3.11 takes on every first
        access (sniffing touches a dozen properties of thousands of sources)."""

        def __init__(self, fn):
            self.fn = fn
            self.name = fn.__name__
            self.__doc__ = fn.__doc__

        def __set_name__(self, owner, name):
            self.name = name

        def __get__(self, obj, owner=None):
            if obj is None:
                return self
            value = obj.__dict__[self.name] = self.fn(obj)
            return value


def _skip_space(text: str, pos: int) -> int:
    """The index of the first non-whitespace character at or after ``pos`` (``len(text)`` if none)."""
    m = _NOT_SPACE_TEXT.search(text, pos)
    return len(text) if m is None else m.start()


class Source:
    """One input path (file or folder) and its cached views."""

    def __init__(self, path: str | Path) -> None:
        self.path = path if type(path) is _PATH_TYPE else Path(path)  # a walk hands over Paths
        try:  # one stat for existence, kind and size
            st = os.stat(self.path)
        except (OSError, ValueError):
            st = None
        self.exists = st is not None
        self.is_dir = st is not None and stat.S_ISDIR(st.st_mode)
        self._size = st.st_size if st is not None and not self.is_dir else 0
        self.sniffed: list[tuple[float, Importer]] | None = None
        """The importers that claimed this source, once :func:`~mastkit.traces.registry.candidates`
        has asked them (the walker and the loader both need it)."""

    def __repr__(self) -> str:
        return f"Source({str(self.path)!r})"

    # -- raw bytes -----------------------------------------------------------------

    @property
    def size(self) -> int:
        """Size in bytes when the source was opened (0 for folders)."""
        if not self.exists:
            raise FileNotFoundError(f"no such file: {self.path}")
        return self._size

    @cached_property
    def head(self) -> bytes:
        """The first 64 KiB of the file (empty for folders)."""
        if self.is_dir:
            return b""
        # Ask for the size the stat gave (+1, to see a file that grew since), not 64 KiB: a small
        # file's head is then one buffer of its own size, not a 64 KiB one shrunk. Unbuffered: one
        # read (a file over 64 KiB is read again whole by the importer that needs it).
        want = min(self._size + 1, HEAD_BYTES)
        fd = os.open(self.path, _READ_FLAGS)
        try:
            data = os.read(fd, want)
            if len(data) == want < HEAD_BYTES:  # it grew since the stat: read on to the full head
                data += os.read(fd, HEAD_BYTES - want)
        finally:
            os.close(fd)
        return data

    @cached_property
    def name(self) -> str:
        return self.path.name

    @cached_property
    def suffixes(self) -> str:
        """All suffixes, lower case (``.traj.json``)."""
        return "".join(self.path.suffixes).lower()

    def read_bytes(self) -> bytes:
        """The whole file. Refuses files over the whole-file limit."""
        if self.size > WHOLE_FILE_LIMIT:
            raise FormatError(
                f"file too large to read whole ({self.size} bytes); this format cannot be streamed"
            )
        if self.size < HEAD_BYTES and len(self.head) == self.size:
            return self.head  # small file: the head is the whole file
        return self.path.read_bytes()

    @cached_property
    def is_binary(self) -> bool:
        """True when the head looks binary (NUL bytes outside a UTF-16/32 BOM)."""
        if self.encoding in ("utf-16", "utf-32"):  # their text is full of NUL bytes
            return False
        return self.head.find(b"\x00", 0, 8192) >= 0

    @cached_property
    def is_zip(self) -> bool:
        return not self.is_dir and self.head[:4] == b"PK\x03\x04" and zipfile.is_zipfile(self.path)

    @cached_property
    def sqlite_schema(self) -> dict[str, set[str]] | None:
        """The tables of an SQLite database file and their columns; None when the file does not
        start with the SQLite magic or cannot be read as a database. Read once, over one read-only
        connection (:func:`mastkit._util.sqlite.open_ro`), for every importer that sniffs it."""
        if self.is_dir or not self.head.startswith(sqlite.SQLITE_MAGIC):
            return None
        try:
            con, tables = sqlite.open_ro(self.path)
        except FormatError:
            return None
        con.close()
        return tables

    @cached_property
    def encoding(self) -> str:
        if not self.head or self.head[0] not in _BOM_FIRST_BYTES:
            return "utf-8"
        for bom, enc in _BOMS:
            if self.head.startswith(bom):
                return enc
        return "utf-8"

    # -- text ----------------------------------------------------------------------

    @cached_property
    def text(self) -> str:
        """The file decoded as text (BOM-aware). Raises FormatError naming the bad byte offset."""
        if self.is_dir:
            raise FormatError("is a folder, not a file")
        if self.is_binary:
            raise FormatError("binary file (NUL bytes), not a text trace")
        data = self.read_bytes()
        try:
            return data.decode(self.encoding)
        except UnicodeDecodeError as exc:
            raise FormatError(
                f"not valid {self.encoding.upper()} text: {exc.reason} at byte {exc.start}", offset=exc.start
            ) from None

    @cached_property
    def log_text(self) -> str:
        r"""The text with every line ending as ``\n`` (``\r\n`` and ``\r`` read the way a
        text-mode ``open`` reads them) and no BOM: what log importers split into records."""
        text = self.text
        if "\r" in text:
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        return text.lstrip("\ufeff")

    @cached_property
    def head_text(self) -> str:
        """The head decoded leniently, for sniffing."""
        return self.head.decode(
            self.encoding if self.encoding != "utf-8-sig" else "utf-8", errors="replace"
        ).lstrip("\ufeff")

    # -- JSON ----------------------------------------------------------------------

    @cached_property
    def json_shape(self) -> JsonShape:
        """What the file looks like from its head: one JSON object, an array, JSONL, or not JSON."""
        if self.is_dir or self.is_binary:
            return "none"
        first = self._first_byte()
        if first is None:  # the text view decides (a UTF-16 file, odd whitespace before the JSON)
            head = self.head_text.lstrip()
            # "[2023-10-15 12:00 INFO] ..." is a log line, not an array.
            if not head or head[0] not in "[{" or (head[0] == "[" and not _ARRAY_START.match(head)):
                return "none"
            first = head[0].encode()
        elif first not in (b"[", b"{"):
            return "none"
        one: JsonShape = "object" if first == b"{" else "array"
        # One value per line (objects, or lists of them), or one (possibly pretty-printed) value?
        if self.suffixes.endswith((".jsonl", ".ndjson")) or self.name.endswith(".log"):
            return "jsonl" if self._first_line_is_value(one) else one
        if self._first_line_is_value(one) and self._looks_multi_line_jsonl():
            return "jsonl"
        return one

    def _first_byte(self) -> bytes | None:
        """The head's first byte of content (at :attr:`_body_start`), when that answers
        :attr:`json_shape` without decoding the head: ``{``, or any other printable ASCII byte
        but ``[`` (then the file is not JSON). ``[`` counts only when the array pattern matches
        the bytes. None leaves it to the text view, which strips Unicode whitespace too."""
        if self.encoding not in ("utf-8", "utf-8-sig"):
            return None
        start = self._body_start
        first = self.head[start : start + 1]
        if first == b"[":
            return None if _ARRAY_START_BYTES.match(self.head, start) is None else first
        return first if b"!" <= first <= b"~" else None  # b"" (nothing but space) is None too

    @cached_property
    def _body_start(self) -> int:
        """Where the head's content starts: past leading UTF-8 BOMs, then JSON whitespace (blank
        lines). One place for :meth:`_first_byte` and the JSONL checks."""
        head = self.head
        start = 0
        while head.startswith(codecs.BOM_UTF8, start):
            start += 3
        m = _NOT_JSON_SPACE.search(head, start)
        return len(head) if m is None else m.start()

    def _first_line_is_value(self, shape: JsonShape) -> bool:
        """The head's first line is one whole JSON object (``shape`` "object") or list ("array")."""
        kind, close = (dict, b"}") if shape == "object" else (list, b"]")
        head = self.head
        start = self._body_start
        nl = head.find(b"\n", start)
        first = head[start:] if nl < 0 else head[start:nl]
        if self.size <= len(head) and (nl < 0 or _NOT_BYTES_SPACE.search(head, nl) is None):
            # The whole (small) file is one line: parse it once, as the document, and cache it.
            try:
                return isinstance(self.json, kind)
            except FormatError:
                return False
        first = first.strip()
        if len(first) >= HEAD_BYTES - 16:
            return True  # a very long first line; assume JSONL, checked when streamed
        if first[-1:] != close:
            return False  # "{" alone (pretty-printed JSON) or a cut-off line: not one value
        try:
            return isinstance(loads(first), kind)
        except orjson.JSONDecodeError:
            return False

    def _looks_multi_line_jsonl(self) -> bool:
        """The second non-blank line of the head starts with ``{`` or ``[`` (a single-line value is
        a one-record JSON file unless the name says JSONL)."""
        head = self.head
        pos = head.find(b"\n", self._body_start)
        while 0 <= pos < len(head):
            nxt = head.find(b"\n", pos + 1)
            line = head[pos + 1 : nxt if nxt >= 0 else len(head)].strip()
            if line:
                return line.startswith((b"{", b"["))
            if nxt < 0:
                break
            pos = nxt
        return False

    @cached_property
    def json(self) -> Any:
        """The whole file parsed as one JSON document (object or array). A file that does not parse
        is read and parsed once: the error is kept and raised again on later asks."""
        if self.is_binary:
            raise FormatError("binary file (NUL bytes), not JSON")
        failed = self.__dict__.get("_json_error")
        if failed is not None:
            raise FormatError(failed.reason, line=failed.line, offset=failed.offset)
        data = self.read_bytes()
        if self.encoding not in ("utf-8", "utf-8-sig"):
            data = self.text.encode("utf-8")
        elif data.startswith(codecs.BOM_UTF8):
            data = data[3:]
        try:
            return loads(data)
        except orjson.JSONDecodeError as exc:
            error = FormatError(
                f"invalid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})",
                line=exc.lineno,
                offset=exc.pos,
            )
            self.__dict__["_json_error"] = error
            raise error from None

    @cached_property
    def json_values(self) -> list[tuple[int, int, Any]] | None:
        """The file as JSON values written one after another, each possibly pretty-printed over many
        lines (the OpenTelemetry Python SDK's ``ConsoleSpanExporter`` prints one indented object per
        span): ``(line, offset, value or FormatError)`` per value, ``line`` where it starts. None when
        the file is one JSON document, JSONL, not JSON, too big, or its first value is not an object
        followed by another value. A value that does not parse is a FormatError entry and reading
        goes on at the next line that starts with ``{``."""
        if self.json_shape != "object" or self.size > WHOLE_FILE_LIMIT:
            return None
        try:
            _doc = self.json
        except FormatError:
            pass
        else:
            return None  # one document
        text = self.text.lstrip("\ufeff")
        decoder = json.JSONDecoder()
        out: list[tuple[int, int, Any]] = []
        pos = _skip_space(text, 0)
        while pos < len(text):
            line = text.count("\n", 0, pos) + 1
            try:
                value, end = decoder.raw_decode(text, pos)
            except json.JSONDecodeError as exc:
                if not out:
                    return None
                out.append((line, pos, FormatError(f"invalid JSON value: {exc.msg}", line=exc.lineno)))
                nxt = text.find("\n{", pos)
                if nxt < 0:
                    break
                pos = nxt + 1
                continue
            if not out and not isinstance(value, dict):
                return None
            out.append((line, pos, value))
            pos = _skip_space(text, end)
        return out if len(out) > 1 else None

    def iter_jsonl(self) -> Iterator[tuple[int, int, Any]]:
        """Stream ``(line_no, offset, value_or_FormatError)`` for JSONL files."""
        with open_lines(self.path) as fh:
            yield from iter_jsonl(fh)

    def iter_array(self) -> Iterator[tuple[int, int, Any]]:
        """Stream ``(index, offset, element)`` of a top-level array. Uses the parsed document if cached."""
        if "json" in self.__dict__ and isinstance(self.__dict__["json"], list):
            for i, item in enumerate(self.__dict__["json"]):
                yield i, -1, item
            return
        with self.path.open("rb") as fh:
            yield from iter_json_array(fh)

    @cached_property
    def first_record(self) -> Any:
        """The first JSON record: the object itself, the first array element, or the first JSONL line.

        None when the file is not JSON. Cheap for big files (streams to the first record only).
        """
        shape = self.json_shape
        try:
            if shape == "object":
                return self.json if self.size <= WHOLE_FILE_LIMIT else None
            if shape == "array":
                if self.size <= 8 * 1024 * 1024:
                    doc = self.json
                    return doc[0] if isinstance(doc, list) and doc else None
                for _i, _off, value in self.iter_array():
                    return value
                return None
            if shape == "jsonl":
                for _line, _off, value in self.iter_jsonl():
                    return None if isinstance(value, FormatError) else value
        except FormatError:
            return None
        return None

    @cached_property
    def first_object(self) -> dict[str, Any] | None:
        """The first record as an object: :attr:`first_record`, or its first element when that
        record is a list (a JSONL line or array element holding several requests); None when it
        is not an object."""
        rec = self.first_record
        if isinstance(rec, list) and rec:
            rec = rec[0]
        return rec if isinstance(rec, dict) else None

    # -- folders -------------------------------------------------------------------

    def children(self) -> list[Path]:
        """Sorted entries of a folder (empty for files)."""
        if not self.is_dir:
            return []
        return sorted(self.path.iterdir(), key=lambda p: p.name)  # by name: Path ordering is slow
