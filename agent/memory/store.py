"""`SqliteMemoryStore`: what the agent remembers about each person, in `<data_dir>/memory.db`
(statements take microseconds: they run inline on the loop). The interface and its values are in
agent/memory/records.py; the PostgreSQL store is agent/memory/pg_store.py.

A *person* is a platform-qualified user id (`telegram:42`) unless `person_links` maps that id
onto another person (an admin linking one human's accounts across platforms). Every change is
one transaction, so a crash never leaves half an update behind.
"""

from __future__ import annotations

import re
import sqlite3
import time
from pathlib import Path

from agent.memory.records import (
    CONTEXT_KINDS,
    Fact,
    MemoryUpdate,
    NewFact,
    PendingExchange,
)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS facts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    person TEXT NOT NULL,
    content TEXT NOT NULL,
    category TEXT NOT NULL,
    confidence REAL NOT NULL,
    source TEXT NOT NULL DEFAULT '',
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS facts_person ON facts(person, id);
CREATE TABLE IF NOT EXISTS contexts (
    person TEXT NOT NULL,
    kind TEXT NOT NULL,
    summary TEXT NOT NULL,
    updated_at REAL NOT NULL,
    PRIMARY KEY (person, kind)
);
CREATE TABLE IF NOT EXISTS pending (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    person TEXT NOT NULL,
    thread_id TEXT NOT NULL,
    user_text TEXT NOT NULL,
    answer TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS person_links (
    user_id TEXT PRIMARY KEY,
    person TEXT NOT NULL,
    linked_at REAL NOT NULL
);
"""


class SqliteMemoryStore:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.executescript(_SCHEMA)

    def close(self) -> None:
        self.db.close()

    # people ----------------------------------------------------------------------------------

    async def person(self, user_id: str) -> str:
        row = self.db.execute(
            "SELECT person FROM person_links WHERE user_id = ?", (user_id,)
        ).fetchone()
        return str(row[0]) if row else user_id

    async def link(self, user_id: str, person: str) -> None:
        """Treat `user_id` as `person` from now on (its own memory stays under its own id)."""
        self.db.execute(
            "INSERT OR REPLACE INTO person_links(user_id, person, linked_at) VALUES (?, ?, ?)",
            (user_id, person, time.time()),
        )

    async def unlink(self, user_id: str) -> bool:
        cur = self.db.execute("DELETE FROM person_links WHERE user_id = ?", (user_id,))
        return cur.rowcount > 0

    async def accounts(self, person: str) -> list[str]:
        rows = self.db.execute(
            "SELECT user_id FROM person_links WHERE person = ? ORDER BY user_id", (person,)
        ).fetchall()
        return [str(r[0]) for r in rows]

    async def linked(self, query: str, limit: int) -> list[tuple[str, str]]:
        like = f"%{query}%"
        rows = self.db.execute(
            "SELECT user_id, person FROM person_links WHERE user_id LIKE ? OR person LIKE ?"
            " ORDER BY person, user_id LIMIT ?",
            (like, like, limit),
        ).fetchall()
        return [(str(a), str(p)) for a, p in rows]

    # reading ---------------------------------------------------------------------------------

    async def facts(self, person: str) -> list[Fact]:
        rows = self.db.execute(
            "SELECT id, content, category, confidence, source, created_at, updated_at FROM facts"
            " WHERE person = ? ORDER BY id",
            (person,),
        )
        return [
            Fact(int(i), str(c), str(k), float(p), str(s), float(t), float(u))
            for i, c, k, p, s, t, u in rows
        ]

    async def context_times(self, person: str) -> dict[str, tuple[str, float]]:
        """Each context summary with the time it was last written."""
        rows = self.db.execute(
            "SELECT kind, summary, updated_at FROM contexts WHERE person = ?", (person,)
        )
        return {str(k): (str(s), float(t)) for k, s, t in rows if k in CONTEXT_KINDS and s}

    async def people(self) -> list[tuple[str, int, float]]:
        """(person, facts, last change) for everyone remembered, most recent first."""
        rows = self.db.execute(
            "SELECT person, SUM(n), MAX(t) FROM ("
            " SELECT person, 1 AS n, updated_at AS t FROM facts"
            " UNION ALL SELECT person, 0, updated_at FROM contexts)"
            " GROUP BY person ORDER BY MAX(t) DESC"
        )
        return [(str(p), int(n), float(t)) for p, n, t in rows]

    async def contexts(self, person: str) -> dict[str, str]:
        rows = self.db.execute("SELECT kind, summary FROM contexts WHERE person = ?", (person,))
        found = {str(kind): str(summary) for kind, summary in rows}
        return {kind: found[kind] for kind in CONTEXT_KINDS if found.get(kind)}

    async def counts(self) -> tuple[int, int, int]:
        """(people remembered, facts, exchanges waiting for extraction)."""
        people = self.db.execute(
            "SELECT COUNT(*) FROM (SELECT person FROM facts UNION SELECT person FROM contexts)"
        ).fetchone()[0]
        facts = self.db.execute("SELECT COUNT(*) FROM facts").fetchone()[0]
        pending = self.db.execute("SELECT COUNT(*) FROM pending").fetchone()[0]
        return int(people), int(facts), int(pending)

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

        `done` names the pending exchanges the update came from; they go in the same transaction.
        """
        now = time.time()
        known = {normal(f.content): f.id for f in await self.facts(person)}
        with _transaction(self.db):
            for kind, summary in update.contexts.items():
                if kind in CONTEXT_KINDS and summary.strip():
                    self.db.execute(
                        "INSERT OR REPLACE INTO contexts(person, kind, summary, updated_at)"
                        " VALUES (?, ?, ?, ?)",
                        (person, kind, summary.strip(), now),
                    )
            for fact_id in update.remove:
                self.db.execute("DELETE FROM facts WHERE person = ? AND id = ?", (person, fact_id))
            for fact in update.facts:
                key = normal(fact.content)
                if fact.confidence < threshold or not key or key in known:
                    continue
                known[key] = 0
                self.db.execute(
                    "INSERT INTO facts(person, content, category, confidence, source, created_at,"
                    " updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
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
            self._trim(person, max_facts)
            self._done_pending(done or [])

    def _trim(self, person: str, max_facts: int) -> None:
        self.db.execute(
            "DELETE FROM facts WHERE id IN (SELECT id FROM facts WHERE person = ?"
            " ORDER BY confidence DESC, id DESC LIMIT -1 OFFSET ?)",
            (person, max_facts),
        )

    async def add_fact(self, person: str, fact: NewFact, *, source: str) -> Fact | None:
        """Remember one fact as given (an admin's edit); None when it is already known."""
        key = normal(fact.content)
        if not key or any(normal(f.content) == key for f in await self.facts(person)):
            return None
        now = time.time()
        cur = self.db.execute(
            "INSERT INTO facts(person, content, category, confidence, source, created_at,"
            " updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (person, fact.content.strip(), fact.category, fact.confidence, source, now, now),
        )
        return Fact(
            int(cur.lastrowid or 0),
            fact.content.strip(),
            fact.category,
            fact.confidence,
            source,
            now,
            now,
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
        cur = self.db.execute(
            "UPDATE facts SET content = COALESCE(?, content), category = COALESCE(?, category),"
            " confidence = COALESCE(?, confidence), updated_at = ? WHERE person = ? AND id = ?",
            (
                content.strip() if content else None,
                category,
                confidence,
                time.time(),
                person,
                fact_id,
            ),
        )
        return cur.rowcount > 0

    async def replace(
        self, person: str, contexts: dict[str, str], facts: list[NewFact], *, source: str
    ) -> None:
        """Make `contexts` and `facts` all that is remembered of `person` (one transaction)."""
        now = time.time()
        with _transaction(self.db):
            self.db.execute("DELETE FROM facts WHERE person = ?", (person,))
            self.db.execute("DELETE FROM contexts WHERE person = ?", (person,))
            for kind, summary in contexts.items():
                if kind in CONTEXT_KINDS and summary.strip():
                    self.db.execute(
                        "INSERT INTO contexts(person, kind, summary, updated_at)"
                        " VALUES (?, ?, ?, ?)",
                        (person, kind, summary.strip(), now),
                    )
            self.db.executemany(
                "INSERT INTO facts(person, content, category, confidence, source, created_at,"
                " updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (person, f.content.strip(), f.category, f.confidence, source, now, now)
                    for f in facts
                    if f.content.strip()
                ],
            )

    async def forget(self, person: str, fact_id: int) -> bool:
        cur = self.db.execute("DELETE FROM facts WHERE person = ? AND id = ?", (person, fact_id))
        return cur.rowcount > 0

    async def clear(self, person: str) -> int:
        """Forget the person entirely: facts, summaries and exchanges not yet processed."""
        with _transaction(self.db):
            removed = self.db.execute("DELETE FROM facts WHERE person = ?", (person,)).rowcount
            self.db.execute("DELETE FROM contexts WHERE person = ?", (person,))
            self.db.execute("DELETE FROM pending WHERE person = ?", (person,))
        return int(removed)

    # the queue of exchanges waiting for extraction -------------------------------------------

    async def add_pending(self, person: str, thread_id: str, user_text: str, answer: str) -> None:
        self.db.execute(
            "INSERT INTO pending(person, thread_id, user_text, answer, created_at)"
            " VALUES (?, ?, ?, ?, ?)",
            (person, thread_id, user_text, answer, time.time()),
        )

    async def has_pending(self) -> bool:
        return self.db.execute("SELECT 1 FROM pending LIMIT 1").fetchone() is not None

    async def pending(self) -> list[PendingExchange]:
        rows = self.db.execute(
            "SELECT id, person, thread_id, user_text, answer FROM pending ORDER BY id"
        )
        return [PendingExchange(int(i), str(p), str(t), str(u), str(a)) for i, p, t, u, a in rows]

    def _done_pending(self, ids: list[int]) -> None:
        self.db.executemany("DELETE FROM pending WHERE id = ?", [(i,) for i in ids])

    async def failed_pending(self, ids: list[int], max_attempts: int = 3) -> None:
        """Count a failed pass; exchanges that failed `max_attempts` times are given up."""
        with _transaction(self.db):
            self.db.executemany(
                "UPDATE pending SET attempts = attempts + 1 WHERE id = ?", [(i,) for i in ids]
            )
            self.db.execute("DELETE FROM pending WHERE attempts >= ?", (max_attempts,))


class _transaction:
    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *_: object) -> None:
        self.db.execute("ROLLBACK" if exc_type else "COMMIT")


_SPACE = re.compile(r"\s+")


def normal(text: str) -> str:
    return _SPACE.sub(" ", text).strip().lower().rstrip(".")
