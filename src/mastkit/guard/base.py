"""The :class:`Guard` protocol every guard implements."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from mastkit.guard.decision import Decision
from mastkit.guard.state import RunState
from mastkit.traces.model import Event


@runtime_checkable
class Guard(Protocol):
    """A rule checked on every event of a run.

    ``check`` sees each event once, in order, after the :class:`RunState` has counted it, and
    returns a :class:`Decision` (``ALLOW`` when it has nothing to say). It keeps whatever it
    needs between events in ``state.slot(self.name, factory)``, never on itself, so one guard
    object can serve many runs. It may raise: the Guardian turns an exception into an allow and
    a logged warning.
    """

    name: str
    """Short unique name (``loop``, ``budget``), used in decisions and guard events."""

    def check(self, event: Event, state: RunState) -> Decision: ...
