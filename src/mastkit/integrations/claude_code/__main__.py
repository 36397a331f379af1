"""``python -m mastkit.integrations.claude_code <verb>``: the same as ``mastkit hook <verb>``."""

from __future__ import annotations

import sys

from mastkit.integrations.claude_code.cli import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
