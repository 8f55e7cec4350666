"""The fake OpenAI server for many paced streams at once, cheap enough to share two cores.

`tests/fakes/openai_server.py` paces a stream with a sleep per token: at 1,000 streams × 50
tokens/s that is 50,000 timer wake-ups and JSON encodings a second, more than a core of its own,
taken from the service it is meant to measure. Here one ticker every `tick` (5 ms) writes, for
each running stream, the events due by then (from the stream's own start, so streams keep their
own phase as independent model calls do) in one write, each token still its own SSE event
encoded once when the request arrives: what a client reads is the same as from a model sending
token by token (TCP delivers what has arrived by the time it reads, in one read), with one write
per token and stream and no sleep or encoding per token.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.fakes.openai_server import ChatRequest, FakeOpenAI
from tests.fakes.openai_wire import ChunkMaker, Reply, content_deltas, finish_reason, usage_for


@dataclass
class _Paced:
    response: web.StreamResponse
    events: list[bytes]  # the last one is the end: finish reason, usage, [DONE]
    start: float
    tokens_per_second: float
    sent: int = 0
    done: asyncio.Future[bool] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )

    def due(self, now: float) -> int:
        """Events due by `now`: the role and first token at once, then one per 1/rate."""
        return min(len(self.events), 2 + int((now - self.start) * self.tokens_per_second))


class TickedFakeOpenAI(FakeOpenAI):
    """`FakeOpenAI` whose paced streams are written by one ticker (unpaced ones as before)."""

    def __init__(self, tick: float = 0.005) -> None:
        super().__init__()
        self.tick = tick
        self._paced: list[_Paced] = []
        self._ticker: asyncio.Task[None] | None = None

    async def _stream(
        self, request: web.Request, record: ChatRequest, reply: Reply
    ) -> web.StreamResponse:
        if not reply.tokens_per_second or reply.stall_after is not None:
            return await super()._stream(request, record, reply)
        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await response.prepare(request)
        loop = asyncio.get_running_loop()
        paced = _Paced(response, _events(record, reply), loop.time(), reply.tokens_per_second)
        self._paced.append(paced)
        if self._ticker is None:
            self._ticker = loop.create_task(self._tick())
        if await paced.done:
            await response.write_eof()
            record.finished = True
        return response

    async def _tick(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(self.tick)
            now, running = loop.time(), []
            current, self._paced = self._paced, []  # streams that arrive meanwhile wait a tick
            for paced in current:
                due = paced.due(now)
                if due > paced.sent:
                    try:
                        await paced.response.write(b"".join(paced.events[paced.sent : due]))
                    except (ConnectionError, RuntimeError):
                        paced.done.set_result(False)
                        continue
                    paced.sent = due
                if paced.sent < len(paced.events):
                    running.append(paced)
                else:
                    paced.done.set_result(True)
            self._paced = running + self._paced


def _events(record: ChatRequest, reply: Reply) -> list[bytes]:
    maker = ChunkMaker(record.model)
    events = [_sse(maker.chunk(delta)) for delta in content_deltas(reply)]
    end = _sse(maker.chunk({}, finish_reason(reply)))
    if (record.body.get("stream_options") or {}).get("include_usage"):
        end += _sse(maker.usage_chunk(usage_for(reply, record.body)))
    return [*events, end + b"data: [DONE]\n\n"]


def _sse(chunk: dict[str, Any]) -> bytes:
    return f"data: {json.dumps(chunk)}\n\n".encode()
