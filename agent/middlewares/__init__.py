"""Agent middlewares (LangChain `AgentMiddleware`s). Importing this package imports LangChain."""

from agent.middlewares.dangling import DanglingToolCalls, repair_dangling_tool_calls
from agent.middlewares.prompt import ChatPrompt

__all__ = ["ChatPrompt", "DanglingToolCalls", "repair_dangling_tool_calls"]
