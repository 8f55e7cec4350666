"""The one place that settles a message: marks it `delivered` or `failed` in the delivery journal.

Everything that ends a message's life (a finished reply, a stop, a command answer, a platform
that refuses the reply, a turn that failed twice, a message no channel can answer) says what
happened here, and only here is it decided which state that is, with which reason, whether the
user was told, and whether it counts as a delivery given up. The turn runner owns the one
`Settle`; the dispatcher and the app reach it through `TurnRunner.settle`. Whoever must know at
once that a message settled (the scheduler, for its runs' states) listens with `on_settled`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from bot.metrics import Metrics
from bot.stores.journal import Journal
from channels.base import ChannelError, DeliveryRefused, InboundMessage, ReplyStatus

log = logging.getLogger("bot.settle")

STOPPED = "stopped"


class Settle:
    def __init__(self, journal: Journal, metrics: Metrics) -> None:
        self.journal = journal
        self.metrics = metrics
        self.on_settled: list[Callable[[InboundMessage], None]] = []

    async def _delivered(self, msg: InboundMessage, reason: str = "") -> None:
        await self.journal.delivered(msg, reason)
        self._tell(msg)

    async def _failed(self, msg: InboundMessage, reason: str, *, told: bool) -> None:
        await self.journal.failed(msg, reason, told=told)
        self._tell(msg)

    def _tell(self, msg: InboundMessage) -> None:
        for listener in self.on_settled:
            listener(msg)

    async def answered(self, msg: InboundMessage, status: ReplyStatus, note: str = "") -> None:
        """The final reply is out: a failed answer was shown to the user (told); a cancelled
        one was stopped."""
        if status == "failed":
            await self._failed(msg, note or "the agent failed", told=True)
        else:
            await self._delivered(msg, STOPPED if status == "cancelled" else "")

    async def stopped(self, msg: InboundMessage) -> None:
        """The reply was stopped (by /stop or a newer message) and marked so."""
        await self._delivered(msg, STOPPED)

    async def passed_over(self, msg: InboundMessage, reason: str) -> None:
        """Nothing to answer (an edit passed over or replaced before its turn): `reason`."""
        await self._delivered(msg, reason)

    async def undeliverable(self, channel: str, msg: InboundMessage, exc: ChannelError) -> None:
        """The platform would not take the reply. The streamer already counted refusals and
        unreachable platforms in `antler_deliveries_given_up_total`; other final errors
        are counted here."""
        log.warning("reply to %s not delivered: %s", msg.chat.key, exc)
        if isinstance(exc, DeliveryRefused):
            await self._failed(msg, exc.reason, told=False)
            return
        if not exc.retryable:
            self.metrics.deliveries_given_up.labels(channel=channel, reason="refused").inc()
        await self._failed(msg, str(exc), told=False)

    async def gave_up(self, channel: str, msg: InboundMessage, *, told: bool) -> None:
        """The turn failed twice; `told`: the failure notice reached the user."""
        self.metrics.deliveries_given_up.labels(channel=channel, reason="failed twice").inc()
        await self._failed(msg, "failed twice", told=told)

    async def unanswered(self, msg: InboundMessage, reason: str) -> None:
        """Nothing could be shown: no channel for it, or an error outside any reply."""
        await self._failed(msg, reason, told=False)
