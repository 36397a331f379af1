"""The ``mastkit`` executable: ``mastkit hook ...`` goes straight to the light Claude Code hook
command line (each hook call is a new process and must start fast); everything else goes to the
full command line in :mod:`mastkit.cli.main`."""

from __future__ import annotations

import sys


def main() -> None:
    argv = sys.argv[1:]
    if argv and argv[0] == "hook":
        from mastkit.integrations.claude_code.cli import main as hook_main

        sys.exit(hook_main(argv[1:]))
    from mastkit.cli.main import main as full_main

    full_main()


if __name__ == "__main__":
    main()
