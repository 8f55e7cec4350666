"""From Feishu events to `ctx.publish`: dedupe of redeliveries, replies to the bot, button presses.

Access and the group trigger are decided by the service's gate; this module reports what it
parsed (`mentions_bot`, `replies_to_bot`: a reply to one of the bot's messages or topics).

lark-oapi calls the handlers synchronously (on the long-connection thread, or inline in webhook
mode). They only schedule `accept*` on the service loop and return at once, so the SDK acks the
event immediately; the agent never holds Feishu's 3-second ack.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections import OrderedDict
from collections.abc import Coroutine
from dataclasses import replace
from typing import Any

import lark_oapi as lark
from lark_oapi.event.callback.model.p2_card_action_trigger import P2CardActionTriggerResponse

from channels.base import ChannelContext, InboundMessage, PublishResult
from channels.feishu.config import FeishuConfig
from channels.feishu.parse import (
    MESSAGE_EVENT,
    BotIdentity,
    MalformedEvent,
    parse_card_action,
    parse_message,
)

log = logging.getLogger("channels.feishu")
IGNORED_EVENTS = (
    "im.message.message_read_v1",
    "im.message.reaction.created_v1",
    "im.message.reaction.deleted_v1",
    "im.message.recalled_v1",
    "im.chat.access_event.bot_p2p_chat_entered_v1",
    "im.chat.member.bot.added_v1",
    "im.chat.member.bot.deleted_v1",
)


class Recent:
    """A bounded set of recently seen keys (dedupe of redeliveries, our own message ids)."""

    def __init__(self, size: int = 10_000) -> None:
        self.size = size
        self._keys: OrderedDict[str, None] = OrderedDict()

    def add(self, key: str | None) -> None:
        if key:
            self._keys[key] = None
            self._keys.move_to_end(key)
            while len(self._keys) > self.size:
                self._keys.popitem(last=False)

    def __contains__(self, key: object) -> bool:
        return key in self._keys


def _as_dict(obj: Any) -> dict[str, Any]:
    return dict(json.loads(lark.JSON.marshal(obj)))


class Inbound:
    """Accepts Feishu events for one channel and publishes the ones meant for the bot."""

    def __init__(
        self,
        config: FeishuConfig,
        ctx: ChannelContext,
        name: str = "feishu",
    ) -> None:
        self.config, self.ctx, self.name = config, ctx, name
        self.bot = BotIdentity()
        self.seen = Recent()
        self.ours = Recent()  # message ids the bot sent, and topics it answered in
        self.loop: asyncio.AbstractEventLoop | None = None
        self.pending: set[Any] = set()

    def handler(self, *, verify: bool) -> lark.EventDispatcherHandler:
        token = self.config.verification_token.get_secret_value() if verify else ""
        key = self.config.encrypt_key.get_secret_value() if verify else ""
        builder = lark.EventDispatcherHandler.builder(key, token)
        builder.register_p2_customized_event(MESSAGE_EVENT, self._on_message)
        for event in IGNORED_EVENTS:
            builder.register_p2_customized_event(event, lambda _e: None)
        builder.register_p2_card_action_trigger(self._on_card_action)
        return builder.build()

    # ------------------------------------------------------------------ SDK side (any thread)
    def _submit(self, coro: Coroutine[Any, Any, None]) -> None:
        if self.loop is None or self.loop.is_closed():
            coro.close()
            log.warning("feishu event dropped: channel not started")
            return
        fut = asyncio.run_coroutine_threadsafe(coro, self.loop)
        self.pending.add(fut)
        fut.add_done_callback(self.pending.discard)

    def _on_message(self, event: Any) -> None:
        self._submit(self.accept(_as_dict(event)))

    def _on_card_action(self, event: Any) -> P2CardActionTriggerResponse:
        self._submit(self.accept_button(_as_dict(event)))
        return P2CardActionTriggerResponse({"toast": {"type": "info", "content": "Got it"}})

    # ------------------------------------------------------------------ service loop
    async def accept(self, envelope: dict[str, Any]) -> None:
        try:
            msg = parse_message(
                envelope,
                bot=self.bot,
                channel=self.name,
                group_scope=self.config.group_scope,
                received_at=time.time(),
            )
        except MalformedEvent as exc:
            log.warning("feishu: skipping malformed message event: %s", exc)
            return
        event_id = str(envelope.get("header", {}).get("event_id") or "")
        if msg is None or msg.event_id in self.seen or event_id in self.seen:
            return
        self.seen.add(msg.event_id)
        self.seen.add(event_id)
        if msg.sender.is_bot:
            return
        await self._publish(replace(msg, replies_to_bot=msg.reply_to in self.ours))

    async def accept_button(self, envelope: dict[str, Any]) -> None:
        try:
            msg = parse_card_action(envelope, channel=self.name, received_at=time.time())
        except MalformedEvent as exc:
            log.warning("feishu: skipping card action: %s", exc)
            return
        if msg.event_id in self.seen:
            return
        self.seen.add(msg.event_id)
        await self._publish(msg)

    async def _publish(self, msg: InboundMessage) -> None:
        try:
            result = await self.ctx.publish(msg)
        except Exception:
            log.exception("feishu: publish failed for %s", msg.event_id)
            return
        if result is PublishResult.closed:
            log.info("feishu: message %s not accepted: %s", msg.event_id, result.value)
