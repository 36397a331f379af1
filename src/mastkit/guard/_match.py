"""Case-insensitive glob lists for tool names, compiled once and cached per name."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable


class Globs:
    """A list of shell-style patterns (``edit*``, ``mcp__*__write``) matched case-insensitively."""

    __slots__ = ("_cache", "_regex", "patterns")

    def __init__(self, patterns: Iterable[str] = ()) -> None:
        self.patterns: tuple[str, ...] = tuple(patterns)
        body = "|".join(fnmatch.translate(p.lower()) for p in self.patterns)
        self._regex = re.compile(body) if body else None
        self._cache: dict[str, bool] = {}

    def __call__(self, name: str | None) -> bool:
        """True when ``name`` matches one of the patterns."""
        if name is None or self._regex is None:
            return False
        hit = self._cache.get(name)
        if hit is None:
            hit = self._regex.match(name.lower()) is not None
            if len(self._cache) < 4096:
                self._cache[name] = hit
        return hit

    def __bool__(self) -> bool:
        return bool(self.patterns)
