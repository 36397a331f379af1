"""A scripted tool-calling model for FakeLLMServer: OpenAI chat completions with ``tool_calls``.

FakeLLMServer answers with text; for agents we send whole completion bodies
(``Reply.body_override``) so the real SDKs parse real tool-call responses.
"""

from __future__ import annotations

import json
import time
from typing import Any

from mastkit.testing import Reply


def tool_call_reply(name: str, arguments: dict[str, Any], call_id: str) -> Reply:
    """A completion whose only content is one call of ``name``."""
    body = {
        "id": f"chatcmpl-{call_id}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": "fake-model",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": None,
                    "refusal": None,
                    "tool_calls": [
                        {
                            "id": call_id,
                            "type": "function",
                            "function": {"name": name, "arguments": json.dumps(arguments)},
                        }
                    ],
                },
                "logprobs": None,
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {"prompt_tokens": 40, "completion_tokens": 10, "total_tokens": 50},
    }
    return Reply(body_override=json.dumps(body).encode())


def last_tool_text(payload: Any) -> str | None:
    """The content of the last message when it is a tool result, else None."""
    messages = payload.get("messages", []) if isinstance(payload, dict) else []
    if messages and messages[-1].get("role") == "tool":
        content = messages[-1].get("content")
        return content if isinstance(content, str) else json.dumps(content)
    return None


class LoopingModel:
    """A model that calls ``tool(arguments)`` again and again until the tool answer carries a
    mastkit guard refusal, then gives up with a final text."""

    def __init__(
        self, tool: str, arguments: dict[str, Any], final: str = "Giving up: still starting."
    ) -> None:
        self.tool, self.arguments, self.final = tool, arguments, final
        self.calls = 0
        self.refused_with: str | None = None

    def __call__(self, payload: Any) -> Reply:
        last = last_tool_text(payload)
        if last is not None and "Blocked" in last and "[mastkit guard" in last:
            self.refused_with = last
            return Reply(self.final)
        self.calls += 1
        return tool_call_reply(self.tool, self.arguments, f"call_{self.calls}")
