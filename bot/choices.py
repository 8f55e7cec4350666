"""Choices waiting for a press (`channels.choices.ChoiceStore`) in the service's SQLite file.

A row per choice: the channel's JSON payload and, once pressed, the chosen button's index. The
first press wins in one UPDATE (`chosen IS NULL`); rows older than `KEEP_SECONDS` are dropped
when a new choice is recorded. The PostgreSQL store is in bot/stores/pg_choices.py.
"""

from __future__ import annotations

import json
import sqlite3
import time
from typing import Any

from channels.choices import KEEP_SECONDS, Choice


def choice_from_row(row: tuple[Any, ...]) -> Choice:
    key, channel, payload, chosen = row
    data = json.loads(payload) if isinstance(payload, str) else payload
    return Choice(key, channel, data if isinstance(data, dict) else {}, chosen)


class SqliteChoiceStore:
    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    async def put(self, key: str, channel: str, payload: dict[str, Any]) -> None:
        now = time.time()
        self.db.execute("DELETE FROM choices WHERE created_at < ?", (now - KEEP_SECONDS,))
        self.db.execute(
            "INSERT INTO choices(key, channel, payload, chosen, created_at)"
            " VALUES (?, ?, ?, NULL, ?) ON CONFLICT(key) DO NOTHING",
            (key, channel, json.dumps(payload, ensure_ascii=False), now),
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
