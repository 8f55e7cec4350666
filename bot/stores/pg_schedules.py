"""Schedules, their runs and the chats' time zones on PostgreSQL, shared by every process.

Claiming a due run is one transaction: `UPDATE … WHERE id = %s AND next_run = <the due time>
AND state = 'active'` moves the schedule on, and only if it did is the run inserted. Of two
processes claiming the same due run, the second's UPDATE waits for the first's row lock, then
finds the schedule moved on and touches nothing: the run fires once. A claim whose commit
answer was lost with the connection and is retried finds nothing to claim, and the run it
recorded is published all the same (the scheduler publishes every `claimed` run).
"""

from __future__ import annotations

import time
from typing import Any

from psycopg_pool import AsyncConnectionPool

from bot.schedules.store import (
    COLUMNS,
    UPDATABLE,
    NewSchedule,
    Run,
    RunState,
    Schedule,
    ScheduleState,
    insert_values,
    run_from_row,
    schedule_from_row,
)
from bot.stores.pg import Statements, retrying

MIGRATIONS = (
    """
    CREATE TABLE antler_schedules (
        id BIGSERIAL PRIMARY KEY,
        conv_key TEXT NOT NULL,
        chat_key TEXT NOT NULL,
        chat TEXT NOT NULL,
        creator_key TEXT NOT NULL,
        creator TEXT NOT NULL,
        prompt TEXT NOT NULL,
        kind TEXT NOT NULL,
        expr TEXT NOT NULL DEFAULT '',
        tz TEXT NOT NULL,
        label TEXT NOT NULL,
        next_run DOUBLE PRECISION,
        last_run DOUBLE PRECISION,
        state TEXT NOT NULL,
        missed TEXT NOT NULL,
        fresh_thread BOOLEAN NOT NULL DEFAULT false,
        reason TEXT NOT NULL DEFAULT '',
        created_at DOUBLE PRECISION NOT NULL,
        updated_at DOUBLE PRECISION NOT NULL
    );
    CREATE INDEX antler_schedules_due ON antler_schedules(state, next_run);
    CREATE INDEX antler_schedules_chat ON antler_schedules(chat_key);
    CREATE INDEX antler_schedules_creator ON antler_schedules(creator_key);
    CREATE INDEX antler_schedules_conv ON antler_schedules(conv_key);
    CREATE TABLE antler_schedule_runs (
        schedule_id BIGINT NOT NULL,
        due_at DOUBLE PRECISION NOT NULL,
        state TEXT NOT NULL,
        late BOOLEAN NOT NULL DEFAULT false,
        reason TEXT NOT NULL DEFAULT '',
        created_at DOUBLE PRECISION NOT NULL,
        updated_at DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (schedule_id, due_at)
    );
    CREATE INDEX antler_schedule_runs_state ON antler_schedule_runs(state);
    CREATE TABLE antler_chat_timezones (
        conv_key TEXT PRIMARY KEY,
        tz TEXT NOT NULL,
        updated_at DOUBLE PRECISION NOT NULL
    )
    """,
)

_RUN_COLUMNS = "schedule_id, due_at, state, late, reason"


class PostgresScheduleStore:
    """`bot.schedules.store.ScheduleStore` in tables `antler_schedules`,
    `antler_schedule_runs` and `antler_chat_timezones`."""

    def __init__(self, pool: AsyncConnectionPool) -> None:
        self.pool = pool
        self.sql = Statements(pool, "schedules")

    async def add(self, new: NewSchedule) -> Schedule:
        now = time.time()
        row = await self.sql.one(
            "INSERT INTO antler_schedules(conv_key, chat_key, chat, creator_key, creator, prompt,"
            " kind, expr, tz, label, next_run, state, missed, fresh_thread, created_at,"
            " updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, 'active', %s, %s,"
            f" %s, %s) RETURNING {COLUMNS}",
            insert_values(new, now),
        )
        assert row is not None
        return schedule_from_row(row)

    async def get(self, schedule_id: int) -> Schedule | None:
        row = await self.sql.one(
            f"SELECT {COLUMNS} FROM antler_schedules WHERE id = %s", (schedule_id,)
        )
        return schedule_from_row(row) if row else None

    async def for_chat(self, chat: str) -> list[Schedule]:
        return await self._select(
            "chat_key = %s AND state IN ('active', 'paused') ORDER BY id", (chat,)
        )

    async def all(self, limit: int = 200) -> list[Schedule]:
        return await self._select("true ORDER BY id DESC LIMIT %s", (limit,))

    async def count_live(self, *, chat: str = "", creator_key: str = "") -> int:
        column, value = ("chat_key", chat) if chat else ("creator_key", creator_key)
        row = await self.sql.one(
            f"SELECT COUNT(*) FROM antler_schedules WHERE {column} = %s"
            " AND state IN ('active', 'paused')",
            (value,),
        )
        return int(row[0]) if row else 0

    async def set_state(
        self,
        schedule_id: int,
        state: ScheduleState,
        reason: str = "",
        next_run: float | None = None,
    ) -> Schedule | None:
        move = "" if next_run is None else ", next_run = %s"
        args = (state, reason) + (() if next_run is None else (next_run,))
        row = await self.sql.one(
            f"UPDATE antler_schedules SET state = %s, reason = %s{move}, updated_at = %s"
            f" WHERE id = %s RETURNING {COLUMNS}",
            (*args, time.time(), schedule_id),
        )
        return schedule_from_row(row) if row else None

    async def due(self, now: float) -> list[Schedule]:
        return await self._select("state = 'active' AND next_run <= %s ORDER BY next_run", (now,))

    async def next_due(self) -> float | None:
        row = await self.sql.one(
            "SELECT MIN(next_run) FROM antler_schedules WHERE state = 'active'"
        )
        return float(row[0]) if row and row[0] is not None else None

    async def claim(
        self,
        schedule: Schedule,
        next_run: float | None,
        *,
        run_state: RunState,
        late: bool,
        now: float,
    ) -> bool:
        """Record the run due at `schedule.next_run` and move the schedule on, atomically."""
        state = "active" if next_run is not None else "done"

        async def op() -> bool:
            async with self.pool.connection() as conn, conn.transaction():
                cur = await conn.execute(
                    "UPDATE antler_schedules SET next_run = %s, last_run = %s, state = %s,"
                    " updated_at = %s WHERE id = %s AND next_run = %s AND state = 'active'",
                    (next_run, schedule.next_run, state, now, schedule.id, schedule.next_run),
                )
                if cur.rowcount != 1:
                    return False  # another process claimed it (or it changed meanwhile)
                await conn.execute(
                    "INSERT INTO antler_schedule_runs(schedule_id, due_at, state, late,"
                    " created_at, updated_at) VALUES (%s, %s, %s, %s, %s, %s)"
                    " ON CONFLICT (schedule_id, due_at) DO NOTHING",
                    (schedule.id, schedule.next_run, run_state, late, now, now),
                )
                return True

        return await retrying("schedules", op)

    async def runs(self, state: RunState) -> list[Run]:
        rows = await self.sql.all(
            f"SELECT {_RUN_COLUMNS} FROM antler_schedule_runs WHERE state = %s ORDER BY due_at",
            (state,),
        )
        return [run_from_row(r) for r in rows]

    async def runs_of(self, schedule_id: int, limit: int = 20) -> list[Run]:
        rows = await self.sql.all(
            f"SELECT {_RUN_COLUMNS} FROM antler_schedule_runs"
            " WHERE schedule_id = %s ORDER BY due_at DESC LIMIT %s",
            (schedule_id, limit),
        )
        return [run_from_row(r) for r in rows]

    async def set_run(self, run: Run, state: RunState, reason: str = "") -> None:
        await self.sql.execute(
            "UPDATE antler_schedule_runs SET state = %s, reason = %s, updated_at = %s"
            " WHERE schedule_id = %s AND due_at = %s",
            (state, reason, time.time(), run.schedule_id, run.due_at),
        )

    async def timezone(self, conv_key: str) -> str | None:
        row = await self.sql.one(
            "SELECT tz FROM antler_chat_timezones WHERE conv_key = %s", (conv_key,)
        )
        return str(row[0]) if row else None

    async def set_timezone(self, conv_key: str, tz: str) -> None:
        await self.sql.execute(
            "INSERT INTO antler_chat_timezones(conv_key, tz, updated_at) VALUES (%s, %s, %s)"
            " ON CONFLICT (conv_key) DO UPDATE SET tz = excluded.tz,"
            " updated_at = excluded.updated_at",
            (conv_key, tz, time.time()),
        )

    async def for_conversation(self, conv_key: str) -> list[Schedule]:
        return await self._select("conv_key = %s ORDER BY id", (conv_key,))

    async def update(self, schedule_id: int, **fields: Any) -> Schedule | None:
        """Change stored fields (prompt, kind, expr, tz, label, next_run, missed, fresh_thread)."""
        unknown = set(fields) - UPDATABLE
        if unknown:
            raise ValueError(f"not updatable: {sorted(unknown)}")
        if "fresh_thread" in fields:
            fields["fresh_thread"] = bool(fields["fresh_thread"])
        sets = "".join(f"{name} = %s, " for name in fields)
        row = await self.sql.one(
            f"UPDATE antler_schedules SET {sets}updated_at = %s WHERE id = %s RETURNING {COLUMNS}",
            (*fields.values(), time.time(), schedule_id),
        )
        return schedule_from_row(row) if row else None

    async def add_run(self, schedule_id: int, due_at: float, now: float) -> bool:
        """Record an extra run (trigger now) without moving the schedule; False if it exists."""
        inserted = await self.sql.execute(
            "INSERT INTO antler_schedule_runs(schedule_id, due_at, state, created_at,"
            " updated_at) VALUES (%s, %s, 'claimed', %s, %s)"
            " ON CONFLICT (schedule_id, due_at) DO NOTHING",
            (schedule_id, due_at, now, now),
        )
        return inserted == 1

    async def _select(self, where: str, args: tuple[Any, ...]) -> list[Schedule]:
        rows = await self.sql.all(f"SELECT {COLUMNS} FROM antler_schedules WHERE {where}", args)
        return [schedule_from_row(r) for r in rows]
