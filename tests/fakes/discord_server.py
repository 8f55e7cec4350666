"""A fake Discord on 127.0.0.1: the REST API (/api/v10) and the Gateway websocket.

discord.py talks to it unchanged (`Route.BASE` and the gateway URL point here). REST: users/@me,
the application, gateway/bot, messages (JSON and multipart) POST/PATCH, typing, threads from a
message, interaction callbacks, application commands, attachments. Gateway: HELLO, IDENTIFY ->
READY (+ GUILD_CREATE), heartbeats/ACK, dispatches with sequence numbers, RESUME (replays what
the session missed, then RESUMED), op 7 reconnect, op 9 invalid session. Faults: 429s with
`retry_after` and the X-RateLimit headers (global too), a dropped socket, 5xx.

Rules checked (`violations`): a call to a rate-limited bucket before its retry-after, more than
5 messages or 5 edits per channel in 5 seconds, a message over 2,000 characters.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from aiohttp import web

from tests.fakes.threaded import Recorded, ThreadedServer

BOT_ID = 4242
APP_ID = 4243
TOKEN = base64.b64encode(str(BOT_ID).encode()).decode().rstrip("=") + ".fake.token"
USER_ID = 1001
GUILD_ID = 9000
CHANNEL_ID = 9001  # a text channel of the guild
ROLE_ID = 9500
MAX_CONTENT = 2000
WINDOW, PER_WINDOW = 5.0, 5
_EPOCH = "2026-01-01T00:00:00.000000+00:00"


def user_payload(user_id: int, name: str, *, bot: bool = False) -> dict[str, Any]:
    return {
        "id": str(user_id),
        "username": name,
        "global_name": name,
        "discriminator": "0",
        "avatar": None,
        "bot": bot,
    }


@dataclass
class Limit:
    """An injected 429: on the next `times` calls matching `method` and `path_part`."""

    method: str
    path_part: str
    retry_after: float
    times: int = 1
    is_global: bool = False


@dataclass
class Session:
    id: str
    seq: int = 0
    events: list[dict[str, Any]] = field(default_factory=list)  # every dispatch, for RESUME


class FakeDiscord:
    def __init__(self) -> None:
        self.calls: list[Recorded] = []
        self.messages: dict[int, dict[str, Any]] = {}  # id -> message (the latest content)
        self.history: list[tuple[str, int, str]] = []  # (POST|PATCH, message id, content)
        self.threads: dict[int, dict[str, Any]] = {}
        self.files: dict[int, bytes] = {}  # attachments users sent, served as CDN URLs
        self.uploads: list[dict[str, Any]] = []  # files the bot sent: {"name", "data", ...}
        self.commands: list[dict[str, Any]] = []
        self.callbacks: list[dict[str, Any]] = []
        self.violations: list[str] = []
        self.identifies = 0
        self.resumes = 0
        self.limits: list[Limit] = []
        self.limits_served = 0
        self.fail_status: list[tuple[str, str, int]] = []
        self._blocked: dict[str, float] = {}  # bucket -> until (monotonic)
        self._writes: dict[tuple[str, int], list[float]] = defaultdict(list)
        self._ids = itertools.count(100_000)
        self._sessions: dict[str, Session] = {}
        self._sockets: list[tuple[web.WebSocketResponse, Session | None]] = []
        self._interactions: dict[int, dict[str, Any]] = {}
        self._pending: set[asyncio.Future[None]] = set()
        self._cond = threading.Condition()
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/api/v10/{tail:.*}", self._rest)
        app.router.add_get("/gateway", self._gateway)
        app.router.add_get("/attachments/{id}/{name}", self._attachment)
        self.server = ThreadedServer(app)

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> FakeDiscord:
        self.server.start()
        return self

    def stop(self) -> None:
        self.server.stop()

    @property
    def api_base(self) -> str:
        return f"{self.server.base}/api/v10"

    @property
    def gateway_url(self) -> str:
        return f"ws://127.0.0.1:{self.server.port}/gateway"

    def next_id(self) -> int:
        return next(self._ids)

    # ------------------------------------------------------------------ injection knobs

    def rate_limit(
        self,
        method: str,
        path_part: str,
        retry_after: float = 1.0,
        *,
        times: int = 1,
        is_global: bool = False,
    ) -> None:
        self.limits.append(Limit(method, path_part, retry_after, times, is_global))

    def fail(self, method: str, path_part: str, status: int = 503) -> None:
        self.fail_status.append((method, path_part, status))

    # ------------------------------------------------------------------ queries

    def calls_of(self, method: str, path_part: str = "") -> list[Recorded]:
        return [c for c in self.calls if c.method == method and path_part in c.path]

    def bot_messages(self, channel_id: int) -> list[dict[str, Any]]:
        mine = [
            m
            for m in self.messages.values()
            if m["channel_id"] == str(channel_id) and m["author"]["id"] == str(BOT_ID)
        ]
        return sorted(mine, key=lambda m: int(m["id"]))

    def wait_for(self, predicate: Any, timeout: float = 5.0) -> bool:
        deadline = time.monotonic() + timeout
        with self._cond:
            while not predicate(self):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(min(left, 0.05))
        return True

    async def until(self, predicate: Any, timeout: float = 10.0) -> None:
        if not await asyncio.to_thread(self.wait_for, predicate, timeout):
            raise AssertionError(f"fake discord: condition not met; calls={self.methods()}")

    def methods(self) -> list[str]:
        return [f"{c.method} {c.path}" for c in self.calls]

    @property
    def open_sockets(self) -> int:
        return sum(not ws.closed for ws, _ in self._sockets)

    # ------------------------------------------------------------------ REST

    async def _rest(self, request: web.Request) -> web.StreamResponse:
        path = "/" + request.match_info["tail"]
        body, files = await _read(request)
        rec = Recorded(request.method, path, body, dict(request.headers))
        if request.headers.get("Authorization") != f"Bot {TOKEN}" and "/interactions/" not in path:
            return _error(401, 0, "401: Unauthorized")
        self._check_blocks(request.method, path)
        limited = self._limited(request.method, path)
        if limited is not None:
            rec.refused = True
            self._record(rec)
            return limited
        for i, (method, part, status) in enumerate(self.fail_status):
            if method == request.method and part in path:
                del self.fail_status[i]
                rec.refused = True
                self._record(rec)
                return _error(status, 0, "server error")
        self._record(rec)
        try:
            return await self._route(request.method, path, body, files)
        except _Refused as exc:
            return _error(exc.status, exc.code, exc.message)

    def _record(self, rec: Recorded) -> None:
        with self._cond:
            self.calls.append(rec)
            self._cond.notify_all()

    def _bucket(self, method: str, path: str) -> str:
        parts = path.strip("/").split("/")
        major = parts[1] if len(parts) > 1 and parts[0] == "channels" else ""
        return f"{method} {parts[0]}/{major}"

    def _check_blocks(self, method: str, path: str) -> None:
        now = time.monotonic()
        for key in ("global", self._bucket(method, path)):
            until = self._blocked.get(key)
            if until is not None and now < until - 0.05:
                self.violations.append(f"{method} {path} {until - now:.2f}s into a 429 ({key})")

    def _limited(self, method: str, path: str) -> web.Response | None:
        for limit in self.limits:
            if limit.method == method and limit.path_part in path and limit.times > 0:
                limit.times -= 1
                self.limits_served += 1
                key = "global" if limit.is_global else self._bucket(method, path)
                self._blocked[key] = time.monotonic() + limit.retry_after
                headers = {
                    "Retry-After": str(limit.retry_after),
                    "X-RateLimit-Limit": "5",
                    "X-RateLimit-Remaining": "0",
                    "X-RateLimit-Reset-After": str(limit.retry_after),
                    "X-RateLimit-Bucket": self._bucket(method, path).replace(" ", "-"),
                    "Via": "1.1 google",
                }
                if limit.is_global:
                    headers["X-RateLimit-Global"] = "true"
                    headers["X-RateLimit-Scope"] = "global"
                payload = {
                    "message": "You are being rate limited.",
                    "retry_after": limit.retry_after,
                    "global": limit.is_global,
                }
                return _json(payload, status=429, headers=headers)
        return None

    async def _route(
        self, method: str, path: str, body: dict[str, Any], files: list[dict[str, Any]]
    ) -> web.StreamResponse:
        parts = path.strip("/").split("/")
        if path == "/users/@me":
            return _json(user_payload(BOT_ID, "antler", bot=True))
        if path == "/oauth2/applications/@me":
            return _json(self._application())
        if path == "/gateway/bot":
            return _json(
                {
                    "url": self.gateway_url,
                    "shards": 1,
                    "session_start_limit": {
                        "total": 1000,
                        "remaining": 999,
                        "reset_after": 0,
                        "max_concurrency": 1,
                    },
                }
            )
        if parts[0] == "applications" and parts[-1] == "commands" and method == "PUT":
            self.commands = [
                {**c, "id": str(self.next_id()), "application_id": str(APP_ID)}
                for c in body["_json"]
            ]
            return _json(self.commands)
        if parts[0] == "interactions":
            return self._callback(int(parts[1]), body)
        if parts[0] == "channels":
            return self._channel_call(method, parts[1:], body, files)
        raise _Refused(404, 0, f"404: Not Found ({method} {path})")

    def _channel_call(
        self, method: str, parts: list[str], body: dict[str, Any], files: list[dict[str, Any]]
    ) -> web.StreamResponse:
        channel = int(parts[0])
        rest = parts[1:]
        if rest == ["typing"] and method == "POST":
            return web.Response(status=204)
        if rest == ["messages"] and method == "POST":
            return _json(self._bot_message(channel, body.get("_json", {}), files))
        if len(rest) == 2 and rest[0] == "messages" and method == "PATCH":
            return _json(self._edit(channel, int(rest[1]), body.get("_json", {})))
        if len(rest) == 3 and rest[2] == "threads" and method == "POST":
            return _json(self._thread(channel, int(rest[1]), body.get("_json", {})))
        raise _Refused(404, 10003, "Unknown Channel")

    def _application(self) -> dict[str, Any]:
        return {
            "id": str(APP_ID),
            "name": "antler",
            "icon": None,
            "description": "",
            "bot_public": True,
            "bot_require_code_grant": False,
            "owner": user_payload(1, "owner"),
            "verify_key": "00",
            "flags": 0,
        }

    def _check_write(self, kind: str, channel: int, content: str) -> None:
        now = time.monotonic()
        window = [t for t in self._writes[(kind, channel)] if now - t < WINDOW]
        window.append(now)
        self._writes[(kind, channel)] = window
        if len(window) > PER_WINDOW:
            self.violations.append(f"{len(window)} {kind}s in channel {channel} within 5 s")
        if len(content) > MAX_CONTENT:
            self.violations.append(f"{kind} of {len(content)} characters")
            raise _Refused(400, 50035, "Invalid Form Body (content: at most 2000 characters)")

    def _bot_message(
        self, channel: int, payload: dict[str, Any], files: list[dict[str, Any]]
    ) -> dict[str, Any]:
        content = str(payload.get("content") or "")
        self._check_write("POST", channel, content)
        attachments = []
        for index, f in enumerate(files):
            self.uploads.append({"name": f["filename"], "data": f["data"], "channel": channel})
            attachments.append(
                self._attachment_payload(self.next_id(), f["filename"], f["data"], index)
            )
        message = self.message_payload(
            channel, content, author=user_payload(BOT_ID, "antler", bot=True)
        )
        message.update(components=payload.get("components") or [], attachments=attachments)
        ref = payload.get("message_reference")
        if ref:
            message["message_reference"] = ref
        self._store(message)
        self.history.append(("POST", int(message["id"]), content))
        return message

    def _edit(self, channel: int, message_id: int, payload: dict[str, Any]) -> dict[str, Any]:
        message = self.messages.get(message_id)
        if message is None or message["channel_id"] != str(channel):
            raise _Refused(404, 10008, "Unknown Message")
        if "content" in payload:
            self._check_write("PATCH", channel, str(payload["content"] or ""))
            message["content"] = payload["content"] or ""
        if "components" in payload:
            message["components"] = payload["components"] or []
        message["edited_timestamp"] = _EPOCH
        self.history.append(("PATCH", message_id, message["content"]))
        with self._cond:
            self._cond.notify_all()
        return message

    def _thread(self, channel: int, message_id: int, payload: dict[str, Any]) -> dict[str, Any]:
        if message_id in self.threads:
            raise _Refused(400, 160004, "A thread has already been created for this message")
        thread = self.thread_payload(message_id, channel, str(payload.get("name") or "thread"))
        self.threads[message_id] = thread
        self.dispatch("THREAD_CREATE", {**thread, "newly_created": True})
        return thread

    def _callback(self, interaction_id: int, body: dict[str, Any]) -> web.Response:
        payload = body.get("_json", {})
        self.callbacks.append({"id": interaction_id, **payload})
        kind = payload.get("type")
        source = self._interactions.get(interaction_id, {})
        result: dict[str, Any] = {
            "interaction": {"id": str(interaction_id), "type": source.get("type", 2)}
        }
        if kind == 4:  # CHANNEL_MESSAGE_WITH_SOURCE: a message from the bot
            channel = int(source.get("channel_id", CHANNEL_ID))
            data = payload.get("data") or {}
            message = self.message_payload(
                channel,
                str(data.get("content") or ""),
                author=user_payload(BOT_ID, "antler", bot=True),
            )
            message["interaction_metadata"] = {
                "id": str(interaction_id),
                "type": 2,
                "user": user_payload(USER_ID, "alice"),
                "authorizing_integration_owners": {},
            }
            self._store(message)
            result["interaction"]["response_message_id"] = message["id"]
            result["resource"] = {"type": 4, "message": message}
        return _json(result)

    async def _attachment(self, request: web.Request) -> web.Response:
        data = self.files.get(int(request.match_info["id"]))
        if data is None:
            return web.Response(status=404)
        return web.Response(body=data, content_type="application/octet-stream")

    def _store(self, message: dict[str, Any]) -> None:
        with self._cond:
            self.messages[int(message["id"])] = message
            self._cond.notify_all()

    # ------------------------------------------------------------------ payloads

    def message_payload(
        self,
        channel: int,
        content: str,
        *,
        author: dict[str, Any] | None = None,
        guild: int | None = None,
        message_id: int | None = None,
        mentions: tuple[int, ...] = (),
    ) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": str(message_id or self.next_id()),
            "channel_id": str(channel),
            "author": author or user_payload(USER_ID, "alice"),
            "content": content,
            "timestamp": _EPOCH,
            "edited_timestamp": None,
            "tts": False,
            "mention_everyone": False,
            "mentions": [user_payload(m, "antler", bot=m == BOT_ID) for m in mentions],
            "mention_roles": [],
            "attachments": [],
            "embeds": [],
            "pinned": False,
            "type": 0,
            "flags": 0,
            "components": [],
        }
        if guild is not None:
            out["guild_id"] = str(guild)
            out["member"] = {
                "roles": [str(ROLE_ID)],
                "joined_at": _EPOCH,
                "deaf": False,
                "mute": False,
                "flags": 0,
            }
        return out

    def _attachment_payload(
        self, att_id: int, name: str, data: bytes, index: int = 0
    ) -> dict[str, Any]:
        url = f"{self.server.base}/attachments/{att_id}/{name}"
        return {
            "id": str(att_id),
            "filename": name,
            "size": len(data),
            "url": url,
            "proxy_url": url,
            "content_type": "text/plain",
        }

    def add_file(self, name: str, data: bytes) -> dict[str, Any]:
        att_id = self.next_id()
        self.files[att_id] = data
        return self._attachment_payload(att_id, name, data)

    def thread_payload(self, thread_id: int, parent: int, name: str) -> dict[str, Any]:
        return {
            "id": str(thread_id),
            "type": 11,
            "guild_id": str(GUILD_ID),
            "parent_id": str(parent),
            "owner_id": str(BOT_ID),
            "name": name,
            "message_count": 0,
            "member_count": 1,
            "rate_limit_per_user": 0,
            "thread_metadata": {
                "archived": False,
                "auto_archive_duration": 1440,
                "archive_timestamp": _EPOCH,
                "locked": False,
            },
        }

    def guild_payload(self) -> dict[str, Any]:
        return {
            "id": str(GUILD_ID),
            "name": "Fake guild",
            "unavailable": False,
            "member_count": 2,
            "owner_id": "1",
            "features": [],
            "emojis": [],
            "stickers": [],
            "roles": [
                {
                    "id": str(GUILD_ID),
                    "name": "@everyone",
                    "permissions": "0",
                    "position": 0,
                    "color": 0,
                    "hoist": False,
                    "managed": False,
                    "mentionable": False,
                },
                {
                    "id": str(ROLE_ID),
                    "name": "team",
                    "permissions": "0",
                    "position": 1,
                    "color": 0,
                    "hoist": False,
                    "managed": False,
                    "mentionable": False,
                },
            ],
            "channels": [
                {
                    "id": str(CHANNEL_ID),
                    "type": 0,
                    "name": "general",
                    "position": 0,
                    "permission_overwrites": [],
                    "guild_id": str(GUILD_ID),
                }
            ],
            "threads": list(self.threads.values()),
            "members": [],
            "voice_states": [],
            "presences": [],
            "stage_instances": [],
            "guild_scheduled_events": [],
            "soundboard_sounds": [],
        }

    def interaction_payload(
        self,
        kind: int,
        data: dict[str, Any],
        *,
        channel: int,
        guild: int | None = None,
        message: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        interaction_id = self.next_id()
        out: dict[str, Any] = {
            "id": str(interaction_id),
            "application_id": str(APP_ID),
            "type": kind,
            "data": data,
            "channel_id": str(channel),
            "channel": {"id": str(channel), "type": 1 if guild is None else 0},
            "token": f"itoken{interaction_id}",
            "version": 1,
            "locale": "en-US",
            "app_permissions": "0",
            "entitlements": [],
            "authorizing_integration_owners": {},
            "attachment_size_limit": 10 * 1024 * 1024,
            "context": 1 if guild is None else 0,
        }
        if guild is None:
            out["user"] = user_payload(USER_ID, "alice")
        else:
            out["guild_id"] = str(guild)
            out["channel"].update(
                guild_id=str(guild), name="general", position=0, permission_overwrites=[]
            )
            out["member"] = {
                "user": user_payload(USER_ID, "alice"),
                "roles": [str(ROLE_ID)],
                "joined_at": _EPOCH,
                "deaf": False,
                "mute": False,
                "flags": 0,
                "permissions": "0",
            }
        if message is not None:
            out["message"] = message
        self._interactions[interaction_id] = out
        return out

    # ------------------------------------------------------------------ Gateway

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
        with self._cond:
            self._sockets = [(w, s) for w, s in self._sockets if w is not ws]
            self._cond.notify_all()
        return ws

    async def _identify(
        self, ws: web.WebSocketResponse, entry: list[Any], data: dict[str, Any]
    ) -> None:
        if data.get("token") != TOKEN:
            await ws.close(code=4004, message=b"Authentication failed.")
            return
        self.identifies += 1
        session = Session(id=f"session{self.next_id()}")
        self._sessions[session.id] = session
        ready = {
            "v": 10,
            "user": user_payload(BOT_ID, "antler", bot=True),
            "guilds": [{"id": str(GUILD_ID), "unavailable": True}],
            "session_id": session.id,
            "resume_gateway_url": self.gateway_url,
            "application": {"id": str(APP_ID), "flags": 0},
            "private_channels": [],
            "relationships": [],
        }
        self._attach(ws, session)
        await self._send(ws, session, "READY", ready)
        await self._send(ws, session, "GUILD_CREATE", self.guild_payload())

    async def _resume(
        self, ws: web.WebSocketResponse, entry: list[Any], data: dict[str, Any]
    ) -> None:
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


class _Refused(Exception):
    def __init__(self, status: int, code: int, message: str) -> None:
        self.status, self.code, self.message = status, code, message


def _json(payload: Any, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    """discord.py reads a body as JSON only under exactly `application/json`."""
    return web.Response(
        status=status,
        body=json.dumps(payload).encode(),
        headers={**(headers or {}), "Content-Type": "application/json"},
    )


def _error(status: int, code: int, message: str) -> web.Response:
    return _json({"code": code, "message": message}, status=status)


async def _read(request: web.Request) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    body: dict[str, Any] = dict(request.query)
    files: list[dict[str, Any]] = []
    if request.content_type.startswith("multipart/"):
        reader = await request.multipart()
        async for part in reader:
            if not isinstance(part, aiohttp.BodyPartReader):
                continue
            data = await part.read()
            if part.name == "payload_json":
                body["_json"] = json.loads(data)
            else:
                files.append({"name": part.name, "filename": part.filename, "data": bytes(data)})
        return body, files
    raw = await request.read()
    if raw:
        body["_json"] = json.loads(raw)
    return body, files
