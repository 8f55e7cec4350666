"""The memory store's rules, once over a dialect (`Sql`, agent/sql.py): the merge of an
extraction pass, the dedupe of facts, the cap per person, the queue of exchanges waiting for
extraction. The backends only name the tables and say how the queue is claimed: sqlite.py
(`<data_dir>/memory.db`, one process) and postgres.py (several processes share it).

A *person* is a platform-qualified user id (`telegram:42`) unless the links table maps that id
onto another person (an admin linking one human's accounts across platforms). Every change is
one transaction, so a crash never leaves half an update behind.
"""

from __future__ import annotations

import re
import time
from typing import Any

from agent.memory.records import (
    CONTEXT_KINDS,
    PROFILE_KIND,
    Fact,
    MemoryUpdate,
    NewFact,
    PendingExchange,
)
from agent.sql import Sql, put

NO_LIMIT = 2**62  # `LIMIT ? OFFSET ?` with this: every row after the offset, in both dialects
_FACT = "id, content, category, confidence, source, created_at, updated_at"
_PENDING = "id, person, thread_id, user_text, answer"


class MemoryStore:
    """The memory store: its interface and its rules (async, so a database server fits behind
    it); the `*_table` names are the backend's."""

    facts_table = "facts"
    contexts_table = "contexts"
    pending_table = "pending"
    links_table = "person_links"

    def __init__(self, sql: Sql) -> None:
        self.sql = sql

    def close(self) -> None:
        """Let go of the database (a pool the caller owns stays open)."""
        return

    # people ----------------------------------------------------------------------------------

    async def person(self, user_id: str) -> str:
        """The person `user_id` counts as (itself unless linked)."""
        row = await self.sql.one(
            f"SELECT person FROM {self.links_table} WHERE user_id = ?", (user_id,)
        )
        return str(row[0]) if row else user_id

    async def link(self, user_id: str, person: str) -> None:
        """Treat `user_id` as `person` from now on (its own memory stays under its own id)."""
        values = {"person": person, "linked_at": time.time()}
        await put(self.sql, self.links_table, ("user_id", user_id), values)

    async def unlink(self, user_id: str) -> bool:
        """`user_id` counts as itself again; False when it was not linked."""
        return (
            await self.sql.execute(f"DELETE FROM {self.links_table} WHERE user_id = ?", (user_id,))
        ) > 0

    async def accounts(self, person: str) -> list[str]:
        """The accounts linked to `person` (itself not included unless linked), by id."""
        rows = await self.sql.all(
            f"SELECT user_id FROM {self.links_table} WHERE person = ? ORDER BY user_id", (person,)
        )
        return [str(r[0]) for r in rows]

    async def linked(self, query: str, limit: int) -> list[tuple[str, str]]:
        """(account, person) links whose account or person contains `query`."""
        like = f"%{query}%"
        rows = await self.sql.all(
            f"SELECT user_id, person FROM {self.links_table} WHERE user_id LIKE ? OR person LIKE ?"
            " ORDER BY person, user_id LIMIT ?",
            (like, like, limit),
        )
        return [(str(a), str(p)) for a, p in rows]

    # reading ---------------------------------------------------------------------------------

    async def facts(self, person: str) -> list[Fact]:
        rows = await self.sql.all(
            f"SELECT {_FACT} FROM {self.facts_table} WHERE person = ? ORDER BY id", (person,)
        )
        return [
            Fact(int(i), str(c), str(k), float(p), str(s), float(t), float(u))
            for i, c, k, p, s, t, u in rows
        ]

    async def context_times(self, person: str) -> dict[str, tuple[str, float]]:
        """Each context summary with the time it was last written."""
        rows = await self.sql.all(
            f"SELECT kind, summary, updated_at FROM {self.contexts_table} WHERE person = ?",
            (person,),
        )
        return {str(k): (str(s), float(t)) for k, s, t in rows if k in CONTEXT_KINDS and s}

    async def people(self) -> list[tuple[str, int, float]]:
        """(person, facts, last change) for everyone remembered, most recent first."""
        rows = await self.sql.all(
            "SELECT person, SUM(n), MAX(t) FROM ("
            f" SELECT person, 1 AS n, updated_at AS t FROM {self.facts_table}"
            f" UNION ALL SELECT person, 0, updated_at FROM {self.contexts_table}) AS changes"
            " GROUP BY person ORDER BY MAX(t) DESC"
        )
        return [(str(p), int(n), float(t)) for p, n, t in rows]

    async def contexts(self, person: str) -> dict[str, str]:
        rows = await self.sql.all(
            f"SELECT kind, summary FROM {self.contexts_table} WHERE person = ?", (person,)
        )
        found = {str(kind): str(summary) for kind, summary in rows}
        return {kind: found[kind] for kind in CONTEXT_KINDS if found.get(kind)}

    async def profile(self, person: str) -> str:
        """The person's own profile (DeerFlow's USER.md); "" when none."""
        row = await self.sql.one(
            f"SELECT summary FROM {self.contexts_table} WHERE person = ? AND kind = ?",
            (person, PROFILE_KIND),
        )
        return str(row[0]) if row else ""

    async def set_profile(self, person: str, content: str) -> None:
        """Replace the person's profile; an empty one removes it."""
        if not content.strip():
            await self.sql.execute(
                f"DELETE FROM {self.contexts_table} WHERE person = ? AND kind = ?",
                (person, PROFILE_KIND),
            )
            return
        await self.sql.execute(
            f"INSERT INTO {self.contexts_table}(person, kind, summary, updated_at)"
            " VALUES (?, ?, ?, ?) ON CONFLICT (person, kind) DO UPDATE"
            " SET summary = excluded.summary, updated_at = excluded.updated_at",
            (person, PROFILE_KIND, content.strip(), time.time()),
        )

    async def counts(self) -> tuple[int, int, int]:
        """(people remembered, facts, exchanges waiting for extraction)."""
        row = await self.sql.one(
            f"SELECT (SELECT COUNT(*) FROM (SELECT person FROM {self.facts_table} UNION"
            f" SELECT person FROM {self.contexts_table}) AS people),"
            f" (SELECT COUNT(*) FROM {self.facts_table}),"
            f" (SELECT COUNT(*) FROM {self.pending_table})"
        )
        assert row is not None
        return int(row[0]), int(row[1]), int(row[2])

    # writing ---------------------------------------------------------------------------------

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
        """Merge an update in one transaction; keep at most `max_facts`, dropping the weakest.

        A context summary replaces the kind's last one; a fact below `threshold`, empty, or
        already known (same words, case and spacing aside) is left out. `done` names the
        pending exchanges the update came from; they go in the same transaction.
        """
        now = time.time()
        known = {normal(f.content) for f in await self.facts(person)}
        new = []
        for fact in update.facts:
            key = normal(fact.content)
            if fact.confidence >= threshold and key and key not in known:
                known.add(key)
                new.append(fact)

        async def work(tx: Sql) -> None:
            await self._put_contexts(tx, person, update.contexts, now, replace=True)
            await tx.many(
                f"DELETE FROM {self.facts_table} WHERE person = ? AND id = ?",
                [(person, fact_id) for fact_id in update.remove],
            )
            await self._insert_facts(tx, person, new, source, now)
            await tx.execute(
                f"DELETE FROM {self.facts_table} WHERE id IN (SELECT id FROM {self.facts_table}"
                " WHERE person = ? ORDER BY confidence DESC, id DESC LIMIT ? OFFSET ?)",
                (person, NO_LIMIT, max_facts),
            )
            await tx.many(
                f"DELETE FROM {self.pending_table} WHERE id = ?", [(i,) for i in done or []]
            )

        await self.sql.transaction(work)

    async def add_fact(self, person: str, fact: NewFact, *, source: str) -> Fact | None:
        """Remember one fact as given (an admin's edit); None when it is already known."""
        key = normal(fact.content)
        if not key or any(normal(f.content) == key for f in await self.facts(person)):
            return None
        now = time.time()
        row = await self.sql.one(
            f"INSERT INTO {self.facts_table}(person, content, category, confidence, source,"
            " created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
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
        """Change a fact of `person`; False when the person has no such fact."""
        changed = await self.sql.execute(
            f"UPDATE {self.facts_table} SET content = COALESCE(?, content),"
            " category = COALESCE(?, category), confidence = COALESCE(?, confidence),"
            " updated_at = ? WHERE person = ? AND id = ?",
            (
                content.strip() if content else None,
                category,
                confidence,
                time.time(),
                person,
                fact_id,
            ),
        )
        return changed > 0

    async def replace(
        self, person: str, contexts: dict[str, str], facts: list[NewFact], *, source: str
    ) -> None:
        """Make `contexts` and `facts` all that is remembered of `person` (one transaction)."""
        now = time.time()

        async def work(tx: Sql) -> None:
            await tx.execute(f"DELETE FROM {self.facts_table} WHERE person = ?", (person,))
            await tx.execute(  # the person's own profile is not part of a memory document
                f"DELETE FROM {self.contexts_table} WHERE person = ? AND kind <> ?",
                (person, PROFILE_KIND),
            )
            await self._put_contexts(tx, person, contexts, now, replace=False)
            await self._insert_facts(
                tx, person, [f for f in facts if f.content.strip()], source, now
            )

        await self.sql.transaction(work)

    async def forget(self, person: str, fact_id: int) -> bool:
        removed = await self.sql.execute(
            f"DELETE FROM {self.facts_table} WHERE person = ? AND id = ?", (person, fact_id)
        )
        return removed > 0

    async def clear(self, person: str) -> int:
        """Forget the person entirely: facts, summaries, their profile and exchanges not yet
        processed."""

        async def work(tx: Sql) -> int:
            removed = await tx.execute(
                f"DELETE FROM {self.facts_table} WHERE person = ?", (person,)
            )
            await tx.execute(f"DELETE FROM {self.contexts_table} WHERE person = ?", (person,))
            await tx.execute(f"DELETE FROM {self.pending_table} WHERE person = ?", (person,))
            return removed

        return int(await self.sql.transaction(work))

    async def _put_contexts(
        self, tx: Sql, person: str, contexts: dict[str, str], now: float, *, replace: bool
    ) -> None:
        upsert = (
            " ON CONFLICT (person, kind) DO UPDATE SET summary = excluded.summary,"
            " updated_at = excluded.updated_at"
            if replace
            else ""
        )
        await tx.many(
            f"INSERT INTO {self.contexts_table}(person, kind, summary, updated_at)"
            f" VALUES (?, ?, ?, ?){upsert}",
            [
                (person, kind, summary.strip(), now)
                for kind, summary in contexts.items()
                if kind in CONTEXT_KINDS and summary.strip()
            ],
        )

    async def _insert_facts(
        self, tx: Sql, person: str, facts: list[NewFact], source: str, now: float
    ) -> None:
        await tx.many(
            f"INSERT INTO {self.facts_table}(person, content, category, confidence, source,"
            " created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                (person, f.content.strip(), f.category, f.confidence, source, now, now)
                for f in facts
            ],
        )

    # the queue of exchanges waiting for extraction -------------------------------------------

    async def add_pending(self, person: str, thread_id: str, user_text: str, answer: str) -> None:
        await self.sql.execute(
            f"INSERT INTO {self.pending_table}(person, thread_id, user_text, answer, created_at)"
            " VALUES (?, ?, ?, ?, ?)",
            (person, thread_id, user_text, answer, time.time()),
        )

    async def has_pending(self) -> bool:
        return await self.sql.one(f"SELECT 1 FROM {self.pending_table} LIMIT 1") is not None

    async def pending(self) -> list[PendingExchange]:
        """The exchanges waiting, oldest first (on a shared database: those no other process
        is working on, claimed for this one)."""
        return [pending_from_row(row) for row in await self._pending_rows()]

    async def failed_pending(self, ids: list[int], max_attempts: int = 3) -> None:
        """Count a failed pass; exchanges that failed `max_attempts` times are given up."""

        async def work(tx: Sql) -> None:
            await tx.many(
                f"UPDATE {self.pending_table} SET attempts = attempts + 1{self._release}"
                " WHERE id = ?",
                [(i,) for i in ids],
            )
            await tx.execute(
                f"DELETE FROM {self.pending_table} WHERE attempts >= ?", (max_attempts,)
            )

        await self.sql.transaction(work)

    # what the backends spell their own way (here: one process takes every exchange) ---------

    _release = ""  # what else a failed pass resets (a backend's claim)

    async def _pending_rows(self) -> list[tuple[Any, ...]]:
        return await self.sql.all(f"SELECT {_PENDING} FROM {self.pending_table} ORDER BY id")


def pending_from_row(row: tuple[Any, ...]) -> PendingExchange:
    i, p, t, u, a = row
    return PendingExchange(int(i), str(p), str(t), str(u), str(a))


_SPACE = re.compile(r"\s+")


def normal(text: str) -> str:
    return _SPACE.sub(" ", text).strip().lower().rstrip(".")
