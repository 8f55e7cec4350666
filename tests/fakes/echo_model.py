"""A zero-latency in-process chat model: streams "echo: <last user text>" in a few chunks.

Use it as `use: "tests.fakes.echo_model:EchoChatModel"` to measure the service's own overhead
(bench/). It accepts the factory's usual arguments (api_key, base_url, timeout, ...) and ignores
them; it never calls tools.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForLLMRun,
    CallbackManagerForLLMRun,
)
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import ConfigDict


class EchoChatModel(BaseChatModel):
    model_config = ConfigDict(extra="allow")

    model: str = "echo"
    chunks: int = 3

    @property
    def _llm_type(self) -> str:
        return "antler-echo"

    def bind_tools(self, tools: Any, **kwargs: Any) -> EchoChatModel:
        return self

    def _answer(self, messages: list[BaseMessage]) -> str:
        users = [m for m in messages if isinstance(m, HumanMessage)]
        return f"echo: {users[-1].text if users else ''}"

    def _pieces(self, text: str) -> list[str]:
        size = max(1, -(-len(text) // max(1, self.chunks)))
        return [text[i : i + size] for i in range(0, len(text), size)]

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=AIMessage(self._answer(messages)))])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        for piece in self._pieces(self._answer(messages)):
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=piece))
            if run_manager is not None:
                run_manager.on_llm_new_token(piece, chunk=chunk)
            yield chunk

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        for piece in self._pieces(self._answer(messages)):
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=piece))
            if run_manager is not None:
                await run_manager.on_llm_new_token(piece, chunk=chunk)
            yield chunk
