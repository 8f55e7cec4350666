"""The service's SQLite database (conversations, ledger). One connection, WAL, used from the loop.

Statements here take microseconds; a thread hop per statement would cost more than it saves.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

SCHEMA = """
CREATE TABLE IF NOT EXISTS conversations (
    key TEXT PRIMARY KEY,
    thread_id TEXT NOT NULL,
    channel TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    model TEXT,
    thinking INTEGER NOT NULL DEFAULT 0,
    plan_mode INTEGER NOT NULL DEFAULT 0,
    title TEXT NOT NULL DEFAULT '',
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS conversations_thread ON conversations(thread_id);
CREATE TABLE IF NOT EXISTS inbox (
    key TEXT PRIMARY KEY,
    channel TEXT NOT NULL,
    state TEXT NOT NULL,
    received_at REAL NOT NULL,
    payload TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS inbox_state ON inbox(state);
"""


def open_db(data_dir: Path) -> sqlite3.Connection:
    data_dir.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(data_dir / "antler.db", isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.executescript(SCHEMA)
    return conn
