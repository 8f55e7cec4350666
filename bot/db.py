"""The service's SQLite database (conversations, delivery journal, schedules, the Gateway's
threads and runs, choices waiting for a press): one connection, WAL.

Statements here take microseconds; a thread hop per statement would cost more than it saves.
The schema is versioned with `PRAGMA user_version`: each migration runs once, in order, inside a
transaction, so a database from any earlier release is brought up to date at start. The stores'
columns are written once in their packages (bot/stores/schema.py renders them for SQLite).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from bot.stores import conversations, gateway, journal, schedules, usage
from bot.stores.schema import SQLITE, columns, pending

V1_BASE = f"""
CREATE TABLE IF NOT EXISTS conversations ({columns(conversations.TABLE, SQLITE)}
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

V2_JOURNAL = f"""
CREATE TABLE journal ({columns(journal.TABLE, SQLITE)}
);
CREATE INDEX journal_state ON journal(state, received_at);
INSERT INTO journal(key, channel, state, received_at, updated_at, payload)
    SELECT key, channel, CASE state WHEN 'done' THEN 'delivered' ELSE 'accepted' END,
           received_at, received_at, payload FROM inbox;
DROP TABLE inbox;
"""

V3_SCHEDULES = f"""
CREATE TABLE schedules ({columns(schedules.SCHEDULES_TABLE, SQLITE)}
);
CREATE INDEX schedules_due ON schedules(state, next_run);
CREATE INDEX schedules_chat ON schedules(chat_key);
CREATE INDEX schedules_creator ON schedules(creator_key);
CREATE TABLE schedule_runs ({columns(schedules.RUNS_TABLE, SQLITE)}
);
CREATE INDEX schedule_runs_state ON schedule_runs(state);
CREATE TABLE chat_timezones ({columns(schedules.ZONES_TABLE, SQLITE)}
);
"""

V4_GATEWAY = f"""
CREATE TABLE IF NOT EXISTS api_threads ({columns(gateway.THREADS_TABLE, SQLITE)}
);
CREATE TABLE api_runs ({columns(gateway.RUNS_TABLE, SQLITE)}
);
CREATE INDEX api_runs_thread ON api_runs(thread_id, seq);
CREATE INDEX api_runs_unfinished ON api_runs(status);
"""

V5_CHOICES = """
CREATE TABLE choices (
    key TEXT PRIMARY KEY,
    channel TEXT NOT NULL,
    payload TEXT NOT NULL,
    chosen INTEGER,
    created_at REAL NOT NULL
);
CREATE INDEX choices_created ON choices(created_at);
"""

V6_ACCESS = """
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

V7_USAGE = f"""
CREATE TABLE usage ({columns(usage.USAGE_TABLE, SQLITE)}
);
CREATE TABLE usage_days ({columns(usage.DAYS_TABLE, SQLITE)}
);
CREATE TABLE usage_warned ({columns(usage.WARNED_TABLE, SQLITE)}
);
{usage.INDEXES.format(t="usage")};
"""

V8_AGENTS = conversations.ADD_AGENT.format(table="conversations")
V9_LANGUAGES = """
CREATE TABLE access_languages (
    person TEXT PRIMARY KEY,
    locale TEXT NOT NULL,
    set_at REAL NOT NULL
);
"""

MIGRATIONS = (
    V1_BASE,
    V2_JOURNAL,
    V3_SCHEDULES,
    V4_GATEWAY,
    V5_CHOICES,
    V6_ACCESS,
    V7_USAGE,
    V8_AGENTS,
    V9_LANGUAGES,
)


def open_db(data_dir: Path) -> sqlite3.Connection:
    data_dir.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(data_dir / "antler.db", isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    migrate(conn)
    return conn


def migrate(conn: sqlite3.Connection) -> int:
    """Apply the migrations this database has not seen (bot/stores/schema.py); returns the
    schema version.

    The version is read under the write lock (BEGIN IMMEDIATE), so several processes starting
    at once on one data_dir migrate it once: the others wait, then find it done."""
    conn.execute("PRAGMA busy_timeout = 30000")
    conn.execute("BEGIN IMMEDIATE")
    try:
        (version,) = conn.execute("PRAGMA user_version").fetchone()
        for number, steps in pending(MIGRATIONS, version):
            for statement in steps:
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {number}")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    return len(MIGRATIONS)
