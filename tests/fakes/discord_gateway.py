"""The fake Discord's Gateway: HELLO, IDENTIFY -> READY + GUILD_CREATE, heartbeats, dispatches
with sequence numbers, RESUME (replays what the session missed, then RESUMED), op 7, op 9, and a
dropped socket. Mixed into FakeDiscord (tests/fakes/discord_server.py)."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from aiohttp import web

from tests.fakes.discord_payloads import GUILD_ID, user_payload
from tests.fakes.threaded import ThreadedServer


@dataclass
class Session:
    id: str
    seq: int = 0
    events: list[dict[str, Any]] = field(default_factory=list)  # every dispatch, for RESUME


class Gateway:
    server: ThreadedServer
    bot_id: int
    app_id: int
    token: str
    identifies: int
    resumes: int
    _sessions: dict[str, Session]
    _sockets: list[tuple[web.WebSocketResponse, Session | None]]
    _pending: set[asyncio.Future[None]]
    _cond: threading.Condition
    wait_for: Callable[..., bool]  # the fake's (tests/fakes/threaded.py's Awaited)

    @property
    def gateway_url(self) -> str:
        return f"ws://127.0.0.1:{self.server.port}/gateway"

    def next_id(self) -> int:
        raise NotImplementedError

    def guild_payload(self) -> dict[str, Any]:
        raise NotImplementedError

    @property
    def open_sockets(self) -> int:
        return sum(not ws.closed for ws, _ in self._sockets)

    async def _gateway(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(autoping=True)
        await ws.prepare(request)
        self.server.websockets.add(ws)
        entry: list[Any] = [ws, None]
        await ws.send_json({"op": 10, "d": {"heartbeat_interval": 41250}, "s": None, "t": None})
        async for frame in ws:
            if frame.type != aiohttp.WSMsgType.TEXT:
                continue
            msg = json.loads(frame.data)
            op = msg.get("op")
            if op == 1:
                await ws.send_json({"op": 11, "d": None, "s": None, "t": None})
            elif op == 2:
                await self._identify(ws, entry, msg["d"])
            elif op == 6:
                await self._resume(ws, entry, msg["d"])
        self.server.websockets.discard(ws)
        for bot in self.bots():
            with bot._cond:
                bot._sockets = [(w, s) for w, s in bot._sockets if w is not ws]
                bot._cond.notify_all()
        return ws

    def bots(self) -> list[Gateway]:
        """Every bot this fake serves: its own, then those added with `add_bot`."""
        return [self]

    async def _identify(
        self, ws: web.WebSocketResponse, entry: list[Any], data: dict[str, Any]
    ) -> None:
        bot = self.bot_of(str(data.get("token")))
        if bot is None:
            await ws.close(code=4004, message=b"Authentication failed.")
            return
        await bot._ready(ws)

    def bot_of(self, token: str) -> Gateway | None:
        """The bot `token` is (this fake's, or one added with `add_bot`)."""
        return next((b for b in self.bots() if b.token == token), None)

    async def _ready(self, ws: web.WebSocketResponse) -> None:
        self.identifies += 1
        session = Session(id=f"session{self.next_id()}")
        self._sessions[session.id] = session
        ready = {
            "v": 10,
            "user": user_payload(self.bot_id, "antler", bot=True),
            "guilds": [{"id": str(GUILD_ID), "unavailable": True}],
            "session_id": session.id,
            "resume_gateway_url": self.gateway_url,
            "application": {"id": str(self.app_id), "flags": 0},
            "private_channels": [],
            "relationships": [],
        }
        self._attach(ws, session)
        await self._send(ws, session, "READY", ready)
        await self._send(ws, session, "GUILD_CREATE", self.guild_payload())

    async def _resume(
        self, ws: web.WebSocketResponse, entry: list[Any], data: dict[str, Any]
    ) -> None:
        owner = next((b for b in self.bots() if str(data.get("session_id")) in b._sessions), self)
        if owner is not self:
            await owner._resume(ws, entry, data)
            return
        session = self._sessions.get(str(data.get("session_id")))
        if session is None:
            await ws.send_json({"op": 9, "d": False, "s": None, "t": None})
            return
        self.resumes += 1
        seq = int(data.get("seq") or 0)
        self._attach(ws, session)
        for event in session.events:
            if event["s"] > seq:
                await ws.send_json(event)
        await self._send(ws, session, "RESUMED", {})

    def _attach(self, ws: web.WebSocketResponse, session: Session) -> None:
        with self._cond:
            self._sockets = [(w, s) for w, s in self._sockets if w is not ws] + [(ws, session)]
            self._cond.notify_all()

    async def _send(
        self, ws: web.WebSocketResponse | None, session: Session, name: str, data: Any
    ) -> None:
        session.seq += 1
        event = {"op": 0, "t": name, "s": session.seq, "d": data}
        session.events.append(event)
        if ws is not None and not ws.closed:
            await ws.send_json(event)

    def dispatch(self, name: str, data: Any) -> None:
        """Send a dispatch to every session: now on its socket, or on RESUME when it has none
        (called on the server's loop or from any thread)."""
        live = {s.id: w for w, s in self._sockets if s is not None and not w.closed}
        for session in list(self._sessions.values()):
            ws = live.get(session.id)
            coro = self._send(ws, session, name, data)
            if threading.current_thread() is self.server._thread:
                task = asyncio.ensure_future(coro)
                self._pending.add(task)
                task.add_done_callback(self._pending.discard)
            else:
                self.server.call(coro)

    def wait_connected(self, timeout: float = 10.0) -> None:
        if not self.wait_for(
            lambda f: f.open_sockets > 0 and any(s for _, s in f._sockets), timeout
        ):
            raise AssertionError("no gateway session")

    def push_message(self, message: dict[str, Any]) -> None:
        self.wait_connected()
        self.dispatch("MESSAGE_CREATE", message)

    def push_interaction(self, interaction: dict[str, Any]) -> None:
        self.wait_connected()
        self.dispatch("INTERACTION_CREATE", interaction)

    def drop(self) -> None:
        """Cut every gateway socket (no close frame handshake from the client's side)."""
        for ws, _ in list(self._sockets):
            self.server.call(ws.close(code=4000, message=b"Unknown error"))

    def send_reconnect(self) -> None:
        for ws, _ in list(self._sockets):
            self.server.call(ws.send_json({"op": 7, "d": None, "s": None, "t": None}))

    def invalidate(self) -> None:
        """op 9 (not resumable): the sessions are gone; the client identifies again."""
        self._sessions.clear()
        for ws, _ in list(self._sockets):
            self.server.call(ws.send_json({"op": 9, "d": False, "s": None, "t": None}))
