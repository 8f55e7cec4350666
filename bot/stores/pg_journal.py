"""The delivery journal on PostgreSQL: the same rows and states as `SqliteJournal`, shared by
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

import json
import logging
import time
import uuid
from collections.abc import Mapping
from typing import Any

from psycopg_pool import AsyncConnectionPool

from bot.journal import Entry, dump_message, entry_from_row, event_key
from bot.stores.pg import Statements
from bot.stores.pg_life import LIFE_LOCKS, LIVE_OWNERS
from channels.base import InboundMessage

log = logging.getLogger("bot.journal")

MIGRATIONS = (
    """
    CREATE TABLE antler_journal (
        key TEXT PRIMARY KEY,
        channel TEXT NOT NULL,
        state TEXT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        handle TEXT NOT NULL DEFAULT '',
        final TEXT NOT NULL DEFAULT '',
        parts_done INTEGER NOT NULL DEFAULT 0,
        sending BOOLEAN NOT NULL DEFAULT false,
        reason TEXT NOT NULL DEFAULT '',
        told BOOLEAN NOT NULL DEFAULT false,
        received_at DOUBLE PRECISION NOT NULL,
        updated_at DOUBLE PRECISION NOT NULL,
        payload TEXT NOT NULL DEFAULT '',
        claim TEXT NOT NULL DEFAULT ''
    );
    CREATE INDEX antler_journal_state ON antler_journal(state, received_at)
    """,
)

_COLUMNS = (
    "key, state, attempts, handle, final, parts_done, sending, reason, told,"
    " received_at, updated_at, payload"
)
_UNSETTLED = "('accepted', 'running', 'delivering')"


class PostgresJournal:
    """`bot.journal.Journal` in table `antler_journal`."""

    def __init__(self, pool: AsyncConnectionPool, window_hours: float, owner: int) -> None:
        self.sql = Statements(pool, "journal")
        self.window = window_hours * 3600
        self.owner = owner

    async def accept(self, msg: InboundMessage) -> bool:
        now, key, claim = time.time(), event_key(msg), f"{self.owner}:{uuid.uuid4().hex}"
        inserted = await self.sql.execute(
            "INSERT INTO antler_journal(key, channel, state, received_at, updated_at, payload,"
            " claim) VALUES (%s, %s, 'accepted', %s, %s, %s, %s) ON CONFLICT (key) DO NOTHING",
            (key, msg.chat.channel, now, now, dump_message(msg), claim),
        )
        if inserted == 1:
            return True
        row = await self.sql.one("SELECT claim FROM antler_journal WHERE key = %s", (key,))
        return row is not None and row[0] == claim  # ours, when a retry re-ran our own insert

    async def forget(self, msg: InboundMessage) -> None:
        await self.sql.execute("DELETE FROM antler_journal WHERE key = %s", (event_key(msg),))

    async def start(self, msg: InboundMessage) -> int:
        key = event_key(msg)
        row = await self.sql.one(
            "UPDATE antler_journal SET state = 'running', attempts = attempts + 1,"
            " updated_at = %s, claim = %s || ':' || split_part(claim, ':', 2)"
            f" WHERE key = %s AND state IN {_UNSETTLED} RETURNING attempts",
            (time.time(), str(self.owner), key),
        )
        if row is None:
            row = await self.sql.one("SELECT attempts FROM antler_journal WHERE key = %s", (key,))
        return int(row[0]) if row else 1

    async def give_back(self, msg: InboundMessage) -> None:
        await self.sql.execute(
            "UPDATE antler_journal SET attempts = attempts - 1 WHERE key = %s AND attempts > 0",
            (event_key(msg),),
        )

    async def keep_handle(self, msg: InboundMessage, handle: Mapping[str, Any]) -> None:
        await self._set(msg, handle=_json(handle))

    async def delivering(self, msg: InboundMessage, final: Mapping[str, Any]) -> None:
        await self._set(msg, state="delivering", final=_json(final), parts_done=0, sending=False)

    async def part_sending(self, msg: InboundMessage, sending: bool = True) -> None:
        await self._set(msg, sending=sending)

    async def part_done(
        self, msg: InboundMessage, parts_done: int, handle: Mapping[str, Any] | None
    ) -> None:
        if handle is None:
            await self._set(msg, parts_done=parts_done, sending=False)
        else:
            await self._set(msg, parts_done=parts_done, sending=False, handle=_json(handle))

    async def delivered(self, msg: InboundMessage, reason: str = "") -> None:
        await self._set(msg, state="delivered", reason=reason, payload="", final="")

    async def failed(self, msg: InboundMessage, reason: str, *, told: bool) -> None:
        await self._set(msg, state="failed", reason=reason, told=told, payload="", final="")

    async def entry(self, msg: InboundMessage) -> Entry | None:
        row = await self.sql.one(
            f"SELECT {_COLUMNS} FROM antler_journal WHERE key = %s", (event_key(msg),)
        )
        return entry_from_row(row) if row else None

    async def unsettled(self) -> list[Entry]:
        rows = await self.sql.all(
            "UPDATE antler_journal SET claim = %s || ':' || split_part(claim, ':', 2)"
            f" WHERE state IN {_UNSETTLED} AND split_part(claim, ':', 1) NOT IN ({LIVE_OWNERS})"
            f" RETURNING {_COLUMNS}",
            (str(self.owner), LIFE_LOCKS),
        )
        rows.sort(key=lambda row: row[9])  # received_at
        found = []
        for row in rows:
            entry = entry_from_row(row)
            if entry.msg is None:
                log.warning("journal: unreadable entry %s settled as failed", entry.key)
                await self.sql.execute(
                    "UPDATE antler_journal SET state = 'failed',"
                    " reason = 'unreadable' WHERE key = %s",
                    (entry.key,),
                )
                continue
            found.append(entry)
        return found

    async def recent(self, limit: int = 50, state: str | None = None) -> list[Entry]:
        where, args = ("WHERE state = %s", (state, limit)) if state else ("", (limit,))
        rows = await self.sql.all(
            f"SELECT {_COLUMNS} FROM antler_journal {where} ORDER BY updated_at DESC LIMIT %s", args
        )
        return [entry_from_row(row) for row in rows]

    async def count(self, state: str) -> int:
        row = await self.sql.one("SELECT COUNT(*) FROM antler_journal WHERE state = %s", (state,))
        return int(row[0]) if row else 0

    async def prune(self, now: float | None = None) -> int:
        cutoff = (now or time.time()) - self.window
        return await self.sql.execute(
            "DELETE FROM antler_journal WHERE received_at < %s"
            " AND state IN ('delivered', 'failed')",
            (cutoff,),
        )

    async def _set(self, msg: InboundMessage, **values: Any) -> None:
        values["updated_at"] = time.time()
        assignments = ", ".join(f"{column} = %s" for column in values)
        await self.sql.execute(
            f"UPDATE antler_journal SET {assignments} WHERE key = %s",
            (*values.values(), event_key(msg)),
        )


def _json(value: Mapping[str, Any]) -> str:
    return json.dumps(value)
