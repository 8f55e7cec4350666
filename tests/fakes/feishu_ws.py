"""The Feishu long-connection side of the fake: pbbp2 protobuf frames over a websocket.

Speaks what lark-oapi's ws client expects: events as DATA frames (`type=event`), the client's
acks (the same frame echoed with `biz_rt` and a JSON payload), and CONTROL ping -> pong.
Frames use lark-oapi's pbbp2 schema (tests/fakes/feishu_frame.py).
"""

from __future__ import annotations

import asyncio
import base64
import json
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSMsgType, web

from tests.fakes.feishu_frame import Frame

SERVICE_ID = 33
CONTROL, DATA = 0, 1


@dataclass
class Ack:
    """What the client answered to one pushed frame."""

    message_id: str
    code: int
    data: Any
    headers: dict[str, str]
    at: float = field(default_factory=time.monotonic)


def _headers(frame: Frame) -> dict[str, str]:
    return {h.key: h.value for h in frame.headers}


def _frame(method: int, headers: dict[str, str], payload: bytes = b"") -> bytes:
    frame = Frame()
    frame.SeqID, frame.LogID, frame.service, frame.method = 0, 0, SERVICE_ID, method
    for key, value in headers.items():
        h = frame.headers.add()
        h.key, h.value = key, value
    if payload:
        frame.payload = payload
    return frame.SerializeToString()


class WsSide:
    """Connections, pushes and acks of the long connection. Runs on the fake's loop."""

    def __init__(self) -> None:
        self.sockets: set[web.WebSocketResponse] = set()
        self.acks: dict[str, Ack] = {}
        self.pings = 0
        self.connects = 0
        self.silent = False  # True: swallow pings and pushes (a half-dead connection)
        self.ping_interval = 120
        self._ack_cond = threading.Condition()
        self.connected = threading.Event()
        self._newest: web.WebSocketResponse | None = None

    def client_config(self) -> dict[str, int]:
        return {
            "ReconnectCount": 1,
            "ReconnectInterval": 1,
            "ReconnectNonce": 0,
            "PingInterval": self.ping_interval,
        }

    async def handle(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(autoping=True)
        await ws.prepare(request)
        self.sockets.add(ws)
        self._newest = ws
        self.connects += 1
        self.connected.set()
        try:
            async for msg in ws:
                if msg.type == WSMsgType.BINARY and not self.silent:
                    await self._on_frame(ws, msg.data)
        finally:
            self.sockets.discard(ws)
            if not self.sockets:
                self.connected.clear()
        return ws

    async def _on_frame(self, ws: web.WebSocketResponse, data: bytes) -> None:
        frame = Frame()
        frame.ParseFromString(data)
        headers = _headers(frame)
        if frame.method == CONTROL and headers.get("type") == "ping":
            self.pings += 1
            pong = json.dumps(self.client_config()).encode()
            await ws.send_bytes(_frame(CONTROL, {"type": "pong"}, pong))
        elif frame.method == DATA:
            body = json.loads(frame.payload or b"{}")
            raw = body.get("data")
            payload = json.loads(base64.b64decode(raw)) if raw else None
            ack = Ack(headers.get("message_id", ""), int(body.get("code", 0)), payload, headers)
            with self._ack_cond:
                self.acks[ack.message_id] = ack
                self._ack_cond.notify_all()

    def _receiver(self) -> web.WebSocketResponse | None:
        """Feishu pushes each event to ONE of an app's open connections (cluster mode, no
        broadcast): here the newest one still open."""
        open_ = [ws for ws in self.sockets if not ws.closed]
        if self._newest in open_:
            return self._newest
        return open_[0] if open_ else None

    async def push(self, envelope: dict[str, Any], *, chunks: int = 1) -> str:
        """Send one event (split into `chunks` frames, as Feishu does for big ones) to one of
        the open connections."""
        message_id = str(uuid.uuid4())
        raw = json.dumps(envelope).encode()
        size = -(-len(raw) // chunks)
        parts = [raw[i * size : (i + 1) * size] for i in range(chunks)]
        ws = self._receiver()
        if ws is not None:
            for seq, part in enumerate(parts):
                headers = {
                    "type": "event",
                    "message_id": message_id,
                    "sum": str(chunks),
                    "trace_id": "tr-" + message_id,
                    "seq": str(seq),
                }
                await ws.send_bytes(_frame(DATA, headers, part))
        return message_id

    def wait_ack(self, message_id: str, timeout: float = 5.0) -> Ack:
        deadline = time.monotonic() + timeout
        with self._ack_cond:
            while message_id not in self.acks:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"no ack for {message_id}")
                self._ack_cond.wait(left)
            return self.acks[message_id]

    async def drop(self) -> None:
        """Server-initiated disconnect of every connection."""
        for ws in list(self.sockets):
            await ws.close()

    async def wait_closed(self, timeout: float) -> None:
        end = time.monotonic() + timeout
        while self.sockets and time.monotonic() < end:
            await asyncio.sleep(0.02)
