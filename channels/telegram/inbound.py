"""Inbound updates: access control, group trigger, /start, button presses, then publish.

`Inbound.handle(update)` returns once the update is done with (published, deduplicated, refused
or skipped) and raises `ServiceClosed` when the service took nothing (the caller must not
confirm the update to Telegram). Polling and the webhook route both feed it.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from aiohttp import web
from telegram.error import InvalidToken, RetryAfter, TelegramError

from channels.base import ChannelContext, ChannelError, ChatRef, PublishResult
from channels.telegram.api import Sender, retry_seconds, where
from channels.telegram.buttons import ButtonTokens
from channels.telegram.config import TelegramConfig
from channels.telegram.parse import BotIdentity, MalformedUpdate, Parsed, parse_update

log = logging.getLogger("channels.telegram")

ALLOWED_UPDATES = ("message", "callback_query")
REFUSAL = "Sorry, this bot is not available to you here."
EXPIRED = "This button has expired; please type the command instead."
SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"
MAX_ATTEMPTS = 5


class ServiceClosed(Exception):
    """The service is shutting down and took nothing: leave the update unconfirmed."""


class Inbound:
    """Turns updates into published messages."""

    def __init__(
        self,
        config: TelegramConfig,
        ctx: ChannelContext,
        sender: Sender,
        buttons: ButtonTokens,
        channel: str,
    ) -> None:
        self.config = config
        self.ctx = ctx
        self.sender = sender
        self.buttons = buttons
        self.channel = channel
        self.me = BotIdentity(id=0, username="")

    async def handle(self, update: Mapping[str, Any]) -> bool:
        """True once done with the update; raises ServiceClosed when the service took nothing."""
        try:
            parsed = parse_update(update, self.me, channel=self.channel, now=time.time())
        except MalformedUpdate as exc:
            log.warning("skipping malformed update: %s", exc)
            return True
        if parsed is None:
            return True
        if parsed.callback_id is not None:
            return await self._button(parsed)
        return await self._message(parsed)

    async def _message(self, parsed: Parsed) -> bool:
        msg = parsed.msg
        if parsed.for_other_bot:
            return True
        in_group = msg.chat.chat_type == "group"
        if in_group and self.config.group_trigger == "mention" and not parsed.addressed:
            return True
        if not self.config.allows(msg):
            await self._say(msg.chat, REFUSAL, msg.message_id)
            return True
        if parsed.command == "start":
            await self._say(msg.chat, self._greeting(), msg.message_id)
            return True
        return await self._publish(parsed)

    async def _button(self, parsed: Parsed) -> bool:
        msg = parsed.msg
        value = self.buttons.value_of(msg.text)
        allowed = self.config.allows(msg)
        notice = REFUSAL if not allowed else (EXPIRED if value is None else None)
        await self._answer(parsed.callback_id or "", notice)
        if notice is not None or value is None:
            return True
        return await self._publish(replace(parsed, msg=replace(msg, text=value)))

    async def _publish(self, parsed: Parsed) -> bool:
        result = await self.ctx.publish(parsed.msg)
        if result is PublishResult.closed:
            raise ServiceClosed(parsed.msg.event_id)
        log.debug("published %s: %s", parsed.msg.event_id, result.value)
        return True

    # ------------------------------------------------------------------ small answers

    def _greeting(self) -> str:
        name = self.ctx.bot_name or self.me.username
        return (
            f"Hi! I'm {name}. Send me a message and I'll answer; in groups, mention me or reply "
            "to me. /new starts a fresh conversation, /help lists the commands."
        )

    async def _say(self, chat: ChatRef, text: str, reply_to: str | None) -> None:
        async def send() -> Any:
            return await self.sender.visible(
                chat,
                lambda: self.sender.bot.send_message(
                    text=text,
                    reply_to_message_id=int(reply_to) if reply_to else None,
                    allow_sending_without_reply=True,
                    **where(chat),
                ),
            )

        try:
            await self.sender.patiently(send)
        except ChannelError as exc:
            log.warning("could not answer in %s: %s", chat.key, exc)

    async def _answer(self, callback_id: str, text: str | None) -> None:
        """Acknowledge a button press (skipped while the bot is blocked by a 429)."""
        if self.sender.gate.remaining() > 0:
            return
        try:
            await self.sender.bot.answer_callback_query(callback_id, text=text)
        except TelegramError as exc:
            log.info("answerCallbackQuery failed: %s", exc)


class Poller:
    """getUpdates in a task; the offset moves past an update only once it is handled."""

    def __init__(self, inbound: Inbound, sender: Sender, ctx: ChannelContext, timeout: int) -> None:
        self.inbound = inbound
        self.sender = sender
        self.ctx = ctx
        self.timeout = timeout
        self.offset = 0
        self._failures = 0

    async def run(self) -> None:
        while True:
            for update in await self._fetch():
                if not await self._handle_one(update):
                    await asyncio.sleep(0.5)
                    break
                if isinstance(update.get("update_id"), int):
                    self.offset = max(self.offset, update["update_id"] + 1)

    async def _fetch(self) -> list[dict[str, Any]]:
        try:
            return await self._get_updates()
        except RetryAfter as exc:
            await asyncio.sleep(retry_seconds(exc) + 0.1)
        except InvalidToken as exc:
            self.ctx.report(connected=False, error=f"telegram: {exc.message}")
            await asyncio.sleep(30)
        except TelegramError as exc:
            self.ctx.report(connected=False, error=f"telegram getUpdates: {exc.message}")
            await asyncio.sleep(1.0)
        except Exception:
            log.exception("getUpdates failed unexpectedly")
            await asyncio.sleep(1.0)
        return []

    async def _get_updates(self) -> list[dict[str, Any]]:
        bot = self.sender.bot
        try:
            updates = await bot.get_updates(
                offset=self.offset, timeout=self.timeout, allowed_updates=list(ALLOWED_UPDATES)
            )
        except (KeyError, TypeError, ValueError):
            # The SDK could not parse the batch: read it raw so parse.py can skip the bad update.
            # Bot API method names are case-insensitive; the lower-case spelling keeps PTB from
            # warning that `get_updates` exists (we need the raw JSON here, not its objects).
            log.warning("python-telegram-bot could not parse an update batch; reading it raw")
            raw = await bot.do_api_request(
                "getupdates",
                api_kwargs={
                    "offset": self.offset,
                    "timeout": 0,
                    "allowed_updates": list(ALLOWED_UPDATES),
                },
            )
            self.ctx.report(connected=True)
            return [u for u in raw if isinstance(u, dict)]
        self.ctx.report(connected=True)
        return [u.to_dict() for u in updates]

    async def _handle_one(self, update: Mapping[str, Any]) -> bool:
        """Handle one update; after repeated failures give up on it (logged) so polling goes on."""
        try:
            done = await self.inbound.handle(update)
        except ServiceClosed:
            return False
        except Exception:
            log.exception("handling update %s failed", update.get("update_id"))
            done = False
        self._failures = 0 if done else self._failures + 1
        if self._failures >= MAX_ATTEMPTS:
            log.error("dropping update %s after %d attempts", update.get("update_id"), MAX_ATTEMPTS)
            self._failures = 0
            return True
        return done

    async def confirm(self) -> None:
        """Tell Telegram which updates are done (getUpdates with timeout 0), at shutdown."""
        if self.offset:
            try:
                await self.sender.bot.get_updates(offset=self.offset, timeout=0)
            except TelegramError as exc:
                log.info("could not confirm the update offset: %s", exc)


def webhook_handler(config: TelegramConfig, inbound: Inbound) -> Any:
    """The aiohttp handler for webhook mode: secret check (403), then handle the update."""
    secret = config.webhook_secret.get_secret_value().encode()

    async def handler(request: web.Request) -> web.Response:
        given = request.headers.get(SECRET_HEADER, "").encode()
        if secret and not hmac.compare_digest(given, secret):
            return web.Response(status=403, text="forbidden")
        try:
            update = await request.json()
        except ValueError:
            return web.Response(status=400, text="invalid json")
        if not isinstance(update, dict):
            return web.Response(status=400, text="not an update")
        try:
            done = await inbound.handle(update)
        except ServiceClosed:
            done = False
        except Exception:
            log.exception("handling webhook update failed")
            done = False
        # A non-2xx makes Telegram deliver the update again later.
        return web.Response(status=200 if done else 503)

    return handler
