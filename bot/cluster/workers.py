"""Several workers on one Redis, built in one place (`bus.backend: redis`, docs/scale-out.md).

The bus on partitioned streams and the journal that tells it when a message settled; one live
connection per bot account (leases); platform budgets and 429 blocks shared by all workers;
model calls in flight against a usage budget held (spend_holds.py); /stop, the API's cancel
and a Gateway run's events across workers. The unsettled messages of a
process that died go back into the streams, where each partition's owner takes them up.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from bot.cluster.connections import ConnectionLeases
from bot.cluster.control import ClusterRuns
from bot.cluster.run_events import RunEvents
from bot.cluster.settling import SettleNotifyingJournal
from bot.cluster.shared_budgets import SharedPacing
from bot.cluster.spend_holds import SpendHolds
from bot.cluster.stream_bus import RedisBus

if TYPE_CHECKING:
    from bot.bus import OverflowHandler
    from bot.config.schema import RedisConfig
    from bot.dispatcher import Dispatcher
    from bot.metrics import Metrics
    from bot.stores.journal import Entry, Journal
    from channels.pacing import Pacer

Resume = Callable[[list["Entry"]], Awaitable[None]]


class RedisWorkers:
    def __init__(
        self,
        cfg: RedisConfig,
        journal: Journal,
        maxsize: int,
        busy: OverflowHandler,
        metrics: Metrics,
    ) -> None:
        self.cfg = cfg
        self.bus = self.redis = RedisBus(journal, cfg, maxsize, busy, metrics)
        self.journal = SettleNotifyingJournal(journal, self.redis.settled)
        bus = self.redis
        self.pacing = SharedPacing(
            lambda: bus.client, cfg.key_prefix, lambda: bus.worker, bus.live_workers
        )
        self.connections = ConnectionLeases(
            lambda: bus.client, cfg.key_prefix, cfg.lease_seconds, lambda: bus.worker
        )
        self.run_events = RunEvents(lambda: bus.client, cfg.key_prefix)
        self.spend_holds = SpendHolds(lambda: bus.client, cfg.key_prefix)
        self.run_cancels: ClusterRuns | None = None  # once the dispatcher exists (wire)

    def attach_pacer(self, channel: str, pacer: Pacer) -> None:
        self.pacing.attach(channel, pacer)

    def wire(self, dispatcher: Dispatcher, resume: Resume) -> None:
        bus = self.redis
        bus.on_resume = resume
        bus.on_abandon = dispatcher.abandon
        self.run_cancels = ClusterRuns(
            lambda: bus.client, self.cfg.key_prefix, lambda: bus.worker, dispatcher.stop_run
        )
        dispatcher.elsewhere = self.run_cancels

    async def orphans(self, entries: list[Entry]) -> None:
        await self.redis.republish(entries)

    async def open(self) -> None:
        await self.redis.open()  # RedisUnavailable (a ConfigError) when it cannot be reached

    def listen(self) -> None:
        if self.run_cancels is not None:
            self.run_cancels.listen()
        self.pacing.listen()
        self.redis.start_reading()

    async def close(self) -> None:
        if self.run_cancels is not None:
            await self.run_cancels.close()
        await self.pacing.close()

    async def shutdown(self) -> None:
        """What did not settle goes to the partitions' next owners."""
        await self.redis.shutdown()

    def status(self) -> dict[str, Any]:
        return {"bus": self.redis.status()}
