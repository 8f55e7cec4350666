"""Threads the API knows: those created over the API (a table in the service database) and
those chats created (the conversations table), shown with their channel, chat and title."""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass, field
from typing import Any

from bot.conversations import Conversation, ConversationStore

SCHEMA = """
CREATE TABLE IF NOT EXISTS api_threads (
    thread_id TEXT PRIMARY KEY,
    metadata TEXT NOT NULL DEFAULT '{}',
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
"""


@dataclass(frozen=True)
class ThreadRow:
    thread_id: str
    created_at: float
    updated_at: float
    metadata: dict[str, Any] = field(default_factory=dict)
    conversation: str | None = None  # the chat's key when a chat owns the thread


class ThreadStore:
    def __init__(self, db: sqlite3.Connection, conversations: ConversationStore) -> None:
        self.db = db
        self.conversations = conversations
        db.executescript(SCHEMA)

    async def get(self, thread_id: str) -> ThreadRow | None:
        row = self.db.execute(
            "SELECT thread_id, metadata, created_at, updated_at FROM api_threads"
            " WHERE thread_id = ?", (thread_id,)).fetchone()
        conv = await self.conversations.by_thread(thread_id)
        if row is None and conv is None:
            return None
        return _merge(row, conv)

    async def create(self, thread_id: str, metadata: dict[str, Any]) -> ThreadRow:
        now = time.time()
        self.db.execute(
            "INSERT OR IGNORE INTO api_threads(thread_id, metadata, created_at, updated_at)"
            " VALUES (?, ?, ?, ?)", (thread_id, json.dumps(metadata), now, now))
        found = await self.get(thread_id)
        assert found is not None
        return found

    async def patch(self, thread_id: str, metadata: dict[str, Any]) -> ThreadRow:
        current = await self.get(thread_id)
        if current is None:
            raise KeyError(thread_id)
        own = self._own_metadata(thread_id)
        merged = {**own, **metadata}
        now = time.time()
        self.db.execute(
            "INSERT INTO api_threads(thread_id, metadata, created_at, updated_at)"
            " VALUES (?, ?, ?, ?) ON CONFLICT(thread_id) DO UPDATE SET"
            " metadata = excluded.metadata, updated_at = excluded.updated_at",
            (thread_id, json.dumps(merged), current.created_at, now))
        found = await self.get(thread_id)
        assert found is not None
        return found

    def touch(self, thread_id: str) -> None:
        self.db.execute("UPDATE api_threads SET updated_at = ? WHERE thread_id = ?",
                        (time.time(), thread_id))

    def delete(self, thread_id: str) -> None:
        self.db.execute("DELETE FROM api_threads WHERE thread_id = ?", (thread_id,))

    async def all(self) -> list[ThreadRow]:
        """Every thread, newest first (chats and API threads)."""
        rows = self.db.execute(
            "SELECT thread_id, metadata, created_at, updated_at FROM api_threads").fetchall()
        by_id = {r[0]: r for r in rows}
        out = []
        for conv in await self.conversations.all(limit=100_000):
            out.append(_merge(by_id.pop(conv.thread_id, None), conv))
        out.extend(_merge(row, None) for row in by_id.values())
        out.sort(key=lambda t: t.updated_at, reverse=True)
        return out

    def _own_metadata(self, thread_id: str) -> dict[str, Any]:
        row = self.db.execute("SELECT metadata FROM api_threads WHERE thread_id = ?",
                              (thread_id,)).fetchone()
        return _load(row[0]) if row else {}


def _merge(row: tuple[Any, ...] | None, conv: Conversation | None) -> ThreadRow:
    metadata = _load(row[1]) if row else {}
    created = float(row[2]) if row else (conv.created_at if conv else time.time())
    updated = float(row[3]) if row else created
    if conv is not None:
        metadata = {**metadata, "channel": conv.channel, "chat_id": conv.chat_id,
                    "title": conv.title, "conversation": conv.key}
        created = min(created, conv.created_at) if row else conv.created_at
    return ThreadRow(conv.thread_id if conv else str(row[0]) if row else "", created, updated,
                     metadata, conv.key if conv else None)


def _load(raw: str) -> dict[str, Any]:
    try:
        value = json.loads(raw)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
