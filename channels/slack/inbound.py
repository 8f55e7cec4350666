"""Bolt listeners: Slack events, the slash command and button presses -> ctx.publish.

Bolt acknowledges first (Socket Mode envelope ack / HTTP 200) and runs these listeners after
(`process_before_response=False`), so nothing here can hold Slack's 3-second ack.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_sdk.errors import SlackApiError

from channels.base import ChannelContext, InboundMessage
from channels.slack import parse
from channels.slack.config import SlackConfig
from channels.slack.follow import FollowedThreads
from channels.slack.locales import UserLocales

log = logging.getLogger("channels.slack")


class Inbound:
    """Decides which Slack events become messages for the service and publishes them."""

    def __init__(
        self,
        config: SlackConfig,
        ctx: ChannelContext,
        me: parse.BotIdentity,
        followed: FollowedThreads,
    ) -> None:
        self.config, self.ctx, self.me = config, ctx, me
        self.followed = followed
        self.app: AsyncApp | None = None
        # bare words after a mention that act as commands ("@Antler new"): the built-ins
        self.command_words = frozenset(c.name for c in ctx.commands() if not c.skill)
        # the sender's Slack locale: the language hint (events carry none)
        self.locales = UserLocales(lambda: self.app.client if self.app is not None else None)

    def register(self, app: AsyncApp) -> None:
        self.app = app
        app.event("app_mention")(self.on_event)
        app.event("message")(self.on_event)
        app.command(self.config.command_name)(self.on_command)
        app.action(re.compile(f"^{parse.BUTTON_PREFIX}"))(self.on_action)
        app.error(self.on_error)

    # ------------------------------------------------------------------ listeners

    async def on_event(self, body: dict[str, Any]) -> None:
        try:
            msg = parse.parse_event(
                body, self.me, received_at=time.time(), command_words=self.command_words
            )
        except (KeyError, TypeError, ValueError, AttributeError):
            log.warning("malformed slack event skipped: %s", body.get("event_id"))
            return
        if msg is None or not self._wanted(msg):
            return
        if msg.chat.chat_type == "group" and msg.raw.get("in_thread"):
            msg = replace(msg, replies_to_bot=self._followed(msg))
            if msg.mentions_bot and not msg.replies_to_bot:
                msg = await self._with_thread_context(msg)
        await self._publish(msg)

    async def on_command(self, ack: Callable[..., Awaitable[Any]], body: dict[str, Any]) -> None:
        await ack()
        msg = parse.parse_slash_command(body, self.config.command_name, received_at=time.time())
        if msg is None:
            log.warning("malformed slash command skipped")
            return
        await self._publish(msg)

    async def on_action(self, ack: Callable[..., Awaitable[Any]], body: dict[str, Any]) -> None:
        await ack()
        msg = parse.parse_block_action(body, received_at=time.time())
        if msg is None:
            log.warning("malformed block action skipped")
            return
        await self._publish(msg)

    async def on_error(self, error: Exception, body: dict[str, Any] | None = None) -> None:
        log.error("slack listener error: %r", error)

    # ------------------------------------------------------------------ decisions

    def _wanted(self, msg: InboundMessage) -> bool:
        """One event per message: Slack sends a mention as `app_mention` and as `message`."""
        kind = msg.raw.get("event_type")
        if msg.edit is not None:  # Slack sends an edit once, as `message_changed`
            return True
        if msg.chat.chat_type == "dm":
            return kind == "message"
        return kind == "app_mention" or not msg.mentions_bot

    def _followed(self, msg: InboundMessage) -> bool:
        """A message in a thread the bot answers in counts as a reply to the bot."""
        thread = str(msg.raw.get("thread_ts"))
        return self.config.thread_follow and (msg.chat.chat_id, thread) in self.followed

    async def _with_thread_context(self, msg: InboundMessage) -> InboundMessage:
        """Summoned mid-thread (a thread we do not follow yet): earlier messages as context."""
        thread = str(msg.raw.get("thread_ts"))
        if self.app is None:
            return msg
        try:
            resp = await self.app.client.conversations_replies(
                channel=msg.chat.chat_id, ts=thread, limit=200
            )
        except SlackApiError as exc:
            log.info("no thread context for %s: %s", thread, exc.response.get("error"))
            return msg
        context = parse.thread_context(
            resp.get("messages") or [],
            str(msg.message_id),
            self.me,
            limit=self.config.thread_context_messages,
        )
        return replace(msg, quoted_text=context) if context else msg

    async def _publish(self, msg: InboundMessage) -> None:
        if msg.sender.id and not msg.sender.locale and not msg.sender.is_bot:
            locale = await self.locales.of(msg.sender.id)
            msg = replace(msg, sender=replace(msg.sender, locale=locale))
        result = await self.ctx.publish(msg)
        if not result.done:
            log.info("slack message %s not accepted: %s", msg.event_id, result.value)
