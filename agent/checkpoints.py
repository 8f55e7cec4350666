"""Where LangGraph checkpoints live: `SqliteCheckpoints` (the default, a file under data_dir)
or `PostgresCheckpoints` (LangGraph's AsyncPostgresSaver on a pool the caller owns). The runner
takes either from its caller (`AgentRunner(checkpoints=...)`), which picks one by configuration.

SQLite: LangGraph's SqliteSaver, its async methods running inline on the loop.

LangGraph's AsyncSqliteSaver (aiosqlite) hands every statement to a worker thread and back: a
turn costs about eight such hops. The statements themselves take microseconds (WAL,
synchronous=NORMAL, keyed by primary key), and (de)serialization runs on the loop in either
saver, so the hops cost more CPU and latency than they save. Same tables, same file: a database
written by AsyncSqliteSaver is read by this one and vice versa.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any, Protocol

from agent.sql import with_room

SETUP_LOCK = 0x616E7463  # advisory lock: processes starting together run setup() one at a time
SETUP_POLL_SECONDS = 0.1


class Checkpoints(Protocol):
    """Opens the checkpoint saver at start and closes it at stop."""

    async def open(self) -> Any:
        """The saver (a LangGraph `BaseCheckpointSaver`), its tables created or migrated."""
        ...

    async def close(self) -> None: ...


class SqliteCheckpoints:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._saver: Any = None

    async def open(self) -> Any:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._saver = inline_sqlite_saver().open(self.path)
        return self._saver

    async def close(self) -> None:
        if self._saver is not None:
            self._saver.close()
        self._saver = None


Retry = Callable[[str, Callable[[], Awaitable[Any]]], Awaitable[Any]]


class PostgresCheckpoints:
    """LangGraph's own tables (`checkpoints`, `checkpoint_blobs`, ...) and its `setup()`.

    `pool` is a psycopg `AsyncConnectionPool` with autocommit, dict rows and
    `prepare_threshold=0`, owned (opened and closed) by the caller. `retry(what, op)` runs `op`
    again when its connection was lost (the caller's policy); reads and writes of checkpoints
    are idempotent, so running one twice is harmless.
    """

    def __init__(self, pool: Any, retry: Retry | None = None) -> None:
        self.pool = pool
        self.retry = retry

    async def open(self) -> Any:
        saver = retrying_postgres_saver()(self.pool)
        saver.retry = self.retry
        async with self.pool.connection() as conn:
            await _take_setup_lock(conn)
            try:
                await saver.setup()
            finally:
                await conn.execute("SELECT pg_advisory_unlock(%s)", (SETUP_LOCK,))
        return saver

    async def close(self) -> None:
        return None


async def _take_setup_lock(conn: Any) -> None:
    """Take `SETUP_LOCK`, asking again until it is free, never waiting inside a statement:
    setup() builds indexes CONCURRENTLY, which waits for every open transaction in the database,
    so a process blocked in `pg_advisory_lock` would be waited for by the very setup it waits
    for (a deadlock only the statement timeout ends)."""
    while True:
        cur = await conn.execute("SELECT pg_try_advisory_lock(%s) AS taken", (SETUP_LOCK,))
        row = await cur.fetchone()
        if row and (row["taken"] if isinstance(row, Mapping) else row[0]):
            return
        await asyncio.sleep(SETUP_POLL_SECONDS)


@cache
def retrying_postgres_saver() -> Any:
    """AsyncPostgresSaver whose reads and writes go through `retry` (LangGraph imported here)."""
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

    class RetryingPostgresSaver(AsyncPostgresSaver):
        retry: Retry | None = None

        async def _again(self, op: Callable[[], Awaitable[Any]]) -> Any:
            return await (self.retry("checkpoints", op) if self.retry else op())

        async def aget_tuple(self, config: Any) -> Any:
            return await self._again(lambda: super(RetryingPostgresSaver, self).aget_tuple(config))

        async def aput(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
            return await self._again(
                lambda: super(RetryingPostgresSaver, self).aput(
                    config, checkpoint, metadata, new_versions
                )
            )

        async def aput_writes(
            self, config: Any, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
        ) -> None:
            await self._again(
                lambda: super(RetryingPostgresSaver, self).aput_writes(
                    config, writes, task_id, task_path
                )
            )

    return RetryingPostgresSaver


@cache
def inline_sqlite_saver() -> Any:
    """The InlineSqliteSaver class (LangGraph is imported on first use, not with the runner)."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    class InlineSqliteSaver(SqliteSaver):
        """Checkpoints in SQLite; `aget_tuple` & co. call the synchronous methods directly."""

        @classmethod
        def open(cls, path: Path) -> Any:
            conn = sqlite3.connect(str(path), check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")  # durable across a crash of the process
            saver = cls(conn)
            saver.setup()
            return saver

        def close(self) -> None:
            self.conn.close()

        async def aget_tuple(self, config: Any) -> Any:
            return self.get_tuple(config)

        async def alist(
            self,
            config: Any,
            *,
            filter: dict[str, Any] | None = None,
            before: Any = None,
            limit: int | None = None,
        ) -> AsyncIterator[Any]:
            for item in self.list(config, filter=filter, before=before, limit=limit):
                yield item

        async def aput(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
            return await with_room(
                "checkpoints", lambda: self.put(config, checkpoint, metadata, new_versions)
            )

        async def aput_writes(
            self, config: Any, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
        ) -> None:
            await with_room(
                "checkpoints", lambda: self.put_writes(config, writes, task_id, task_path)
            )

        async def adelete_thread(self, thread_id: str) -> None:
            self.delete_thread(thread_id)

        async def aget_delta_channel_history(
            self, *, config: Any, channels: Sequence[str]
        ) -> Mapping[str, Any]:
            return self.get_delta_channel_history(config=config, channels=channels)

    return InlineSqliteSaver
