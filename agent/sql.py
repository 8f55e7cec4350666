"""The seam between a store's rules and its database: one async statement runner, two dialects.

Every store (the agent's memory here, the bot's stores under bot/stores/) writes its rules once
against `Sql` and its statements once with `?` marks; a backend only picks the runner and the
few statements its dialect spells differently. `SqliteSql` runs on one `sqlite3` connection
inline on the loop (statements take microseconds: a thread hop would cost more than it saves).
`PostgresSql` runs each statement on a connection lent by a psycopg pool (tuple rows, `?` turned
into `%s`), again through `retry` when the connection was lost in use; a transaction is retried
whole.

A full disk under SQLite is waited out, not raised: a statement (or a transaction, whole) that
failed with "database or disk is full" is run again through the waiting the service installs
(`wait_out_full_disk`, bot/stores/room.py: the one backoff) until there is room, so no message,
checkpoint or journal step is dropped meanwhile. Without it installed, the error is raised.
"""

from __future__ import annotations

import errno
import sqlite3
from collections.abc import Awaitable, Callable, Iterable, Sequence
from functools import lru_cache
from typing import Any, Literal, Protocol, TypeVar

from psycopg import OperationalError
from psycopg.rows import tuple_row

T = TypeVar("T")
Row = tuple[Any, ...]
Retry = Callable[[str, Callable[[], Awaitable[Any]]], Awaitable[Any]]
_room: list[Retry] = []  # the service's waiting for room on a full disk (one, once installed)


def wait_out_full_disk(retry: Retry) -> None:
    """Install `retry` (it runs the operation until it stops failing with a full disk)."""
    _room[:] = [retry]


def disk_full(exc: BaseException) -> bool:
    return (isinstance(exc, sqlite3.OperationalError) and "disk is full" in str(exc)) or (
        isinstance(exc, OSError) and exc.errno == errno.ENOSPC
    )


async def with_room(what: str, fn: Callable[[], T]) -> T:
    """`fn()` (a synchronous SQLite call); on a full disk, again until there is room."""
    try:
        return fn()
    except (sqlite3.OperationalError, OSError) as exc:
        if not _room or not disk_full(exc):
            raise

    async def again() -> T:
        return fn()

    result: T = await _room[0](what, again)
    return result


async def put(sql: Sql, table: str, key: tuple[str, Any], values: dict[str, Any]) -> None:
    """The row whose `key` column (a primary or unique key) holds that value, with `values`:
    inserted, or set on the row already there; one statement, the same in both dialects."""
    names = [key[0], *values]
    marks = ", ".join("?" * len(names))
    sets = ", ".join(f"{name} = excluded.{name}" for name in values)
    await sql.execute(
        f"INSERT INTO {table}({', '.join(names)}) VALUES ({marks})"
        f" ON CONFLICT ({key[0]}) DO UPDATE SET {sets}",
        (key[1], *values.values()),
    )


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
        self._in_transaction = False  # a statement in one is not run again alone

    async def _run(self, fn: Callable[[], T]) -> T:
        return fn() if self._in_transaction else await with_room("SQLite", fn)

    async def execute(self, sql: str, args: Sequence[Any] = ()) -> int:
        return await self._run(lambda: self.db.execute(sql, args).rowcount)

    async def one(self, sql: str, args: Sequence[Any] = ()) -> Row | None:
        rows = await self.all(sql, args)  # to the end: a RETURNING completes
        return tuple(rows[0]) if rows else None

    async def all(self, sql: str, args: Sequence[Any] = ()) -> list[Row]:
        return await self._run(lambda: self.db.execute(sql, args).fetchall())

    async def many(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        rows = list(rows)
        await self._run(lambda: self.db.executemany(sql, rows))

    async def transaction(self, work: Callable[[Sql], Awaitable[T]]) -> T:
        """Under the write lock from the start (BEGIN IMMEDIATE), so a read inside sees what
        the writes will apply to, also with other processes on the file; on a full disk, the
        whole transaction again once there is room."""
        if self._in_transaction or not _room:
            return await self._transaction(work)
        try:
            return await self._transaction(work)
        except (sqlite3.OperationalError, OSError) as exc:
            if not disk_full(exc):
                raise
        result: T = await _room[0]("SQLite", lambda: self._transaction(work))
        return result

    async def _transaction(self, work: Callable[[Sql], Awaitable[T]]) -> T:
        self.db.execute("BEGIN IMMEDIATE")
        self._in_transaction = True
        try:
            result = await work(self)
        except BaseException:
            if self.db.in_transaction:  # (SQLite may have rolled a full disk's back itself)
                self.db.execute("ROLLBACK")
            raise
        finally:
            self._in_transaction = False
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
