"""Claude Code hooks backed by :mod:`mastkit.guard`.

Claude Code runs a command for each hook event and passes the event as JSON on stdin;
``mastkit hook pre-tool-use|post-tool-use|post-tool-use-failure|stop|subagent-stop|
user-prompt-submit`` answers in the hook protocol. Each call is a separate process, so the run is
kept per ``session_id`` in a small JSON file (:mod:`.session`) and replayed into a fresh
:class:`~mastkit.guard.Guardian` on every call. ``mastkit hook install`` writes the settings
entries. See ``docs/guard.md``.
"""

from mastkit.integrations.claude_code.hook import HookOptions, HookResult, handle_hook
from mastkit.integrations.claude_code.install import install_hooks
from mastkit.integrations.claude_code.protocol import HOOK_EVENTS, HookInput

__all__ = ["HOOK_EVENTS", "HookInput", "HookOptions", "HookResult", "handle_hook", "install_hooks"]
