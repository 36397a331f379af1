"""``mastkit hook install``: write the hook entries into a Claude Code settings file.

The file's other settings and other hooks are kept. An entry of ours (a command that runs
``mastkit hook`` or ``mastkit.integrations.claude_code``) is updated where it is; when there is
none, a new matcher group is appended. Running it twice gives the same file.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import tempfile
from pathlib import Path
from typing import Any

from mastkit.integrations.claude_code.protocol import HOOK_EVENTS

DEFAULT_EVENTS = ("pre-tool-use", "post-tool-use", "stop", "subagent-stop", "user-prompt-submit")
"""Hooks installed by default (``post-tool-use-failure`` needs a Claude Code that has the event)."""
TOOL_EVENTS = frozenset({"PreToolUse", "PostToolUse", "PostToolUseFailure"})
_MARKERS = ("mastkit hook ", "mastkit.integrations.claude_code")


class SettingsError(ValueError):
    """The settings file exists but is not a JSON object with a usable ``hooks`` section."""


def settings_path(scope: str, project_dir: str | Path | None = None) -> Path:
    """The settings file of a scope: ``project`` (``.claude/settings.json``), ``local``
    (``.claude/settings.local.json``) or ``user`` (``~/.claude/settings.json``)."""
    if scope == "user":
        return Path.home() / ".claude" / "settings.json"
    base = Path(project_dir) if project_dir is not None else Path.cwd()
    name = "settings.local.json" if scope == "local" else "settings.json"
    return base / ".claude" / name


def hook_command(verb: str, *, command: str = "mastkit hook", spec: str | Path | None = None) -> str:
    """The shell command Claude Code runs for ``verb``."""
    parts = [command, verb]
    if spec is not None:
        parts += ["--spec", shlex.quote(str(Path(spec).resolve()))]
    return " ".join(parts)


def is_ours(entry: Any) -> bool:
    """True for a hook entry that runs mastkit's hook."""
    cmd = entry.get("command") if isinstance(entry, dict) else None
    return isinstance(cmd, str) and any(m in cmd + " " for m in _MARKERS)


def merge_hooks(
    settings: dict[str, Any],
    *,
    events: tuple[str, ...] | list[str] = DEFAULT_EVENTS,
    command: str = "mastkit hook",
    spec: str | Path | None = None,
    timeout: int | None = 10,
) -> dict[str, Any]:
    """``settings`` with mastkit's hook entries set (a new dict; the input is not changed)."""
    out: dict[str, Any] = json.loads(json.dumps(settings))
    hooks = out.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise SettingsError("'hooks' is not an object")
    for verb in events:
        event = HOOK_EVENTS[verb]
        entry: dict[str, Any] = {"type": "command", "command": hook_command(verb, command=command, spec=spec)}
        if timeout is not None:
            entry["timeout"] = timeout
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise SettingsError(f"'hooks.{event}' is not a list")
        placed = False
        for group in groups:
            inner = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(inner, list):
                continue
            kept = []
            for h in inner:
                if is_ours(h):
                    if not placed:
                        kept.append(entry)
                        placed = True
                else:
                    kept.append(h)
            group["hooks"] = kept
        hooks[event] = [g for g in groups if not (isinstance(g, dict) and g.get("hooks") == [])]
        if not placed:
            group = {"hooks": [entry]}
            if event in TOOL_EVENTS:
                group = {"matcher": "*", **group}
            hooks[event].append(group)
    return out


def remove_hooks(settings: dict[str, Any]) -> dict[str, Any]:
    """``settings`` without mastkit's hook entries (empty groups and events are dropped)."""
    out: dict[str, Any] = json.loads(json.dumps(settings))
    hooks = out.get("hooks")
    if not isinstance(hooks, dict):
        return out
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        for group in groups:
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                group["hooks"] = [h for h in group["hooks"] if not is_ours(h)]
        hooks[event] = [g for g in groups if not (isinstance(g, dict) and g.get("hooks") == [])]
        if not hooks[event]:
            del hooks[event]
    if not hooks:
        del out["hooks"]
    return out


def read_settings(path: Path) -> dict[str, Any]:
    """The settings in ``path`` (an empty dict when the file does not exist)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    if not text.strip():
        return {}
    try:
        data: Any = json.loads(text)
    except ValueError as exc:
        raise SettingsError(f"{path}: not valid JSON ({exc}); not changing it") from exc
    if not isinstance(data, dict):
        raise SettingsError(f"{path}: not a JSON object; not changing it")
    return dict(data)


def write_settings(path: Path, settings: dict[str, Any]) -> None:
    """Write ``settings`` to ``path`` atomically (2-space indented JSON)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(settings, fh, indent=2, ensure_ascii=False)
            fh.write("\n")
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def install_hooks(
    path: str | Path,
    *,
    events: tuple[str, ...] | list[str] = DEFAULT_EVENTS,
    command: str = "mastkit hook",
    spec: str | Path | None = None,
    timeout: int | None = 10,
    dry_run: bool = False,
) -> tuple[bool, dict[str, Any]]:
    """Merge mastkit's hook entries into the settings file ``path``; returns ``(changed, new
    settings)``. Raises :class:`SettingsError` when the file is not a JSON object."""
    path = Path(path)
    before = read_settings(path)
    after = merge_hooks(before, events=events, command=command, spec=spec, timeout=timeout)
    changed = after != before or not path.exists()
    if changed and not dry_run:
        write_settings(path, after)
    return changed, after


def uninstall_hooks(path: str | Path, *, dry_run: bool = False) -> tuple[bool, dict[str, Any]]:
    """Remove mastkit's hook entries from the settings file ``path``; returns ``(changed, new settings)``."""
    path = Path(path)
    before = read_settings(path)
    after = remove_hooks(before)
    changed = after != before
    if changed and not dry_run:
        write_settings(path, after)
    return changed, after
