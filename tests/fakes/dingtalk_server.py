"""A fake DingTalk OpenAPI + Stream gateway on 127.0.0.1, speaking the real wire protocol.

HTTP: gateway `connections/open`, oauth2 access token, session webhook, robot send
(oToMessages/batchSend, groupMessages/send), AI cards (instances create/deliver/update,
streaming), robot file download (messageFiles/download -> URL -> bytes) and media upload.
WebSocket `/connect`: JSON frames (CALLBACK, SYSTEM ping / disconnect) pushed with `push_*`;
the client's acks are recorded. Every call is recorded with its time; `fail()` injects errors.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSMsgType, web

from tests.fakes.dingtalk_payloads import chatbot_data
from tests.fakes.threaded import Recorded, Served, ThreadedServer

CHATBOT_TOPIC = "/v1.0/im/bot/messages/get"
CARD_CALLBACK_TOPIC = "/v1.0/card/instances/callback"
_OPEN_PATHS = {"/v1.0/oauth2/accessToken", "/v1.0/gateway/connections/open"}
FULL_JSON_KEY = "sys_full_json_obj"


class Refused(Exception):
    """A documented 400 of the OpenAPI: `{"code", "message"}`."""

    def __init__(self, code: str, status: int = 400) -> None:
        super().__init__(code)
        self.code, self.status = code, status


@dataclass
class Injected:
    status: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)
    times: int = 1


class FakeDingTalk(Served):
    """Construct, `start()`, point the channel's `api_base` at `.base`, `stop()`."""

    def __init__(self, *, expire_in: int = 7200) -> None:
        self.expire_in = expire_in
        self.calls: list[Recorded] = []
        self.acks: list[dict[str, Any]] = []
        self.connections = 0
        self.tokens: list[str] = []
        self.files: dict[str, bytes] = {}
        self.uploads: list[dict[str, Any]] = []
        self.violations: list[str] = []  # OpenAPI calls inside an announced 429 window
        self.blocked_until = 0.0
        self.cards: dict[str, dict[str, Any]] = {}
        self._pushed: dict[str, str] = {}  # messageId -> the frame, for `redeliver`
        self._failures: dict[tuple[str, str], list[Injected]] = {}
        self._ws: web.WebSocketResponse | None = None  # the newest connection
        self._sockets: list[web.WebSocketResponse] = []
        self._ids = itertools.count(1)
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_get("/connect", self._connect)
        app.router.add_get("/files/{code}", self._file)
        app.router.add_route("*", "/{tail:.*}", self._api)
        self.server = ThreadedServer(app)

    # ------------------------------------------------------------------ lifecycle

    # ------------------------------------------------------------------ scripting

    def fail(
        self,
        method: str,
        path: str,
        status: int = 500,
        body: Any = None,
        *,
        times: int = 1,
        headers: dict[str, str] | None = None,
    ) -> None:
        """The next `times` calls of `method path` answer `status` with `body`."""
        body = body if body is not None else {"code": "ServerError", "message": "injected"}
        self._failures.setdefault((method, path), []).append(
            Injected(status, body, headers or {}, times)
        )

    def rate_limit(self, method: str, path: str, retry_after: float = 0.2, times: int = 1) -> None:
        body = {"code": "Forbidden.AccessDenied.QpsLimitForApi", "message": "qps limit"}
        self.fail(method, path, 429, body, times=times, headers={"Retry-After": str(retry_after)})

    def webhook_error(self, errcode: int = 300001, *, status: int = 200, times: int = 1) -> None:
        """The next `times` session-webhook posts answer `errcode` (HTTP `status`), as DingTalk
        does for a session it no longer accepts (300001) or a throttled robot (130101)."""
        body = {"errcode": errcode, "errmsg": "session webhook error (injected)"}
        self.fail("POST", "/robot/sendBySession", status, body, times=times)

    def channel_config(self, client_id: str, **extra: Any) -> dict[str, Any]:
        """The `channels.dingtalk` section of a service talking to this fake as app `client_id`
        (updates streamed every 0.1 s); `extra` keys are added or replaced."""
        return {
            "enabled": True,
            "client_id": client_id,
            "client_secret": "secret",
            "robot_code": "robot-code",
            "api_base": self.base,
            "stream_interval": 0.1,
            **extra,
        }

    def chatbot_data(self, text: str = "hello", **options: Any) -> dict[str, Any]:
        """A chatbot callback `data` like DingTalk sends it, with a live session webhook
        (tests/fakes/dingtalk_payloads.py says the options)."""
        return chatbot_data(self.base, text, **options)

    def push_message(self, data: dict[str, Any], message_id: str | None = None) -> str:
        """Send a CALLBACK frame on the chatbot topic; returns the frame's messageId."""
        return self.push_frame("CALLBACK", CHATBOT_TOPIC, data, message_id)

    def card_params(self, card_id: str) -> dict[str, str]:
        """The variables a card shows now."""
        return dict(self.cards[card_id]["params"])

    def button_cards(self) -> list[str]:
        """Ids of the cards created with a `msgButtons` part, oldest first."""
        return [c for c, card in self.cards.items() if FULL_JSON_KEY in card["params"]]

    def card_buttons(self, card_id: str) -> dict[str, str]:
        """text -> id of the `request` buttons (`msgButtons`) a card shows now."""
        full = json.loads(self.cards[card_id]["params"].get(FULL_JSON_KEY) or "{}")
        return {b["text"]: b["id"] for b in full.get("msgButtons", []) if b.get("request")}

    def push_card_press(self, card_id: str, action_id: str, user: str = "staff-1") -> str:
        """A press on a card's `request` button, as DingTalk delivers it in Stream mode: only
        for cards created with callbackType STREAM and delivered, and only for its buttons."""
        card = self.cards[card_id]
        assert card["callback"] == "STREAM", "DingTalk delivers no callback for this card"
        assert card["delivered_to"], "the card was never delivered"
        assert action_id in self.card_buttons(card_id).values(), "no such button on the card"
        return self.push_card_callback(card_id, [action_id], user)

    def push_card_callback(self, card_id: str, action_ids: list[str], user: str = "staff-1") -> str:
        """A card callback frame, unchecked: what a forger (or an old client) can send."""
        data = {"outTrackId": card_id, "corpId": "corp-1", "userId": user, "type": "actionCallback",
                "spaceType": "IM", "extension": "{}",
                "content": json.dumps({"cardPrivateData": {"actionIds": action_ids,
                                                           "params": {}}})}  # fmt: skip
        return self.push_frame("CALLBACK", CARD_CALLBACK_TOPIC, data)

    def redeliver(self, message_id: str) -> None:
        """Push a frame again as it was (same messageId): DingTalk redelivers a callback whose
        ack it did not get."""
        self.server.call(self._send(self._pushed[message_id]))

    def push_ping(self, opaque: str = "op-1") -> str:
        return self.push_frame("SYSTEM", "ping", {"opaque": opaque})

    def push_disconnect(self) -> str:
        return self.push_frame("SYSTEM", "disconnect", {"reason": "server maintenance"})

    def push_raw(self, text: str) -> None:
        self.server.call(self._send(text))

    def push_frame(
        self, kind: str, topic: str, data: dict[str, Any], message_id: str | None = None
    ) -> str:
        message_id = message_id or uuid.uuid4().hex
        frame = {
            "specVersion": "1.0",
            "type": kind,
            "headers": {
                "appId": "app-1",
                "connectionId": f"conn-{self.connections}",
                "contentType": "application/json",
                "messageId": message_id,
                "time": str(int(time.time() * 1000)),
                "topic": topic,
            },
            "data": json.dumps(data),
        }
        self._pushed[message_id] = json.dumps(frame)
        self.server.call(self._send(self._pushed[message_id]))
        return message_id

    def drop(self) -> None:
        """Close the websocket abnormally (code 1011), as a network drop looks to the client."""
        self.server.call(self._close(1011))

    # ------------------------------------------------------------------ queries

    def requests(self, method: str, path: str) -> list[Recorded]:
        return [c for c in self.calls if c.method == method and c.path == path]

    def streams(self, card_id: str | None = None) -> list[dict[str, Any]]:
        puts = [c.body for c in self.requests("PUT", "/v1.0/card/streaming")]
        return [b for b in puts if card_id is None or b.get("outTrackId") == card_id]

    def webhook_messages(self) -> list[dict[str, Any]]:
        return [c.body for c in self.requests("POST", "/robot/sendBySession")]

    def robot_messages(self) -> list[dict[str, Any]]:
        paths = ("/v1.0/robot/oToMessages/batchSend", "/v1.0/robot/groupMessages/send")
        return [c.body for c in self.calls if c.path in paths]

    def ack_for(self, message_id: str) -> dict[str, Any] | None:
        return next((a for a in self.acks if a["headers"].get("messageId") == message_id), None)

    async def until(self, check: Callable[[], Any], timeout: float = 5.0) -> Any:
        """Poll `check` (from an async test) until it returns something truthy."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = check()
            if value:
                return value
            await asyncio.sleep(0.01)
        raise AssertionError(f"condition not met within {timeout}s")

    # ------------------------------------------------------------------ websocket

    async def _connect(self, request: web.Request) -> web.StreamResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        self.calls.append(Recorded("GET", "/connect", dict(request.query)))
        self.connections += 1
        self._ws = ws
        self._sockets.append(ws)
        self.server.websockets.add(ws)
        try:
            async for msg in ws:
                if msg.type == WSMsgType.TEXT:
                    ack = json.loads(msg.data)
                    ack["at"] = time.monotonic()
                    self.acks.append(ack)
        finally:
            self.server.websockets.discard(ws)
            self._sockets.remove(ws)
            if self._ws is ws:  # DingTalk pushes on to the app's other open connections
                self._ws = self._sockets[-1] if self._sockets else None
        return ws

    async def _send(self, text: str) -> None:
        """To ONE open connection of the app (the newest), as DingTalk pushes each frame."""
        deadline = time.monotonic() + 5
        while self._ws is None or self._ws.closed:
            if time.monotonic() > deadline:
                raise RuntimeError("no client connected to the fake DingTalk gateway")
            await asyncio.sleep(0.01)
        await self._ws.send_str(text)

    @property
    def open_connections(self) -> int:
        return sum(not ws.closed for ws in self._sockets)

    async def _close(self, code: int) -> None:
        if self._ws is not None:
            await self._ws.close(code=code, message=b"dropped")

    async def _file(self, request: web.Request) -> web.StreamResponse:
        code = request.match_info["code"]
        self.calls.append(Recorded("GET", f"/files/{code}", None))
        if code not in self.files:
            return web.Response(status=404)
        return web.Response(body=self.files[code], content_type="application/octet-stream")

    # ------------------------------------------------------------------ HTTP API

    async def _api(self, request: web.Request) -> web.StreamResponse:
        path = "/" + request.match_info["tail"]
        arrived = time.monotonic()
        body = await self._body(request)
        headers = {k.lower(): v for k, v in request.headers.items()}
        call = Recorded(request.method, path, body, headers)
        self.calls.append(call)
        if path.startswith("/v1.0/") and path not in _OPEN_PATHS and arrived < self.blocked_until:
            self.violations.append(
                f"{request.method} {path} {self.blocked_until - arrived:.2f}s inside a 429 window"
            )
        injected = self._take_failure(request.method, path)
        if injected is not None:
            call.refused = True
            if injected.status == 429:  # the app is throttled for Retry-After seconds
                wait = float(injected.headers.get("Retry-After", "1"))
                self.blocked_until = max(self.blocked_until, time.monotonic() + wait)
            return web.json_response(
                injected.body, status=injected.status, headers=injected.headers
            )
        if not self._authorized(path, headers, request):
            return web.json_response(
                {"code": "InvalidAuthentication", "message": "bad token"}, status=401
            )
        handler = self._ROUTES.get((request.method, path))
        if handler is None:
            return web.json_response({"code": "NotFound", "message": path}, status=404)
        try:
            return web.json_response(handler(self, body, request))
        except Refused as exc:
            call.refused = True
            return web.json_response({"code": exc.code, "message": exc.code}, status=exc.status)

    async def _body(self, request: web.Request) -> Any:
        if request.content_type == "multipart/form-data":
            form = await request.post()
            media = form.get("media")
            data = media.file.read() if isinstance(media, web.FileField) else b""
            name = media.filename if isinstance(media, web.FileField) else ""
            return {
                "type": form.get("type"),
                "filename": name,
                "size": len(data),
                "data": data,
                "query": dict(request.query),
            }
        text = await request.text()
        try:
            return json.loads(text) if text else None
        except ValueError:
            return text

    def _take_failure(self, method: str, path: str) -> Injected | None:
        queue = self._failures.get((method, path))
        if not queue:
            return None
        injected = queue[0]
        injected.times -= 1
        if injected.times <= 0:
            queue.pop(0)
        return injected

    def _authorized(self, path: str, headers: dict[str, str], request: web.Request) -> bool:
        if path in _OPEN_PATHS or path == "/robot/sendBySession":
            return True
        token = headers.get("x-acs-dingtalk-access-token") or request.query.get("access_token")
        return bool(token) and token in self.tokens

    def _open(self, body: Any, request: web.Request) -> dict[str, Any]:
        host = request.host
        return {"endpoint": f"ws://{host}/connect", "ticket": f"ticket-{next(self._ids)}"}

    def _token(self, body: Any, request: web.Request) -> dict[str, Any]:
        token = f"tok-{next(self._ids)}"
        self.tokens.append(token)
        return {"accessToken": token, "expireIn": self.expire_in}

    def _ok(self, body: Any, request: web.Request) -> dict[str, Any]:
        return {"errcode": 0, "errmsg": "ok"}

    def _robot_sent(self, body: Any, request: web.Request) -> dict[str, Any]:
        return {
            "processQueryKey": f"pqk-{next(self._ids)}",
            "invalidStaffIdList": [],
            "flowControlledStaffIdList": [],
        }

    def _success(self, body: Any, request: web.Request) -> dict[str, Any]:
        return {"success": True, "result": (body or {}).get("outTrackId", "")}

    def _card_created(self, body: Any, request: web.Request) -> dict[str, Any]:
        """`POST /v1.0/card/instances` as documented: a card-platform template id (the robot's
        `StandardCard` is not one: param.templateNotExist), a new outTrackId, string variables;
        a `sys_full_json_obj` is one JSON object whose `request` buttons carry an id."""
        body = body if isinstance(body, dict) else {}
        template, track = body.get("cardTemplateId"), body.get("outTrackId")
        if not template:
            raise Refused("param.cardTemplateIdEmpty")
        if template == "StandardCard":
            raise Refused("param.templateNotExist")
        if not track:
            raise Refused("param.outTrackIdEmpty")
        if track in self.cards:
            raise Refused("param.cardAlreadyExist")
        params = _card_variables(body)
        self.cards[track] = {
            "template": template, "params": params,
            "callback": body.get("callbackType"), "delivered_to": None,
        }  # fmt: skip
        return self._success(body, request)

    def _card_delivered(self, body: Any, request: web.Request) -> dict[str, Any]:
        card = self.cards.get((body or {}).get("outTrackId", ""))
        if card is not None:
            card["delivered_to"] = body.get("openSpaceId")
        return self._success(body, request)

    def _card_updated(self, body: Any, request: web.Request) -> dict[str, Any]:
        body = body if isinstance(body, dict) else {}
        card = self.cards.get(body.get("outTrackId", ""))
        if card is None:
            raise Refused("param.cardNotExist")
        card["params"].update(_card_variables(body))
        return self._success(body, request)

    def _download(self, body: Any, request: web.Request) -> dict[str, Any]:
        code = (body or {}).get("downloadCode", "")
        return {"downloadUrl": f"http://{request.host}/files/{code}"}

    def _upload(self, body: Any, request: web.Request) -> dict[str, Any]:
        media_id = f"@media-{next(self._ids)}"
        self.uploads.append({**body, "media_id": media_id})
        return {"errcode": 0, "errmsg": "ok", "type": body.get("type"), "media_id": media_id}

    _ROUTES: dict[tuple[str, str], Callable[..., dict[str, Any]]] = {
        ("POST", "/v1.0/gateway/connections/open"): _open,
        ("POST", "/v1.0/oauth2/accessToken"): _token,
        ("POST", "/robot/sendBySession"): _ok,
        ("POST", "/v1.0/robot/oToMessages/batchSend"): _robot_sent,
        ("POST", "/v1.0/robot/groupMessages/send"): _robot_sent,
        ("POST", "/v1.0/card/instances"): _card_created,
        ("POST", "/v1.0/card/instances/deliver"): _card_delivered,
        ("PUT", "/v1.0/card/instances"): _card_updated,
        ("PUT", "/v1.0/card/streaming"): _success,
        ("POST", "/v1.0/robot/messageFiles/download"): _download,
        ("POST", "/media/upload"): _upload,
    }


def _card_variables(body: dict[str, Any]) -> dict[str, str]:
    """`cardData.cardParamMap`, checked as the card API documents it (Map<String, String>)."""
    params = (body.get("cardData") or {}).get("cardParamMap") or {}
    if not isinstance(params, dict) or not all(isinstance(v, str) for v in params.values()):
        raise Refused("param.invalid")
    if FULL_JSON_KEY in params:
        try:
            full = json.loads(params[FULL_JSON_KEY])
        except ValueError:
            raise Refused("param.invalid") from None
        buttons = full.get("msgButtons", []) if isinstance(full, dict) else None
        if not isinstance(buttons, list) or not all(
            isinstance(b, dict) and b.get("text") and (b.get("id") or not b.get("request"))
            for b in buttons
        ):
            raise Refused("param.invalid")
    return dict(params)
