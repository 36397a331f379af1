"""The guard spec (``guards.yaml``): which guards run and how, validated with clear errors.

::

    version: 1
    run:
      state_changing_tools: ["edit_*", "write_file", "bash"]
    guards:
      loop: {warn_at: 3, block_at: 5}
      budget: {max_steps: 60, max_cost_usd: 2.0}
      verification:
        checks:
          - {name: tests, tool: run_tests, exit_code: 0}

A guard whose section is absent: ``loop`` and ``budget`` still run with their defaults (the
budget then only warns, at 200 steps and one hour); the others are off. ``enabled: false``
turns any guard off. See ``docs/guard.md`` for every field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from mastkit.errors import MastkitError
from mastkit.guard.base import Guard
from mastkit.guard.budget import BudgetConfig, BudgetGuard
from mastkit.guard.clarification import ClarificationConfig, ClarificationGuard
from mastkit.guard.loop import LoopConfig, LoopGuard
from mastkit.guard.state import RunConfig
from mastkit.guard.termination import TerminationConfig, TerminationGuard
from mastkit.guard.validation import ActionValidator, ValidationConfig
from mastkit.guard.verification import VerificationConfig, VerificationGate

DEFAULT_BUDGET = BudgetConfig(max_steps=200, max_seconds=3600, on_limit="warn")
"""The budget that holds when a spec has no ``budget`` section: warnings only."""


class GuardSpecError(MastkitError, ValueError):
    """A guard spec is invalid. The message names the file, the path inside it
    (``guards.loop.block_at``), the line when known, and what is wrong."""


class GuardsSection(BaseModel):
    """The ``guards:`` section: one optional entry per guard."""

    model_config = ConfigDict(extra="forbid")

    loop: LoopConfig = Field(default_factory=LoopConfig)
    budget: BudgetConfig = Field(default_factory=lambda: DEFAULT_BUDGET.model_copy())
    termination: TerminationConfig | None = None
    verification: VerificationConfig | None = None
    clarification: ClarificationConfig | None = None
    validation: ValidationConfig | None = None


class GuardSpec(BaseModel):
    """A whole guard spec: run-wide settings and the guards."""

    model_config = ConfigDict(extra="forbid")

    version: Literal[1] = 1
    run: RunConfig = Field(default_factory=RunConfig)
    guards: GuardsSection = Field(default_factory=GuardsSection)

    @model_validator(mode="after")
    def _known_modes(self) -> GuardSpec:
        codes = _mast_codes()
        for section_name in GuardsSection.model_fields:
            section = getattr(self.guards, section_name)
            if section is None:
                continue
            for field_name in type(section).model_fields:
                if field_name == "mode" or field_name.startswith("mode_"):
                    code = getattr(section, field_name)
                    if code not in codes:
                        raise ValueError(
                            f"guards.{section_name}.{field_name}: {code!r} is not a MAST mode code "
                            f"({', '.join(sorted(codes))})"
                        )
        return self

    @classmethod
    def from_dict(cls, data: Any, *, source: str = "spec", text: str | None = None) -> GuardSpec:
        """Validate a spec from its dict form; raises :class:`GuardSpecError` naming the path."""
        if data is None:
            data = {}
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise GuardSpecError(_explain(exc, source, text)) from None

    def build_guards(self) -> list[Guard]:
        """The guard objects this spec turns on, in a fixed order (cheap ones first)."""
        g = self.guards
        out: list[Guard] = []
        if g.validation is not None and g.validation.enabled:
            out.append(ActionValidator(g.validation))
        if g.loop.enabled:
            out.append(LoopGuard(g.loop))
        if g.budget.enabled:
            out.append(BudgetGuard(g.budget))
        if g.clarification is not None and g.clarification.enabled:
            out.append(ClarificationGuard(g.clarification))
        if g.termination is not None and g.termination.enabled:
            out.append(TerminationGuard(g.termination))
        if g.verification is not None and g.verification.enabled:
            out.append(VerificationGate(g.verification))
        return out


def load_spec(path: str | Path) -> GuardSpec:
    """Read and validate ``guards.yaml`` (or a JSON file); raises :class:`GuardSpecError`."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise GuardSpecError(f"{p}: cannot read the guard spec: {exc.strerror or exc}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise GuardSpecError(f"{p}: not valid YAML{where}: {getattr(exc, 'problem', None) or exc}") from None
    if data is not None and not isinstance(data, dict):
        raise GuardSpecError(
            f"{p}: a guard spec is a mapping (version, run, guards), not {type(data).__name__}"
        )
    return GuardSpec.from_dict(data, source=str(p), text=text)


def _mast_codes() -> frozenset[str]:
    global _CODES
    if _CODES is None:
        from mastkit.taxonomy import load_taxonomy

        _CODES = frozenset(load_taxonomy("mast").codes)
    return _CODES


_CODES: frozenset[str] | None = None


def _explain(exc: ValidationError, source: str, text: str | None) -> str:
    lines = []
    for err in exc.errors()[:5]:
        loc = [str(x) for x in err["loc"] if not str(x).startswith(("function-", "tagged-union"))]
        path = ".".join(loc) or "(top level)"
        line = _line_of(text, err["loc"]) if text is not None else None
        at = f" (line {line})" if line else ""
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            msg = "unknown key (check the spelling; see docs/guard.md)"
        lines.append(f"{source}: {path}{at}: {msg}")
    more = len(exc.errors()) - 5
    if more > 0:
        lines.append(f"... and {more} more")
    return "\n".join(lines)


def _line_of(text: str, loc: tuple[Any, ...]) -> int | None:
    """1-based line of the YAML node at ``loc`` (the deepest part of it that exists)."""
    try:
        node: Any = yaml.compose(text)
    except yaml.YAMLError:
        return None
    line = None
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            nxt = next(((k, v) for k, v in node.value if k.value == str(part)), None)
            if nxt is None:
                break
            line = nxt[0].start_mark.line + 1
            node = nxt[1]
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            break
    return line
