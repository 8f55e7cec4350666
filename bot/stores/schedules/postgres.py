"""Schedules, their runs and the chats' time zones on PostgreSQL, shared by every process.

Claiming a due run is one transaction: `UPDATE … WHERE id = %s AND next_run = <the due time>
AND state = 'active'` moves the schedule on, and only if it did is the run inserted. Of two
processes claiming the same due run, the second's UPDATE waits for the first's row lock, then
finds the schedule moved on and touches nothing: the run fires once. A claim whose commit
answer was lost with the connection and is retried finds nothing to claim, and the run it
recorded is published all the same (the scheduler publishes every `claimed` run).
"""

from __future__ import annotations

from psycopg_pool import AsyncConnectionPool

from agent.sql import PostgresSql
from bot.stores.pg import retrying
from bot.stores.schedules import SqlScheduleStore

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


class PostgresScheduleStore(SqlScheduleStore):
    """`ScheduleStore` in tables `antler_schedules`, `antler_schedule_runs` and
    `antler_chat_timezones`."""

    prefix = "antler_"

    def __init__(self, pool: AsyncConnectionPool) -> None:
        super().__init__(PostgresSql(pool, "schedules", retrying))
