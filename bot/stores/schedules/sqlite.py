"""Schedules, their runs and the chats' time zones in the service's SQLite file (tables
`schedules`, `schedule_runs`, `chat_timezones`, bot/db.py)."""

from __future__ import annotations

import sqlite3

from agent.sql import SqliteSql
from bot.stores.schedules import ScheduleStore


class SqliteScheduleStore(ScheduleStore):
    prefix = ""

    def __init__(self, db: sqlite3.Connection) -> None:
        super().__init__(SqliteSql(db))
