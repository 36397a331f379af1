"""Reading a model's reply: the JSON object in it, and lenient scalar conversions.

Shared by every feature that asks a model about a trace (the judge, the LLM attributor, and
the verifier, feedback and taxonomy learning built on :mod:`mastkit.llm`).
"""

from __future__ import annotations

import re
from typing import Any

import orjson
from pydantic import BaseModel

from mastkit.errors import MastkitError

__all__ = ["ReplyError", "as_int", "json_object", "strict_schema"]


class ReplyError(MastkitError):
    """A model reply is not valid JSON of the expected shape."""


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)
_INT = re.compile(r"-?[0-9]+")


def json_object(text: str) -> dict[str, Any]:
    """The first JSON object in ``text`` (inside markdown fences first, then anywhere).

    Raises:
        ReplyError: there is none.
    """
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    for cand in candidates:
        start = cand.find("{")
        while start != -1:
            depth = 0
            in_str = False
            esc = False
            for i in range(start, len(cand)):
                ch = cand[i]
                if in_str:
                    if esc:
                        esc = False
                    elif ch == "\\":
                        esc = True
                    elif ch == '"':
                        in_str = False
                elif ch == '"':
                    in_str = True
                elif ch == "{":
                    depth += 1
                elif ch == "}":
                    depth -= 1
                    if depth == 0:
                        try:
                            value = orjson.loads(cand[start : i + 1])
                        except orjson.JSONDecodeError:
                            break
                        if isinstance(value, dict):
                            return value
                        break
            start = cand.find("{", start + 1)
    raise ReplyError("no JSON object found in the reply")


def as_int(v: Any) -> int | None:
    """An integer from an int or a string of digits; None for anything else (booleans too)."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, str) and _INT.fullmatch(v.strip()):
        # ASCII digits only: "--5" or "²" are not integers (str.isdigit accepts both, int() does not)
        return int(v.strip())
    return None


def strict_schema(model: type[BaseModel]) -> dict[str, Any]:
    """``model``'s JSON schema in the strict form structured-output APIs accept.

    Every property is required (nullable ones say so with ``null`` in their type), objects
    forbid extra properties, and the numeric bounds and titles, which some servers reject,
    are dropped; property order is kept.
    """
    schema = model.model_json_schema()

    def walk(node: Any, names: bool = False) -> Any:
        if isinstance(node, dict):
            if names:  # a "properties" mapping: its keys are field names, not schema keywords
                return {k: walk(v) for k, v in node.items()}
            out = {
                k: walk(v, names=k in ("properties", "$defs"))
                for k, v in node.items()
                if k not in ("title", "minimum", "maximum", "default")
            }
            if out.get("type") == "object" and "properties" in out:
                out["required"] = list(out["properties"])
                out["additionalProperties"] = False
            return out
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    result: dict[str, Any] = walk(schema)
    return result
