"""The Feishu open API calls Antler makes, through lark-oapi, off the service loop.

lark-oapi's calls block (its token manager uses `requests` even in the `a*` methods), so every
call here runs through `call_blocking`. lark-oapi raises nothing on an API error: each response's
`code` is checked here; 99991400 becomes `RateLimited`, any other non-zero code `ChannelError`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import lark_oapi as lark
from lark_oapi.api.cardkit.v1 import (
    Card,
    ContentCardElementRequest,
    ContentCardElementRequestBody,
    CreateCardRequest,
    CreateCardRequestBody,
    SettingsCardRequest,
    SettingsCardRequestBody,
    UpdateCardRequest,
    UpdateCardRequestBody,
)
from lark_oapi.api.im.v1 import (
    CreateFileRequest,
    CreateFileRequestBody,
    CreateImageRequest,
    CreateImageRequestBody,
    CreateMessageReactionRequest,
    CreateMessageReactionRequestBody,
    CreateMessageRequest,
    CreateMessageRequestBody,
    DeleteMessageReactionRequest,
    Emoji,
    GetMessageResourceRequest,
    PatchMessageRequest,
    PatchMessageRequestBody,
    ReplyMessageRequest,
    ReplyMessageRequestBody,
)

from channels._threads import call_blocking
from channels.base import ChannelError, DeliveryRefused, RateLimited
from channels.feishu.config import FeishuConfig

RATE_LIMIT_CODES = frozenset({99991400})
REFUSAL_CODES = {  # the bot cannot post there, whatever it retries
    230002: "bot removed from the chat",  # the bot is not in the chat
    230013: "forbidden",  # the user is outside the bot's availability
}
log = logging.getLogger("channels.feishu")


class FeishuApiError(ChannelError):
    def __init__(self, op: str, code: int, msg: str) -> None:
        super().__init__(f"feishu {op} failed: code {code} {msg}", retryable=code >= 500)
        self.op, self.code = op, code


def build_client(config: FeishuConfig) -> lark.Client:
    return (
        lark.Client.builder()
        .app_id(config.app_id)
        .app_secret(config.app_secret.get_secret_value())
        .domain(config.base_url)
        .timeout(config.request_timeout)
        .log_level(lark.LogLevel.WARNING)
        .build()
    )


def _retry_after(resp: Any) -> float:
    headers = getattr(getattr(resp, "raw", None), "headers", None) or {}
    for key in ("x-ogw-ratelimit-reset", "X-Ogw-Ratelimit-Reset"):
        if key in headers:
            try:
                return max(float(headers[key]), 0.1)
            except ValueError:
                break
    return 1.0


def check(op: str, resp: Any) -> Any:
    """Raise for a failed lark-oapi response; return it otherwise."""
    code = getattr(resp, "code", None)
    if code == 0:
        return resp
    if code in RATE_LIMIT_CODES:
        raise RateLimited(_retry_after(resp), scope="reply")
    if code in REFUSAL_CODES:
        raise DeliveryRefused(REFUSAL_CODES[code], f"feishu {op}: code {code}")
    raise FeishuApiError(op, -1 if code is None else int(code), str(getattr(resp, "msg", "")))


class FeishuApi:
    """Typed wrappers over the lark-oapi calls; every method is a coroutine that never blocks."""

    def __init__(self, client: lark.Client) -> None:
        self.client = client

    async def _call(self, op: str, fn: Callable[..., Any], request: Any) -> Any:
        try:
            resp = await call_blocking(fn, request)
        except Exception as exc:  # requests errors: connection refused, timeouts
            raise ChannelError(f"feishu {op} failed: {exc}", retryable=True) from exc
        return check(op, resp)

    # ---------------------------------------------------------------- bot and messages
    async def bot_info(self) -> dict[str, Any]:
        req = (
            lark.BaseRequest.builder()
            .http_method(lark.HttpMethod.GET)
            .uri("/open-apis/bot/v3/info")
            .token_types({lark.AccessTokenType.TENANT})
            .build()
        )
        resp = await self._call("bot_info", self.client.request, req)
        return dict(json.loads(resp.raw.content or b"{}").get("bot") or {})

    async def reply(
        self, message_id: str, msg_type: str, content: str, *, in_thread: bool = False
    ) -> str:
        body = (
            ReplyMessageRequestBody.builder()
            .msg_type(msg_type)
            .content(content)
            .reply_in_thread(in_thread)
            .build()
        )
        req = ReplyMessageRequest.builder().message_id(message_id).request_body(body).build()
        resp = await self._call("reply", self.client.im.v1.message.reply, req)
        return str(resp.data.message_id)

    async def send(self, chat_id: str, msg_type: str, content: str) -> str:
        body = (
            CreateMessageRequestBody.builder()
            .receive_id(chat_id)
            .msg_type(msg_type)
            .content(content)
            .build()
        )
        req = CreateMessageRequest.builder().receive_id_type("chat_id").request_body(body).build()
        resp = await self._call("create", self.client.im.v1.message.create, req)
        return str(resp.data.message_id)

    async def patch(self, message_id: str, content: str) -> None:
        body = PatchMessageRequestBody.builder().content(content).build()
        req = PatchMessageRequest.builder().message_id(message_id).request_body(body).build()
        await self._call("patch", self.client.im.v1.message.patch, req)

    async def react(self, message_id: str, emoji: str) -> str | None:
        """Add a reaction to a message; its reaction id."""
        body = (
            CreateMessageReactionRequestBody.builder()
            .reaction_type(Emoji.builder().emoji_type(emoji).build())
            .build()
        )
        req = (
            CreateMessageReactionRequest.builder().message_id(message_id).request_body(body).build()
        )
        resp = await self._call("reaction", self.client.im.v1.message_reaction.create, req)
        return str(resp.data.reaction_id) if resp.data and resp.data.reaction_id else None

    async def unreact(self, message_id: str, reaction_id: str) -> None:
        req = (
            DeleteMessageReactionRequest.builder()
            .message_id(message_id)
            .reaction_id(reaction_id)
            .build()
        )
        await self._call("unreaction", self.client.im.v1.message_reaction.delete, req)

    # ---------------------------------------------------------------- cardkit
    async def card_create(self, card_json: str) -> str:
        body = CreateCardRequestBody.builder().type("card_json").data(card_json).build()
        req = CreateCardRequest.builder().request_body(body).build()
        resp = await self._call("card_create", self.client.cardkit.v1.card.create, req)
        return str(resp.data.card_id)

    async def card_update(self, card_id: str, card_json: str, sequence: int) -> None:
        card = Card.builder().type("card_json").data(card_json).build()
        body = UpdateCardRequestBody.builder().card(card).sequence(sequence).build()
        req = UpdateCardRequest.builder().card_id(card_id).request_body(body).build()
        await self._call("card_update", self.client.cardkit.v1.card.update, req)

    async def card_settings(self, card_id: str, settings: dict[str, Any], sequence: int) -> None:
        body = (
            SettingsCardRequestBody.builder()
            .settings(json.dumps(settings))
            .sequence(sequence)
            .build()
        )
        req = SettingsCardRequest.builder().card_id(card_id).request_body(body).build()
        await self._call("card_settings", self.client.cardkit.v1.card.settings, req)

    async def element_content(
        self, card_id: str, element_id: str, content: str, sequence: int
    ) -> None:
        body = ContentCardElementRequestBody.builder().content(content).sequence(sequence).build()
        req = (
            ContentCardElementRequest.builder()
            .card_id(card_id)
            .element_id(element_id)
            .request_body(body)
            .build()
        )
        await self._call("element_content", self.client.cardkit.v1.card_element.content, req)

    # ---------------------------------------------------------------- files
    async def resource(self, message_id: str, key: str, kind: str) -> tuple[bytes, str | None]:
        req = (
            GetMessageResourceRequest.builder()
            .message_id(message_id)
            .file_key(key)
            .type(kind)
            .build()
        )
        resp = await self._call("resource", self.client.im.v1.message_resource.get, req)
        return resp.file.read(), resp.file_name

    async def upload_image(self, path: Path) -> str:
        with path.open("rb") as fh:
            body = CreateImageRequestBody.builder().image_type("message").image(fh).build()
            req = CreateImageRequest.builder().request_body(body).build()
            resp = await self._call("image_upload", self.client.im.v1.image.create, req)
        return str(resp.data.image_key)

    async def upload_file(self, path: Path, file_type: str) -> str:
        with path.open("rb") as fh:
            body = (
                CreateFileRequestBody.builder()
                .file_type(file_type)
                .file_name(path.name)
                .file(fh)
                .build()
            )
            req = CreateFileRequest.builder().request_body(body).build()
            resp = await self._call("file_upload", self.client.im.v1.file.create, req)
        return str(resp.data.file_key)
