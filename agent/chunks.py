"""A streamed chat completion whose text deltas already read are joined into one chunk.

For every chunk of a stream, langchain-openai, langchain-core and LangGraph build objects and
run callbacks (an `AIMessageChunk`, a `ChatGenerationChunk`, the callback manager, LangGraph's
`StreamMessagesHandler`), which costs far more than reading the chunk. When the event loop is
behind, one socket read holds several SSE events of the same stream; `JoinedDeltas` hands the
consecutive text-only deltas among them over as one chunk, so that work runs once per read, not
once per token.

- Every SSE event is still decoded (the SDK's `SSEDecoder`) and parsed; the text is identical.
- Only what is already read is joined: the last event of a read is handed over at once. After
  a hand-over the stream reads again only `HAND_OVER_EVERY` (0.1 s) after the hand-over began,
  so a stream that sends faster than that hands its tokens over in reads of several events
  each, not one LangChain chunk per token; a token waits at most that long (platforms show new
  text every 0.3-3 s), the first token of a stream not at all.
- Only deltas that carry nothing but text (`content`, and `role` on the first) of the same
  choice are joined; tool-call deltas, reasoning, a finish reason, usage or logprobs end a
  join and pass through unchanged.

It is the SDK's own `AsyncStream` (a concrete subclass, as `raw.parse(to=...)` accepts), so
errors inside the stream raise as before.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

from openai import AsyncStream
from openai._streaming import ServerSentEvent, SSEDecoder

# Top-level keys a text chunk may carry besides its one choice (OpenAI and compatible servers;
# `obfuscation` is OpenAI's random padding, which nothing reads).
_PLAIN_KEYS = frozenset(
    {
        "id",
        "object",
        "created",
        "model",
        "system_fingerprint",
        "service_tier",
        "choices",
        "usage",
        "obfuscation",
    }
)
_CHOICE_KEYS = frozenset({"index", "delta", "finish_reason", "logprobs"})
_DELTA_KEYS = frozenset({"content", "role"})
_EVENT_ENDS = (b"\n\n", b"\r\r", b"\r\n\r\n")
# Seconds from one hand-over to the next read; 0: read again at once (one chunk per token
# whenever the loop keeps up).
HAND_OVER_EVERY = 0.1


class ReadBatches(SSEDecoder):
    """The SDK's SSE decoder, fed one socket read at a time; `ahead` counts the events of the
    current read not handed over yet (0: the next one needs another read)."""

    ahead = 0

    async def aiter_bytes(self, iterator: AsyncIterator[bytes]) -> AsyncIterator[ServerSentEvent]:
        pending = b""
        loop, every = asyncio.get_running_loop(), HAND_OVER_EVERY
        try:
            async for chunk in iterator:
                data = pending + chunk if pending else chunk
                cut = _events_end(data)
                pending = data[cut:]
                if cut:
                    began = loop.time()
                    for sse in self._counted(list(self.iter_bytes(iter((data[:cut],))))):
                        yield sse
                    wait = began + every - loop.time()
                    if every > 0 and wait > 0:  # what arrives meanwhile is read as one
                        await asyncio.sleep(wait)
            for sse in self._counted(list(self.iter_bytes(iter((pending,))))):
                yield sse
        finally:
            self.ahead = 0

    def _counted(self, events: list[ServerSentEvent]) -> Iterator[ServerSentEvent]:
        for index, sse in enumerate(events):
            self.ahead = len(events) - 1 - index
            yield sse


def _events_end(data: bytes) -> int:
    """Where the last whole event in `data` ends (0: none); the rest waits for the next read."""
    return max((data.rfind(end) + len(end) for end in _EVENT_ENDS if end in data), default=0)


class JoinedDeltas(AsyncStream[object]):
    """Chunks as dicts (each chunk's JSON), text deltas already read joined into one."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._decoder = ReadBatches()

    async def __aiter__(self) -> AsyncIterator[object]:
        decoder = self._decoder
        assert isinstance(decoder, ReadBatches)
        held: dict[str, Any] | None = None
        parts: list[str] = []
        chunk: Any
        async for chunk in self._iterator:
            delta = _text_delta(chunk)
            if held is not None and delta is not None and _joins(held, chunk, delta):
                parts.append(delta["content"])
            else:
                if held is not None:
                    yield _joined(held, parts)
                    held = None
                if delta is None:
                    yield chunk
                    continue
                held, parts = chunk, [delta["content"]]
            if not decoder.ahead and held is not None:  # nothing more already read: hand over
                yield _joined(held, parts)
                held = None
        if held is not None:
            yield _joined(held, parts)


def _text_delta(chunk: object) -> dict[str, Any] | None:
    """The delta of a chunk that carries only text (and maybe its role), else None. Runs per
    token: exact type checks (JSON gives plain dicts, lists and strs) before the key checks."""
    if type(chunk) is not dict or not chunk.keys() <= _PLAIN_KEYS:
        return None
    choices = chunk.get("choices")
    if type(choices) is not list or len(choices) != 1 or chunk.get("usage") is not None:
        return None
    choice = choices[0]
    if type(choice) is not dict or not choice.keys() <= _CHOICE_KEYS:
        return None
    if choice.get("finish_reason") is not None or choice.get("logprobs") is not None:
        return None
    delta = choice.get("delta")
    if type(delta) is not dict or not delta.keys() <= _DELTA_KEYS:
        return None
    return delta if type(delta.get("content")) is str else None


def _joins(held: dict[str, Any], chunk: dict[str, Any], delta: dict[str, Any]) -> bool:
    """`chunk` continues `held`: the same choice, no role of its own."""
    return "role" not in delta and chunk["choices"][0].get("index") == held["choices"][0].get(
        "index"
    )


def _joined(held: dict[str, Any], parts: list[str]) -> dict[str, Any]:
    if len(parts) > 1:
        held["choices"][0]["delta"]["content"] = "".join(parts)
    return held
