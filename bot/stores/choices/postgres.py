"""`channels.choices.ChoiceStore` on PostgreSQL (table `antler_choices`), shared by every process
on the database."""

from __future__ import annotations

import time
from typing import Any

from psycopg_pool import AsyncConnectionPool

from bot.stores.choices import choice_from_row, payload_text
from bot.stores.pg import Statements
from channels.choices import KEEP_SECONDS, Choice

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


class PostgresChoiceStore:
    """`channels.choices.ChoiceStore` in table `antler_choices`."""

    def __init__(self, pool: AsyncConnectionPool) -> None:
        self.sql = Statements(pool, "choices")

    async def put(self, key: str, channel: str, payload: dict[str, Any]) -> None:
        now = time.time()
        await self.sql.execute(
            "DELETE FROM antler_choices WHERE created_at < %s", (now - KEEP_SECONDS,)
        )
        await self.sql.execute(
            "INSERT INTO antler_choices(key, channel, payload, chosen, created_at)"
            " VALUES (%s, %s, %s, NULL, %s) ON CONFLICT (key) DO NOTHING",
            (key, channel, payload_text(payload), now),
        )

    async def get(self, key: str) -> Choice | None:
        row = await self.sql.one(
            "SELECT key, channel, payload, chosen FROM antler_choices WHERE key = %s", (key,)
        )
        return choice_from_row(row) if row else None

    async def choose(self, key: str, index: int) -> Choice | None:
        await self.sql.execute(
            "UPDATE antler_choices SET chosen = %s WHERE key = %s AND chosen IS NULL",
            (index, key),
        )
        return await self.get(key)
