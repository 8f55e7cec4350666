"""Inbound updates: parse, answer button presses, publish (the service's gate decides access).

`Inbound.handle(update)` returns once the update is done with (published, deduplicated, refused
or skipped) and raises `ServiceClosed` when the service took nothing (the caller must not
confirm the update to Telegram). Polling and the webhook route both feed it.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from aiohttp import web
from telegram.error import RetryAfter, TelegramError

from channels.backoff import Backoff, BackoffPolicy, describe
from channels.base import ChannelContext, PublishResult
from channels.telegram.api import Sender, retry_seconds
from channels.telegram.buttons import ButtonTokens
from channels.telegram.config import TelegramConfig
from channels.telegram.parse import BotIdentity, MalformedUpdate, Parsed, parse_update

log = logging.getLogger("channels.telegram")

ALLOWED_UPDATES = ("message", "edited_message", "callback_query")
SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"
MAX_ATTEMPTS = 5


class ServiceClosed(Exception):
    """The service is shutting down and took nothing: leave the update unconfirmed."""


@dataclass(eq=False)
class Inbound:
    """Turns updates into published messages."""

    config: TelegramConfig
    ctx: ChannelContext
    sender: Sender
    buttons: ButtonTokens
    channel: str
    me: BotIdentity = field(default_factory=lambda: BotIdentity(id=0, username=""), init=False)

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
        if parsed.for_other_bot:
            return True
        return await self._publish(parsed)

    async def _button(self, parsed: Parsed) -> bool:
        """Answer the press at once; data that is not one of our buttons never becomes text."""
        msg = parsed.msg
        value = self.buttons.value_of(msg.text)
        expired = self.ctx.choice_expired if value is None else None
        await self._answer(parsed.callback_id or "", expired)
        if value is None:
            log.info("button data that is not ours in %s answered as expired", msg.chat.key)
            return True
        return await self._publish(replace(parsed, msg=replace(msg, text=value)))

    async def _publish(self, parsed: Parsed) -> bool:
        result = await self.ctx.publish(parsed.msg)
        if result is PublishResult.closed:
            raise ServiceClosed(parsed.msg.event_id)
        log.debug("published %s: %s", parsed.msg.event_id, result.value)
        return True

    async def _answer(self, callback_id: str, text: str | None) -> None:
        """Acknowledge a button press (skipped while the bot is blocked by a 429)."""
        if self.sender.gate.remaining() > 0:
            return
        try:
            await self.sender.bot.answer_callback_query(callback_id, text=text)
        except TelegramError as exc:
            log.info("answerCallbackQuery failed: %s", exc)


class Poller:
    """getUpdates in a task; the offset moves past an update only once it is handled.

    A failing getUpdates is retried with the backoff (at least retry_after after a 429).
    """

    def __init__(
        self,
        inbound: Inbound,
        sender: Sender,
        ctx: ChannelContext,
        timeout: int,
        backoff: BackoffPolicy | None = None,
        may_poll: Callable[[], bool] = lambda: True,
    ) -> None:
        self.inbound = inbound
        self.sender = sender
        self.ctx = ctx
        self.timeout = timeout
        self.offset = 0
        self.backoff = Backoff("telegram getUpdates", log, backoff)
        self._failures = 0
        self.may_poll = may_poll  # False once another process may hold the connection

    async def run(self) -> None:
        while True:
            if not self.may_poll():
                await asyncio.sleep(0.2)
                continue
            for update in await self._fetch():
                if not await self._handle_one(update):
                    await asyncio.sleep(0.5)
                    break
                if isinstance(update.get("update_id"), int):
                    self.offset = max(self.offset, update["update_id"] + 1)

    async def _fetch(self) -> list[dict[str, Any]]:
        try:
            updates = await self._get_updates()
        except Exception as exc:
            await self._failed(exc)
            return []
        self.backoff.success()
        self.ctx.report(connected=True)
        return updates

    async def _failed(self, exc: Exception) -> None:
        """One failed getUpdates: report it, then wait the backoff (or retry_after, if longer)."""
        wait = retry_seconds(exc) + 0.1 if isinstance(exc, RetryAfter) else 0.0
        what = exc.message if isinstance(exc, TelegramError) else describe(exc)
        retry = self.backoff.failure(what, at_least=wait)
        self.ctx.report(connected=False, error=f"telegram getUpdates: {what}", retry=retry)
        await self.backoff.wait()

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
            return [u for u in raw if isinstance(u, dict)]
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


FORBIDDEN = "forbidden"
BAD_UPDATE = "bad request"


def webhook_handler(config: TelegramConfig, inbound: Inbound) -> Any:
    """The aiohttp handler for webhook mode: the secret header is required (403), then the update.

    A rejected request gets a fixed body and one WARNING line, never a traceback.
    """
    secret = config.webhook_secret.get_secret_value().encode()
    if not secret:
        raise ValueError("telegram webhook mode needs a webhook_secret")

    async def handler(request: web.Request) -> web.Response:
        given = request.headers.get(SECRET_HEADER, "").encode()
        if not hmac.compare_digest(given, secret):
            log.warning(
                "telegram webhook: rejected a request from %s without the right secret",
                request.remote,
            )
            return web.Response(status=403, text=FORBIDDEN)
        try:
            update = await request.json()
        except ValueError:
            update = None
        if not isinstance(update, dict):
            log.warning("telegram webhook: rejected a request whose body is not an update")
            return web.Response(status=400, text=BAD_UPDATE)
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
