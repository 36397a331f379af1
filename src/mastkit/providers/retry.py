"""Retry policy of every provider: which failures are retried and how long to wait.

Retried: 429 (rate limit), 408 (request timeout), 409 (conflict), 425, 5xx except 501/505
(including Anthropic's 529 "overloaded"), client-side timeouts, connection errors (refused,
reset, dropped, truncated body) and — unless ``retry_malformed=False`` — a 2xx body that is
not valid JSON or lacks the reply. Not retried: 400, 401, 403, 404, 413, 422 and other 4xx.

The wait before attempt *n+1* is the server's ``retry-after-ms`` / ``retry-after`` header
when present (capped at ``max_retry_after_s``), else exponential backoff
``initial_delay_s * multiplier**(n-1)`` capped at ``max_delay_s``, minus up to ``jitter``
of it at random (so concurrent callers do not retry in lockstep).
"""

from __future__ import annotations

import email.utils
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

__all__ = ["RetryPolicy", "parse_retry_after"]


@dataclass(frozen=True)
class RetryPolicy:
    """How many attempts, and how long to wait between them."""

    max_attempts: int = 5
    """Total HTTP attempts per call, the first included (1 = never retry)."""
    initial_delay_s: float = 1.0
    """Backoff before the second attempt."""
    multiplier: float = 2.0
    """Backoff growth per attempt."""
    max_delay_s: float = 30.0
    """Cap on one backoff wait."""
    jitter: float = 0.25
    """Fraction of the backoff removed at random (0 = none)."""
    max_retry_after_s: float = 60.0
    """Cap on a server-requested wait (``retry-after``)."""
    retry_malformed: bool = True
    """Retry a 2xx response whose body is not usable (a proxy glitch is the usual cause)."""

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError(f"max_attempts must be >= 1, got {self.max_attempts}")
        if not 0 <= self.jitter <= 1:
            raise ValueError(f"jitter must be in [0, 1], got {self.jitter}")

    @staticmethod
    def retryable_status(status: int) -> bool:
        """Whether an HTTP status is worth another attempt."""
        return status in (408, 409, 425, 429) or (status >= 500 and status not in (501, 505))

    def backoff(self, attempt: int, rand: float) -> float:
        """Backoff after failed attempt number ``attempt`` (1-based); ``rand`` in [0, 1)."""
        base = min(self.max_delay_s, self.initial_delay_s * self.multiplier ** max(0, attempt - 1))
        return max(0.0, base * (1.0 - self.jitter * rand))

    def delay(self, attempt: int, retry_after: float | None, rand: float) -> float:
        """The wait before the next attempt: the server's request if any, else :meth:`backoff`."""
        if retry_after is not None:
            return min(max(0.0, retry_after), self.max_retry_after_s)
        return self.backoff(attempt, rand)


def parse_retry_after(headers: Mapping[str, str], now: Callable[[], float] = time.time) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date)."""
    lowered = {k.lower(): v for k, v in headers.items()}
    ms = lowered.get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - now())
