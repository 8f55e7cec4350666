"""Conversations on PostgreSQL, shared by every process on the database.

No cache: another process may change a conversation (`/new`, `/models`) at any time, and a
primary-key read costs a fraction of a millisecond. Creation is one `INSERT … ON CONFLICT DO
NOTHING`, then whichever row won is read back, so two processes creating the same chat's
conversation at once end with one thread.
"""

from __future__ import annotations

import time

from psycopg_pool import AsyncConnectionPool

from bot.conversations import (
    Conversation,
    chat_default_model,
    check_settable,
    conversation_from_row,
    new_thread_id,
)
from bot.stores.pg import Statements
from channels.base import ChatRef

MIGRATIONS = (
    """
    CREATE TABLE antler_conversations (
        key TEXT PRIMARY KEY,
        thread_id TEXT NOT NULL,
        channel TEXT NOT NULL,
        chat_id TEXT NOT NULL,
        model TEXT,
        thinking BOOLEAN NOT NULL DEFAULT false,
        plan_mode BOOLEAN NOT NULL DEFAULT false,
        title TEXT NOT NULL DEFAULT '',
        created_at DOUBLE PRECISION NOT NULL,
        updated_at DOUBLE PRECISION NOT NULL
    );
    CREATE INDEX antler_conversations_thread ON antler_conversations(thread_id);
    CREATE INDEX antler_conversations_updated ON antler_conversations(updated_at)
    """,
)

_COLUMNS = "key, thread_id, channel, chat_id, model, thinking, plan_mode, title, created_at"


class PostgresConversationStore:
    """`bot.conversations.ConversationStore` in table `antler_conversations`."""

    def __init__(self, pool: AsyncConnectionPool) -> None:
        self.sql = Statements(pool, "conversations")

    async def get(self, key: str) -> Conversation | None:
        row = await self.sql.one(
            f"SELECT {_COLUMNS} FROM antler_conversations WHERE key = %s", (key,)
        )
        return conversation_from_row(row) if row else None

    async def get_or_create(self, chat: ChatRef) -> Conversation:
        found = await self.get(chat.key)
        if found is not None:
            return found
        now = time.time()
        model = await chat_default_model(self, chat)
        row = await self.sql.one(
            "INSERT INTO antler_conversations(key, thread_id, channel, chat_id, model, created_at,"
            " updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (key) DO NOTHING"
            f" RETURNING {_COLUMNS}",
            (chat.key, new_thread_id(), chat.channel, chat.chat_id, model, now, now),
        )
        if row is not None:
            return conversation_from_row(row)
        found = await self.get(chat.key)  # another process created it a moment ago
        assert found is not None
        return found

    async def by_thread(self, thread_id: str) -> Conversation | None:
        row = await self.sql.one(
            f"SELECT {_COLUMNS} FROM antler_conversations WHERE thread_id = %s LIMIT 1",
            (thread_id,),
        )
        return conversation_from_row(row) if row else None

    async def new_thread(self, chat: ChatRef) -> Conversation:
        current = await self.get_or_create(chat)
        return await self.update(current.key, thread_id=new_thread_id())

    async def update(self, key: str, **changes: object) -> Conversation:
        check_settable(changes)
        sets = "".join(f"{name} = %s, " for name in changes)
        row = await self.sql.one(
            f"UPDATE antler_conversations SET {sets}updated_at = %s WHERE key = %s"
            f" RETURNING {_COLUMNS}",
            (*changes.values(), time.time(), key),
        )
        if row is None:
            raise KeyError(key)
        return conversation_from_row(row)

    async def count(self) -> int:
        row = await self.sql.one("SELECT COUNT(*) FROM antler_conversations")
        return int(row[0]) if row else 0

    async def all(self, limit: int = 1000, offset: int = 0) -> list[Conversation]:
        rows = await self.sql.all(
            f"SELECT {_COLUMNS} FROM antler_conversations ORDER BY updated_at DESC"
            " LIMIT %s OFFSET %s",
            (limit, offset),
        )
        return [conversation_from_row(row) for row in rows]
