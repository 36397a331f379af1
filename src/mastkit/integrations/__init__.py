"""Adapters that put :mod:`mastkit.guard` behind the agent frameworks people use.

Each adapter is its own module and imports its framework only there, so importing this package
costs nothing:

* :mod:`mastkit.integrations.claude_code` — Claude Code hooks (``mastkit hook ...``), no extra;
* :mod:`mastkit.integrations.openai_agents` — OpenAI Agents SDK (``mastkit[openai-agents]``);
* :mod:`mastkit.integrations.langgraph` — LangGraph / LangChain tools (``mastkit[langgraph]``);
* :mod:`mastkit.integrations.pytest_plugin` — a pytest marker and fixture that fail an agent test
  when fatal failure modes are in its trace.
"""
