"""The seam between a store's rules and its database: one async statement runner, two dialects.

Every store (the agent's memory here, the bot's stores under bot/stores/) writes its rules once
against `Sql` and its statements once with `?` marks; a backend only picks the runner and the
few statements its dialect spells differently. `SqliteSql` runs on one `sqlite3` connection
inline on the loop (statements take microseconds: a thread hop would cost more than it saves).
`PostgresSql` runs each statement on a connection lent by a psycopg pool (tuple rows, `?` turned
into `%s`), again through `retry` when the connection was lost in use; a transaction is retried
whole.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Awaitable, Callable, Iterable, Sequence
from functools import lru_cache
from typing import Any, Literal, Protocol, TypeVar

from psycopg import OperationalError
from psycopg.rows import tuple_row

T = TypeVar("T")
Row = tuple[Any, ...]
Retry = Callable[[str, Callable[[], Awaitable[Any]]], Awaitable[Any]]


class Sql(Protocol):
    """Statements with `?` marks; `execute` returns the rows touched."""

    dialect: Literal["sqlite", "postgres"]

    async def execute(self, sql: str, args: Sequence[Any] = ()) -> int: ...

    async def one(self, sql: str, args: Sequence[Any] = ()) -> Row | None: ...

    async def all(self, sql: str, args: Sequence[Any] = ()) -> list[Row]: ...

    async def many(self, sql: str, rows: Iterable[Sequence[Any]]) -> None: ...

    async def transaction(self, work: Callable[[Sql], Awaitable[T]]) -> T:
        """`work(tx)` with its statements on `tx` in one transaction (all of them, or none)."""
        ...


class SqliteSql:
    """`Sql` on one SQLite connection in autocommit mode (`isolation_level=None`)."""

    dialect: Literal["sqlite", "postgres"] = "sqlite"

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    async def execute(self, sql: str, args: Sequence[Any] = ()) -> int:
        return self.db.execute(sql, args).rowcount

    async def one(self, sql: str, args: Sequence[Any] = ()) -> Row | None:
        rows = self.db.execute(sql, args).fetchall()  # to the end: a RETURNING completes
        return tuple(rows[0]) if rows else None

    async def all(self, sql: str, args: Sequence[Any] = ()) -> list[Row]:
        return self.db.execute(sql, args).fetchall()

    async def many(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        self.db.executemany(sql, rows)

    async def transaction(self, work: Callable[[Sql], Awaitable[T]]) -> T:
        """Under the write lock from the start (BEGIN IMMEDIATE), so a read inside sees what
        the writes will apply to, also with other processes on the file."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            result = await work(self)
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")
        return result


@lru_cache(maxsize=1024)
def postgres_marks(sql: str) -> str:
    """`?` marks as psycopg's `%s` (the stores' statements hold no literal `?` or `%`)."""
    return sql.replace("?", "%s")


class _Connection:
    """`Sql` on one connection inside a transaction (no retry: the transaction retries)."""

    dialect: Literal["sqlite", "postgres"] = "postgres"

    def __init__(self, conn: Any) -> None:
        self.conn = conn

    async def execute(self, sql: str, args: Sequence[Any] = ()) -> int:
        async with self.conn.cursor(row_factory=tuple_row) as cur:
            await cur.execute(postgres_marks(sql), args)
            return int(cur.rowcount)

    async def one(self, sql: str, args: Sequence[Any] = ()) -> Row | None:
        rows = await self.all(sql, args)
        return rows[0] if rows else None

    async def all(self, sql: str, args: Sequence[Any] = ()) -> list[Row]:
        async with self.conn.cursor(row_factory=tuple_row) as cur:
            await cur.execute(postgres_marks(sql), args)
            return list(await cur.fetchall()) if cur.description else []

    async def many(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        async with self.conn.cursor() as cur:
            await cur.executemany(postgres_marks(sql), list(rows))

    async def transaction(self, work: Callable[[Sql], Awaitable[T]]) -> T:
        async with self.conn.transaction():
            return await work(self)


class PostgresSql:
    """`Sql` on a psycopg `AsyncConnectionPool` (the caller's, in autocommit mode)."""

    dialect: Literal["sqlite", "postgres"] = "postgres"

    def __init__(self, pool: Any, what: str, retry: Retry | None = None) -> None:
        self.pool = pool
        self.what = what  # names the store in the retry's log line
        self.retry = retry

    async def execute(self, sql: str, args: Sequence[Any] = ()) -> int:
        return await self._on_connection(lambda c: c.execute(sql, args))

    async def one(self, sql: str, args: Sequence[Any] = ()) -> Row | None:
        return await self._on_connection(lambda c: c.one(sql, args))

    async def all(self, sql: str, args: Sequence[Any] = ()) -> list[Row]:
        return await self._on_connection(lambda c: c.all(sql, args))

    async def many(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        listed = list(rows)
        await self._on_connection(lambda c: c.many(sql, listed))

    async def transaction(self, work: Callable[[Sql], Awaitable[T]]) -> T:
        return await self._on_connection(lambda c: c.transaction(work))

    async def _on_connection(self, step: Callable[[_Connection], Awaitable[T]]) -> T:
        async def op() -> T:
            try:
                async with self.pool.connection() as conn:
                    return await step(_Connection(conn))
            except OperationalError:
                # one connection lost means the pool's others may be too (a database restart, a
                # network cut): they are checked now, so the retry does not take another dead one
                await self.pool.check()
                raise

        found: T = await (self.retry(self.what, op) if self.retry else op())
        return found
