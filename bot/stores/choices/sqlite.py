"""`channels.choices.ChoiceStore` in the service's SQLite file (table `choices`, bot/db.py)."""

from __future__ import annotations

import sqlite3
import time
from typing import Any

from bot.stores.choices import choice_from_row, payload_text
from channels.choices import KEEP_SECONDS, Choice


class SqliteChoiceStore:
    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    async def put(self, key: str, channel: str, payload: dict[str, Any]) -> None:
        now = time.time()
        self.db.execute("DELETE FROM choices WHERE created_at < ?", (now - KEEP_SECONDS,))
        self.db.execute(
            "INSERT INTO choices(key, channel, payload, chosen, created_at)"
            " VALUES (?, ?, ?, NULL, ?) ON CONFLICT(key) DO NOTHING",
            (key, channel, payload_text(payload), now),
        )

    async def get(self, key: str) -> Choice | None:
        row = self.db.execute(
            "SELECT key, channel, payload, chosen FROM choices WHERE key = ?", (key,)
        ).fetchone()
        return choice_from_row(row) if row else None

    async def choose(self, key: str, index: int) -> Choice | None:
        self.db.execute(
            "UPDATE choices SET chosen = ? WHERE key = ? AND chosen IS NULL", (index, key)
        )
        return await self.get(key)
