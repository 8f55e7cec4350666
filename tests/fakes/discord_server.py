"""A fake Discord on 127.0.0.1: the REST API (/api/v10) and the Gateway websocket.

discord.py talks to it unchanged (`Route.BASE` and the gateway URL point here). REST: users/@me,
the application, gateway/bot, messages (JSON and multipart) POST/PATCH, typing, threads from a
message, interaction callbacks, application commands, attachments. Gateway: HELLO, IDENTIFY ->
READY (+ GUILD_CREATE), heartbeats/ACK, dispatches with sequence numbers, RESUME (replays what
the session missed, then RESUMED), op 7 reconnect, op 9 invalid session (discord_gateway.py;
the payloads in discord_payloads.py). Faults: 429s with
`retry_after` and the X-RateLimit headers (global too), a dropped socket, 5xx.

Rules checked (`violations`): a call to a rate-limited bucket before its retry-after, more than
5 messages or 5 edits per channel in 5 seconds, a message over 2,000 characters.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import aiohttp
from aiohttp import web

from tests.fakes.discord_gateway import Gateway, Session
from tests.fakes.discord_payloads import (
    APP_ID,
    BOT_ID,
    CHANNEL_ID,
    EPOCH,
    GUILD_ID,
    ROLE_ID,
    TOKEN,
    USER_ID,
    Payloads,
    token_of,
    user_payload,
)
from tests.fakes.threaded import Awaited, Recorded, Served, ThreadedServer

__all__ = ["BOT_ID", "CHANNEL_ID", "GUILD_ID", "ROLE_ID", "TOKEN", "USER_ID", "FakeDiscord"]
MAX_CONTENT = 2000
WINDOW, PER_WINDOW = 5.0, 5


@dataclass
class Limit:
    """An injected 429: on the next `times` calls matching `method` and `path_part`."""

    method: str
    path_part: str
    retry_after: float
    times: int = 1
    is_global: bool = False


class FakeDiscord(Served, Awaited, Payloads, Gateway):
    name = "fake discord"
    wait_seconds = 10.0

    def __init__(self, *, bot_id: int = BOT_ID, app_id: int = APP_ID) -> None:
        self.bot_id, self.app_id, self.token = bot_id, app_id, token_of(bot_id)
        self._others: dict[str, FakeDiscord] = {}  # more bots on this server, by token
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

    @property
    def api_base(self) -> str:
        return f"{self.server.base}/api/v10"

    def add_bot(self, *, bot_id: int, app_id: int) -> FakeDiscord:
        """Another bot (own token, messages, calls, sessions) at this started fake's address."""
        other = FakeDiscord(bot_id=bot_id, app_id=app_id)
        other.server = self.server
        self._others[other.token] = other
        return other

    def bots(self) -> list[FakeDiscord]:  # type: ignore[override]
        return [self, *self._others.values()]

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
            if m["channel_id"] == str(channel_id) and m["author"]["id"] == str(self.bot_id)
        ]
        return sorted(mine, key=lambda m: int(m["id"]))

    def methods(self) -> list[str]:
        return [f"{c.method} {c.path}" for c in self.calls]

    # ------------------------------------------------------------------ REST

    async def _rest(self, request: web.Request) -> web.StreamResponse:
        path = "/" + request.match_info["tail"]
        body, files = await _read(request)
        token = request.headers.get("Authorization", "").removeprefix("Bot ")
        bot = next((b for b in self.bots() if b.token == token), None)
        if "/interactions/" in path:  # no token: the interaction's id says whose
            bot = next((b for b in self.bots() if int(path.split("/")[2]) in b._interactions), self)
        if bot is None:
            return _error(401, 0, "401: Unauthorized")
        return await bot._serve(request, path, body, files)

    async def _serve(
        self, request: web.Request, path: str, body: dict[str, Any], files: list[dict[str, Any]]
    ) -> web.StreamResponse:
        rec = Recorded(request.method, path, body, dict(request.headers))
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
            return _json(user_payload(self.bot_id, "antler", bot=True))
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
                {**c, "id": str(self.next_id()), "application_id": str(self.app_id)}
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
            channel, content, author=user_payload(self.bot_id, "antler", bot=True)
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
        message["edited_timestamp"] = EPOCH
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
                author=user_payload(self.bot_id, "antler", bot=True),
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
        found = (b.files.get(int(request.match_info["id"])) for b in self.bots())
        data = next((d for d in found if d is not None), None)
        if data is None:
            return web.Response(status=404)
        return web.Response(body=data, content_type="application/octet-stream")

    def _store(self, message: dict[str, Any]) -> None:
        with self._cond:
            self.messages[int(message["id"])] = message
            self._cond.notify_all()


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
