"""Find the lines of a long text that start with a pattern, fast.

``re.compile(r"(?m)^...")`` makes the regex engine try the pattern at every position of the
text; the same pattern behind a literal ``\\n`` lets the engine jump from newline to newline.
:class:`LineStart` compiles a pattern both ways: body alone for the first line, ``\\n`` + body for
the others. Log importers use it to split a whole log into records in one scan.
"""

from __future__ import annotations

import re


class LineStart:
    """A pattern that must match at the start of a line (``body`` has no ``^``)."""

    def __init__(self, body: str, flags: int = 0) -> None:
        self.at = re.compile(body, flags | re.MULTILINE)
        """The pattern itself: ``at.match(line)`` checks one line."""
        self._after_nl = re.compile("\n(?:" + body + ")", flags | re.MULTILINE)

    def matches(self, text: str) -> list[tuple[int, re.Match[str]]]:
        """``(line start, match)`` of every line of ``text`` that starts with the pattern (the match
        of a later line includes the newline before it; its groups do not)."""
        out: list[tuple[int, re.Match[str]]] = []
        if (first := self.at.match(text)) is not None:
            out.append((0, first))
        out.extend((m.start() + 1, m) for m in self._after_nl.finditer(text))
        return out

    def heads(self, text: str) -> list[tuple[int, tuple[str | None, ...]]]:
        """``(line start, groups)`` of every matching line."""
        return [(start, m.groups()) for start, m in self.matches(text)]
