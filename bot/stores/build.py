"""Where the service keeps its state: the one place that picks the storage backend.

`build_stores(settings)` returns the journal, the conversations, the LangGraph checkpoints,
the agent's memory, the Gateway's thread and run records, the schedules and the choices waiting
for a press (`channels.choices.ChoiceStore`) for
`storage.backend`, all behind the interfaces the rest of the service uses
(`bot.stores.journal.Journal`, `bot.stores.conversations.ConversationStore`,
`agent.checkpoints.Checkpoints`, `agent.memory.MemoryStore` (None: the agent's default file),
`bot.stores.gateway.GatewayRecords`, `bot.stores.schedules.ScheduleStore`,
`bot.access.store.AccessStore`, `bot.stores.usage.UsageStore`). Each store is a
package: its rules once in `__init__.py`, its backends in `sqlite.py` and `postgres.py`. Nothing
else in the service asks which backend is configured.

- `sqlite` (default): one process; files under `storage.data_dir`.
- `postgres`: every process on `storage.postgres.dsn` shares the state (docs/scale-out.md).

On PostgreSQL no SQLite file is opened (`db` is None): the state is all on the server.
Opening the stores settles the Gateway runs a stopped process left unfinished (`error`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from agent.checkpoints import Checkpoints, PostgresCheckpoints, SqliteCheckpoints
from agent.memory import MemoryStore
from agent.memory import postgres as pg_memory
from agent.sql import PostgresSql, SqliteSql
from bot.access.store import AccessStore
from bot.config.schema import Settings, StorageBackend
from bot.db import open_db
from bot.stores import pg, pg_access, room
from bot.stores.choices import postgres as pg_choices
from bot.stores.choices.postgres import PostgresChoiceStore
from bot.stores.choices.sqlite import SqliteChoiceStore
from bot.stores.conversations import ConversationStore
from bot.stores.conversations import postgres as pg_conversations
from bot.stores.conversations.postgres import PostgresConversationStore
from bot.stores.conversations.sqlite import SqliteConversationStore
from bot.stores.gateway import GatewayRecords
from bot.stores.gateway import postgres as pg_gateway
from bot.stores.gateway.postgres import PostgresGatewayRecords
from bot.stores.gateway.sqlite import SqliteGatewayRecords
from bot.stores.journal import Entry, Journal
from bot.stores.journal import postgres as pg_journal
from bot.stores.journal.postgres import PostgresJournal
from bot.stores.journal.sqlite import SqliteJournal
from bot.stores.pg_life import Life
from bot.stores.schedules import ScheduleStore
from bot.stores.schedules import postgres as pg_schedules
from bot.stores.schedules.postgres import PostgresScheduleStore
from bot.stores.schedules.sqlite import SqliteScheduleStore
from bot.stores.usage import UsageStore
from bot.stores.usage import postgres as pg_usage
from bot.stores.usage.postgres import PostgresUsageStore
from bot.stores.usage.sqlite import SqliteUsageStore
from channels.choices import ChoiceStore, MemoryChoices

log = logging.getLogger("bot.stores")

PING_SECONDS = 15.0


@dataclass(eq=False)
class Stores:
    """The stores, opened at start (`open`) and closed at stop (`close`)."""

    backend: str
    db: sqlite3.Connection | None
    journal: Journal
    conversations: ConversationStore
    checkpoints: Checkpoints
    gateway: GatewayRecords
    schedules: ScheduleStore
    access: AccessStore  # roles given by API, /link codes, the audit trail
    memory: MemoryStore | None = None
    choices: ChoiceStore = field(default_factory=MemoryChoices)
    usage: UsageStore | None = None  # tokens and cost per model call (None: not counted)
    # the service's resume routine, for messages of a process that died (see take_over)
    on_orphans: Callable[[list[Entry]], Awaitable[None]] | None = field(default=None, init=False)

    async def open(self) -> None:
        """Reach the database and bring its schema up to date (StorageUnavailable if not)."""
        await self._settle_runs()

    async def _settle_runs(self) -> None:
        settled = await self.gateway.settle_orphans()
        if settled:
            log.info("%d Gateway runs of a process that stopped are marked error", settled)

    async def close(self) -> None:
        if self.db is not None:
            self.db.close()

    def status(self) -> dict[str, Any]:
        """What /health says about the database."""
        return {"backend": self.backend, "reachable": True}

    async def take_over(self) -> int:
        """Hand the unsettled messages of processes that died to `on_orphans` (one process
        only on SQLite: nothing to take over while it runs). Returns how many."""
        return 0


class PostgresStores(Stores):
    """The stores on a PostgreSQL pool; `status()` reports the last periodic ping."""

    def __init__(self, settings: Settings) -> None:
        self.cfg = settings.storage.postgres
        self.pool = pg.make_pool(self.cfg)
        self.life = Life()
        super().__init__(
            StorageBackend.postgres.value,
            None,
            PostgresJournal(self.pool, settings.channels.dedupe_window_hours, self.life.owner),
            PostgresConversationStore(self.pool),
            PostgresCheckpoints(self.pool, pg.retrying),
            PostgresGatewayRecords(self.pool, self.life.owner),
            PostgresScheduleStore(self.pool),
            AccessStore(PostgresSql(self.pool, "access", pg.retrying), "antler_access_"),
            pg_memory.PostgresMemoryStore(self.pool, pg.retrying),
            PostgresChoiceStore(self.pool),
            PostgresUsageStore(self.pool),
        )
        self._ping: asyncio.Task[None] | None = None
        self._last: dict[str, Any] = {"reachable": False, "error": "not opened yet"}

    async def open(self) -> None:
        assert self.cfg.dsn is not None
        dsn = self.cfg.dsn.get_secret_value()
        await pg.open_pool(self.pool, dsn, self.cfg.connect_timeout_seconds)
        try:
            await self.life.take(dsn, self.cfg.connect_timeout_seconds)
            await pg.migrate(self.pool, "journal", pg_journal.MIGRATIONS)
            await pg.migrate(self.pool, "conversations", pg_conversations.MIGRATIONS)
            await pg.migrate(self.pool, "memory", pg_memory.MIGRATIONS)
            await pg.migrate(self.pool, "gateway", pg_gateway.MIGRATIONS)
            await pg.migrate(self.pool, "schedules", pg_schedules.MIGRATIONS)
            await pg.migrate(self.pool, "choices", pg_choices.MIGRATIONS)
            await pg.migrate(self.pool, "access", pg_access.MIGRATIONS)
            await pg.migrate(self.pool, "usage", pg_usage.MIGRATIONS)
            await self._settle_runs()
        except Exception as exc:
            await self.life.release()
            await self.pool.close()
            raise pg.unavailable(dsn, exc) from None
        self._last = {"reachable": True, "checked_at": time.time()}
        self._ping = asyncio.create_task(self._ping_loop(), name="db-ping")
        log.info("storage: PostgreSQL at %s", pg.where(dsn))

    async def close(self) -> None:
        if self._ping is not None:
            self._ping.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._ping
        await self.life.release()
        await self.pool.close()
        await super().close()

    def status(self) -> dict[str, Any]:
        stats = self.pool.get_stats()
        pool = {k: stats.get(k, 0) for k in ("pool_size", "pool_available", "requests_waiting")}
        return {"backend": self.backend, "where": pg.where(self._dsn()), **self._last, "pool": pool}

    async def take_over(self) -> int:
        if not await self.life.held():  # never take over while others may count us dead
            return 0
        await self._settle_runs()
        entries = await self.journal.unsettled()
        if entries and self.on_orphans is not None:
            log.info("taking up %d messages of a process that stopped", len(entries))
            await self.on_orphans(entries)
        return len(entries)

    async def _ping_loop(self) -> None:
        while True:
            await asyncio.sleep(PING_SECONDS)
            await self.check()
            if not self._last["reachable"]:
                log.warning("storage: database unreachable: %s", self._last["error"])
                continue
            try:
                if not await self.life.held():
                    log.warning("storage: life lock lost; taking it again")
                    await self.life.take(self._dsn(), self.cfg.connect_timeout_seconds)
                await self.take_over()
            except Exception as exc:
                log.warning(
                    "storage: taking over stopped processes' messages failed: %s",
                    pg.unavailable(self._dsn(), exc).problems[0],
                )

    async def check(self) -> dict[str, Any]:
        """Ping the database now; the result is what `status()` reports from then on."""
        try:
            latency = await pg.ping(self.pool)
        except Exception as exc:
            self._last = {
                "reachable": False,
                "checked_at": time.time(),
                "error": pg.unavailable(self._dsn(), exc).problems[0],
            }
        else:
            self._last = {
                "reachable": True,
                "checked_at": time.time(),
                "latency_ms": round(latency * 1000, 2),
            }
        return self._last

    def _dsn(self) -> str:
        return self.cfg.dsn.get_secret_value() if self.cfg.dsn else ""


async def try_storage(settings: Settings) -> str:
    """One line for `antler check`: the backend and, for a server, that it accepts the login
    (StorageUnavailable otherwise). Creates and migrates nothing."""
    storage = settings.storage
    if storage.backend is not StorageBackend.postgres:
        return f"sqlite (files under {storage.data_dir})"
    cfg = storage.postgres
    assert cfg.dsn is not None
    dsn = cfg.dsn.get_secret_value()
    pool = pg.make_pool(cfg.model_copy(update={"pool_min": 1}))
    await pg.open_pool(pool, dsn, cfg.connect_timeout_seconds)
    try:
        latency = await pg.ping(pool)
    finally:
        await pool.close()
    return f"postgres at {pg.where(dsn)}: reachable ({latency * 1000:.1f} ms)"


def build_stores(settings: Settings) -> Stores:
    """The stores `settings.storage.backend` names (not yet open: call `await stores.open()`)."""
    storage = settings.storage
    if storage.backend is StorageBackend.postgres:
        return PostgresStores(settings)
    room.install()  # a full disk under the files is waited out (bot/stores/room.py)
    db = open_db(storage.data_dir)
    return Stores(
        StorageBackend.sqlite.value,
        db,
        SqliteJournal(db, settings.channels.dedupe_window_hours),
        SqliteConversationStore(db),
        SqliteCheckpoints(storage.data_dir / "checkpoints.db"),
        SqliteGatewayRecords(db),
        SqliteScheduleStore(db),
        AccessStore(SqliteSql(db), "access_"),
        choices=SqliteChoiceStore(db),
        usage=SqliteUsageStore(db),
    )
