"""What every framework adapter of :mod:`mastkit.guard` shares: one :class:`Guardian` per run,
built from a guardian, a spec or the defaults, its decisions, and saving the run as a trace."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from mastkit.guard import Decision, Guardian, GuardSpec


class GuardedRun:
    """One guarded run of a framework (subclasses add the framework's hooks)."""

    framework: ClassVar[str]
    """Written into the saved trace's ``framework`` field."""

    def __init__(
        self,
        guardian: Guardian | None = None,
        *,
        spec: GuardSpec | dict[str, Any] | str | Path | None = None,
        task: str | None = None,
    ) -> None:
        if guardian is not None:
            self.guardian = guardian.new_run(task=task)
        elif spec is not None:
            self.guardian = Guardian.from_spec(spec, task=task)
        else:
            self.guardian = Guardian.default(task=task)
        if task is not None:
            self.guardian.record_user(task)

    @property
    def decisions(self) -> list[Decision]:
        """Every non-allow decision of the run, in order."""
        return self.guardian.decisions

    def save(self, path: str | Path, **fields: Any) -> Path:
        """Write the run as canonical JSONL (with this adapter's ``framework``)."""
        fields.setdefault("framework", self.framework)
        return self.guardian.save(path, **fields)
