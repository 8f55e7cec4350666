"""What the fake OpenAI server says: scripted replies and their chat-completions wire JSON.

Pure functions, no IO: `Reply` (what the fake should answer) → chunk dicts (streamed) or one
completion dict (non-streamed), in the shape `openai`/`langchain-openai` parse.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ToolCall:
    """A tool call the fake model makes. `id` is generated when not given."""

    name: str
    args: dict[str, Any] = field(default_factory=dict)
    id: str = ""


@dataclass(frozen=True)
class Reply:
    """One scripted answer.

    `status` != 200 answers with an OpenAI-style error JSON (`error` is its message) and a
    `Retry-After` header when `retry_after` is set. `delay` waits before the first byte;
    `tokens_per_second` paces streamed chunks (a token is a word or ≤4 characters).
    `stall_after` stops a stream after that many content chunks until the client goes away
    or `FakeOpenAI.release()` is called (for cancellation tests). `usage` overrides the
    computed token counts; `no_usage` sends none even when asked (a server that does not
    report usage). `one_write` sends the whole stream (every chunk still its own SSE
    event) in one write, as a client that fell behind reads it.
    """

    text: str = ""
    tool_calls: tuple[ToolCall, ...] | list[ToolCall] = ()
    reasoning: str = ""
    status: int = 200
    error: str = ""
    error_type: str = ""
    retry_after: float | None = None
    delay: float = 0.0
    tokens_per_second: float | None = None
    stall_after: int | None = None
    finish_reason: str | None = None
    usage: dict[str, Any] | None = None
    no_usage: bool = False
    one_write: bool = False


_TOKEN = re.compile(r"\s*\S+\s*|\s+")


def split_tokens(text: str) -> list[str]:
    """Split into word-ish pieces of at most 4 non-space characters, joining back to `text`."""
    pieces: list[str] = []
    for word in _TOKEN.findall(text):
        while len(word.strip()) > 4:
            cut = len(word) - len(word.lstrip()) + 4
            pieces.append(word[:cut])
            word = word[cut:]
        if word:
            pieces.append(word)
    return pieces


def error_body(reply: Reply) -> dict[str, Any]:
    kind = reply.error_type or _default_error_type(reply.status)
    message = reply.error or f"fake error {reply.status}"
    return {"error": {"message": message, "type": kind, "param": None, "code": kind}}


def _default_error_type(status: int) -> str:
    return {
        400: "invalid_request_error",
        401: "invalid_api_key",
        404: "model_not_found",
        429: "rate_limit_exceeded",
    }.get(status, "server_error")


def estimate_prompt_tokens(body: dict[str, Any]) -> int:
    return max(1, len(json.dumps(body.get("messages", []))) // 4)


def usage_for(reply: Reply, body: dict[str, Any]) -> dict[str, Any]:
    if reply.usage is not None:
        return dict(reply.usage)
    prompt = estimate_prompt_tokens(body)
    completion = len(split_tokens(reply.text)) + sum(
        1 + len(json.dumps(call.args)) // 4 for call in reply.tool_calls
    )
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def finish_reason(reply: Reply) -> str:
    if reply.finish_reason:
        return reply.finish_reason
    return "tool_calls" if reply.tool_calls else "stop"


def call_ids(reply: Reply) -> list[str]:
    return [call.id or f"call_{uuid.uuid4().hex[:12]}" for call in reply.tool_calls]


class ChunkMaker:
    """Builds `chat.completion.chunk` dicts sharing one id, model and timestamp."""

    def __init__(self, model: str) -> None:
        self.id = f"chatcmpl-{uuid.uuid4().hex[:16]}"
        self.model = model
        self.created = int(time.time())

    def chunk(
        self, delta: dict[str, Any], finish: str | None = None, **extra: Any
    ) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
            **extra,
        }

    def usage_chunk(self, usage: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [],
            "usage": usage,
        }


def content_deltas(reply: Reply) -> Iterator[dict[str, Any]]:
    """The deltas of a streamed answer, one per paced token: reasoning, text, tool calls."""
    yield {"role": "assistant", "content": ""}
    for piece in split_tokens(reply.reasoning):
        yield {"reasoning_content": piece}
    for piece in split_tokens(reply.text):
        yield {"content": piece}
    for index, (call, call_id) in enumerate(zip(reply.tool_calls, call_ids(reply), strict=True)):
        head = {"index": index, "id": call_id, "type": "function"}
        yield {"tool_calls": [{**head, "function": {"name": call.name, "arguments": ""}}]}
        for piece in split_tokens(json.dumps(call.args)) or [""]:
            yield {"tool_calls": [{"index": index, "function": {"arguments": piece}}]}


def completion(reply: Reply, body: dict[str, Any]) -> dict[str, Any]:
    """A whole non-streamed `chat.completion`."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.reasoning:
        message["reasoning_content"] = reply.reasoning
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": call.name, "arguments": json.dumps(call.args)},
            }
            for call, call_id in zip(reply.tool_calls, call_ids(reply), strict=True)
        ]
    maker = ChunkMaker(str(body.get("model", "")))
    return {
        "id": maker.id,
        "object": "chat.completion",
        "created": maker.created,
        "model": maker.model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": finish_reason(reply),
                "logprobs": None,
            }
        ],
        "usage": None if reply.no_usage else usage_for(reply, body),
    }
