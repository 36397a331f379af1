"""``mastkit hook ...``: the hook verbs and ``install``/``uninstall``.

Kept on ``argparse`` and off the main command line's import path: every hook call is a new
process, so it imports only the guard and the trace model (see ``mastkit.cli.entry``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from mastkit.integrations.claude_code.protocol import HOOK_EVENTS


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="mastkit hook",
        description="Claude Code hooks backed by mastkit.guard: read the hook JSON on stdin, answer in "
        "Claude Code's hook protocol.",
    )
    sub = p.add_subparsers(dest="verb", required=True, metavar="VERB")
    for verb, event in HOOK_EVENTS.items():
        v = sub.add_parser(verb, help=f"answer a {event} hook call")
        v.add_argument(
            "--spec", help="guard spec (default: $MASTKIT_GUARD_SPEC, .claude/guards.yaml, guards.yaml)"
        )
        v.add_argument("--state-dir", help="session state folder (default: $XDG_STATE_HOME/mastkit/hooks)")
        v.add_argument("--exit-code", action="store_true", help="block with exit code 2 + stderr, not JSON")
        v.add_argument("--no-transcript", action="store_true", help="do not read transcript_path")
        v.add_argument("--no-save", action="store_true", help="do not append finished turns as traces")
    for verb in ("install", "uninstall"):
        i = sub.add_parser(verb, help=f"{verb} the hook entries in a Claude Code settings file")
        scope = i.add_mutually_exclusive_group()
        scope.add_argument("--project", dest="scope", action="store_const", const="project",
                           help=".claude/settings.json of the project (default)")  # fmt: skip
        scope.add_argument("--local", dest="scope", action="store_const", const="local",
                           help=".claude/settings.local.json of the project (not committed)")  # fmt: skip
        scope.add_argument("--user", dest="scope", action="store_const", const="user",
                           help="~/.claude/settings.json")  # fmt: skip
        i.add_argument("--settings", help="this settings file instead")
        i.add_argument("--project-dir", help="project folder (default: the current folder)")
        i.add_argument("--dry-run", action="store_true", help="print the result, write nothing")
        if verb == "install":
            i.add_argument("--spec", help="guard spec the hooks run with (written as an absolute path)")
            i.add_argument(
                "--command", default="mastkit hook", help="command prefix (default: 'mastkit hook')"
            )
            i.add_argument("--timeout", type=int, default=10, help="hook timeout in seconds (default 10)")
            i.add_argument("--events", help=f"comma-separated verbs (default: all but post-tool-use-failure; "
                           f"known: {', '.join(HOOK_EVENTS)})")  # fmt: skip
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``mastkit hook`` with ``argv`` (without the ``hook`` word); returns the exit code."""
    args = _parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    if args.verb in ("install", "uninstall"):
        return _install(args)
    from mastkit.integrations.claude_code.hook import HookOptions, handle_hook

    options = HookOptions(
        spec=args.spec,
        state_dir=args.state_dir,
        exit_code_style=args.exit_code,
        use_transcript=not args.no_transcript,
        save_traces=not args.no_save,
    )
    result = handle_hook(args.verb, sys.stdin.buffer.read(), options)
    if result.stdout:
        sys.stdout.write(result.stdout)
    if result.stderr:
        sys.stderr.write(result.stderr)
    return result.exit_code


def _install(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from mastkit.integrations.claude_code.install import (
        DEFAULT_EVENTS,
        SettingsError,
        install_hooks,
        settings_path,
        uninstall_hooks,
    )

    path = Path(args.settings) if args.settings else settings_path(args.scope or "project", args.project_dir)
    try:
        if args.verb == "install":
            events = tuple(e.strip() for e in args.events.split(",")) if args.events else DEFAULT_EVENTS
            unknown = [e for e in events if e not in HOOK_EVENTS]
            if unknown:
                print(f"mastkit hook install: unknown hook verb(s): {', '.join(unknown)}", file=sys.stderr)
                return 2
            if args.spec:
                from mastkit.guard.spec import GuardSpecError, load_spec

                try:
                    load_spec(args.spec)
                except (GuardSpecError, OSError) as exc:
                    print(f"mastkit hook install: {exc}", file=sys.stderr)
                    return 2
            changed, settings = install_hooks(
                path, events=events, command=args.command, spec=args.spec, timeout=args.timeout,
                dry_run=args.dry_run,
            )  # fmt: skip
        else:
            changed, settings = uninstall_hooks(path, dry_run=args.dry_run)
    except SettingsError as exc:
        print(f"mastkit hook {args.verb}: {exc}", file=sys.stderr)
        return 2
    if args.dry_run:
        print(json.dumps(settings, indent=2))
    else:
        state = "updated" if changed else "already up to date"
        print(f"{path}: {state}")
    return 0
