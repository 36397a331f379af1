"""``--shard i/N``: split a run over N plain jobs (a SLURM or Kubernetes job array) without any
coordinator.

Each trace belongs to exactly one shard, chosen from its content hash
(:func:`mastkit.store.db.trace_hash`), so every job can read the same input, keep its own
traces and skip the others; the same trace lands in the same shard on every machine and in
every rerun (resume works per shard).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from mastkit.errors import MastkitError
from mastkit.store.db import trace_hash
from mastkit.traces.model import Trace

__all__ = ["Shard", "in_shard", "parse_shard", "shard_of"]

_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` of ``count`` (0-based: ``0/4`` .. ``3/4``)."""

    index: int
    count: int

    def __post_init__(self) -> None:
        if self.count < 1 or not 0 <= self.index < self.count:
            raise MastkitError(f"shard {self.index}/{self.count}: use i/N with 0 <= i < N")

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def holds(self, trace: Trace) -> bool:
        """Whether ``trace`` belongs to this shard."""
        return shard_of(trace_hash(trace), self.count) == self.index


def parse_shard(text: str) -> Shard:
    """``"i/N"`` -> :class:`Shard` (raises :class:`~mastkit.errors.MastkitError` on bad input)."""
    m = _SHARD.match(text)
    if m is None:
        raise MastkitError(f"--shard {text!r}: use i/N, e.g. 0/4 (shards 0 to N-1)")
    return Shard(int(m.group(1)), int(m.group(2)))


def shard_of(t_hash: str, count: int) -> int:
    """The shard (0 .. ``count``-1) of a trace content hash: the hash is hashed again, so the
    shards are even whatever the hash's own format."""
    digest = hashlib.sha256(t_hash.encode()).digest()
    return int.from_bytes(digest[:8], "big") % count


def in_shard(traces: Iterable[Trace], shard: Shard | None) -> Iterator[Trace]:
    """The traces of ``shard`` (all of them when ``shard`` is None), lazily."""
    for trace in traces:
        if shard is None or shard.holds(trace):
            yield trace
