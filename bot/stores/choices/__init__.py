"""Choices waiting for a press (`channels.choices.ChoiceStore`): one row per choice, the channel's
JSON payload and, once pressed, the chosen button's index. The first press wins in one UPDATE
(`chosen IS NULL`); rows older than `KEEP_SECONDS` are dropped when a new choice is recorded.
Backends: `sqlite.py` (the service's SQLite file, table `choices`), `postgres.py` (table
`antler_choices`, shared by every process: the worker that sent a card and the one that receives
its press may differ).
"""

from __future__ import annotations

import json
import time
from typing import Any

from agent.sql import Sql
from channels.choices import KEEP_SECONDS, Choice


def choice_from_row(row: tuple[Any, ...]) -> Choice:
    key, channel, payload, chosen = row
    data = json.loads(payload) if isinstance(payload, str) else payload
    return Choice(key, channel, data if isinstance(data, dict) else {}, chosen)


def payload_text(payload: dict[str, Any]) -> str:
    return json.dumps(payload, ensure_ascii=False)


class SqlChoiceStore:
    """`channels.choices.ChoiceStore`'s rules over a dialect (`Sql`); backends name the table."""

    table = "choices"

    def __init__(self, sql: Sql) -> None:
        self.sql = sql

    async def put(self, key: str, channel: str, payload: dict[str, Any]) -> None:
        now = time.time()
        await self.sql.execute(
            f"DELETE FROM {self.table} WHERE created_at < ?", (now - KEEP_SECONDS,)
        )
        await self.sql.execute(
            f"INSERT INTO {self.table}(key, channel, payload, chosen, created_at)"
            " VALUES (?, ?, ?, NULL, ?) ON CONFLICT (key) DO NOTHING",
            (key, channel, payload_text(payload), now),
        )

    async def get(self, key: str) -> Choice | None:
        row = await self.sql.one(
            f"SELECT key, channel, payload, chosen FROM {self.table} WHERE key = ?", (key,)
        )
        return choice_from_row(row) if row else None

    async def choose(self, key: str, index: int) -> Choice | None:
        """The first press wins: one UPDATE on a row no press has settled yet."""
        await self.sql.execute(
            f"UPDATE {self.table} SET chosen = ? WHERE key = ? AND chosen IS NULL", (index, key)
        )
        return await self.get(key)

    async def pending(self, prefix: str, limit: int = 100) -> list[Choice]:
        rows = await self.sql.all(
            f"SELECT key, channel, payload, chosen FROM {self.table}"
            " WHERE chosen IS NULL AND key LIKE ? ORDER BY created_at LIMIT ?",
            (prefix + "%", limit),  # prefixes are the service's own constants
        )
        return [choice_from_row(row) for row in rows]
