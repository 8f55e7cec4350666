"""The Redis scale-out (`bus.backend: redis`), built in one place: the partitioned bus, the
journal that tells the bus what settled, budgets and 429s shared by the workers, the leases of
the platform connections, /stop and interrupts across workers, and the runs' event channel.
The composition root (bot/app.py) builds one when the settings ask for it and hands its parts
to the service; it starts and stops them through the few verbs here."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import redis.asyncio as aioredis

from bot.cluster.connections import ConnectionLeases
from bot.cluster.control import ClusterRuns
from bot.cluster.run_events import RunEvents
from bot.cluster.settling import SettleNotifyingJournal
from bot.cluster.shared_budgets import SharedPacing
from bot.cluster.stream_bus import RedisBus
from bot.config.schema import Settings
from bot.metrics import Metrics
from channels.base import InboundMessage

if TYPE_CHECKING:
    from bot.dispatcher import Dispatcher
    from bot.journal import Entry, Journal


class ScaleOut:
    """The parts several workers on one Redis share."""

    def __init__(
        self,
        journal: Journal,
        settings: Settings,
        tell_busy: Callable[[InboundMessage], Awaitable[None]],
        metrics: Metrics,
    ) -> None:
        cfg = self.cfg = settings.bus.redis
        self.bus = RedisBus(journal, cfg, settings.channels.inbound_queue_size, tell_busy, metrics)
        self.journal = SettleNotifyingJournal(journal, self.bus.settled)
        self.pacing = SharedPacing(
            self._client, cfg.key_prefix, self._worker, self.bus.live_workers
        )
        self.connections = ConnectionLeases(
            self._client, cfg.key_prefix, cfg.lease_seconds, self._worker
        )
        self.run_events = RunEvents(self._client, cfg.key_prefix)
        self.control: ClusterRuns | None = None

    def _client(self) -> aioredis.Redis | None:
        return self.bus.client  # the bus's, once opened

    def _worker(self) -> str:
        return self.bus.worker

    def serve(
        self, dispatcher: Dispatcher, resume: Callable[[list[Entry]], Awaitable[None]]
    ) -> ClusterRuns:
        """Wire the bus to the dispatcher: resumes, abandoned partitions, stops elsewhere."""
        self.bus.on_resume = resume
        self.bus.on_abandon = dispatcher.abandon
        self.control = ClusterRuns(
            self._client, self.cfg.key_prefix, self._worker, dispatcher.stop_run
        )
        dispatcher.elsewhere = self.control
        return self.control

    def start(self) -> None:
        """Listen for stops and budgets of other workers, then read the partitions."""
        if self.control is not None:
            self.control.listen()
        self.pacing.listen()
        self.bus.start_reading()

    async def stop_listening(self) -> None:
        if self.control is not None:
            await self.control.close()
        await self.pacing.close()
