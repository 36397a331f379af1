"""Streaming readers for big JSON files: JSONL line by line, and the elements of a top-level JSON array.

A top-level array (the MAST-Data full file is one 200 MB array) is split into its
elements by a byte scanner that tracks only strings and brackets, and each element
is parsed with orjson. Memory is bounded by the largest element plus one chunk,
not by the file.
"""

from __future__ import annotations

import codecs
import json
import os
from collections.abc import Iterator
from typing import IO, Any

import orjson

from mastkit.errors import FormatError

CHUNK = 4 * 1024 * 1024


def loads(data: bytes | str) -> Any:
    """Parse JSON with orjson; fall back to the stdlib parser for NaN/Infinity, which Python's json
    module writes and real data sets contain (orjson rejects them). Raises orjson.JSONDecodeError."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        try:
            return json.loads(data)
        except (ValueError, RecursionError):
            pass
        raise


LINE_BUFFER = 1024 * 1024


def open_lines(path: str | os.PathLike[str]) -> IO[bytes]:
    """Open a file to iterate over its lines. The buffer is 1 MiB: with the default 8 KiB, a line
    longer than the buffer (a 100 KB chat record is common) is put together from many reads, which
    made iterating a 20 MB JSONL take 17 ms instead of 4."""
    return open(path, "rb", buffering=LINE_BUFFER)


def iter_jsonl(fh: IO[bytes]) -> Iterator[tuple[int, int, Any]]:
    """Yield ``(line_no, byte_offset, value_or_error)`` for each non-blank line.

    A line that is not valid JSON yields a :class:`FormatError` in place of the value,
    so one bad line does not stop the rest.
    """
    offset = 0
    for line_no, line in enumerate(fh, start=1):
        start = offset
        offset += len(line)
        if line_no == 1 and line.startswith(b"\xef\xbb\xbf"):
            line = line[3:]  # before the blank test: a BOM on a line of its own is a blank line
        if not line or line.isspace():  # isspace stops at the first other byte: no copy of the line
            continue
        try:
            yield line_no, start, loads(line)  # JSON allows the surrounding whitespace and newline
        except orjson.JSONDecodeError as exc:
            yield line_no, start, FormatError(bad_line_reason(exc, line_no), line=line_no, offset=start)


def bad_line_reason(exc: json.JSONDecodeError, line_no: int) -> str:
    """What is wrong with line ``line_no`` of a JSONL file, which did not parse: the column, or
    that the line ends inside a value (a record cut off, as a writer that crashed leaves it). The
    parser's own position counts lines within the record, which would be read as the file's."""
    if exc.lineno > 1:
        return f"invalid JSON on line {line_no}: {exc.msg} (the line ends inside a value)"
    return f"invalid JSON on line {line_no}, column {exc.colno}: {exc.msg}"


_DECODER = json.JSONDecoder()
_WS_STR = " \t\r\n"


def iter_json_array(fh: IO[bytes], chunk_size: int = CHUNK) -> Iterator[tuple[int, int, Any]]:
    """Yield ``(index, byte_offset, element)`` for each element of a top-level JSON array.

    Streams: memory follows the largest element, not the file. Each element is parsed in place by
    the standard library's C scanner (``JSONDecoder.raw_decode``), which also finds where it ends, so
    a huge array costs about one ``json.loads`` of the same bytes. NaN/Infinity are accepted.

    Raises :class:`FormatError` (with the byte offset) when the file is not an array, is truncated,
    is not UTF-8, or an element is not valid JSON.
    """
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    buf = ""
    pos = 0
    eof = False
    mark, mark_bytes = 0, 0  # byte offset of buf[mark]
    read_bytes = 0

    def offset(i: int) -> int:
        nonlocal mark, mark_bytes
        if i >= mark:
            mark_bytes += (i - mark) if buf.isascii() else len(buf[mark:i].encode("utf-8"))
        else:  # pragma: no cover - offsets are asked in increasing order
            mark_bytes -= len(buf[i:mark].encode("utf-8"))
        mark = i
        return mark_bytes

    def more(size: int) -> bool:
        nonlocal buf, pos, eof, read_bytes, mark
        if eof:
            return False
        data = fh.read(size)
        try:
            text = decoder.decode(data, final=not data)
        except UnicodeDecodeError as exc:
            raise FormatError(f"not valid UTF-8: {exc.reason}", offset=read_bytes + exc.start) from None
        read_bytes += len(data)
        if not data:
            eof = True
            if not text:
                return False  # nothing new: leave the buffer (and callers' indexes) alone
        if pos > 0:  # drop what is consumed; keep offsets right
            offset(pos)
            buf, mark, pos = buf[pos:], 0, 0
        buf += text
        return True

    def skip_ws() -> None:
        nonlocal pos
        while True:
            while pos < len(buf) and buf[pos] in _WS_STR:
                pos += 1
            if pos < len(buf) or not more(chunk_size):
                return

    skip_ws()
    if buf.startswith("\ufeff", pos):
        pos += 1
        skip_ws()
    if pos >= len(buf):
        raise FormatError("empty file: expected a JSON array", offset=0)
    if buf[pos] != "[":
        raise FormatError("not a JSON array", offset=offset(pos))
    pos += 1
    index = 0
    expect_value = False
    while True:
        skip_ws()
        if pos >= len(buf):
            raise FormatError("truncated JSON array: missing ']'", offset=offset(pos))
        if buf[pos] == "]" and not expect_value:
            return
        size = chunk_size
        while True:
            try:
                value, end = _DECODER.raw_decode(buf, pos)
            except json.JSONDecodeError as exc:
                if not eof and more(size):
                    size *= 2  # a big element: read geometrically more
                    continue
                where = f"array element {index}" if exc.pos > pos else "the array"
                raise FormatError(f"invalid JSON in {where}: {exc.msg}", offset=offset(pos)) from None
            except RecursionError:
                raise FormatError(f"array element {index} is nested too deeply", offset=offset(pos)) from None
            if end + 64 > len(buf) and not eof and more(size):
                continue  # a number may go on in the next chunk ("0" of "0.5"): decode it again
            break
        yield index, offset(pos), value
        index += 1
        pos = end
        skip_ws()
        if pos >= len(buf):
            raise FormatError("truncated JSON array: missing ']'", offset=offset(pos))
        if buf[pos] == ",":
            pos += 1
            expect_value = True
        elif buf[pos] == "]":
            return
        else:
            raise FormatError(f"expected ',' or ']' after array element {index - 1}", offset=offset(pos))
