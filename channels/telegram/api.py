"""Every Bot API call the channel makes goes through `Sender`: flood gate, chat pacing, errors.

PTB errors become the contract's errors here: RetryAfter blocks the whole bot and raises
RateLimited(scope="bot"); "message is not modified" is success; "can't parse entities" makes
the caller resend plain text; anything else is a ChannelError.
"""

from __future__ import annotations

import datetime as dtm
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from telegram import Bot
from telegram.error import BadRequest, Forbidden, NetworkError, RetryAfter, TelegramError

from channels.base import ChannelError, ChatRef, RateLimited
from channels.telegram.pacing import ChatPacer, EntitiesRejected, FloodGate
from channels.telegram.render import Part

T = TypeVar("T")
log = logging.getLogger("channels.telegram")

_PARSE_ERRORS = ("can't parse entities", "can't find end", "unsupported start tag", "unclosed")
TextCall = Callable[[str, str | None], Awaitable[T]]


def retry_seconds(exc: RetryAfter) -> float:
    value: int | dtm.timedelta = exc.retry_after
    return value.total_seconds() if isinstance(value, dtm.timedelta) else float(value)


async def guarded(gate: FloodGate, call: Callable[[], Awaitable[T]]) -> T | None:
    """Make one call and translate PTB's errors. None: "message is not modified"."""
    try:
        return await call()
    except RetryAfter as exc:
        seconds = retry_seconds(exc)
        gate.block(seconds)
        raise RateLimited(seconds, scope="bot") from exc
    except BadRequest as exc:
        text = exc.message.lower()
        if "message is not modified" in text:
            return None
        if any(marker in text for marker in _PARSE_ERRORS):
            raise EntitiesRejected(exc.message) from exc
        raise ChannelError(f"telegram refused the call: {exc.message}") from exc
    except Forbidden as exc:
        raise ChannelError(f"telegram forbids the call: {exc.message}") from exc
    except NetworkError as exc:
        raise ChannelError(f"telegram unreachable: {exc.message}", retryable=True) from exc
    except TelegramError as exc:
        raise ChannelError(f"telegram error: {exc.message}") from exc


def where(chat: ChatRef) -> dict[str, Any]:
    """chat_id and, inside a forum topic, message_thread_id."""
    out: dict[str, Any] = {"chat_id": int(chat.chat_id)}
    if chat.topic_id:
        out["message_thread_id"] = int(chat.topic_id)
    return out


class Sender:
    """The bot plus the limits every call obeys."""

    def __init__(self, bot: Bot, *, dm_interval: float, group_interval: float) -> None:
        self.bot = bot
        self.gate = FloodGate()
        self.pacer = ChatPacer()
        self._intervals = {"dm": dm_interval, "group": group_interval}

    def interval(self, chat: ChatRef) -> float:
        return self._intervals[chat.chat_type]

    async def visible(self, chat: ChatRef, call: Callable[[], Awaitable[T]]) -> T | None:
        """A call the chat sees (send, edit, draft): paced per chat, refused while blocked."""
        return await self.pacer.run(
            chat.chat_id, self.interval(chat), self.gate, lambda: guarded(self.gate, call)
        )

    async def text(self, chat: ChatRef, part: Part, call: TextCall[T]) -> T | None:
        """Send `part` as HTML; if Telegram rejects the entities, send its plain text."""
        try:
            return await self.visible(chat, lambda: call(part.html, "HTML"))
        except EntitiesRejected:
            log.info("telegram rejected the HTML of a message; sending plain text")
            return await self.visible(chat, lambda: call(part.plain, None))

    async def patiently(self, make: Callable[[], Awaitable[T]], attempts: int = 5) -> T:
        """For one-off sends nobody retries: wait out 429 blocks and try again."""
        for _ in range(attempts - 1):
            await self.gate.wait()
            try:
                return await make()
            except RateLimited:
                continue
        await self.gate.wait()
        return await make()

    async def typing(self, chat: ChatRef) -> None:
        """Show "typing…"; skipped while blocked, failures only logged."""
        if self.gate.remaining() > 0:
            return
        try:
            await guarded(
                self.gate, lambda: self.bot.send_chat_action(action="typing", **where(chat))
            )
        except (ChannelError, EntitiesRejected) as exc:
            log.debug("typing action failed: %s", exc)
