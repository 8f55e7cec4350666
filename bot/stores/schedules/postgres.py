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
from bot.stores.schedules import RUNS_TABLE, SCHEDULES_TABLE, ZONES_TABLE, ScheduleStore
from bot.stores.schema import POSTGRES, columns

MIGRATIONS = (
    f"""
    CREATE TABLE antler_schedules ({columns(SCHEDULES_TABLE, POSTGRES)}
    );
    CREATE INDEX antler_schedules_due ON antler_schedules(state, next_run);
    CREATE INDEX antler_schedules_chat ON antler_schedules(chat_key);
    CREATE INDEX antler_schedules_creator ON antler_schedules(creator_key);
    CREATE INDEX antler_schedules_conv ON antler_schedules(conv_key);
    CREATE TABLE antler_schedule_runs ({columns(RUNS_TABLE, POSTGRES)}
    );
    CREATE INDEX antler_schedule_runs_state ON antler_schedule_runs(state);
    CREATE TABLE antler_chat_timezones ({columns(ZONES_TABLE, POSTGRES)}
    )
    """,
)


class PostgresScheduleStore(ScheduleStore):
    """`ScheduleStore` in tables `antler_schedules`, `antler_schedule_runs` and
    `antler_chat_timezones`."""

    prefix = "antler_"

    def __init__(self, pool: AsyncConnectionPool) -> None:
        super().__init__(PostgresSql(pool, "schedules", retrying))
