"""A fake Slack: Web API, Socket Mode websocket and a signed HTTP event sender, on 127.0.0.1.

Runs in its own thread (ThreadedServer). Every Web API call is recorded with its time; errors and
429s can be injected per method; `push_*` helpers deliver events over Socket Mode and record the
client's acks; `signed_post` delivers HTTP-mode events with a valid (or broken) signature.
"""

from __future__ import annotations

import itertools
import json
import threading
import uuid
from collections import defaultdict
from typing import Any
from urllib.parse import parse_qsl

from aiohttp import web

from tests.fakes.slack_payloads import (
    APP_TOKEN,
    BOT_ID,
    BOT_TOKEN,
    BOT_USER,
    SIGNING_SECRET,
    TEAM,
    action_body,
    command_body,
    signed_post,
)
from tests.fakes.slack_socket import SocketMode
from tests.fakes.threaded import Awaited, Recorded, Served, ThreadedServer, max_in_window

__all__ = [
    "APP_TOKEN",
    "BOT_ID",
    "BOT_TOKEN",
    "BOT_USER",
    "SIGNING_SECRET",
    "TEAM",
    "FakeSlack",
    "action_body",
    "command_body",
    "signed_post",
]


class FakeSlack(Served, Awaited, SocketMode):
    """State and behaviour of the fake; `server` is its ThreadedServer."""

    name = "fake slack"

    def __init__(
        self,
        *,
        team: str = TEAM,
        bot_user: str = BOT_USER,
        bot_token: str = BOT_TOKEN,
        app_token: str = APP_TOKEN,
    ) -> None:
        """One Slack app (`bot_token`, `app_token`; a second app is a second fake, like a
        second app installed in the same workspace)."""
        self.team, self.bot_user = team, bot_user
        self.bot_token, self.app_token = bot_token, app_token
        self.calls: list[Recorded] = []
        self.messages: dict[str, dict[str, Any]] = {}  # ts -> message
        self.reactions: dict[tuple[str, str], list[str]] = defaultdict(list)  # the bot's
        self.uploads: dict[str, dict[str, Any]] = {}  # file_id -> {"name", "data", ...}
        self.downloads: list[dict[str, str]] = []
        self.files: dict[str, bytes] = {}  # served under /files/<id>/<name>
        self.acks: dict[str, dict[str, Any]] = {}
        self.user_locales: dict[str, str] = {}  # user id -> its Slack locale
        self.default_locale = "en-US"  # everyone else's (Slack's default)
        self.streaming_supported = True
        self._failures: dict[str, list[tuple[int, dict[str, Any], dict[str, str]]]] = defaultdict(
            list
        )
        self._expire_after: dict[str, int] = {}  # stream ts -> appends left before expiry
        self._ts = itertools.count(1)
        self._sockets: list[web.WebSocketResponse] = []
        self.connected = threading.Event()
        self._ack_events: dict[str, threading.Event] = defaultdict(threading.Event)
        self._cond = threading.Condition()
        app = web.Application(middlewares=[_errors])
        app.router.add_post("/api/{method}", self._api)
        app.router.add_get("/api/{method}", self._api)
        app.router.add_get("/link", self._socket)
        app.router.add_post("/upload/{file_id}", self._upload)
        app.router.add_get("/files/{file_id}/{name}", self._download)
        self.server = ThreadedServer(app)

    # ------------------------------------------------------------------ lifecycle

    @property
    def api_base(self) -> str:
        return f"{self.server.base}/api/"

    # ------------------------------------------------------------------ injection knobs

    def fail(self, method: str, error: str, *, times: int = 1, status: int = 200) -> None:
        """The next `times` calls of `method` answer `{"ok": false, "error": error}`."""
        for _ in range(times):
            self._failures[method].append((status, {"ok": False, "error": error}, {}))

    def rate_limit(self, method: str, retry_after: float = 1, *, times: int = 1) -> None:
        """The next `times` calls of `method` answer 429 with Retry-After."""
        headers = {"Retry-After": str(retry_after)}
        for _ in range(times):
            self._failures[method].append((429, {"ok": False, "error": "ratelimited"}, headers))

    def expire_streams_after(self, appends: int) -> None:
        """New streams take `appends` appendStream calls, then `message_not_in_streaming_state`."""
        self._expire_default = appends

    _expire_default: int | None = None

    def add_file(self, name: str, data: bytes) -> str:
        file_id = f"F{len(self.files) + 1:04d}"
        self.files[file_id] = data
        return f"{self.server.base}/files/{file_id}/{name}"

    def add_message(
        self, channel: str, text: str, *, user: str = "U0001", thread_ts: str | None = None
    ) -> str:
        ts = self._next_ts()
        self.messages[ts] = {
            "channel": channel,
            "ts": ts,
            "user": user,
            "text": text,
            "thread_ts": thread_ts or ts,
            "type": "message",
        }
        return ts

    # ------------------------------------------------------------------ queries

    def calls_of(self, method: str) -> list[Recorded]:
        return [c for c in self.calls if c.method == method]

    def updates_per_workspace(self) -> dict[str, int]:
        counts: dict[str, int] = defaultdict(int)
        for c in self.calls_of("chat.update"):
            counts[c.body.get("team_id") or self.team] += 1
        return dict(counts)

    def max_in_window(self, method: str, window: float = 60.0) -> int:
        """The most calls of `method` seen within any `window` seconds."""
        return max_in_window([c.at for c in self.calls_of(method)], window)

    def thread_messages(self, channel: str, thread_ts: str) -> list[dict[str, Any]]:
        return [
            m
            for m in self.messages.values()
            if m["channel"] == channel and m.get("thread_ts") == thread_ts
        ]

    # ------------------------------------------------------------------ Web API

    async def _api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        body = await _read_body(request)
        self._record(Recorded(method, request.path, body, dict(request.headers)))
        tokens = (self.bot_token, self.app_token)
        if request.headers.get("Authorization") not in [f"Bearer {t}" for t in tokens]:
            return web.json_response({"ok": False, "error": "invalid_auth"})
        failures = self._failures.get(method)
        if failures:
            status, payload, headers = failures.pop(0)
            return web.json_response(payload, status=status, headers=headers)
        handler = getattr(self, "_m_" + method.replace(".", "_"), None)
        if handler is None:
            return web.json_response({"ok": False, "error": "unknown_method"})
        return web.json_response({"ok": True, **handler(body)})

    def _record(self, rec: Recorded) -> None:
        with self._cond:
            self.calls.append(rec)
            self._cond.notify_all()

    def _next_ts(self) -> str:
        return f"1700000000.{next(self._ts):06d}"

    def _m_auth_test(self, body: dict[str, Any]) -> dict[str, Any]:
        return {
            "user_id": self.bot_user,
            "bot_id": BOT_ID,
            "team_id": self.team,
            "team": "Fake",
            "user": "antler",
            "url": "https://fake.slack.com/",
        }

    def _m_users_info(self, body: dict[str, Any]) -> dict[str, Any]:
        """As Slack's users.info: the user, with `locale` only when asked (include_locale)."""
        user_id = str(body.get("user") or "")
        if not user_id:
            return {"ok": False, "error": "user_not_found"}
        user: dict[str, Any] = {"id": user_id, "team_id": self.team, "name": user_id.lower()}
        if str(body.get("include_locale")).lower() in ("true", "1"):
            user["locale"] = self.user_locales.get(user_id, self.default_locale)
        return {"user": user}

    def _m_apps_connections_open(self, body: dict[str, Any]) -> dict[str, Any]:
        return {"url": f"ws://127.0.0.1:{self.server.port}/link?ticket={uuid.uuid4()}"}

    def _post(self, body: dict[str, Any], **extra: Any) -> dict[str, Any]:
        ts = self._next_ts()
        msg = {
            "ts": ts,
            "channel": body.get("channel"),
            "text": body.get("text", ""),
            "blocks": body.get("blocks"),
            "thread_ts": body.get("thread_ts"),
            "user": self.bot_user,
            "bot_id": BOT_ID,
            "type": "message",
            **extra,
        }
        self.messages[ts] = msg
        return {"channel": body.get("channel"), "ts": ts, "message": msg}

    def _m_chat_postMessage(self, body: dict[str, Any]) -> dict[str, Any]:
        return self._post(body)

    def _m_chat_postEphemeral(self, body: dict[str, Any]) -> dict[str, Any]:
        return {"message_ts": self._next_ts()}

    def _m_chat_update(self, body: dict[str, Any]) -> dict[str, Any]:
        msg = self.messages.get(str(body.get("ts")))
        if msg is not None:  # the message's blocks are replaced, a stream's last ones too
            msg.update(text=body.get("text", ""), blocks=body.get("blocks"))
            msg.pop("stop_blocks", None)
        return {"channel": body.get("channel"), "ts": body.get("ts"), "text": body.get("text")}

    def _m_chat_startStream(self, body: dict[str, Any]) -> dict[str, Any]:
        if not self.streaming_supported:
            raise _Unknown
        result = self._post(body, text=_stream_text(body), streaming=True)
        if self._expire_default is not None:
            self._expire_after[result["ts"]] = self._expire_default
        return {"channel": result["channel"], "ts": result["ts"]}

    def _m_chat_appendStream(self, body: dict[str, Any]) -> dict[str, Any]:
        msg = self.messages.get(str(body.get("ts")))
        if msg is None or not msg.get("streaming"):
            raise _Error("message_not_in_streaming_state")
        left = self._expire_after.get(msg["ts"])
        if left is not None:
            if left <= 0:
                msg["streaming"] = False
                raise _Error("message_not_in_streaming_state")
            self._expire_after[msg["ts"]] = left - 1
        msg["text"] += _stream_text(body)
        return {"channel": body.get("channel"), "ts": body.get("ts")}

    def _m_chat_stopStream(self, body: dict[str, Any]) -> dict[str, Any]:
        msg = self.messages.get(str(body.get("ts")))
        if msg is None or not msg.get("streaming"):
            raise _Error("message_not_in_streaming_state")
        msg.update(streaming=False, stop_blocks=body.get("blocks"))
        msg["text"] += _stream_text(body)
        return {"channel": body.get("channel"), "ts": body.get("ts")}

    def _m_assistant_threads_setStatus(self, body: dict[str, Any]) -> dict[str, Any]:
        return {}

    def _m_reactions_add(self, body: dict[str, Any]) -> dict[str, Any]:
        names = self._reactions_on(body)
        if body["name"] in names:
            raise _Error("already_reacted")
        names.append(body["name"])
        return {}

    def _m_reactions_remove(self, body: dict[str, Any]) -> dict[str, Any]:
        names = self._reactions_on(body)
        if body["name"] not in names:
            raise _Error("no_reaction")
        names.remove(body["name"])
        return {}

    def _reactions_on(self, body: dict[str, Any]) -> list[str]:
        """The bot's reactions on a message; Tier 3: over 50 calls a minute are refused."""
        recent = [c for c in self.calls if c.method.startswith("reactions.")]
        if max_in_window([c.at for c in recent[-51:]], 60.0) > 50:
            raise _Error("ratelimited")
        return self.reactions[(str(body["channel"]), str(body["timestamp"]))]

    def _m_conversations_replies(self, body: dict[str, Any]) -> dict[str, Any]:
        msgs = self.thread_messages(str(body.get("channel")), str(body.get("ts")))
        return {"messages": sorted(msgs, key=lambda m: m["ts"]), "has_more": False}

    def _m_files_getUploadURLExternal(self, body: dict[str, Any]) -> dict[str, Any]:
        file_id = f"FU{len(self.uploads) + 1:04d}"
        self.uploads[file_id] = {"name": body.get("filename"), "length": body.get("length")}
        return {"upload_url": f"{self.server.base}/upload/{file_id}", "file_id": file_id}

    def _m_files_completeUploadExternal(self, body: dict[str, Any]) -> dict[str, Any]:
        files = body.get("files")
        files = json.loads(files) if isinstance(files, str) else files or []
        for f in files:
            self.uploads.setdefault(f["id"], {}).update(
                completed=True,
                channel=body.get("channel_id"),
                thread_ts=body.get("thread_ts"),
                title=f.get("title"),
            )
        return {"files": [{"id": f["id"], "title": f.get("title")} for f in files]}

    # ------------------------------------------------------------------ files

    async def _upload(self, request: web.Request) -> web.Response:
        file_id = request.match_info["file_id"]
        self.uploads.setdefault(file_id, {})["data"] = await request.read()
        self._record(Recorded("upload", request.path, None, dict(request.headers)))
        return web.Response(text="OK - 1")

    async def _download(self, request: web.Request) -> web.StreamResponse:
        auth = request.headers.get("Authorization", "")
        self.downloads.append({"path": request.path, "auth": auth})
        data = self.files.get(request.match_info["file_id"])
        if auth != f"Bearer {self.bot_token}" or data is None:
            return web.Response(status=200, text="<html>login</html>", content_type="text/html")
        return web.Response(body=data, content_type="application/octet-stream")


class _Error(Exception):
    def __init__(self, code: str) -> None:
        self.code = code


class _Unknown(_Error):
    def __init__(self) -> None:
        super().__init__("unknown_method")


@web.middleware
async def _errors(request: web.Request, handler: Any) -> web.StreamResponse:
    try:
        return await handler(request)
    except _Error as exc:
        return web.json_response({"ok": False, "error": exc.code})


async def _read_body(request: web.Request) -> dict[str, Any]:
    body: dict[str, Any] = dict(request.query)
    raw = await request.read()
    if not raw:
        return body
    if request.content_type == "application/json":
        body.update(json.loads(raw))
    else:
        body.update(parse_qsl(raw.decode(), keep_blank_values=True))
    return body


def _stream_text(body: dict[str, Any]) -> str:
    text = body.get("markdown_text") or ""
    chunks = body.get("chunks") or []
    if isinstance(chunks, str):
        chunks = json.loads(chunks)
    return text + "".join(c.get("text", "") for c in chunks if c.get("type") == "markdown_text")
