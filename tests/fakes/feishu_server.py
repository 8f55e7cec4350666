"""A fake Feishu/Lark open platform on 127.0.0.1, in its own thread (lark-oapi blocks).

Implements what Antler's Feishu channel calls: the tenant token, bot info, the long-connection
endpoint and websocket (see `feishu_ws.py`), im messages (create, reply, patch, reactions,
resources, image and file uploads) and CardKit (card create/update/settings, element content).
Every call is recorded with its time; `fail_next` injects error codes (99991400 = rate limit),
`fail_http` HTTP errors (a 503 outage of the long-connection endpoint, say);
per-card (<=10 ops/s) and per-message patch (<=5/s) rates and CardKit sequences are checked and
breaches land in `violations`.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
import uuid
from collections import defaultdict, deque
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.fakes.feishu_reactions import ReactionSide, err, ok
from tests.fakes.feishu_ws import Ack, WsSide
from tests.fakes.threaded import Recorded, Served, ThreadedServer

RATE_LIMITED = 99991400
NO_PERMISSION = 99991672
CARD_OPS_PER_S = 10
PATCHES_PER_S = 5


@dataclass
class FakeCard:
    card: dict[str, Any]
    sequence: int = 0
    streaming: bool = False
    elements: dict[str, str] = field(default_factory=dict)
    ops: deque[float] = field(default_factory=deque)

    def buttons(self) -> dict[str, dict[str, Any]]:
        """label -> callback value of every button on the card (CardKit v2)."""
        found: dict[str, dict[str, Any]] = {}

        def walk(node: Any) -> None:
            if isinstance(node, dict):
                if node.get("tag") == "button":
                    found[node["text"]["content"]] = node["behaviors"][0]["value"]
                for child in node.values():
                    walk(child)
            elif isinstance(node, list):
                for child in node:
                    walk(child)

        walk(self.card)
        return found


_ok, _err = ok, err


def _elements(card: dict[str, Any]) -> dict[str, str]:
    body = card.get("body", card)
    return {
        e["element_id"]: e.get("content", "")
        for e in body.get("elements", [])
        if isinstance(e, dict) and e.get("element_id")
    }


class FakeFeishu(ReactionSide, Served):
    """Start with `FakeFeishu().start()`; `base` is the domain to give the SDK."""

    def __init__(self, *, bot_open_id: str = "ou_bot", bot_name: str = "Antler") -> None:
        self.bot_open_id, self.bot_name = bot_open_id, bot_name
        self.calls: list[Recorded] = []
        self.violations: list[str] = []
        self.messages: dict[str, dict[str, Any]] = {}
        self.cards: dict[str, FakeCard] = {}
        self.resources: dict[str, tuple[bytes, str]] = {}
        self.uploads: dict[str, tuple[str, bytes]] = {}
        self.cardkit_enabled = True
        self.ws = WsSide()
        self._failures: dict[str, deque[int]] = defaultdict(deque)
        self._http_failures: dict[str, deque[int]] = defaultdict(deque)
        self._patches: dict[str, deque[float]] = defaultdict(deque)
        self._reacted: deque[float] = deque()
        self.reactions: dict[str, dict[str, str]] = {}  # message id -> reaction id -> emoji
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self.server = ThreadedServer(self._app())

    # ------------------------------------------------------------------ lifecycle
    def channel_config(self, **extra: Any) -> dict[str, Any]:
        """The `channels.feishu` section of a service talking to this fake (an app of its own,
        updates streamed every 0.1 s); `extra` keys are added or replaced."""
        return {
            "enabled": True,
            "app_id": f"cli_{uuid.uuid4().hex[:12]}",
            "app_secret": "sec",
            "domain": self.base,
            "stream_interval": 0.1,
            **extra,
        }

    def start(self) -> FakeFeishu:
        super().start()
        self.server.websockets = self.ws.sockets
        return self

    # ------------------------------------------------------------------ test helpers
    def fail_next(self, op: str, code: int = RATE_LIMITED, times: int = 1) -> None:
        """Make the next `times` calls of `op` (e.g. "reply", "element_content") answer `code`."""
        with self._lock:
            self._failures[op].extend([code] * times)

    def fail_http(self, op: str, status: int = 503, times: int = 1) -> None:
        """Make the next `times` calls of `op` (e.g. "ws_endpoint") answer HTTP `status`."""
        with self._lock:
            self._http_failures[op].extend([status] * times)

    def push_event(self, envelope: dict[str, Any], *, chunks: int = 1) -> str:
        return self.server.call(self.ws.push(envelope, chunks=chunks))

    def wait_ack(self, frame_id: str, timeout: float = 5.0) -> Ack:
        return self.ws.wait_ack(frame_id, timeout)

    def drop_connections(self) -> None:
        self.server.call(self.ws.drop())

    @property
    def open_websockets(self) -> int:
        return len(self.ws.sockets)

    def recorded(self, op: str) -> list[Recorded]:
        with self._lock:
            return [c for c in self.calls if c.headers.get("op") == op]

    def add_resource(self, message_id: str, key: str, data: bytes, name: str) -> None:
        self.resources[f"{message_id}/{key}"] = (data, name)

    # ------------------------------------------------------------------ plumbing
    def _app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        r, p = app.router, "/open-apis"
        r.add_post(f"{p}/auth/v3/tenant_access_token/internal", self._op("token", self._token))
        r.add_get(f"{p}/bot/v3/info", self._op("bot_info", self._bot_info))
        r.add_post("/callback/ws/endpoint", self._op("ws_endpoint", self._ws_endpoint))
        r.add_get("/ws", self.ws.handle)
        r.add_post(f"{p}/im/v1/messages", self._op("create", self._create))
        r.add_post(f"{p}/im/v1/messages/{{mid}}/reply", self._op("reply", self._reply))
        r.add_patch(f"{p}/im/v1/messages/{{mid}}", self._op("patch", self._patch))
        r.add_post(f"{p}/im/v1/messages/{{mid}}/reactions", self._op("reaction", self._reaction))
        r.add_delete(
            f"{p}/im/v1/messages/{{mid}}/reactions/{{rid}}", self._op("unreaction", self._unreact)
        )
        r.add_get(
            f"{p}/im/v1/messages/{{mid}}/resources/{{key}}", self._op("resource", self._resource)
        )
        r.add_post(f"{p}/im/v1/images", self._op("image_upload", self._upload("img")))
        r.add_post(f"{p}/im/v1/files", self._op("file_upload", self._upload("file")))
        r.add_post(f"{p}/cardkit/v1/cards", self._op("card_create", self._card_create))
        r.add_put(f"{p}/cardkit/v1/cards/{{cid}}", self._op("card_update", self._card_update))
        r.add_patch(
            f"{p}/cardkit/v1/cards/{{cid}}/settings", self._op("card_settings", self._card_settings)
        )
        r.add_put(
            f"{p}/cardkit/v1/cards/{{cid}}/elements/{{eid}}/content",
            self._op("element_content", self._element_content),
        )
        return app

    def _op(self, op: str, fn: Any) -> Any:
        async def handler(request: web.Request) -> web.StreamResponse:
            body = await _body(request)
            headers = dict(request.headers) | {"op": op, "path_info": request.path}
            with self._lock:
                self.calls.append(Recorded(request.method, request.path, body, headers))
                injected = self._failures[op].popleft() if self._failures[op] else None
                outage = self._http_failures[op]
                status = outage.popleft() if outage else None
            if status is not None:
                return web.json_response(
                    {"code": status, "msg": "service unavailable"}, status=status
                )
            if op not in ("token", "ws_endpoint") and not request.headers.get(
                "Authorization", ""
            ).startswith("Bearer t-"):
                return _err(99991663, "tenant access token invalid")
            if injected is not None:
                return _err(injected, "injected")
            cardkit = op.startswith("card") or op == "element_content"
            if cardkit and not self.cardkit_enabled:
                return _err(NO_PERMISSION, "cardkit not enabled")
            return await fn(request, body)

        return handler

    def _new_id(self, prefix: str) -> str:
        return f"{prefix}_{next(self._ids)}"

    # ------------------------------------------------------------------ auth + ws
    async def _token(self, request: web.Request, body: Any) -> web.Response:
        tok = f"t-{body.get('app_id', '')}"
        return web.json_response(
            {"code": 0, "msg": "ok", "tenant_access_token": tok, "expire": 7200}
        )

    async def _bot_info(self, request: web.Request, body: Any) -> web.Response:
        return web.json_response(
            {
                "code": 0,
                "msg": "ok",
                "bot": {
                    "open_id": self.bot_open_id,
                    "app_name": self.bot_name,
                    "activate_status": 2,
                },
            }
        )

    async def _ws_endpoint(self, request: web.Request, body: Any) -> web.Response:
        url = f"ws://127.0.0.1:{self.server.port}/ws?device_id=dev1&service_id=33"
        return web.json_response(
            {"code": 0, "msg": "ok", "data": {"URL": url, "ClientConfig": self.ws.client_config()}}
        )

    # ------------------------------------------------------------------ im
    def _store(self, chat_id: str, body: dict[str, Any], **extra: Any) -> str:
        mid = self._new_id("om")
        self.messages[mid] = {
            "chat_id": chat_id,
            "msg_type": body.get("msg_type"),
            "content": body.get("content"),
            "at": time.monotonic(),
            **extra,
        }
        return mid

    async def _create(self, request: web.Request, body: Any) -> web.Response:
        mid = self._store(body.get("receive_id", ""), body)
        return _ok({"message_id": mid, "chat_id": body.get("receive_id")})

    async def _reply(self, request: web.Request, body: Any) -> web.Response:
        parent = request.match_info["mid"]
        chat = self.messages.get(parent, {}).get("chat_id", "")
        mid = self._store(
            chat, body, reply_to=parent, reply_in_thread=bool(body.get("reply_in_thread"))
        )
        return _ok({"message_id": mid, "parent_id": parent})

    async def _patch(self, request: web.Request, body: Any) -> web.Response:
        mid = request.match_info["mid"]
        if mid not in self.messages:
            return _err(230001, "message not found")
        self._rate("message", mid, self._patches[mid], PATCHES_PER_S)
        self.messages[mid]["content"] = body.get("content")
        return _ok()

    async def _resource(self, request: web.Request, body: Any) -> web.StreamResponse:
        key = f"{request.match_info['mid']}/{request.match_info['key']}"
        if key not in self.resources:
            return _err(234003, "resource not found")
        data, name = self.resources[key]
        return web.Response(
            body=data,
            content_type="application/octet-stream",
            headers={"Content-Disposition": f'attachment; filename="{name}"'},
        )

    def _upload(self, kind: str) -> Any:
        async def upload(request: web.Request, body: Any) -> web.Response:
            key = self._new_id(kind)
            self.uploads[key] = (body.get("file_name", ""), body.get("_bytes", b""))
            return _ok({"image_key": key} if kind == "img" else {"file_key": key})

        return upload

    # ------------------------------------------------------------------ cardkit
    def _rate(self, kind: str, key: str, stamps: deque[float], limit: int) -> None:
        now = time.monotonic()
        stamps.append(now)
        while stamps and stamps[0] <= now - 1.0:
            stamps.popleft()
        if len(stamps) > limit:
            self.violations.append(f"{kind} {key}: {len(stamps)} ops within 1 s")

    def _card_op(self, cid: str, body: dict[str, Any]) -> FakeCard | web.Response:
        card = self.cards.get(cid)
        if card is None:
            return _err(200740, "card not found")
        self._rate("card", cid, card.ops, CARD_OPS_PER_S)
        seq = int(body.get("sequence") or 0)
        if seq <= card.sequence:
            self.violations.append(f"card {cid}: sequence {seq} after {card.sequence}")
            return _err(300317, "sequence number compare failed")
        card.sequence = seq
        return card

    async def _card_create(self, request: web.Request, body: Any) -> web.Response:
        card = json.loads(body.get("data") or "{}")
        cid = self._new_id("card")
        self.cards[cid] = FakeCard(
            card,
            streaming=bool(card.get("config", {}).get("streaming_mode")),
            elements=_elements(card),
        )
        return _ok({"card_id": cid})

    async def _card_update(self, request: web.Request, body: Any) -> web.Response:
        card = self._card_op(request.match_info["cid"], body)
        if isinstance(card, web.Response):
            return card
        card.card = json.loads(body.get("card", {}).get("data") or "{}")
        card.elements = _elements(card.card)
        return _ok()

    async def _card_settings(self, request: web.Request, body: Any) -> web.Response:
        card = self._card_op(request.match_info["cid"], body)
        if isinstance(card, web.Response):
            return card
        config = json.loads(body.get("settings") or "{}").get("config", {})
        if "streaming_mode" in config:
            card.streaming = bool(config["streaming_mode"])
        return _ok()

    async def _element_content(self, request: web.Request, body: Any) -> web.Response:
        card = self._card_op(request.match_info["cid"], body)
        if isinstance(card, web.Response):
            return card
        eid = request.match_info["eid"]
        if eid not in card.elements:
            return _err(300309, "element not found")
        if not card.streaming:
            self.violations.append(f"card {request.match_info['cid']}: content while not streaming")
        card.elements[eid] = body.get("content", "")
        return _ok()

    # ------------------------------------------------------------------ views for tests
    def card_of(self, message_id: str) -> FakeCard | None:
        content = json.loads(self.messages[message_id]["content"] or "{}")
        return self.cards.get(content.get("data", {}).get("card_id", ""))

    def replies_to(self, message_id: str, msg_type: str | None = None) -> list[str]:
        return [
            m
            for m, v in self.messages.items()
            if v.get("reply_to") == message_id and (msg_type is None or v["msg_type"] == msg_type)
        ]


async def _body(request: web.Request) -> Any:
    if request.content_type.startswith("multipart/"):
        form = await request.post()
        out: dict[str, Any] = {}
        for key, value in form.items():
            if isinstance(value, web.FileField):
                out["_bytes"] = value.file.read()
                out.setdefault("file_name", value.filename)
            elif key in ("image", "file"):  # lark's MultipartEncoder sends no filename
                out["_bytes"] = value.encode("latin-1") if isinstance(value, str) else bytes(value)
            else:
                out[key] = value
        return out
    raw = await request.read()
    if not raw:
        return {}
    try:
        return json.loads(raw)
    except ValueError:
        return {"_raw": raw.decode(errors="replace")}
