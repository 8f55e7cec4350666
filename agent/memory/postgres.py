"""What the agent remembers about each person, on PostgreSQL (several processes share it).

The same tables and rules (agent/memory/store.py) as on SQLite, prefixed `antler_memory_`. The
caller owns the pool (a psycopg `AsyncConnectionPool`) and applies `MIGRATIONS` before use.
`pending()` claims the exchanges it returns for a while (`CLAIM_SECONDS`), so two processes
flushing at once do not extract the same exchange twice; an exchange whose pass failed is
released for the next one.
"""

from __future__ import annotations

import time
from typing import Any

from agent.memory.store import MemoryStore
from agent.sql import PostgresSql, Retry

CLAIM_SECONDS = 300.0

MIGRATIONS = (
    """
    CREATE TABLE antler_memory_facts (
        id BIGSERIAL PRIMARY KEY,
        person TEXT NOT NULL,
        content TEXT NOT NULL,
        category TEXT NOT NULL,
        confidence DOUBLE PRECISION NOT NULL,
        source TEXT NOT NULL DEFAULT '',
        created_at DOUBLE PRECISION NOT NULL,
        updated_at DOUBLE PRECISION NOT NULL
    );
    CREATE INDEX antler_memory_facts_person ON antler_memory_facts(person, id);
    CREATE TABLE antler_memory_contexts (
        person TEXT NOT NULL,
        kind TEXT NOT NULL,
        summary TEXT NOT NULL,
        updated_at DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (person, kind)
    );
    CREATE TABLE antler_memory_pending (
        id BIGSERIAL PRIMARY KEY,
        person TEXT NOT NULL,
        thread_id TEXT NOT NULL,
        user_text TEXT NOT NULL,
        answer TEXT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        created_at DOUBLE PRECISION NOT NULL,
        claimed_until DOUBLE PRECISION NOT NULL DEFAULT 0
    );
    CREATE TABLE antler_memory_links (
        user_id TEXT PRIMARY KEY,
        person TEXT NOT NULL,
        linked_at DOUBLE PRECISION NOT NULL
    )
    """,
)


class PostgresMemoryStore(MemoryStore):
    """`MemoryStore` on a pool the caller owns."""

    facts_table = "antler_memory_facts"
    contexts_table = "antler_memory_contexts"
    pending_table = "antler_memory_pending"
    links_table = "antler_memory_links"
    _release = ", claimed_until = 0"

    def __init__(self, pool: Any, retry: Retry | None = None) -> None:
        super().__init__(PostgresSql(pool, "memory", retry))
        self.pool = pool

    async def _pending_rows(self) -> list[tuple[Any, ...]]:
        now = time.time()
        rows = await self.sql.all(
            "UPDATE antler_memory_pending SET claimed_until = ? WHERE id IN ("
            " SELECT id FROM antler_memory_pending WHERE claimed_until < ?"
            " ORDER BY id FOR UPDATE SKIP LOCKED)"
            " RETURNING id, person, thread_id, user_text, answer",
            (now + CLAIM_SECONDS, now),
        )
        return sorted(rows, key=lambda row: int(row[0]))
