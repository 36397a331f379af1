"""Runs bigger than one process: ``--shard i/N`` for job arrays (:mod:`mastkit.scale.shard`)
and the Ray engine (:mod:`mastkit.scale.ray_engine`, imported only when used: it needs the
``ray`` extra). See docs/scale.md.
"""

from __future__ import annotations

from mastkit.scale.shard import Shard, in_shard, parse_shard, shard_of
from mastkit.scale.worker import AnnotateJob, AttributeJob, LocalPacer, TokenBucket, pace_provider

__all__ = [
    "AnnotateJob",
    "AttributeJob",
    "LocalPacer",
    "Shard",
    "TokenBucket",
    "in_shard",
    "pace_provider",
    "parse_shard",
    "shard_of",
]
