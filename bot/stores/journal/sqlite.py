"""The delivery journal in the service's SQLite file (table `journal`, bot/db.py): one process
owns every row, so the rules in `SqlJournal` need nothing of their own here."""

from __future__ import annotations

import sqlite3

from agent.sql import SqliteSql
from bot.stores.journal import SqlJournal


class SqliteJournal(SqlJournal):
    table = "journal"

    def __init__(self, db: sqlite3.Connection, window_hours: float) -> None:
        super().__init__(SqliteSql(db), window_hours)
