"""Every REST call the channel makes goes through `Sender`: budgets, 429s, errors.

discord.py keeps Discord's rate-limit buckets itself: a 429 it can wait out (up to
`MAX_RATELIMIT_WAIT`) it sleeps inside the call and retries; a longer one raises
`discord.RateLimited`, which becomes the contract's RateLimited (the whole bot on a global
limit). Our pacer keeps the declared budgets, so the buckets are rarely met. Errors: 403 and
404 are definitive refusals (DeliveryRefused), a 5xx or a broken connection is retryable.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

import aiohttp
import discord

from channels.base import ChannelError, ChatRef, DeliveryRefused, RateBudget, RateLimited
from channels.pacing import Pacer

T = TypeVar("T")
log = logging.getLogger("channels.discord")

MAX_RATELIMIT_WAIT = 30.0
"""discord.py waits out shorter 429s inside the call (its minimum setting)."""
POST = "post"
THREAD_EXISTS = 160004  # "A thread has already been created for this message"
_GONE = {10003: "chat not found", 10008: "message not found", 50001: "no access to the chat"}


async def guarded(call: Callable[[], Awaitable[T]], what: str) -> T:
    """Make one call and translate discord.py's errors into the contract's."""
    try:
        return await call()
    except discord.RateLimited as exc:
        raise RateLimited(exc.retry_after, scope="chat") from exc
    except discord.Forbidden as exc:
        raise DeliveryRefused(_GONE.get(exc.code, "forbidden"), f"{what}: {exc.text}") from exc
    except discord.NotFound as exc:
        raise DeliveryRefused(_GONE.get(exc.code, "not found"), f"{what}: {exc.text}") from exc
    except discord.DiscordServerError as exc:
        raise ChannelError(f"discord {what}: {exc.status}", retryable=True) from exc
    except discord.HTTPException as exc:
        raise DiscordRefused(what, exc.code, exc.text) from exc
    except (OSError, TimeoutError, aiohttp.ClientError) as exc:
        raise ChannelError(f"discord unreachable ({what}): {exc!r}", retryable=True) from exc


class DiscordRefused(ChannelError):
    """Discord answered a 4xx other than 403/404 (e.g. a form error)."""

    def __init__(self, what: str, code: int, text: str) -> None:
        super().__init__(f"discord refused {what}: {code} {text}")
        self.code = code


class Sender:
    """The channel's own calls within its budgets (the service paces reply updates itself)."""

    def __init__(self, pacer: Pacer, budgets: tuple[RateBudget, ...]) -> None:
        self.pacer = pacer
        self._budgets = budgets

    def budgets(self, chat: ChatRef, method: str) -> tuple[RateBudget, ...]:
        return tuple(
            b for b in self._budgets if b.method == method and b.chat_type in (None, chat.chat_type)
        )

    async def paced(
        self, chat: ChatRef, call: Callable[[], Awaitable[T]], what: str, method: str = POST
    ) -> T:
        async with self.pacer.slot(chat, self.budgets(chat, method)):
            return await guarded(call, what)

    async def unpaced(self, chat: ChatRef, call: Callable[[], Awaitable[T]], what: str) -> T:
        """A call the service paced already (a reply update): only blocks are respected."""
        await self.pacer.wait_unblocked(chat)
        return await guarded(call, what)
