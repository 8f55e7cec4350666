"""The checkpointer: LangGraph's SqliteSaver, its async methods running inline on the loop.

LangGraph's AsyncSqliteSaver (aiosqlite) hands every statement to a worker thread and back: a
turn costs about eight such hops. The statements themselves take microseconds (WAL,
synchronous=NORMAL, keyed by primary key), and (de)serialization runs on the loop in either
saver, so the hops cost more CPU and latency than they save. Same tables, same file: a database
written by AsyncSqliteSaver is read by this one and vice versa.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from langgraph.checkpoint.sqlite import SqliteSaver


class InlineSqliteSaver(SqliteSaver):
    """Checkpoints in SQLite; `aget_tuple` & co. call the synchronous methods directly."""

    @classmethod
    def open(cls, path: Path) -> InlineSqliteSaver:
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
        return self.put(config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self, config: Any, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        self.put_writes(config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        self.delete_thread(thread_id)

    async def aget_delta_channel_history(
        self, *, config: Any, channels: Sequence[str]
    ) -> Mapping[str, Any]:
        return self.get_delta_channel_history(config=config, channels=channels)
