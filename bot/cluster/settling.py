"""The journal the service uses with the Redis bus: the same journal, and once a message is
settled (delivered or failed) the bus hears of it and acknowledges the stream entry."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from bot.stores.journal import Entry, Journal
from channels.base import InboundMessage

Settled = Callable[[InboundMessage], Awaitable[None]]


class SettleNotifyingJournal:
    """A `Journal` around another one; `delivered` and `failed` also call `settled`."""

    def __init__(self, inner: Journal, settled: Settled) -> None:
        self.inner = inner
        self.settled = settled

    async def delivered(self, msg: InboundMessage, reason: str = "") -> None:
        await self.inner.delivered(msg, reason)
        await self.settled(msg)

    async def failed(self, msg: InboundMessage, reason: str, *, told: bool) -> None:
        await self.inner.failed(msg, reason, told=told)
        await self.settled(msg)

    async def accept(self, msg: InboundMessage) -> bool:
        return await self.inner.accept(msg)

    async def forget(self, msg: InboundMessage) -> None:
        await self.inner.forget(msg)

    async def start(self, msg: InboundMessage) -> int:
        return await self.inner.start(msg)

    async def give_back(self, msg: InboundMessage) -> None:
        await self.inner.give_back(msg)

    async def keep_handle(self, msg: InboundMessage, handle: Mapping[str, Any]) -> None:
        await self.inner.keep_handle(msg, handle)

    async def delivering(self, msg: InboundMessage, final: Mapping[str, Any]) -> None:
        await self.inner.delivering(msg, final)

    async def part_sending(self, msg: InboundMessage, sending: bool = True) -> None:
        await self.inner.part_sending(msg, sending)

    async def part_done(
        self, msg: InboundMessage, parts_done: int, handle: Mapping[str, Any] | None
    ) -> None:
        await self.inner.part_done(msg, parts_done, handle)

    async def entry(self, msg: InboundMessage) -> Entry | None:
        return await self.inner.entry(msg)

    async def unsettled(self) -> list[Entry]:
        return await self.inner.unsettled()

    async def own_unsettled(self) -> list[Entry]:
        return await self.inner.own_unsettled()

    async def hand_over(self, msgs: list[InboundMessage]) -> int:
        return await self.inner.hand_over(msgs)

    async def recent(self, limit: int = 50, state: str | None = None) -> list[Entry]:
        return await self.inner.recent(limit, state)

    async def count(self, state: str) -> int:
        return await self.inner.count(state)

    async def prune(self, now: float | None = None) -> int:
        return await self.inner.prune(now)
