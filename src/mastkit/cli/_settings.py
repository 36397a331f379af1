"""``mastkit.toml``: default option values per command, below flags and MASTKIT_* variables.

    # mastkit.toml
    [annotate]
    annotator = "llm"
    model = "openai:gpt-4o-mini"
    budget = 5.0
    db = "runs/mastkit.db"

API keys are never read from this file: they come from the environment (OPENAI_API_KEY,
ANTHROPIC_API_KEY, MASTKIT_API_KEY) or the keyring.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

import typer

_SECRET_KEYS = {"api_key", "api-key", "key", "token", "password"}


def load_settings(path: str | None) -> dict[str, Any]:
    """The click ``default_map`` from a TOML file: ``{command: {option: value}}`` (nested for groups)."""
    file = Path(path) if path else Path(os.getcwd()) / "mastkit.toml"
    if not file.exists():
        if path:
            raise typer.BadParameter(f"settings file not found: {file}", param_hint="--config")
        return {}
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise typer.BadParameter(f"{file}: {exc}", param_hint="--config") from None
    return _clean(data, file)


def _clean(section: dict[str, Any], file: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in section.items():
        if key.lower() in _SECRET_KEYS:
            raise typer.BadParameter(
                f"{file}: '{key}' must not be stored in a settings file; use an environment "
                "variable (e.g. OPENAI_API_KEY)",
                param_hint="--config",
            )
        name = key.replace("-", "_")
        out[name] = _clean(value, file) if isinstance(value, dict) else value
    return out
