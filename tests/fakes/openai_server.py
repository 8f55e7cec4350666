"""A fake OpenAI-compatible server: `/v1/chat/completions` (streamed and not) and `/v1/models`.

The real `openai` / `langchain-openai` clients talk to it over HTTP (base_url = `fake.base_url`).
Answers come from a script (`fake.script(Reply(...), ...)`, one per request, in order), else
from `fake.responder(body)`, which by default echoes the last user message:
`"echo: <text>"`, so a test can check what the model saw. Every request is recorded.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.fakes.openai_wire import (
    ChunkMaker,
    Reply,
    ToolCall,
    completion,
    content_deltas,
    error_body,
    finish_reason,
    usage_for,
)
from tests.fakes.threaded import Served, ThreadedServer

__all__ = ["ChatRequest", "FakeOpenAI", "Reply", "ToolCall", "echo_responder", "text_of"]

Responder = Callable[[dict[str, Any]], Reply]


@dataclass
class ChatRequest:
    """One chat-completions request as the fake received it."""

    body: dict[str, Any]
    headers: dict[str, str]
    at: float = field(default_factory=time.monotonic)
    reply: Reply | None = None
    finished: bool = False  # the whole answer was written (False: client went away first)

    @property
    def model(self) -> str:
        return str(self.body.get("model", ""))

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages", []))

    @property
    def tools(self) -> list[dict[str, Any]]:
        return list(self.body.get("tools") or [])

    @property
    def tool_names(self) -> list[str]:
        return [tool["function"]["name"] for tool in self.tools if "function" in tool]

    @property
    def stream(self) -> bool:
        return bool(self.body.get("stream"))

    def __getitem__(self, key: str) -> Any:
        return self.body[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.body.get(key, default)


def text_of(content: Any) -> str:
    """The text of a message `content` (a string or a list of content parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


def echo_responder(body: dict[str, Any]) -> Reply:
    users = [m for m in body.get("messages", []) if m.get("role") == "user"]
    last = text_of(users[-1].get("content")) if users else ""
    return Reply(text=f"echo: {last}")


TRANSCRIPTION_LIMIT = 25 * 1024 * 1024


class FakeOpenAI(Served):
    """The fake server. `start()`/`stop()`; thread-safe recording and scripting."""

    def __init__(self, models: tuple[str, ...] = ("fake-model",)) -> None:
        self.models = list(models)
        self.responder: Responder = echo_responder
        self.requests: list[ChatRequest] = []
        self.model_list_calls = 0
        self._script: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._release = threading.Event()
        self._closing = threading.Event()
        self.transcriptions: list[dict[str, Any]] = []  # {"model", "filename", "size"}
        self._transcripts: deque[str] = deque()
        app = web.Application(client_max_size=2 * TRANSCRIPTION_LIMIT)
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_post("/v1/audio/transcriptions", self._transcribe)
        app.router.add_get("/v1/models", self._models)
        self.server = ThreadedServer(app)

    # lifecycle -------------------------------------------------------------------------------

    def stop(self) -> None:
        self._closing.set()
        super().stop()

    @property
    def base_url(self) -> str:
        """What a client takes as `base_url` (ends in `/v1`)."""
        return f"{self.server.base}/v1"

    # scripting -------------------------------------------------------------------------------

    def script(self, *replies: Reply) -> None:
        """Queue replies; each request takes the next one, then the responder takes over."""
        self._script.extend(replies)

    def script_transcripts(self, *texts: str) -> None:
        """Queue transcripts; each transcription takes the next one, then "transcript of NAME"."""
        self._transcripts.extend(texts)

    @property
    def pending(self) -> int:
        return len(self._script)

    def release(self) -> None:
        """Let streams stalled by `Reply(stall_after=...)` finish."""
        self._release.set()

    def reset(self) -> None:
        """Fresh state: no script, default responder, nothing recorded."""
        with self._lock:
            self._script.clear()
            self.requests.clear()
            self.transcriptions.clear()
            self._transcripts.clear()
            self.responder = echo_responder
            self._release.clear()

    # inspection ------------------------------------------------------------------------------

    @property
    def last_request(self) -> ChatRequest:
        with self._lock:
            if not self.requests:
                raise AssertionError("the fake OpenAI server received no chat request")
            return self.requests[-1]

    @staticmethod
    def user_texts(request: ChatRequest | dict[str, Any]) -> list[str]:
        """Texts of the user messages in a request, in order."""
        body = request.body if isinstance(request, ChatRequest) else request
        return [
            text_of(m.get("content")) for m in body.get("messages", []) if m.get("role") == "user"
        ]

    async def wait_requests(self, n: int, timeout: float = 5.0) -> list[ChatRequest]:
        """Wait (without blocking the loop) until at least `n` chat requests arrived."""
        deadline = time.monotonic() + timeout
        while len(self.requests) < n:
            if time.monotonic() > deadline:
                raise AssertionError(f"expected {n} requests, got {len(self.requests)}")
            await asyncio.sleep(0.005)
        with self._lock:
            return list(self.requests)

    # handlers --------------------------------------------------------------------------------

    def _next_reply(self, body: dict[str, Any]) -> Reply:
        try:
            return self._script.popleft()
        except IndexError:
            return self.responder(body)

    async def _transcribe(self, request: web.Request) -> web.Response:
        """`/v1/audio/transcriptions` as OpenAI answers it: multipart `file` and `model`, JSON
        `{"text"}`; a file over 25 MB is refused with 413."""
        form = await request.post()
        upload, model = form.get("file"), form.get("model")
        if not isinstance(upload, web.FileField) or not model:
            reply = Reply(status=400, error="file and model are required")
            return web.json_response(error_body(reply), status=400)
        data = upload.file.read()
        if len(data) > TRANSCRIPTION_LIMIT:
            reply = Reply(status=413, error="Maximum content size limit exceeded")
            return web.json_response(error_body(reply), status=413)
        with self._lock:
            self.transcriptions.append(
                {"model": str(model), "filename": upload.filename, "size": len(data)}
            )
            text = self._transcripts.popleft() if self._transcripts else ""
        return web.json_response({"text": text or f"transcript of {upload.filename}"})

    async def _models(self, _request: web.Request) -> web.Response:
        self.model_list_calls += 1
        data = [
            {"id": name, "object": "model", "created": 0, "owned_by": "fake"}
            for name in self.models
        ]
        return web.json_response({"object": "list", "data": data})

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        try:
            body = await request.json()
        except json.JSONDecodeError:
            return web.json_response(error_body(Reply(status=400, error="bad JSON")), status=400)
        record = ChatRequest(body=body, headers=dict(request.headers))
        reply = self._next_reply(body)
        record.reply = reply
        with self._lock:
            self.requests.append(record)
        if reply.delay and not await self._delayed(reply.delay):
            return web.Response(status=503)
        if reply.status != 200:
            return self._error(reply)
        if not body.get("stream"):
            record.finished = True
            return web.json_response(completion(reply, body))
        return await self._stream(request, record, reply)

    def _error(self, reply: Reply) -> web.Response:
        headers = {}
        if reply.retry_after is not None:
            headers["Retry-After"] = f"{reply.retry_after:g}"
        return web.json_response(error_body(reply), status=reply.status, headers=headers)

    async def _stream(
        self, request: web.Request, record: ChatRequest, reply: Reply
    ) -> web.StreamResponse:
        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await response.prepare(request)
        maker = ChunkMaker(record.model)
        if reply.one_write:
            return await self._stream_in_one_write(response, record, reply, maker)
        pause = 1.0 / reply.tokens_per_second if reply.tokens_per_second else 0.0
        try:
            for count, delta in enumerate(content_deltas(reply)):
                stall = reply.stall_after is not None and count > reply.stall_after
                if stall and not await self._stalled(request):
                    return response
                await _send(response, maker.chunk(delta))
                if pause and count:
                    await asyncio.sleep(pause)
            await _send(response, maker.chunk({}, finish_reason(reply)))
            if _wants_usage(record, reply):
                await _send(response, maker.usage_chunk(usage_for(reply, record.body)))
            await response.write(b"data: [DONE]\n\n")
            await response.write_eof()
            record.finished = True
        except (ConnectionResetError, ConnectionError, asyncio.CancelledError):
            pass
        return response

    async def _stream_in_one_write(
        self, response: web.StreamResponse, record: ChatRequest, reply: Reply, maker: ChunkMaker
    ) -> web.StreamResponse:
        chunks = [maker.chunk(delta) for delta in content_deltas(reply)]
        chunks.append(maker.chunk({}, finish_reason(reply)))
        if _wants_usage(record, reply):
            chunks.append(maker.usage_chunk(usage_for(reply, record.body)))
        events = "".join(f"data: {json.dumps(chunk)}\n\n" for chunk in chunks)
        await response.write(f"{events}data: [DONE]\n\n".encode())
        await response.write_eof()
        record.finished = True
        return response

    async def _delayed(self, seconds: float) -> bool:
        """Wait `seconds` before answering; False when the server is closing meanwhile."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        while (left := deadline - loop.time()) > 0:
            if self._closing.is_set():
                return False
            await asyncio.sleep(min(left, 0.05))
        return True

    async def _stalled(self, request: web.Request) -> bool:
        """Hold a stalled stream; True when released, False when the client went away."""
        while not self._release.is_set():
            transport = request.transport
            if self._closing.is_set() or transport is None or transport.is_closing():
                return False
            await asyncio.sleep(0.01)
        return True


async def _send(response: web.StreamResponse, chunk: dict[str, Any]) -> None:
    await response.write(f"data: {json.dumps(chunk)}\n\n".encode())


def _wants_usage(record: ChatRequest, reply: Reply) -> bool:
    return bool((record.body.get("stream_options") or {}).get("include_usage")) and not (
        reply.no_usage
    )
