"""Every Bot API call the channel makes goes through `Sender`: budgets, 429 blocks, errors.

PTB errors become the contract's errors here: RetryAfter blocks the whole bot and raises
RateLimited(scope="bot"); "message is not modified" is success; "can't parse entities" makes
the caller resend plain text; a definitive refusal (bot blocked by the user, kicked, chat not
found) is DeliveryRefused; anything else is a ChannelError.
"""

from __future__ import annotations

import datetime as dtm
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

from telegram import Bot
from telegram.error import BadRequest, Forbidden, NetworkError, RetryAfter, TelegramError

from channels.base import ChannelError, ChatRef, DeliveryRefused, RateBudget, RateLimited
from channels.pacing import Pacer
from channels.telegram.pacing import MESSAGE, EntitiesRejected, FloodGate
from channels.telegram.render import Part

T = TypeVar("T")
log = logging.getLogger("channels.telegram")

_PARSE_ERRORS = ("can't parse entities", "can't find end", "unsupported start tag", "unclosed")
_GONE = {  # BadRequest texts that mean the chat is not there for the bot any more
    "chat not found": "chat not found",
    "have no rights to send": "no rights to send messages",
    "not enough rights to send": "no rights to send messages",
    "topic_closed": "topic closed",
    "topic_deleted": "topic deleted",
}
TextCall = Callable[[str, str | None], Awaitable[T]]
TYPED_FOR, TYPED_KEPT = 5.0, 4096  # how long Telegram shows "typing…"; chats remembered


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
        for marker, reason in _GONE.items():
            if marker in text:
                raise DeliveryRefused(reason, exc.message) from exc
        raise ChannelError(f"telegram refused the call: {exc.message}") from exc
    except Forbidden as exc:
        raise DeliveryRefused(_forbidden_reason(exc.message), exc.message) from exc
    except NetworkError as exc:
        raise ChannelError(f"telegram unreachable: {exc.message}", retryable=True) from exc
    except TelegramError as exc:
        raise ChannelError(f"telegram error: {exc.message}") from exc


def _forbidden_reason(message: str) -> str:
    text = message.lower()
    if "blocked by the user" in text:
        return "bot blocked by the user"
    if "kicked" in text or "not a member" in text or "removed" in text:
        return "bot removed from the chat"
    if "deactivated" in text:
        return "user deactivated"
    return "forbidden"


def where(chat: ChatRef) -> dict[str, Any]:
    """chat_id and, inside a forum topic, message_thread_id."""
    out: dict[str, Any] = {"chat_id": int(chat.chat_id)}
    if chat.topic_id:
        out["message_thread_id"] = int(chat.topic_id)
    return out


class Actions(Protocol):
    """Where chat actions go (actions.ActionLane: a lane of their own)."""

    async def typing(self, where: dict[str, Any]) -> bool: ...


class Sender:
    """The bot plus the limits every call obeys (budgets and blocks in the channel's Pacer)."""

    def __init__(
        self, bot: Bot, pacer: Pacer, budgets: tuple[RateBudget, ...], actions: Actions
    ) -> None:
        self.bot = bot
        self.actions = actions  # chat actions, on a lane of their own (actions.py)
        self.pacer = pacer
        self.gate = FloodGate(pacer)
        self._budgets = budgets
        self._typed: dict[str, float] = {}  # chat key → when "typing…" last went out there

    def budgets(self, chat: ChatRef, method: str = MESSAGE) -> tuple[RateBudget, ...]:
        return tuple(
            b for b in self._budgets if b.method == method and b.chat_type in (None, chat.chat_type)
        )

    def ready_in(self, chat: ChatRef, method: str = MESSAGE) -> float:
        """Seconds until a `method` call to `chat` may go out (blocks included)."""
        return self.pacer.wait_time(chat, self.budgets(chat, method))

    async def visible(
        self, chat: ChatRef, call: Callable[[], Awaitable[T]], method: str = MESSAGE
    ) -> T | None:
        """A call the chat sees (send, edit, draft): within its budgets, never while blocked."""
        async with self.pacer.slot(chat, self.budgets(chat, method)):
            return await guarded(self.gate, call)

    async def bot_wide(self, chat: ChatRef, call: Callable[[], Awaitable[T]]) -> T | None:
        """A call that is no message (a reaction): within the bot-wide budget messages use,
        never while blocked."""
        budgets = tuple(b for b in self._budgets if b.method == MESSAGE and b.scope == "bot")
        async with self.pacer.slot(chat, budgets):
            return await guarded(self.gate, call)

    async def text(
        self, chat: ChatRef, part: Part, call: TextCall[T], method: str = MESSAGE
    ) -> T | None:
        """Send `part` as HTML; if Telegram rejects the entities, send its plain text."""
        try:
            return await self.visible(chat, lambda: call(part.html, "HTML"), method)
        except EntitiesRejected:
            log.info("telegram rejected the HTML of a message; sending plain text")
            return await self.visible(chat, lambda: call(part.plain, None), method)

    async def patiently(self, make: Callable[[], Awaitable[T]]) -> T:
        """For one-off sends nobody retries: wait out 429 blocks as often as Telegram asks."""
        while True:
            await self.gate.wait()
            try:
                return await make()
            except RateLimited:
                continue

    async def typing(self, chat: ChatRef, fresh: float = 0.0) -> bool:
        """Show "typing…" (True when sent) on the actions' own lane; skipped while blocked, or
        when one went to `chat` (or is on its way) less than `fresh` seconds ago (Telegram
        shows it ~5 s); failures only logged."""
        now = self.pacer.clock()
        if fresh and now - self._typed.get(chat.key, -fresh) < fresh:
            return False
        self._note_typed(chat.key, now)
        try:
            sent = bool(await guarded(self.gate, lambda: self.actions.typing(where(chat))))
        except ChannelError as exc:
            log.debug("typing action failed: %s", exc)
            sent = False
        if not sent:
            self._typed.pop(chat.key, None)
        return sent

    def _note_typed(self, key: str, now: float) -> None:
        if len(self._typed) >= TYPED_KEPT:  # only recent ones matter: forget the rest
            self._typed = {k: t for k, t in self._typed.items() if now - t < TYPED_FOR}
        self._typed[key] = now
