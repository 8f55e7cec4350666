"""`channels.choices.ChoiceStore` on PostgreSQL (table `antler_choices`), shared by every process
on the database."""

from __future__ import annotations

from psycopg_pool import AsyncConnectionPool

from agent.sql import PostgresSql
from bot.stores.choices import SqlChoiceStore
from bot.stores.pg import retrying

MIGRATIONS = (
    """
    CREATE TABLE antler_choices (
        key TEXT PRIMARY KEY,
        channel TEXT NOT NULL,
        payload TEXT NOT NULL,
        chosen INTEGER,
        created_at DOUBLE PRECISION NOT NULL
    );
    CREATE INDEX antler_choices_created ON antler_choices(created_at)
    """,
)


class PostgresChoiceStore(SqlChoiceStore):
    """`channels.choices.ChoiceStore` in table `antler_choices`."""

    table = "antler_choices"

    def __init__(self, pool: AsyncConnectionPool) -> None:
        super().__init__(PostgresSql(pool, "choices", retrying))
