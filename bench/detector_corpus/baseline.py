"""A naive keyword-and-regex baseline: a few English patterns per mode over the trace's text.

It is what an afternoon gives: no structure, no negation, no parsing. A mode with no pattern,
or whose patterns do not match, is ``absent``; the baseline never says ``unknown``. Detectors
must beat it to earn their place.
"""

from __future__ import annotations

import re

from mastkit.traces.model import Trace

_I = re.IGNORECASE
PATTERNS: dict[str, list[re.Pattern[str]]] = {
    "FM-1.1": [
        re.compile(
            r"\b(instead of|ignor(?:e|ed|ing) the (?:instruction|requirement|constraint)|"
            r"not what (?:was|you) asked|violat\w+ (?:the )?(?:policy|constraint))\b",
            _I,
        )
    ],
    "FM-1.2": [
        re.compile(
            r"\b(as the (?:manager|reviewer|ceo)|i(?:'ll| will) (?:just )?do it myself|"
            r"not my role|on behalf of)\b",
            _I,
        )
    ],
    "FM-1.3": [re.compile(r"\b(again|once more|repeat(?:ed|ing)?|same (?:error|result|output))\b", _I)],
    "FM-1.4": [
        re.compile(
            r"\b(as i (?:said|mentioned)|i already (?:told|gave|said)|"
            r"what was the|remind me)\b",
            _I,
        )
    ],
    "FM-1.5": [
        re.compile(
            r"\b(max(?:imum)? (?:turns|steps|iterations)|continue|keep going|"
            r"anything else)\b",
            _I,
        )
    ],
    "FM-2.1": [
        re.compile(
            r"\b(start(?:ing)? over|from scratch|let'?s (?:begin|start) again|restart(?:ing)? the)\b", _I
        )
    ],
    "FM-2.2": [
        re.compile(
            r"\b(i(?:'ll| will) assume|assuming|probably (?:means|meant)|i guess|go(?:ing)? with)\b", _I
        )
    ],
    "FM-2.3": [re.compile(r"\b(while i'?m (?:here|at it)|side note|unrelated|tangent|by the way)\b", _I)],
    "FM-2.4": [
        re.compile(r"\b(forgot to (?:mention|tell)|didn'?t (?:mention|tell)|should have (?:said|told))\b", _I)
    ],
    "FM-2.5": [
        re.compile(r"\b(as is|ignor(?:e|ed|ing) (?:the )?(?:review|feedback|suggestion|comment))\b", _I)
    ],
    "FM-2.6": [re.compile(r"\b(i(?:'ll| will) (?:now )?(?:run|check|read|look))\b", _I)],
    "FM-3.1": [
        re.compile(
            r"\b(giv(?:e|ing) up|stop(?:ping)? here|unable to|not able to|couldn'?t|can(?:no|')t)\b", _I
        )
    ],
    "FM-3.2": [re.compile(r"\b(fixed|done|complete[d]?|resolved|all set)\b", _I)],
    "FM-3.3": [
        re.compile(r"\b(failed|failure|error)\b", _I),
        re.compile(r"\b(pass(?:es|ed)?|verified|green|healthy)\b", _I),
    ],
}
"""Per mode: all patterns must match somewhere in the trace (one pattern is the common case)."""

UNLESS: dict[str, re.Pattern[str]] = {
    "FM-3.2": re.compile(r"\b(passed|verified|checked|confirmed|healthy|successfully rolled out)\b", _I),
}
"""Per mode: a pattern that, when it matches anywhere, turns the mode off (a check was mentioned)."""


def trace_text(trace: Trace) -> str:
    """The text of every live event, one per line."""
    return "\n".join(e.text() for e in trace.events if not e.is_copied_context)


def baseline_verdicts(trace: Trace) -> dict[str, bool]:
    """``{code: present}`` for the 14 MAST modes."""
    text = trace_text(trace)
    out = {}
    for code, pats in PATTERNS.items():
        unless = UNLESS.get(code)
        out[code] = all(p.search(text) for p in pats) and not (unless is not None and unless.search(text))
    return out
