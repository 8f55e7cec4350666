"""The usage store on PostgreSQL (tables `antler_usage`, `antler_usage_days`,
`antler_usage_warned`), shared by
every worker on the database: budgets sum every worker's rows."""

from __future__ import annotations

from psycopg_pool import AsyncConnectionPool

from agent.sql import PostgresSql
from bot.stores.pg import retrying
from bot.stores.schema import POSTGRES, columns
from bot.stores.usage import DAYS_TABLE, INDEXES, USAGE_TABLE, WARNED_TABLE, UsageStore

MIGRATIONS = (
    f"""
    CREATE TABLE antler_usage ({columns(USAGE_TABLE, POSTGRES)}
    );
    CREATE TABLE antler_usage_days ({columns(DAYS_TABLE, POSTGRES)}
    );
    CREATE TABLE antler_usage_warned ({columns(WARNED_TABLE, POSTGRES)}
    );
    {INDEXES.format(t="antler_usage")}
    """,
)


class PostgresUsageStore(UsageStore):
    table = "antler_usage"
    days_table = "antler_usage_days"
    warned_table = "antler_usage_warned"

    def __init__(self, pool: AsyncConnectionPool) -> None:
        super().__init__(PostgresSql(pool, "usage", retrying))
