"""Conversations on PostgreSQL, shared by every process on the database.

No cache: another process may change a conversation (`/new`, `/models`) at any time, and a
primary-key read costs a fraction of a millisecond. Creation is one `INSERT … ON CONFLICT DO
NOTHING`, then whichever row won is read back, so two processes creating the same chat's
conversation at once end with one thread.
"""

from __future__ import annotations

from psycopg_pool import AsyncConnectionPool

from agent.sql import PostgresSql
from bot.stores.conversations import ADD_AGENT, TABLE, ConversationStore
from bot.stores.pg import retrying
from bot.stores.schema import POSTGRES, columns

MIGRATIONS = (
    f"""
    CREATE TABLE antler_conversations ({columns(TABLE, POSTGRES)}
    );
    CREATE INDEX antler_conversations_thread ON antler_conversations(thread_id);
    CREATE INDEX antler_conversations_updated ON antler_conversations(updated_at)
    """,
    ADD_AGENT.format(table="antler_conversations"),
)


class PostgresConversationStore(ConversationStore):
    """`ConversationStore` in table `antler_conversations` (no cache)."""

    table = "antler_conversations"

    def __init__(self, pool: AsyncConnectionPool) -> None:
        super().__init__(PostgresSql(pool, "conversations", retrying))
