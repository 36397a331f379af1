"""Test helpers shipped with mastkit: a scripted OpenAI/Anthropic-compatible HTTP server."""

from mastkit.testing.fake_llm import FakeLLMServer, RecordedRequest, Reply, Usage

__all__ = ["FakeLLMServer", "RecordedRequest", "Reply", "Usage"]
