"""Taxonomies as data: categories and failure modes, validated.

A :class:`Taxonomy` is plain data (pydantic v2). Everything that uses one — the rule
annotator, the judge prompt and its reply schema, the analyses and the report — reads
codes, names and guidance from here, so a custom taxonomy works everywhere MAST does.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from mastkit.errors import TaxonomyError


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Category(_Model):
    """A group of failure modes (MAST: FC1 specification, FC2 misalignment, FC3 verification)."""

    code: str
    name: str
    description: str = ""
    stage: str | None = None
    """When in a run the category's modes tend to arise (free text, e.g. ``pre-execution``)."""


class FailureMode(_Model):
    """One failure mode, with the guidance a judge (human or LLM) needs to apply it."""

    code: str
    """Unique code in the taxonomy (``FM-1.3``)."""
    name: str
    category: str
    """Code of its :class:`Category`."""
    definition: str
    when_to_use: str = ""
    """Situations that call for this mode."""
    when_not_to_use: str = ""
    """Near misses that belong to another mode or to no mode."""
    cues: list[str] = Field(default_factory=list)
    """Observable signals in a trace."""
    examples: list[str] = Field(default_factory=list)
    """Short illustrative examples (used as few-shot hints when asked)."""
    fix_hints: list[str] = Field(default_factory=list)
    """What tends to prevent it (used by feedback and reports)."""
    aliases: list[str] = Field(default_factory=list)
    """Other names and codes the mode is known by (older releases, other tools)."""
    severity: str | None = None
    extra: dict[str, Any] = Field(default_factory=dict)


class Taxonomy(_Model):
    """A set of failure modes in categories, with provenance and a version."""

    id: str
    name: str
    version: str
    source: str = ""
    """Where the taxonomy comes from (paper, repository, learned from which runs)."""
    description: str = ""
    categories: list[Category]
    modes: list[FailureMode]
    legacy_codes: dict[str, dict[str, str | None]] = Field(default_factory=dict)
    """Maps from older code systems to this taxonomy: ``{system: {old_code: code or None}}``."""
    extra: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _check(self) -> Taxonomy:
        problems: list[str] = []
        if not self.modes:
            problems.append("it has no failure modes")
        cat_codes = [c.code for c in self.categories]
        dup_cats = sorted({c for c in cat_codes if cat_codes.count(c) > 1})
        if dup_cats:
            problems.append(f"duplicate category codes: {', '.join(dup_cats)}")
        codes = [m.code for m in self.modes]
        dups = sorted({c for c in codes if codes.count(c) > 1})
        if dups:
            problems.append(f"duplicate mode codes: {', '.join(dups)}")
        known = set(cat_codes)
        for m in self.modes:
            if not m.code.strip():
                problems.append("a mode has an empty code")
            if m.category not in known:
                problems.append(
                    f"mode {m.code} is in unknown category {m.category!r} (known: {', '.join(cat_codes) or 'none'})"
                )
            if not m.definition.strip():
                problems.append(f"mode {m.code} has an empty definition")
        for system, table in self.legacy_codes.items():
            for old, new in table.items():
                if new is not None and new not in codes:
                    problems.append(f"legacy map {system!r}: {old} -> {new}, which is not a mode code")
        if problems:
            raise TaxonomyError(f"taxonomy {self.id!r} is invalid: " + "; ".join(problems))
        return self

    # -- look-ups ---------------------------------------------------------------------------------

    @property
    def codes(self) -> list[str]:
        return [m.code for m in self.modes]

    def mode(self, code: str) -> FailureMode:
        """The mode with ``code`` (or one of its aliases). Raises :class:`KeyError`."""
        for m in self.modes:
            if m.code == code:
                return m
        for m in self.modes:
            if code in m.aliases:
                return m
        raise KeyError(f"{code!r} is not a mode of taxonomy {self.id!r}")

    def category(self, code: str) -> Category:
        for c in self.categories:
            if c.code == code:
                return c
        raise KeyError(f"{code!r} is not a category of taxonomy {self.id!r}")

    def modes_in(self, category: str) -> list[FailureMode]:
        return [m for m in self.modes if m.category == category]

    def category_of(self, code: str) -> str:
        return self.mode(code).category

    def map_legacy(self, code: str, system: str) -> str | None:
        """Map ``code`` of an older code system (see :attr:`legacy_codes`) to a mode code.

        Returns None for modes the taxonomy dropped. Raises :class:`KeyError` for an unknown
        system or code.
        """
        if system not in self.legacy_codes:
            raise KeyError(f"taxonomy {self.id!r} has no legacy code system {system!r}")
        table = self.legacy_codes[system]
        if code not in table:
            raise KeyError(f"{code!r} is not a code of {system!r}")
        return table[code]
