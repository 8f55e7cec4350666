"""Stop a model that repeats itself: the same set of tool calls (names and arguments) within one
turn gets a warning from the 3rd time on and is refused the 5th time, when the model is asked
again without tools so that it answers in text."""

from __future__ import annotations

import hashlib
import json
import logging
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

log = logging.getLogger(__name__)

WARN_AT = 3
STOP_AT = 5
WINDOW = 20
WARNING = (
    "[note from the system] You have made the same tool call several times with the "
    "same arguments. It will not give a different result. Change approach or answer now."
)
STOP = (
    "[note from the system] You repeated the same tool call too many times; tools are now "
    "disabled for this turn. Answer the user in text with what you have."
)


def call_signature(message: BaseMessage | None) -> str | None:
    calls = getattr(message, "tool_calls", None)
    if not isinstance(message, AIMessage) or not calls:
        return None
    parts = sorted(
        (c["name"], json.dumps(c.get("args"), sort_keys=True, default=str)) for c in calls
    )
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()


def turn_signatures(messages: Sequence[BaseMessage]) -> list[str]:
    """Signatures of this turn's tool-calling AI messages (after the last human message)."""
    found: list[str] = []
    for message in reversed(messages):
        if isinstance(message, HumanMessage) and not _is_note(message):
            break
        sig = call_signature(message)
        if sig is not None:
            found.append(sig)
    return list(reversed(found))[-WINDOW:]


def _is_note(message: BaseMessage) -> bool:
    return isinstance(message.content, str) and message.content.startswith("[note from the system]")


class LoopGuard(AgentMiddleware):
    def _warned(self, request: ModelRequest, counts: Counter[str], last: str | None) -> Any:
        if last is not None and counts[last] >= WARN_AT:
            return request.override(messages=[*request.messages, HumanMessage(WARNING)])
        return request

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> Any:
        sigs = turn_signatures(request.messages)
        counts = Counter(sigs)
        response = await handler(self._warned(request, counts, sigs[-1] if sigs else None))
        sig = call_signature(_ai(response))
        if sig is None or counts[sig] + 1 < STOP_AT:
            return response
        log.info("loop guard: the same tool call %d times; forcing a text answer", STOP_AT)
        stopped = request.override(tools=[], messages=[*request.messages, HumanMessage(STOP)])
        return _without_tool_calls(await handler(stopped))

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> Any:
        sigs = turn_signatures(request.messages)
        counts = Counter(sigs)
        response = handler(self._warned(request, counts, sigs[-1] if sigs else None))
        sig = call_signature(_ai(response))
        if sig is None or counts[sig] + 1 < STOP_AT:
            return response
        stopped = request.override(tools=[], messages=[*request.messages, HumanMessage(STOP)])
        return _without_tool_calls(handler(stopped))


def _ai(response: Any) -> BaseMessage | None:
    result = getattr(response, "result", None)
    if isinstance(response, AIMessage):
        return response
    for message in result or []:
        if isinstance(message, AIMessage):
            return message
    return None


def _without_tool_calls(response: Any) -> Any:
    ai = _ai(response)
    if ai is None or not getattr(ai, "tool_calls", None):
        return response
    clean = AIMessage(content=ai.content or "I could not finish this; please rephrase.", id=ai.id)
    if isinstance(response, AIMessage):
        return clean
    return ModelResponse(
        result=[clean if m is ai else m for m in response.result],
        structured_response=response.structured_response,
    )
