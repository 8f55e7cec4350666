"""Which Antler processes on the database are alive: each holds a "life lock" while it runs.

A process takes a session-level advisory lock `(LIFE_LOCKS, owner)` on a connection of its own
(outside the pool) for as long as it runs. When the process stops or dies, its connection closes
and PostgreSQL releases the lock at once; so "the owner of this journal row is alive" is "its
lock is held", read from `pg_locks`, with no lease to wait out. A network cut long enough for the
server to drop the connection counts as death; the process takes its lock again when it can.
"""

from __future__ import annotations

import contextlib
import logging
import secrets

import psycopg

log = logging.getLogger("bot.stores.pg_life")

LIFE_LOCKS = 0x616E7470  # the first key of every life lock ("antp")
LIVE_OWNERS = (
    "SELECT objid::text FROM pg_locks WHERE locktype = 'advisory'"
    " AND classid = ?::oid AND objsubid = 2 AND granted"
)


class Life:
    """This process's life lock; `owner` is the number its journal rows carry."""

    def __init__(self) -> None:
        self.owner = secrets.randbelow(2**31 - 2) + 1
        self._conn: psycopg.AsyncConnection[object] | None = None

    async def take(self, dsn: str, timeout: float) -> None:
        """Hold the lock (on a fresh connection); raises psycopg errors when it cannot."""
        await self.release()
        conn = await psycopg.AsyncConnection.connect(
            dsn, autocommit=True, connect_timeout=max(1, int(timeout))
        )
        cur = await conn.execute("SELECT pg_try_advisory_lock(%s, %s)", (LIFE_LOCKS, self.owner))
        row = await cur.fetchone()
        if not row or not row[0]:  # another process drew the same number: never share one
            await conn.close()
            raise psycopg.OperationalError(f"life lock {self.owner} is taken")
        self._conn = conn

    async def held(self) -> bool:
        """True while the lock's connection answers."""
        if self._conn is None or self._conn.closed:
            return False
        try:
            await self._conn.execute("SELECT 1")
        except psycopg.Error:
            return False
        return True

    async def release(self) -> None:
        """Let go at once (closing alone frees it only when the server's backend exits)."""
        if self._conn is not None:
            with contextlib.suppress(psycopg.Error):
                await self._conn.execute(
                    "SELECT pg_advisory_unlock(%s, %s)", (LIFE_LOCKS, self.owner)
                )
            await self._conn.close()
        self._conn = None
