from __future__ import annotations

import contextlib
import io

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mastkit._util.jsonstream import iter_json_array, iter_jsonl
from mastkit.errors import FormatError

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**62), 2**62) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4),
    max_leaves=20,
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(json_values, max_size=8), st.integers(1, 9), st.booleans())
def test_array_elements_match_orjson(arr: list[object], chunk: int, indent: bool) -> None:
    data = orjson.dumps(arr, option=orjson.OPT_INDENT_2 if indent else 0)
    got = [value for _i, _off, value in iter_json_array(io.BytesIO(data), chunk_size=chunk)]
    assert got == arr


@settings(max_examples=300, deadline=None)
@given(st.lists(json_values, min_size=1, max_size=6), st.integers(1, 9), st.data())
def test_truncated_array_always_raises(arr: list[object], chunk: int, data: st.DataObject) -> None:
    raw = orjson.dumps(arr)
    cut = data.draw(st.integers(0, len(raw) - 1))
    with pytest.raises(FormatError):
        list(iter_json_array(io.BytesIO(raw[:cut]), chunk_size=chunk))


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=80), st.integers(1, 9))
def test_random_bytes_only_raise_format_error(raw: bytes, chunk: int) -> None:
    with contextlib.suppress(FormatError):
        list(iter_json_array(io.BytesIO(raw), chunk_size=chunk))


def test_offsets_point_at_elements() -> None:
    raw = b'[ {"a": 1},\n  {"b": "x,]}"} ]'
    items = list(iter_json_array(io.BytesIO(raw), chunk_size=3))
    assert [v for _i, _o, v in items] == [{"a": 1}, {"b": "x,]}"}]
    assert [off for _i, off, _v in items] == [raw.index(b'{"a"'), raw.index(b'{"b"')]


def test_truncation_reports_offset() -> None:
    with pytest.raises(FormatError) as info:
        list(iter_json_array(io.BytesIO(b'[{"a": 1}, {"b": '), chunk_size=4))
    assert info.value.offset is not None


def test_jsonl_bad_line_is_reported_and_rest_continues() -> None:
    raw = b'{"a": 1}\n{broken\n\n{"c": 3}\n'
    items = list(iter_jsonl(io.BytesIO(raw)))
    assert [line for line, _o, _v in items] == [1, 2, 4]
    assert isinstance(items[1][2], FormatError) and items[1][2].line == 2
    assert items[2][2] == {"c": 3}
    assert items[2][1] == raw.index(b'{"c"')


@pytest.mark.parametrize("first", [b"\xef\xbb\xbf\n", b"\xef\xbb\xbf \r\n", b"\xef\xbb\xbf"])
def test_jsonl_a_bom_before_a_blank_first_line_is_blank(first: bytes) -> None:
    """A UTF-8 BOM then a blank line (or nothing) is a blank line, as Source's JSONL sniffing reads it."""
    raw = first + b'{"a": 1}\n' if first.endswith(b"\n") else first
    assert [(line, value) for line, _o, value in iter_jsonl(io.BytesIO(raw))] == (
        [(2, {"a": 1})] if first.endswith(b"\n") else []
    )


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        # a record cut off (a writer that crashed): the parser's "line 2" is the record's, not the file's
        (
            b'{"type": "assistant", "broken":\n',
            "invalid JSON on line 3: unexpected end of data (the line ends inside a value)",
        ),
        (b'{"a": x}\n', "invalid JSON on line 3, column 7: unexpected character, expected a JSON value"),
        (b'{"a": 1', "invalid JSON on line 3, column 8: unexpected end of data"),  # no newline at the end
    ],
)
def test_jsonl_bad_line_reason_names_the_file_line_and_column(line: bytes, reason: str) -> None:
    items = list(iter_jsonl(io.BytesIO(b'{"a": 1}\n\n' + line)))
    err = items[-1][2]
    assert isinstance(err, FormatError) and err.reason == reason and err.line == 3
