"""Reading a model's reply: :func:`mastkit.llm.reply.json_object`, ``as_int`` and ``strict_schema``."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, Field

from mastkit.llm.reply import ReplyError, as_int, json_object, strict_schema


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ('Sure! {"a": {"b": [1, 2]}} hope that helps', {"a": {"b": [1, 2]}}),
        # the fenced object wins over one written before the fence
        ('{"early": 1}\n```json\n{"fenced": 2}\n```', {"fenced": 2}),
        ('```JSON\n{"upper": true}\n```', {"upper": True}),
        ('```\n{"bare": true}\n```', {"bare": True}),
        # braces and quotes inside strings do not count
        ('note {"a": "}{", "b": "x"} end', {"a": "}{", "b": "x"}),
        ('{"a": "say \\"}\\" twice", "n": 1}', {"a": 'say "}" twice', "n": 1}),
        ('{"path": "C:\\\\", "n": 2}', {"path": "C:\\", "n": 2}),
        # an invalid or unclosed object is skipped for the next one
        ('{not json} then {"b": 2}', {"b": 2}),
        ('{ oops {"c": 3}', {"c": 3}),
        ('[{"in": "array"}]', {"in": "array"}),
        ('{"": 1}', {"": 1}),
    ],
)
def test_json_object_finds_the_first_object(text: str, expected: dict[str, Any]) -> None:
    assert json_object(text) == expected


@pytest.mark.parametrize("text", ["", "no json here", '{"a": 1', "[1, 2]", '"{"'])
def test_json_object_raises_without_one(text: str) -> None:
    with pytest.raises(ReplyError, match=r"^no JSON object found in the reply$"):
        json_object(text)


@pytest.mark.parametrize(
    ("value", "expected"),
    [(3, 3), (0, 0), (-2, -2), ("12", 12), (" -4 ", -4), ("4.5", None), ("x", None), ("", None), (True, None),
     (False, None), (None, None), (4.0, None), ("--5", None), ("²", None), ("X5", None), ("5-", None)],
)  # fmt: skip
def test_as_int(value: Any, expected: int | None) -> None:
    # "--5" and "²" used to raise ValueError (str.isdigit accepts them, int() does not)
    assert as_int(value) == expected


class _Inner(BaseModel):
    x: int = Field(default=1, ge=0, le=5, title="X")
    note: str | None


class _Outer(BaseModel):
    inner: _Inner
    items: list[_Inner]
    counts: dict[str, int]


def test_strict_schema_requires_every_property_and_drops_what_servers_reject() -> None:
    schema = strict_schema(_Outer)
    inner = schema["$defs"]["_Inner"]
    assert inner == {
        "type": "object",
        "properties": {"x": {"type": "integer"}, "note": {"anyOf": [{"type": "string"}, {"type": "null"}]}},
        "required": ["x", "note"],
        "additionalProperties": False,
    }
    assert schema["required"] == ["inner", "items", "counts"] and schema["additionalProperties"] is False
    assert schema["properties"]["items"] == {"type": "array", "items": {"$ref": "#/$defs/_Inner"}}
    # a mapping has no fixed properties: nothing is required of it
    assert schema["properties"]["counts"] == {"type": "object", "additionalProperties": {"type": "integer"}}
