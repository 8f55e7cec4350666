"""How many processes share the work: one (embedded) or several workers on Redis.

The composition root asks `build_topology` once and then talks to the result through the same
small interface either way, so `App` has no backend branches: the bus and the journal it writes
through, who receives on each bot account, budgets wider than a conversation, stops and run
events across workers, and what happens to the messages of a process that died.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

from bot.bus import MessageBus, OverflowHandler
from bot.config.schema import BusBackend, Settings
from bot.metrics import Metrics
from bot.stores.journal import Entry, Journal

if TYPE_CHECKING:
    from bot.cluster.connections import ConnectionLeases
    from bot.cluster.control import ClusterRuns
    from bot.cluster.run_events import RunEvents
    from bot.cluster.spend_holds import SpendHolds
    from bot.dispatcher import Dispatcher
    from channels.pacing import Pacer

Resume = Callable[[list[Entry]], Awaitable[None]]


class Topology(Protocol):
    @property
    def bus(self) -> MessageBus: ...
    @property
    def journal(self) -> Journal: ...
    @property
    def connections(self) -> ConnectionLeases | None:
        """One live connection per bot account, across workers."""

    @property
    def run_cancels(self) -> ClusterRuns | None:
        """/stop and the API's cancel reach the worker running it."""

    @property
    def run_events(self) -> RunEvents | None:
        """A Gateway run's events, for a stream on any worker."""

    @property
    def spend_holds(self) -> SpendHolds | None:
        """Model calls in flight against a budget, held across workers."""

    def attach_pacer(self, channel: str, pacer: Pacer) -> None: ...
    def wire(self, dispatcher: Dispatcher, resume: Resume) -> None: ...
    async def orphans(self, entries: list[Entry]) -> None: ...
    async def open(self) -> None: ...
    def listen(self) -> None: ...
    async def close(self) -> None: ...
    async def shutdown(self) -> None: ...
    def status(self) -> dict[str, Any]: ...


class Embedded:
    """One process: the in-memory bus on the store's journal; nothing is shared."""

    connections = None
    run_cancels = None
    run_events = None
    spend_holds = None

    def __init__(self, journal: Journal, maxsize: int, busy: OverflowHandler, metrics: Metrics):
        self.journal = journal
        self.bus = MessageBus(journal, maxsize, busy, metrics)
        self._resume: Resume | None = None

    def attach_pacer(self, channel: str, pacer: Pacer) -> None:
        """Every budget is this process's own."""

    def wire(self, dispatcher: Dispatcher, resume: Resume) -> None:
        self._resume = resume

    async def orphans(self, entries: list[Entry]) -> None:
        """The last process's unsettled messages are this one's to take up."""
        if self._resume is not None:
            await self._resume(entries)

    async def open(self) -> None:
        """Nothing to connect to."""

    def listen(self) -> None:
        """Nothing to listen to."""

    async def close(self) -> None:
        """Nothing to close."""

    async def shutdown(self) -> None:
        """Nothing is handed over."""

    def status(self) -> dict[str, Any]:
        return {}


def build_topology(
    settings: Settings, journal: Journal, busy: OverflowHandler, metrics: Metrics
) -> Topology:
    """The one place that asks which bus backend is configured."""
    size = settings.channels.inbound_queue_size
    if settings.bus.backend is BusBackend.redis:
        from bot.cluster.workers import RedisWorkers

        return RedisWorkers(settings.bus.redis, journal, size, busy, metrics)
    return Embedded(journal, size, busy, metrics)
