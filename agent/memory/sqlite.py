"""`SqliteMemoryStore`: what the agent remembers about each person, in `<data_dir>/memory.db`
(statements take microseconds: they run inline on the loop). The rules are agent/memory/store.py;
one process owns the file, so it takes every waiting exchange.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from agent.memory.store import MemoryStore
from agent.sql import SqliteSql

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


class SqliteMemoryStore(MemoryStore):
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.executescript(_SCHEMA)
        super().__init__(SqliteSql(self.db))

    def close(self) -> None:
        self.db.close()
