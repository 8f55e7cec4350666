"""Threads the bot has answered in, persisted so thread follow survives restarts."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from channels._threads import call_blocking


class FollowedThreads:
    """A set of (channel, thread_ts) kept in memory and in a small SQLite file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._known: set[tuple[str, str]] = set()
        self._db: sqlite3.Connection | None = None

    async def open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS followed (channel TEXT, thread_ts TEXT,"
            " PRIMARY KEY (channel, thread_ts))"
        )
        rows = self._db.execute("SELECT channel, thread_ts FROM followed").fetchall()
        self._known = {(c, t) for c, t in rows}

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def __contains__(self, key: tuple[str, str]) -> bool:
        return key in self._known

    async def add(self, channel: str, thread_ts: str) -> None:
        key = (channel, thread_ts)
        if key in self._known or self._db is None:
            return
        self._known.add(key)
        db = self._db
        await call_blocking(
            db.execute, "INSERT OR IGNORE INTO followed VALUES (?, ?)", (channel, thread_ts)
        )
