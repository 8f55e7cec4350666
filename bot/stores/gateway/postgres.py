"""The Gateway's threads and runs on PostgreSQL, shared by every process on the database.

Each run row carries its process's `owner` number (see bot/stores/pg_life.py): an unfinished run
whose owner is gone is an orphan, settled `error` by whichever process looks next; a run that
another live process is running is left alone. Creating a thread is `ON CONFLICT DO NOTHING`,
so two processes creating the same thread end with one record.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from psycopg_pool import AsyncConnectionPool

from agent.sql import PostgresSql, Sql
from bot.stores.gateway import RUNS_TABLE, THREADS_TABLE, GatewayRecords
from bot.stores.pg import retrying
from bot.stores.pg_life import LIFE_LOCKS, LIVE_OWNERS
from bot.stores.schema import POSTGRES, columns

MIGRATIONS = (
    f"""
    CREATE TABLE antler_api_threads ({columns(THREADS_TABLE, POSTGRES)}
    );
    CREATE TABLE antler_api_runs ({columns(RUNS_TABLE, POSTGRES)},
        owner BIGINT NOT NULL DEFAULT 0
    );
    CREATE INDEX antler_api_runs_thread ON antler_api_runs(thread_id, seq);
    CREATE INDEX antler_api_runs_unfinished ON antler_api_runs(status)
        WHERE status IN ('pending', 'running')
    """,
)


class PostgresGatewayRecords(GatewayRecords):
    """`GatewayRecords` in tables `antler_api_threads`, `antler_api_runs`; each run row
    carries its process's `owner`."""

    prefix = "antler_"

    def __init__(self, pool: AsyncConnectionPool, owner: int) -> None:
        super().__init__(PostgresSql(pool, "gateway records", retrying))
        self.owner = owner

    def _run_extra(self) -> dict[str, Any]:
        return {"owner": self.owner}

    def _orphans(self) -> tuple[str, tuple[Any, ...]]:
        return f" AND owner::text NOT IN ({LIVE_OWNERS})", (LIFE_LOCKS,)

    async def _together(self, work: Callable[[Sql], Awaitable[None]]) -> None:
        """Statement by statement: a run's insert is on its own (`ON CONFLICT` makes its retry
        harmless) and the trim after it is idempotent; a transaction would add two round trips
        to every run."""
        await work(self.sql)
