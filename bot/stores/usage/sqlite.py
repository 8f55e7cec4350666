"""The usage store in the service's SQLite file (tables `usage`, `usage_days`,
`usage_warned`, bot/db.py)."""

from __future__ import annotations

import sqlite3

from agent.sql import SqliteSql
from bot.stores.usage import UsageStore


class SqliteUsageStore(UsageStore):
    table = "usage"
    days_table = "usage_days"
    warned_table = "usage_warned"

    def __init__(self, db: sqlite3.Connection) -> None:
        super().__init__(SqliteSql(db))
