"""`channels.choices.ChoiceStore` in the service's SQLite file (table `choices`, bot/db.py)."""

from __future__ import annotations

import sqlite3

from agent.sql import SqliteSql
from bot.stores.choices import SqlChoiceStore


class SqliteChoiceStore(SqlChoiceStore):
    table = "choices"

    def __init__(self, db: sqlite3.Connection) -> None:
        super().__init__(SqliteSql(db))
