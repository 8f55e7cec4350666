"""The delivery journal on PostgreSQL: the same rows, states and rules as on SQLite, shared by
every process on the database.

`accept` is one `INSERT … ON CONFLICT DO NOTHING`: of two processes receiving the same event,
exactly one gets the row. The row's `claim` is `<owner>:<token>`: the owning process (see
bot/stores/pg_life.py) and a token of the insert, so an insert whose answer was lost with the
connection (and is retried) is still recognised as its own.

`start()` moves the row to the process that runs it (with the Redis bus, the publisher and the
answering worker differ: the row follows whoever answers). `unsettled()` returns, and takes
over, only the rows whose owner is gone (its process stopped or died: its life lock is free), so
a process starting next to running ones never answers a message another is still answering; a
running process calls it again from time to time to take up the messages of one that died.
"""

from __future__ import annotations

import uuid
from typing import Any

from psycopg_pool import AsyncConnectionPool

from agent.sql import PostgresSql
from bot.stores.journal import COLUMNS, TABLE, UNSETTLED_SQL, SqlJournal, event_key
from bot.stores.pg import retrying
from bot.stores.pg_life import LIFE_LOCKS, LIVE_OWNERS
from bot.stores.schema import POSTGRES, columns
from channels.base import InboundMessage

MIGRATIONS = (
    f"""
    CREATE TABLE antler_journal ({columns(TABLE, POSTGRES)},
        claim TEXT NOT NULL DEFAULT ''
    );
    CREATE INDEX antler_journal_state ON antler_journal(state, received_at)
    """,
)


class PostgresJournal(SqlJournal):
    """`Journal` in table `antler_journal`; rows carry their process's claim."""

    table = "antler_journal"

    def __init__(self, pool: AsyncConnectionPool, window_hours: float, owner: int) -> None:
        super().__init__(PostgresSql(pool, "journal", retrying), window_hours)
        self.owner = owner

    def _claim(self) -> dict[str, Any]:
        return {"claim": f"{self.owner}:{uuid.uuid4().hex}"}

    async def _ours(self, key: str, claim: dict[str, Any]) -> bool:
        row = await self.sql.one("SELECT claim FROM antler_journal WHERE key = ?", (key,))
        return row is not None and row[0] == claim["claim"]  # a retry re-ran our own insert

    def _take(self) -> tuple[str, tuple[Any, ...]]:
        return ", claim = ? || ':' || split_part(claim, ':', 2)", (str(self.owner),)

    async def hand_over(self, msgs: list[InboundMessage]) -> int:
        """Owner 0 is never alive: the next `unsettled()` of any live process takes them."""
        return await self.sql.execute(
            "UPDATE antler_journal SET claim = '0:' || split_part(claim, ':', 2)"
            " WHERE key = ANY(?) AND state = 'accepted' AND split_part(claim, ':', 1) = ?",
            ([event_key(m) for m in msgs], str(self.owner)),
        )

    async def _unsettled_rows(self) -> list[tuple[Any, ...]]:
        """Only those whose owner is gone, taken over by this process."""
        rows = await self.sql.all(
            "UPDATE antler_journal SET claim = ? || ':' || split_part(claim, ':', 2)"
            f" WHERE state IN {UNSETTLED_SQL} AND split_part(claim, ':', 1) NOT IN"
            f" ({LIVE_OWNERS}) RETURNING {COLUMNS}",
            (str(self.owner), LIFE_LOCKS),
        )
        return sorted(rows, key=lambda row: row[9])  # received_at

    async def _own_unsettled_rows(self) -> list[tuple[Any, ...]]:
        """Those this process accepted or runs (and keeps)."""
        return await self.sql.all(
            f"SELECT {COLUMNS} FROM antler_journal WHERE state IN {UNSETTLED_SQL}"
            " AND split_part(claim, ':', 1) = ? ORDER BY received_at",
            (str(self.owner),),
        )
