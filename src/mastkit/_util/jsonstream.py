"""Streaming readers for big JSON files: JSONL line by line, and the elements of a top-level JSON array.

A top-level array (the MAST-Data full file is one 200 MB array) is split into its
elements by a byte scanner that tracks only strings and brackets, and each element
is parsed with orjson. Memory is bounded by the largest element plus one chunk,
not by the file.
"""

from __future__ import annotations

import json
import re
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


_STRUCT = re.compile(rb'[\[\]{},"]')
# From an opening quote up to (not including) the closing quote, or to the end of the buffer.
_STRING_BODY = re.compile(rb'"[^"\\]*(?:\\[\s\S][^"\\]*)*')
_WS = b" \t\r\n"


def iter_jsonl(fh: IO[bytes]) -> Iterator[tuple[int, int, Any]]:
    """Yield ``(line_no, byte_offset, value_or_error)`` for each non-blank line.

    A line that is not valid JSON yields a :class:`FormatError` in place of the value,
    so one bad line does not stop the rest.
    """
    offset = 0
    for line_no, line in enumerate(fh, start=1):
        start = offset
        offset += len(line)
        stripped = line.strip()
        if not stripped:
            continue
        if line_no == 1 and stripped.startswith(b"\xef\xbb\xbf"):
            stripped = stripped[3:]
        try:
            yield line_no, start, loads(stripped)
        except orjson.JSONDecodeError as exc:
            yield (
                line_no,
                start,
                FormatError(f"invalid JSON on line {line_no}: {exc}", line=line_no, offset=start),
            )


def iter_json_array(fh: IO[bytes], chunk_size: int = CHUNK) -> Iterator[tuple[int, int, Any]]:
    """Yield ``(index, byte_offset, element)`` for each element of a top-level JSON array.

    Raises :class:`FormatError` (with the byte offset) when the file is not an array,
    is truncated, or an element is not valid JSON.
    """
    buf = b""
    base = 0  # file offset of buf[0]
    pos = 0
    eof = False

    def more() -> bool:
        nonlocal buf, base, pos, eof
        if eof:
            return False
        data = fh.read(max(chunk_size, len(buf) - pos))  # grow geometrically for huge elements
        if not data:
            eof = True
            return False
        if pos > 0:
            buf = buf[pos:]
            base += pos
            pos = 0
        buf += data
        return True

    # Find the opening bracket.
    while True:
        while pos < len(buf) and buf[pos] in _WS:
            pos += 1
        if pos < len(buf):
            break
        if not more():
            raise FormatError("empty file: expected a JSON array", offset=base + pos)
    if buf.startswith(b"\xef\xbb\xbf", pos):
        pos += 3
    if buf[pos : pos + 1] != b"[":
        raise FormatError("not a JSON array", offset=base + pos)
    pos += 1

    index = 0
    while True:
        # Skip whitespace to the element start (or the closing bracket).
        while True:
            while pos < len(buf) and buf[pos] in _WS:
                pos += 1
            if pos < len(buf):
                break
            if not more():
                raise FormatError("truncated JSON array: missing ']'", offset=base + pos)
        if buf[pos : pos + 1] == b"]":
            return
        start = pos
        depth = 0
        scan = pos
        end = -1
        while end < 0:
            m = _STRUCT.search(buf, scan)
            need_more = m is None
            string_end = 0
            if m is None:
                scan = len(buf)
            elif m.group() == b'"':
                sm = _STRING_BODY.match(buf, m.start())
                string_end = sm.end() if sm is not None else len(buf)
                if buf[string_end : string_end + 1] != b'"':
                    # The string may go on in the next chunk: read more, then rescan it.
                    need_more = True
                    scan = m.start()
            if m is None or need_more:
                # Keep the element in the buffer (compact only up to its start).
                pos = start
                old_base = base
                if not more():
                    raise FormatError("truncated JSON array", offset=base + len(buf))
                shift = base - old_base
                start -= shift
                scan -= shift
                continue
            ch = m.group()
            at = m.start()
            if ch == b'"':
                scan = string_end + 1
                if depth == 0:
                    end = scan
            elif ch in b"[{":
                depth += 1
                scan = at + 1
            elif ch in b"]}":
                if depth == 0:
                    end = at  # the array's own ']' right after a scalar element
                else:
                    depth -= 1
                    scan = at + 1
                    if depth == 0:
                        end = scan
            elif depth == 0:  # a comma after a scalar element
                end = at
            else:
                scan = at + 1
        element = buf[start:end]
        try:
            value = loads(element)
        except orjson.JSONDecodeError as exc:
            raise FormatError(f"invalid JSON in array element {index}: {exc}", offset=base + start) from None
        yield index, base + start, value
        index += 1
        pos = end
        # Expect a comma or the closing bracket.
        while True:
            while pos < len(buf) and buf[pos] in _WS:
                pos += 1
            if pos < len(buf):
                break
            if not more():
                raise FormatError("truncated JSON array: missing ']'", offset=base + pos)
        ch1 = buf[pos : pos + 1]
        if ch1 == b",":
            pos += 1
        elif ch1 == b"]":
            return
        else:
            raise FormatError(f"expected ',' or ']' after array element {index - 1}", offset=base + pos)
