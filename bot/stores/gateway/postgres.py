"""The Gateway's threads and runs on PostgreSQL, shared by every process on the database.

Each run row carries its process's `owner` number (see bot/stores/pg_life.py): an unfinished run
whose owner is gone is an orphan, settled `error` by whichever process looks next; a run that
another live process is running is left alone. Creating a thread is `ON CONFLICT DO NOTHING`,
so two processes creating the same thread end with one record.
"""

from __future__ import annotations

import time
from typing import Any

from psycopg_pool import AsyncConnectionPool

from bot.stores.gateway.records import (
    KEEP_RUNS,
    ORPHANED,
    RUN_COLUMNS,
    THREAD_COLUMNS,
    RunRow,
    ThreadRecord,
    dump,
    run_args,
    run_changes,
    run_from_row,
    thread_from_row,
)
from bot.stores.pg import Statements
from bot.stores.pg_life import LIFE_LOCKS, LIVE_OWNERS

MIGRATIONS = (
    """
    CREATE TABLE antler_api_threads (
        thread_id TEXT PRIMARY KEY,
        metadata TEXT NOT NULL DEFAULT '{}',
        created_at DOUBLE PRECISION NOT NULL,
        updated_at DOUBLE PRECISION NOT NULL
    );
    CREATE TABLE antler_api_runs (
        seq BIGSERIAL PRIMARY KEY,
        run_id TEXT NOT NULL UNIQUE,
        thread_id TEXT NOT NULL,
        assistant_id TEXT NOT NULL,
        status TEXT NOT NULL,
        created_at DOUBLE PRECISION NOT NULL,
        updated_at DOUBLE PRECISION NOT NULL,
        modes TEXT NOT NULL DEFAULT '[]',
        metadata TEXT NOT NULL DEFAULT '{}',
        kwargs TEXT NOT NULL DEFAULT '{}',
        multitask_strategy TEXT NOT NULL DEFAULT 'reject',
        error TEXT NOT NULL DEFAULT '',
        run_values TEXT NOT NULL DEFAULT '{}',
        owner BIGINT NOT NULL DEFAULT 0
    );
    CREATE INDEX antler_api_runs_thread ON antler_api_runs(thread_id, seq);
    CREATE INDEX antler_api_runs_unfinished ON antler_api_runs(status)
        WHERE status IN ('pending', 'running')
    """,
)

_MARKS = ", ".join(["%s"] * (len(RUN_COLUMNS.split(",")) + 1))


class PostgresGatewayRecords:
    """`GatewayRecords` (records.py) in tables `antler_api_threads`, `antler_api_runs`."""

    def __init__(self, pool: AsyncConnectionPool, owner: int) -> None:
        self.pool = pool
        self.sql = Statements(pool, "gateway records")
        self.owner = owner

    async def thread(self, thread_id: str) -> ThreadRecord | None:
        row = await self.sql.one(
            f"SELECT {THREAD_COLUMNS} FROM antler_api_threads WHERE thread_id = %s", (thread_id,)
        )
        return thread_from_row(row) if row else None

    async def threads(self) -> list[ThreadRecord]:
        rows = await self.sql.all(f"SELECT {THREAD_COLUMNS} FROM antler_api_threads")
        return [thread_from_row(row) for row in rows]

    async def create_thread(self, thread_id: str, metadata: dict[str, Any]) -> None:
        now = time.time()
        await self.sql.execute(
            "INSERT INTO antler_api_threads(thread_id, metadata, created_at, updated_at)"
            " VALUES (%s, %s, %s, %s) ON CONFLICT (thread_id) DO NOTHING",
            (thread_id, dump(metadata), now, now),
        )

    async def put_thread(self, thread_id: str, metadata: dict[str, Any], created_at: float) -> None:
        await self.sql.execute(
            "INSERT INTO antler_api_threads(thread_id, metadata, created_at, updated_at)"
            " VALUES (%s, %s, %s, %s) ON CONFLICT (thread_id) DO UPDATE SET"
            " metadata = excluded.metadata, updated_at = excluded.updated_at",
            (thread_id, dump(metadata), created_at, time.time()),
        )

    async def touch_thread(self, thread_id: str) -> None:
        await self.sql.execute(
            "UPDATE antler_api_threads SET updated_at = %s WHERE thread_id = %s",
            (time.time(), thread_id),
        )

    async def delete_thread(self, thread_id: str) -> None:
        await self.sql.execute(  # one statement: both go, or neither
            "WITH runs AS (DELETE FROM antler_api_runs WHERE thread_id = %s)"
            " DELETE FROM antler_api_threads WHERE thread_id = %s",
            (thread_id, thread_id),
        )

    async def add_run(self, run: RunRow) -> None:
        await self.sql.execute(
            f"INSERT INTO antler_api_runs({RUN_COLUMNS}, owner) VALUES ({_MARKS})"
            " ON CONFLICT (run_id) DO NOTHING",
            (*run_args(run), self.owner),
        )
        await self.sql.execute(
            "DELETE FROM antler_api_runs WHERE thread_id = %s AND seq <= (SELECT seq FROM"
            " antler_api_runs WHERE thread_id = %s ORDER BY seq DESC LIMIT 1 OFFSET %s)",
            (run.thread_id, run.thread_id, KEEP_RUNS),
        )

    async def set_run(
        self,
        run_id: str,
        status: str,
        *,
        error: dict[str, str] | None = None,
        values: dict[str, Any] | None = None,
        at: float | None = None,
    ) -> None:
        sets, args = run_changes(status, error, values, at)
        await self.sql.execute(
            f"UPDATE antler_api_runs SET {sets} WHERE run_id = %s", (*args, run_id)
        )

    async def run(self, thread_id: str, run_id: str) -> RunRow | None:
        row = await self.sql.one(
            f"SELECT {RUN_COLUMNS} FROM antler_api_runs WHERE run_id = %s AND thread_id = %s",
            (run_id, thread_id),
        )
        return run_from_row(row) if row else None

    async def runs(self, thread_id: str, limit: int = KEEP_RUNS) -> list[RunRow]:
        rows = await self.sql.all(
            f"SELECT {RUN_COLUMNS} FROM antler_api_runs"
            " WHERE thread_id = %s ORDER BY seq DESC LIMIT %s",
            (thread_id, limit),
        )
        return [run_from_row(row) for row in rows]

    async def settle_orphans(self) -> int:
        return await self.sql.execute(
            "UPDATE antler_api_runs SET status = 'error', error = %s, updated_at = %s"
            " WHERE status IN ('pending', 'running')"
            f" AND owner::text NOT IN ({LIVE_OWNERS})",
            (dump(ORPHANED), time.time(), LIFE_LOCKS),
        )
