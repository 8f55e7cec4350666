"""The service's SQLite database (conversations, delivery journal, schedules, the Gateway's
threads and runs): one connection, WAL.

Statements here take microseconds; a thread hop per statement would cost more than it saves.
The schema is versioned with `PRAGMA user_version`: each migration runs once, in order, inside a
transaction, so a database from any earlier release is brought up to date at start.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

V1_BASE = """
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
"""

V2_JOURNAL = """
CREATE TABLE journal (
    key TEXT PRIMARY KEY,
    channel TEXT NOT NULL,
    state TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    handle TEXT NOT NULL DEFAULT '',
    final TEXT NOT NULL DEFAULT '',
    parts_done INTEGER NOT NULL DEFAULT 0,
    sending INTEGER NOT NULL DEFAULT 0,
    reason TEXT NOT NULL DEFAULT '',
    told INTEGER NOT NULL DEFAULT 0,
    received_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    payload TEXT NOT NULL DEFAULT ''
);
CREATE INDEX journal_state ON journal(state, received_at);
INSERT INTO journal(key, channel, state, received_at, updated_at, payload)
    SELECT key, channel, CASE state WHEN 'done' THEN 'delivered' ELSE 'accepted' END,
           received_at, received_at, payload FROM inbox;
DROP TABLE inbox;
"""

V3_SCHEDULES = """
CREATE TABLE schedules (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    conv_key TEXT NOT NULL,
    chat_key TEXT NOT NULL,
    chat TEXT NOT NULL,
    creator_key TEXT NOT NULL,
    creator TEXT NOT NULL,
    prompt TEXT NOT NULL,
    kind TEXT NOT NULL,
    expr TEXT NOT NULL DEFAULT '',
    tz TEXT NOT NULL,
    label TEXT NOT NULL,
    next_run REAL,
    last_run REAL,
    state TEXT NOT NULL,
    missed TEXT NOT NULL,
    fresh_thread INTEGER NOT NULL DEFAULT 0,
    reason TEXT NOT NULL DEFAULT '',
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
CREATE INDEX schedules_due ON schedules(state, next_run);
CREATE INDEX schedules_chat ON schedules(chat_key);
CREATE INDEX schedules_creator ON schedules(creator_key);
CREATE TABLE schedule_runs (
    schedule_id INTEGER NOT NULL,
    due_at REAL NOT NULL,
    state TEXT NOT NULL,
    late INTEGER NOT NULL DEFAULT 0,
    reason TEXT NOT NULL DEFAULT '',
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    PRIMARY KEY (schedule_id, due_at)
);
CREATE INDEX schedule_runs_state ON schedule_runs(state);
CREATE TABLE chat_timezones (
    conv_key TEXT PRIMARY KEY,
    tz TEXT NOT NULL,
    updated_at REAL NOT NULL
);
"""

V4_GATEWAY = """
CREATE TABLE IF NOT EXISTS api_threads (
    thread_id TEXT PRIMARY KEY,
    metadata TEXT NOT NULL DEFAULT '{}',
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
CREATE TABLE api_runs (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT NOT NULL UNIQUE,
    thread_id TEXT NOT NULL,
    assistant_id TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    modes TEXT NOT NULL DEFAULT '[]',
    metadata TEXT NOT NULL DEFAULT '{}',
    kwargs TEXT NOT NULL DEFAULT '{}',
    multitask_strategy TEXT NOT NULL DEFAULT 'reject',
    error TEXT NOT NULL DEFAULT '',
    run_values TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX api_runs_thread ON api_runs(thread_id, seq);
CREATE INDEX api_runs_unfinished ON api_runs(status);
"""

V5_ACCESS = """
CREATE TABLE access_roles (
    person TEXT PRIMARY KEY,
    role TEXT NOT NULL,
    set_by TEXT NOT NULL,
    set_at REAL NOT NULL
);
CREATE TABLE access_link_codes (
    code_hash TEXT PRIMARY KEY,
    account TEXT NOT NULL,
    expires_at REAL NOT NULL
);
CREATE TABLE access_link_tries (
    account TEXT PRIMARY KEY,
    failures INTEGER NOT NULL,
    locked_until REAL NOT NULL
);
CREATE TABLE access_audit (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at REAL NOT NULL,
    kind TEXT NOT NULL,
    actor TEXT NOT NULL,
    person TEXT NOT NULL,
    chat TEXT NOT NULL,
    subject TEXT NOT NULL,
    outcome TEXT NOT NULL,
    duration_ms REAL,
    detail TEXT NOT NULL
);
CREATE INDEX access_audit_at ON access_audit(at);
CREATE INDEX access_audit_person ON access_audit(person, id);
"""

MIGRATIONS = (V1_BASE, V2_JOURNAL, V3_SCHEDULES, V4_GATEWAY, V5_ACCESS)


def open_db(data_dir: Path) -> sqlite3.Connection:
    data_dir.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(data_dir / "antler.db", isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    migrate(conn)
    return conn


def migrate(conn: sqlite3.Connection) -> int:
    """Apply the migrations this database has not seen; returns the schema version.

    The version is read under the write lock (BEGIN IMMEDIATE), so several processes starting
    at once on one data_dir migrate it once: the others wait, then find it done."""
    conn.execute("PRAGMA busy_timeout = 30000")
    conn.execute("BEGIN IMMEDIATE")
    try:
        (version,) = conn.execute("PRAGMA user_version").fetchone()
        for number, script in enumerate(MIGRATIONS[version:], start=version + 1):
            for statement in _statements(script):
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {number}")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    return len(MIGRATIONS)


def _statements(script: str) -> list[str]:
    """The statements of a migration script (executescript would commit the open transaction)."""
    found, current = [], ""
    for line in script.splitlines(keepends=True):
        current += line
        if sqlite3.complete_statement(current):
            found.append(current.strip())
            current = ""
    return [s for s in found if s]
