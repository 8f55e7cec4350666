"""What the agent remembers about each person, on PostgreSQL (several processes share it).

The same tables and rules as `SqliteMemoryStore`, prefixed `antler_memory_`. The caller owns the
pool (a psycopg `AsyncConnectionPool`) and applies `MIGRATIONS` before use. `pending()` claims
the exchanges it returns for a while (`CLAIM_SECONDS`), so two processes flushing at once do not
extract the same exchange twice; an exchange whose pass failed is released for the next one.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

from psycopg.rows import tuple_row

from agent.memory.records import CONTEXT_KINDS, Fact, MemoryUpdate, NewFact, PendingExchange
from agent.memory.store import normal

CLAIM_SECONDS = 300.0
Retry = Callable[[str, Callable[[], Awaitable[Any]]], Awaitable[Any]]
Step = tuple[str, tuple[Any, ...]]

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


class PostgresMemoryStore:
    """`agent.memory.store.MemoryStore` on a pool the caller owns."""

    def __init__(self, pool: Any, retry: Retry | None = None) -> None:
        self.pool = pool
        self.retry = retry

    def close(self) -> None:
        return None  # the pool is the caller's

    async def person(self, user_id: str) -> str:
        row = await self._one(
            "SELECT person FROM antler_memory_links WHERE user_id = %s", (user_id,)
        )
        return str(row[0]) if row else user_id

    async def link(self, user_id: str, person: str) -> None:
        await self._exec(
            "INSERT INTO antler_memory_links(user_id, person, linked_at) VALUES (%s, %s, %s)"
            " ON CONFLICT (user_id) DO UPDATE SET person = EXCLUDED.person,"
            " linked_at = EXCLUDED.linked_at",
            (user_id, person, time.time()),
        )

    async def unlink(self, user_id: str) -> bool:
        return (
            await self._exec("DELETE FROM antler_memory_links WHERE user_id = %s", (user_id,))
        ) > 0

    async def accounts(self, person: str) -> list[str]:
        rows = await self._all(
            "SELECT user_id FROM antler_memory_links WHERE person = %s ORDER BY user_id",
            (person,),
        )
        return [str(r[0]) for r in rows]

    async def linked(self, query: str, limit: int) -> list[tuple[str, str]]:
        like = f"%{query}%"
        rows = await self._all(
            "SELECT user_id, person FROM antler_memory_links WHERE user_id LIKE %s"
            " OR person LIKE %s ORDER BY person, user_id LIMIT %s",
            (like, like, limit),
        )
        return [(str(a), str(p)) for a, p in rows]

    async def facts(self, person: str) -> list[Fact]:
        rows = await self._all(
            "SELECT id, content, category, confidence, source, created_at, updated_at"
            " FROM antler_memory_facts WHERE person = %s ORDER BY id",
            (person,),
        )
        return [
            Fact(int(i), str(c), str(k), float(p), str(s), float(t), float(u))
            for i, c, k, p, s, t, u in rows
        ]

    async def context_times(self, person: str) -> dict[str, tuple[str, float]]:
        rows = await self._all(
            "SELECT kind, summary, updated_at FROM antler_memory_contexts WHERE person = %s",
            (person,),
        )
        return {str(k): (str(s), float(t)) for k, s, t in rows if k in CONTEXT_KINDS and s}

    async def people(self) -> list[tuple[str, int, float]]:
        rows = await self._all(
            "SELECT person, SUM(n), MAX(t) FROM ("
            " SELECT person, 1 AS n, updated_at AS t FROM antler_memory_facts"
            " UNION ALL SELECT person, 0, updated_at FROM antler_memory_contexts) AS changes"
            " GROUP BY person ORDER BY MAX(t) DESC"
        )
        return [(str(p), int(n), float(t)) for p, n, t in rows]

    async def contexts(self, person: str) -> dict[str, str]:
        rows = await self._all(
            "SELECT kind, summary FROM antler_memory_contexts WHERE person = %s", (person,)
        )
        found = {str(kind): str(summary) for kind, summary in rows}
        return {kind: found[kind] for kind in CONTEXT_KINDS if found.get(kind)}

    async def counts(self) -> tuple[int, int, int]:
        row = await self._one(
            "SELECT (SELECT COUNT(*) FROM (SELECT person FROM antler_memory_facts UNION"
            " SELECT person FROM antler_memory_contexts) AS people),"
            " (SELECT COUNT(*) FROM antler_memory_facts),"
            " (SELECT COUNT(*) FROM antler_memory_pending)"
        )
        assert row is not None
        return int(row[0]), int(row[1]), int(row[2])

    async def apply(
        self,
        person: str,
        update: MemoryUpdate,
        *,
        source: str,
        max_facts: int,
        threshold: float,
        done: list[int] | None = None,
    ) -> None:
        """One transaction, as `SqliteMemoryStore.apply`."""
        now = time.time()
        known = {normal(f.content) for f in await self.facts(person)}
        steps: list[Step] = []
        for kind, summary in update.contexts.items():
            if kind in CONTEXT_KINDS and summary.strip():
                steps.append(
                    (
                        "INSERT INTO antler_memory_contexts(person, kind, summary, updated_at)"
                        " VALUES (%s, %s, %s, %s) ON CONFLICT (person, kind) DO UPDATE SET"
                        " summary = EXCLUDED.summary, updated_at = EXCLUDED.updated_at",
                        (person, kind, summary.strip(), now),
                    )
                )
        for fact_id in update.remove:
            steps.append(
                ("DELETE FROM antler_memory_facts WHERE person = %s AND id = %s", (person, fact_id))
            )
        for fact in update.facts:
            key = normal(fact.content)
            if fact.confidence < threshold or not key or key in known:
                continue
            known.add(key)
            steps.append(
                (
                    "INSERT INTO antler_memory_facts(person, content, category, confidence,"
                    " source, created_at, updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s)",
                    (
                        person,
                        fact.content.strip(),
                        fact.category,
                        fact.confidence,
                        source,
                        now,
                        now,
                    ),
                )
            )
        steps.append(
            (
                "DELETE FROM antler_memory_facts WHERE id IN (SELECT id FROM antler_memory_facts"
                " WHERE person = %s ORDER BY confidence DESC, id DESC OFFSET %s)",
                (person, max_facts),
            )
        )
        if done:
            steps.append(("DELETE FROM antler_memory_pending WHERE id = ANY(%s)", (list(done),)))
        await self._transaction(steps)

    async def add_fact(self, person: str, fact: NewFact, *, source: str) -> Fact | None:
        key = normal(fact.content)
        if not key or any(normal(f.content) == key for f in await self.facts(person)):
            return None
        now = time.time()
        row = await self._one(
            "INSERT INTO antler_memory_facts(person, content, category, confidence, source,"
            " created_at, updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s) RETURNING id",
            (person, fact.content.strip(), fact.category, fact.confidence, source, now, now),
        )
        assert row is not None
        return Fact(
            int(row[0]), fact.content.strip(), fact.category, fact.confidence, source, now, now
        )

    async def edit_fact(
        self,
        person: str,
        fact_id: int,
        content: str | None = None,
        category: str | None = None,
        confidence: float | None = None,
    ) -> bool:
        return (
            await self._exec(
                "UPDATE antler_memory_facts SET content = COALESCE(%s, content),"
                " category = COALESCE(%s, category), confidence = COALESCE(%s, confidence),"
                " updated_at = %s WHERE person = %s AND id = %s",
                (
                    content.strip() if content else None,
                    category,
                    confidence,
                    time.time(),
                    person,
                    fact_id,
                ),
            )
            > 0
        )

    async def replace(
        self, person: str, contexts: dict[str, str], facts: list[NewFact], *, source: str
    ) -> None:
        """One transaction, as `SqliteMemoryStore.replace`."""
        now = time.time()
        steps: list[Step] = [
            ("DELETE FROM antler_memory_facts WHERE person = %s", (person,)),
            ("DELETE FROM antler_memory_contexts WHERE person = %s", (person,)),
        ]
        steps += [
            (
                "INSERT INTO antler_memory_contexts(person, kind, summary, updated_at)"
                " VALUES (%s, %s, %s, %s)",
                (person, kind, summary.strip(), now),
            )
            for kind, summary in contexts.items()
            if kind in CONTEXT_KINDS and summary.strip()
        ]
        steps += [
            (
                "INSERT INTO antler_memory_facts(person, content, category, confidence,"
                " source, created_at, updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s)",
                (person, f.content.strip(), f.category, f.confidence, source, now, now),
            )
            for f in facts
            if f.content.strip()
        ]
        await self._transaction(steps)

    async def forget(self, person: str, fact_id: int) -> bool:
        return (
            await self._exec(
                "DELETE FROM antler_memory_facts WHERE person = %s AND id = %s", (person, fact_id)
            )
            > 0
        )

    async def clear(self, person: str) -> int:
        removed, _, _ = await self._transaction(
            [
                ("DELETE FROM antler_memory_facts WHERE person = %s", (person,)),
                ("DELETE FROM antler_memory_contexts WHERE person = %s", (person,)),
                ("DELETE FROM antler_memory_pending WHERE person = %s", (person,)),
            ]
        )
        return removed

    async def add_pending(self, person: str, thread_id: str, user_text: str, answer: str) -> None:
        await self._exec(
            "INSERT INTO antler_memory_pending(person, thread_id, user_text, answer, created_at)"
            " VALUES (%s, %s, %s, %s, %s)",
            (person, thread_id, user_text, answer, time.time()),
        )

    async def has_pending(self) -> bool:
        return await self._one("SELECT 1 FROM antler_memory_pending LIMIT 1") is not None

    async def pending(self) -> list[PendingExchange]:
        """The exchanges no other process is working on, claimed for this one."""
        now = time.time()
        rows = await self._all(
            "UPDATE antler_memory_pending SET claimed_until = %s WHERE id IN ("
            " SELECT id FROM antler_memory_pending WHERE claimed_until < %s"
            " ORDER BY id FOR UPDATE SKIP LOCKED)"
            " RETURNING id, person, thread_id, user_text, answer",
            (now + CLAIM_SECONDS, now),
        )
        found = [PendingExchange(int(i), str(p), str(t), str(u), str(a)) for i, p, t, u, a in rows]
        return sorted(found, key=lambda ex: ex.id)

    async def failed_pending(self, ids: list[int], max_attempts: int = 3) -> None:
        await self._transaction(
            [
                (
                    "UPDATE antler_memory_pending SET attempts = attempts + 1, claimed_until = 0"
                    " WHERE id = ANY(%s)",
                    (list(ids),),
                ),
                ("DELETE FROM antler_memory_pending WHERE attempts >= %s", (max_attempts,)),
            ]
        )

    async def _transaction(self, steps: list[Step]) -> list[int]:
        """Run `steps` in one transaction; the rows each touched."""

        async def run() -> list[int]:
            counts = []
            async with (
                self.pool.connection() as conn,
                conn.transaction(),
                conn.cursor(row_factory=tuple_row) as cur,
            ):
                for sql, args in steps:
                    await cur.execute(sql, args)
                    counts.append(int(cur.rowcount))
            return counts

        found: list[int] = await self._again(run)
        return found

    async def _exec(self, sql: str, args: tuple[Any, ...] = ()) -> int:
        async def run() -> int:
            async with self.pool.connection() as conn, conn.cursor(row_factory=tuple_row) as cur:
                await cur.execute(sql, args)
                return int(cur.rowcount)

        found: int = await self._again(run)
        return found

    async def _one(self, sql: str, args: tuple[Any, ...] = ()) -> tuple[Any, ...] | None:
        rows = await self._all(sql, args)
        return rows[0] if rows else None

    async def _all(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        async def run() -> list[tuple[Any, ...]]:
            async with self.pool.connection() as conn, conn.cursor(row_factory=tuple_row) as cur:
                await cur.execute(sql, args)
                return await cur.fetchall()

        found: list[tuple[Any, ...]] = await self._again(run)
        return found

    async def _again(self, op: Callable[[], Awaitable[Any]]) -> Any:
        return await (self.retry("memory", op) if self.retry else op())
