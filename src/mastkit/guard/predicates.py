"""Checks over tool results: "this tool ran and its result passed" (exit code, no error, regex)."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cached_property

from pydantic import BaseModel, ConfigDict, field_validator

from mastkit.guard._match import Globs
from mastkit.traces.model import Event

ResultPredicate = Callable[[Event, Event | None], bool]
"""A user check over a result event and its call event (None when unpaired): True when it passed."""


class ResultCheck(BaseModel):
    """A tool (glob pattern) whose result must pass every condition given.

    With no condition, a result passes when it is not an error (``is_error`` not True and exit
    code 0 or unknown)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tool: str
    """Tool-name pattern, e.g. ``run_tests`` or ``bash``."""
    exit_code: int | None = None
    """Required exit code (0 for success)."""
    no_error: bool = True
    """The result must not be flagged as an error."""
    output_regex: str | None = None
    """A regex that must be found in the output (``\\d+ passed``)."""
    output_not_regex: str | None = None
    """A regex that must NOT be found in the output (``FAILED|Traceback``)."""
    args_regex: str | None = None
    """A regex the call's arguments (as text) must match, e.g. ``pytest`` for a bash call."""

    @field_validator("output_regex", "output_not_regex", "args_regex")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"not a valid regular expression: {exc}") from None
        return value

    @cached_property
    def _tool(self) -> Globs:
        return Globs([self.tool])

    @cached_property
    def _regexes(self) -> tuple[re.Pattern[str] | None, re.Pattern[str] | None, re.Pattern[str] | None]:
        def comp(p: str | None) -> re.Pattern[str] | None:
            return re.compile(p) if p is not None else None

        return comp(self.output_regex), comp(self.output_not_regex), comp(self.args_regex)

    def applies(self, result: Event, call: Event | None) -> bool:
        """True when ``result`` is a result of this check's tool (and its call matches ``args_regex``)."""
        if result.tool_result is None:
            return False
        name = result.tool_result.name or (call.tool_call.name if call and call.tool_call else None)
        if not self._tool(name):
            return False
        args_re = self._regexes[2]
        if args_re is not None:
            return call is not None and args_re.search(call.text()) is not None
        return True

    def passed(self, result: Event) -> bool:
        """True when ``result`` meets every condition."""
        r = result.tool_result
        if r is None:
            return False
        if self.no_error and (
            r.is_error is True or (self.exit_code is None and r.exit_code not in (None, 0))
        ):
            return False
        if self.exit_code is not None and r.exit_code != self.exit_code:
            return False
        out_re, not_re, _ = self._regexes
        text = r.output or ""
        if out_re is not None and out_re.search(text) is None:
            return False
        return not (not_re is not None and not_re.search(text) is not None)
