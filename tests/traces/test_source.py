from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import sqlite_file
from mastkit.errors import FormatError
from mastkit.traces import source as source_module
from mastkit.traces.source import HEAD_BYTES, Source


def write(tmp_path: Path, name: str, data: bytes) -> Source:
    p = tmp_path / name
    p.write_bytes(data)
    return Source(p)


@pytest.mark.parametrize(
    ("data", "shape"),
    [
        (b'{"a": 1}', "object"),
        (b'{\n  "a": 1\n}\n', "object"),
        (b'{"a": 1}\n{"a": 2}\n', "jsonl"),
        (b"[1, 2]", "array"),
        (b"[1, 2]\n", "array"),
        (b"[\n  1\n]\n", "array"),
        (b'[{"a": 1}]\n[{"a": 2}]\n', "jsonl"),  # one list per line (batched exports)
        (b'{"a": 1}\n[{"a": 2}]\n', "jsonl"),
        (b'\xef\xbb\xbf[{"a": 1}]', "array"),
        (b"[2023-15-10 00:37:23 INFO] hello", "none"),
        (b"[INFO] started", "none"),
        (b"plain words", "none"),
        (b"", "none"),
    ],
)
def test_json_shape_sniffing(tmp_path: Path, data: bytes, shape: str) -> None:
    assert write(tmp_path, "f.txt", data).json_shape == shape


def _shape_by_text(src: Source) -> str:
    """How json_shape classifies a head from its decoded text alone (the way it did before it
    read the first byte): the reference the byte path must agree with."""
    if src.is_binary:
        return "none"
    head = src.head_text.lstrip()
    if not head:
        return "none"
    if head[0] == "[":
        return "array" if source_module._ARRAY_START.match(head) else "none"
    return "object" if head[0] == "{" else "none"


_HEAD_CHARS = st.sampled_from(
    [" ", "\t", "\r", "\n", "\x0b", "\x0c", "\x1c", "\x85", "\xa0", "\u2028", "\u3000", "\ufeff",
     "[", "]", "{", "}", '"', ",", "1", "٣", "-", ".", "e", "t", "x", "é", "\x00"]
)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(
    text=st.lists(_HEAD_CHARS, max_size=12).map("".join),
    bom=st.booleans(),
    encoding=st.sampled_from(["utf-8", "utf-16"]),
)
def test_json_shape_from_bytes_agrees_with_the_text_view(
    tmp_path_factory: pytest.TempPathFactory, text: str, bom: bool, encoding: str
) -> None:
    data = text.encode(encoding)  # utf-16 writes its own BOM
    if bom and encoding == "utf-8":
        data = b"\xef\xbb\xbf" + data
    path = tmp_path_factory.mktemp("shape") / "f.txt"
    path.write_bytes(data)
    shape = Source(path).json_shape
    expected = _shape_by_text(Source(path))
    assert shape == expected or (shape == "jsonl" and expected != "none")  # JSONL: one value per line


@pytest.mark.parametrize("size", [0, 1, 5_000, HEAD_BYTES - 1, HEAD_BYTES, HEAD_BYTES + 1, 3 * HEAD_BYTES])
@pytest.mark.parametrize("grown", [0, 1, 2 * HEAD_BYTES])
def test_head_is_the_first_64k_even_of_a_file_that_grew(tmp_path: Path, size: int, grown: int) -> None:
    """The head is read to the size the stat gave; bytes written after the stat are read too, up to
    the head's limit (a log still being written)."""
    data = bytes(range(256)) * ((size + grown) // 256 + 1)
    path = tmp_path / "f.bin"
    path.write_bytes(data[:size])
    src = Source(path)
    with path.open("ab") as fh:
        fh.write(data[size : size + grown])
    assert src.head == data[: min(size + grown, HEAD_BYTES)]
    assert src.size == size


def test_first_record_of_each_shape(tmp_path: Path) -> None:
    assert write(tmp_path, "a.json", b'[{"x": 1}, {"x": 2}]').first_record == {"x": 1}
    assert write(tmp_path, "b.jsonl", b'{"x": 1}\n{"x": 2}\n').first_record == {"x": 1}
    assert write(tmp_path, "c.json", b'{"x": 1}').first_record == {"x": 1}
    assert write(tmp_path, "d.log", b"hello").first_record is None


def test_first_object_looks_into_a_list_record(tmp_path: Path) -> None:
    assert write(tmp_path, "a.jsonl", b'{"x": 1}\n{"x": 2}\n').first_object == {"x": 1}
    assert write(tmp_path, "b.json", b'[[{"x": 1}]]').first_object == {"x": 1}
    assert write(tmp_path, "c.json", b'{"x": 1}').first_object == {"x": 1}
    assert write(tmp_path, "d.json", b"[[1, 2]]").first_object is None
    assert write(tmp_path, "e.json", b"[[]]").first_object is None
    assert write(tmp_path, "f.log", b"hello").first_object is None


def test_utf16_text_is_decoded(tmp_path: Path) -> None:
    src = write(tmp_path, "u.txt", "User: héllo\n".encode("utf-16"))
    assert not src.is_binary
    assert src.text.startswith("User: héllo")


def test_bad_utf8_names_the_byte_offset(tmp_path: Path) -> None:
    src = write(tmp_path, "bad.txt", b"hello \xff\xfe world")
    with pytest.raises(FormatError, match="at byte 6") as info:
        _ = src.text
    assert info.value.offset == 6


def test_binary_detected(tmp_path: Path) -> None:
    src = write(tmp_path, "b.bin", b"\x00\x01\x02garbage")
    assert src.is_binary
    with pytest.raises(FormatError, match="binary"):
        _ = src.text


def test_invalid_json_reports_line(tmp_path: Path) -> None:
    src = write(tmp_path, "x.json", b'{\n  "a": 1,\n  "b": \n}')
    with pytest.raises(FormatError, match="line 4") as info:
        _ = src.json
    assert info.value.line == 4


def test_invalid_json_is_read_and_parsed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every importer that asks for the document of a file that is not one JSON value (concatenated
    objects, a text log) gets the same error, without the file being read and parsed again."""
    src = write(tmp_path, "x.json", b'{"a": 1}\n{"b": 2}\n' + b" " * 70_000)  # over the head size
    reads = 0
    read_bytes = Source.read_bytes

    def counting(self: Source) -> bytes:
        nonlocal reads
        reads += 1
        return read_bytes(self)

    monkeypatch.setattr(Source, "read_bytes", counting)
    for _ in range(3):
        with pytest.raises(FormatError, match="line 2") as info:
            _ = src.json
        assert (info.value.line, info.value.offset) == (2, 9)
    assert reads == 1


@pytest.mark.parametrize(
    "data",
    [
        b"\xef\xbb\xbfone\r\ntwo\r\n\r\nfour",  # UTF-8 BOM, CRLF, no final newline
        b"one\ntwo\n\nfour",
        b"one\rtwo\r\rfour",  # old Mac line ends
        "one\ntwo\n\nfour".encode("utf-16"),  # with its BOM
    ],
)
def test_log_text_has_newline_line_ends_and_no_bom(tmp_path: Path, data: bytes) -> None:
    assert write(tmp_path, "log.txt", data).log_text == "one\ntwo\n\nfour"


def test_log_text_bad_bytes_raise_format_error_with_the_offset(tmp_path: Path) -> None:
    src = write(tmp_path, "bad.log", b"fine\nalso fine\nbroken \xff here\n")
    with pytest.raises(FormatError, match="not valid UTF-8") as info:
        _ = src.log_text
    assert info.value.offset == 22


def test_sqlite_schema_read_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "a.db"
    sqlite_file(
        db, "CREATE TABLE t (x, y)", 'CREATE TABLE "odd ""name""" (z)', "CREATE VIEW v AS SELECT x FROM t"
    )
    connects: list[object] = []
    real = sqlite3.connect
    monkeypatch.setattr(sqlite3, "connect", lambda *a, **k: connects.append(a) or real(*a, **k))
    src = Source(db)
    assert src.sqlite_schema == {"t": {"x", "y"}, 'odd "name"': {"z"}}  # tables only, not views
    assert src.sqlite_schema is src.sqlite_schema and len(connects) == 1  # cached
    # not SQLite, or not readable as SQLite: None, and a file without the magic is never opened
    assert write(tmp_path, "b.json", b"{}").sqlite_schema is None
    assert Source(tmp_path).sqlite_schema is None
    assert len(connects) == 1
    assert write(tmp_path, "c.db", b"SQLite format 3\x00" + bytes(range(256)) * 8).sqlite_schema is None


def test_json_values_reads_concatenated_pretty_printed_objects(tmp_path: Path) -> None:
    stream = tmp_path / "spans.txt"
    stream.write_bytes(b'{\n  "a": 1\n}\n{\n  "b": [1,\n 2]\n}\n\n{"c": 3}\n')
    values = Source(stream).json_values
    assert values is not None
    assert [(line, value) for line, _off, value in values] == [
        (1, {"a": 1}),
        (4, {"b": [1, 2]}),
        (9, {"c": 3}),
    ]
    one = tmp_path / "one.json"
    one.write_bytes(b'{\n  "a": 1\n}\n')
    assert Source(one).json_values is None  # one document
    broken = tmp_path / "broken.json"
    broken.write_bytes(b'{\n  "a": 1,\n')
    assert Source(broken).json_values is None  # a broken document, not a stream
    array = tmp_path / "list.json"
    array.write_bytes(b"[1]\n[2]\n")
    assert Source(array).json_values is None
