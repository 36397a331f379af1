"""Reading a model's reply: the JSON object in it, and lenient scalar conversions.

Shared by every feature that asks a model about a trace (the judge, the LLM attributor, and
the verifier, feedback and taxonomy learning built on :mod:`mastkit.llm`).
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from mastkit.errors import MastkitError

__all__ = ["ReplyError", "as_int", "json_object"]


class ReplyError(MastkitError):
    """A model reply is not valid JSON of the expected shape."""


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)


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
    if isinstance(v, str) and v.strip().lstrip("-").isdigit():
        return int(v.strip())
    return None
