"""A fake WeCom on 127.0.0.1: the intelligent robot's long connection (wss) and its media CDN.

wecom-aibot-python-sdk talks to it unchanged over TLS (`ws_url` here, `ca_file` the test CA of
tests/fakes/tls.py). WebSocket: `aibot_subscribe` (bot id + secret, 40001 when wrong; a second
subscription sends the first socket a `disconnected_event` and closes it normally), `ping`
acks, callbacks pushed with `push_message` / `push_press` (each a fresh request id), and the
bot's commands acknowledged:
stream replies (`aibot_respond_msg`), pushes (`aibot_send_msg`), card updates
(`aibot_respond_update_msg`) and the three upload commands. Media: `add_media` encrypts a file
as WeCom does and serves it under /media/<id> with its name in Content-Disposition.

Faults: `fail(cmd, errcode, match, times)` (45009 blocks the conversation for `BLOCK` seconds),
`disconnect(code)` (1000/1001 normal, 1011 abnormal), `drop_pongs`, `auth_failure`,
`refuse_connections(n)` (a start outage: the upgrade answered 503), a redelivery is
`push_message` of the same body again.

Rules checked (`violations`): a frame during a conversation's block, a frame after its stream's
finish or to a request id WeCom never sent, a stream on an event's request id, more than 20,480
bytes of content, a card with no or more than 6 buttons or a used task id, a card update not
answering a press within 5 s, a push to a chat that never wrote to the bot.
"""

from __future__ import annotations

import base64
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from aiohttp import WSMsgType, web

from tests.fakes.threaded import Recorded, Running, ThreadedServer
from tests.fakes.tls import local_tls
from tests.fakes.wecom_payloads import BOT_ID, SECRET, encrypt

__all__ = ["BOT_ID", "SECRET", "FakeWeCom"]
MAX_BYTES = 20480
BLOCK = 1.0
UPDATE_WINDOW = 5.0
Match = Callable[[dict[str, Any]], bool]


@dataclass
class Failure:
    cmd: str
    errcode: int
    match: Match
    times: int


class TLSServer(ThreadedServer):
    async def _start(self) -> None:
        self._runner = web.AppRunner(self.app, handle_signals=False, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0, ssl_context=local_tls().server_context())
        await site.start()
        self.port = self._runner.addresses[0][1]


class FakeWeCom(Running):
    def __init__(self, *, bot_id: str = BOT_ID, secret: str = SECRET) -> None:
        """One intelligent robot (`bot_id`, `secret`); a second robot is a second fake."""
        self.bot_id, self.secret = bot_id, secret
        self.calls: list[Recorded] = []
        self.callbacks: dict[str, dict[str, Any]] = {}  # req id -> {"body", "event", "at"}
        self.messages: list[dict[str, Any]] = []  # streams, markdown, cards, files; in order
        self.streams: dict[str, dict[str, Any]] = {}  # stream id -> its entry in messages
        self.card_updates: list[dict[str, Any]] = []
        self.media: dict[str, tuple[bytes, str]] = {}
        self.uploads: list[dict[str, Any]] = []  # files the bot sent: {"name", "data", "type"}
        self.violations: list[str] = []
        self.failures: list[Failure] = []
        self.served: dict[int, int] = {}  # errcode -> refusals answered
        self.subscribes = 0
        self.auth_failure = False
        self.drop_pongs = False
        self.refused_upgrades = 0
        self.upgrades = 0
        self._refuse = 0
        self._known_chats: set[str] = set()
        self._tasks: set[str] = set()
        self._uploading: dict[str, dict[str, Any]] = {}
        self._blocked: dict[str, float] = {}
        self._socket: web.WebSocketResponse | None = None
        self._ready = threading.Event()
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_get("/ws", self._ws)
        app.router.add_get("/media/{id}", self._media)
        self.server = TLSServer(app)

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> FakeWeCom:
        self.server.start()
        return self

    def stop(self) -> None:
        self.server.stop()

    @property
    def ws_url(self) -> str:
        return f"wss://127.0.0.1:{self.server.port}/ws"

    @property
    def base(self) -> str:
        return f"https://127.0.0.1:{self.server.port}"

    @property
    def ca_file(self) -> str:
        return str(local_tls().ca_file)

    @property
    def connected(self) -> bool:
        return self._socket is not None and not self._socket.closed

    def wait_connected(self, timeout: float = 10.0) -> None:
        end = time.monotonic() + timeout
        while not self.connected:
            if time.monotonic() > end:
                raise TimeoutError("the bot never subscribed")
            time.sleep(0.01)

    # ------------------------------------------------------------------ knobs

    def fail(self, cmd: str, errcode: int, match: Match | None = None, times: int = 1) -> None:
        self.failures.append(Failure(cmd, errcode, match or (lambda _body: True), times))

    def refuse_connections(self, times: int) -> None:
        self._refuse += times

    def disconnect(self, code: int = 1011) -> None:
        """Close the bot's socket: 1000/1001 a normal close, 1011 an abnormal one."""
        socket = self._socket
        if socket is not None:
            self.server.call(socket.close(code=code, message=b"fake close"))

    def add_media(self, name: str, data: bytes) -> tuple[str, str]:
        """Serve `data` encrypted; returns its URL and its aeskey."""
        cipher, key = encrypt(data)
        media_id = f"m{len(self.media) + 1}"
        self.media[media_id] = (cipher, name)
        return f"{self.base}/media/{media_id}", key

    def push_message(self, body: dict[str, Any]) -> str:
        return self._push("aibot_msg_callback", body)

    def push_press(self, body: dict[str, Any]) -> str:
        return self._push("aibot_event_callback", body)

    def _push(self, cmd: str, body: dict[str, Any]) -> str:
        self.wait_connected()
        req_id = f"req-{len(self.callbacks) + 1}-{int(time.time() * 1000)}"
        event = cmd == "aibot_event_callback"
        self.callbacks[req_id] = {"body": body, "event": event, "at": time.monotonic()}
        self._known_chats.add(str(body.get("chatid") or body["from"]["userid"]))
        frame = {"cmd": cmd, "headers": {"req_id": req_id}, "body": body}
        socket = self._socket
        assert socket is not None
        self.server.call(socket.send_str(json.dumps(frame)))
        return req_id

    # ------------------------------------------------------------------ reading back

    def chat_messages(self, chatid: str) -> list[dict[str, Any]]:
        return [m for m in self.messages if m["chatid"] == chatid]

    def cards(self, chatid: str) -> list[dict[str, Any]]:
        return [m["card"] for m in self.chat_messages(chatid) if m["kind"] == "template_card"]

    # ------------------------------------------------------------------ HTTP

    async def _media(self, request: web.Request) -> web.StreamResponse:
        found = self.media.get(request.match_info["id"])
        if found is None:
            return web.Response(status=404)
        data, name = found
        disposition = f"attachment; filename*=UTF-8''{quote(name)}"
        return web.Response(body=data, headers={"Content-Disposition": disposition})

    async def _ws(self, request: web.Request) -> web.StreamResponse:
        self.upgrades += 1
        if self._refuse > 0:
            self._refuse -= 1
            self.refused_upgrades += 1
            return web.Response(status=503, text="service unavailable")
        ws = web.WebSocketResponse(autoping=True)
        await ws.prepare(request)
        self.server.websockets.add(ws)
        try:
            async for message in ws:
                if message.type == WSMsgType.TEXT:
                    await self._on_frame(ws, json.loads(message.data))
        finally:
            self.server.websockets.discard(ws)
            if self._socket is ws:
                self._socket = None
        return ws

    async def _on_frame(self, ws: web.WebSocketResponse, frame: dict[str, Any]) -> None:
        cmd = str(frame.get("cmd") or "")
        req_id = str((frame.get("headers") or {}).get("req_id") or "")
        body = frame.get("body") or {}
        if cmd == "ping":
            if not self.drop_pongs:
                await self._ack(ws, req_id)
            return
        self.calls.append(Recorded(cmd, req_id, body))
        if cmd == "aibot_subscribe":
            await self._subscribe(ws, req_id, body)
            return
        code, answer = self._refusal(cmd, body), None
        if code == 0:
            code, answer = self._command(cmd, req_id, body)
        else:
            self.calls[-1].refused = True
        await self._ack(ws, req_id, code, answer)

    async def _ack(
        self, ws: web.WebSocketResponse, req_id: str, code: int = 0, body: Any = None
    ) -> None:
        frame: dict[str, Any] = {"headers": {"req_id": req_id}, "errcode": code}
        frame["errmsg"] = "ok" if code == 0 else f"fake error {code}"
        if body is not None:
            frame["body"] = body
        if not ws.closed:
            await ws.send_str(json.dumps(frame))

    async def _subscribe(self, ws: web.WebSocketResponse, req_id: str, body: Any) -> None:
        self.subscribes += 1
        good = body.get("bot_id") == self.bot_id and body.get("secret") == self.secret
        if self.auth_failure or not good:
            await self._ack(ws, req_id, 40001, None)
            return
        old, self._socket = self._socket, ws
        await self._ack(ws, req_id)
        if old is not None and old is not ws and not old.closed:
            event: dict[str, Any] = {"msgid": f"ev-{self.subscribes}", "msgtype": "event"}
            event["event"] = {"eventtype": "disconnected_event"}
            frame = {"cmd": "aibot_event_callback", "headers": {"req_id": "ev"}, "body": event}
            await old.send_str(json.dumps(frame))
            await old.close(code=1000, message=b"kicked by a new subscription")

    # ------------------------------------------------------------------ commands

    def _refusal(self, cmd: str, body: dict[str, Any]) -> int:
        chat = self._chat_of(cmd, body)
        if chat and self._blocked.get(chat, 0.0) > time.monotonic():
            left = self._blocked[chat] - time.monotonic()
            self.violations.append(f"{cmd} to {chat} {left:.2f}s inside a block")
        for failure in self.failures:
            if failure.cmd == cmd and failure.times > 0 and failure.match(body):
                failure.times -= 1
                self.served[failure.errcode] = self.served.get(failure.errcode, 0) + 1
                if failure.errcode == 45009 and chat:
                    self._blocked[chat] = time.monotonic() + BLOCK
                return failure.errcode
        return 0

    def _chat_of(self, cmd: str, body: dict[str, Any]) -> str:
        if cmd == "aibot_send_msg":
            return str(body.get("chatid") or "")
        stream = self.streams.get(str((body.get("stream") or {}).get("id")))
        return str(stream["chatid"]) if stream else ""

    def _command(self, cmd: str, req_id: str, body: dict[str, Any]) -> tuple[int, Any]:
        content = (body.get("stream") or body.get("markdown") or {}).get("content") or ""
        if len(str(content).encode()) > MAX_BYTES:
            self.violations.append(f"{cmd}: more than {MAX_BYTES} bytes of content")
        if cmd == "aibot_respond_msg":
            return self._respond(req_id, body), None
        if cmd == "aibot_send_msg":
            return self._send(body), None
        if cmd == "aibot_respond_update_msg":
            return self._update_card(req_id, body), None
        if cmd.startswith("aibot_upload_media_"):
            return 0, self._upload(cmd.removeprefix("aibot_upload_media_"), body)
        self.violations.append(f"unknown command {cmd}")
        return 40058, None

    def _respond(self, req_id: str, body: dict[str, Any]) -> int:
        callback = self.callbacks.get(req_id)
        if callback is None or callback["event"]:
            self.violations.append(f"aibot_respond_msg on request id {req_id} (not a message)")
            return 40058
        body_of = callback["body"]
        chatid = str(body_of.get("chatid") or body_of["from"]["userid"])
        if body.get("msgtype") == "template_card":
            return self._card(chatid, body.get("template_card") or {})
        stream = body.get("stream") or {}
        entry = self.streams.get(str(stream.get("id")))
        if entry is None:
            entry = {"kind": "stream", "chatid": chatid, "req_id": req_id, "frames": []}
            self.streams[str(stream.get("id"))] = entry
            self.messages.append(entry)
        if entry["frames"] and entry["frames"][-1]["finish"]:
            self.violations.append(f"stream {stream.get('id')}: a frame after its finish")
            return 40058
        entry["frames"].append({"content": stream.get("content", ""), "finish": stream["finish"]})
        return 0

    def _send(self, body: dict[str, Any]) -> int:
        chatid = str(body.get("chatid") or "")
        if chatid not in self._known_chats:
            self.violations.append(f"push to {chatid}, which never wrote to the bot")
            return 40058
        kind = str(body.get("msgtype"))
        if kind == "template_card":
            return self._card(chatid, body.get("template_card") or {})
        part = body.get(kind) or {}
        entry: dict[str, Any] = {"kind": kind, "chatid": chatid, **part}
        self.messages.append(entry)
        return 0

    def _card(self, chatid: str, card: dict[str, Any]) -> int:
        buttons = card.get("button_list") or []
        task = str(card.get("task_id") or "")
        if not 1 <= len(buttons) <= 6 or not task or task in self._tasks:
            self.violations.append(f"card {task!r}: {len(buttons)} buttons or a used task id")
            return 40058
        self._tasks.add(task)
        self.messages.append({"kind": "template_card", "chatid": chatid, "card": card})
        return 0

    def _update_card(self, req_id: str, body: dict[str, Any]) -> int:
        callback = self.callbacks.get(req_id)
        card = body.get("template_card") or {}
        late = callback is not None and time.monotonic() - callback["at"] > UPDATE_WINDOW
        if callback is None or not callback["event"] or late:
            self.violations.append(f"card update on {req_id}: not answering a press in time")
            return 40058
        if card.get("task_id") not in self._tasks:
            self.violations.append(f"card update of an unknown task {card.get('task_id')}")
            return 40058
        self.card_updates.append(card)
        return 0

    def _upload(self, step: str, body: dict[str, Any]) -> dict[str, Any] | None:
        if step == "init":
            upload_id = f"up-{len(self._uploading) + 1}"
            self._uploading[upload_id] = {**body, "chunks": {}}
            return {"upload_id": upload_id}
        upload = self._uploading.get(str(body.get("upload_id")))
        if upload is None:
            self.violations.append(f"upload {step} of an unknown upload")
            return None
        if step == "chunk":
            upload["chunks"][int(body["chunk_index"])] = base64.b64decode(body["base64_data"])
            return None
        data = b"".join(upload["chunks"][i] for i in sorted(upload["chunks"]))
        if len(upload["chunks"]) != upload["total_chunks"] or len(data) != upload["total_size"]:
            self.violations.append(f"upload {upload['filename']}: chunks missing")
        media_id = f"media-{len(self.uploads) + 1}"
        self.uploads.append(
            {"name": upload["filename"], "data": data, "type": upload["type"], "id": media_id}
        )
        return {"type": upload["type"], "media_id": media_id, "created_at": int(time.time())}
