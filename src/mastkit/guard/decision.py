"""What a guard answers about one step: a :class:`Decision`, and how several are combined."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Action = Literal["allow", "warn", "block", "redirect"]
"""What the host should do with the step.

* ``allow`` — go on;
* ``warn`` — go on, but show the agent the message;
* ``redirect`` — do not take this step; do what the message says instead (stop now, verify
  first, ask the user);
* ``block`` — do not take this step; the message says why.
"""

SEVERITY: dict[str, int] = {"allow": 0, "warn": 1, "redirect": 2, "block": 3}
"""Order used to combine decisions: the most severe action wins."""

STOPPING: frozenset[str] = frozenset({"block", "redirect"})
"""Actions that stop the step the agent proposed."""


@dataclass(slots=True, frozen=True)
class Decision:
    """One guard's answer about one event, or the combined answer of all guards.

    ``parts`` holds every non-allow decision that went into a combined one, so nothing is lost
    when the most severe one is picked.
    """

    action: Action = "allow"
    """allow / warn / block / redirect."""
    message: str = ""
    """What the agent is told (empty for allow)."""
    mode: str | None = None
    """The failure-mode code the decision prevents, e.g. ``FM-1.3``."""
    guard: str | None = None
    """Name of the guard that decided (for a combined decision: that of the most severe part)."""
    seqs: tuple[int, ...] = ()
    """Event seqs that are the evidence."""
    evidence: str = ""
    """Short text saying what was seen."""
    parts: tuple[Decision, ...] = field(default=(), compare=False)
    """For a combined decision: every non-allow decision, most severe first."""

    @property
    def allowed(self) -> bool:
        """True when the step may go ahead (allow or warn)."""
        return self.action not in STOPPING

    @property
    def stops(self) -> bool:
        """True when the step must not go ahead (block or redirect)."""
        return self.action in STOPPING

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (without ``parts``), as stored in a guard event's ``extra``."""
        return {
            "action": self.action,
            "guard": self.guard,
            "mode": self.mode,
            "message": self.message,
            "seqs": list(self.seqs),
            "evidence": self.evidence,
        }


ALLOW = Decision()
"""The shared allow decision (guards return it on the fast path)."""


def combine(decisions: list[Decision]) -> Decision:
    """One decision from several: the most severe action wins (the first guard's on a tie); every
    non-allow decision is kept in ``parts``."""
    kept = [d for d in decisions if d.action != "allow"]
    if not kept:
        return ALLOW
    kept.sort(key=lambda d: -SEVERITY[d.action])  # stable: guard order breaks ties
    top = kept[0]
    return Decision(top.action, top.message, top.mode, top.guard, top.seqs, top.evidence, tuple(kept))
