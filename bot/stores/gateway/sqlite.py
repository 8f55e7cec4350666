"""The Gateway's records in the service's SQLite file (tables `api_threads`, `api_runs`,
bot/db.py): one process, so every run found unfinished when the stores open is an orphan."""

from __future__ import annotations

import sqlite3

from agent.sql import SqliteSql
from bot.stores.gateway import GatewayRecords


class SqliteGatewayRecords(GatewayRecords):
    prefix = ""

    def __init__(self, db: sqlite3.Connection) -> None:
        super().__init__(SqliteSql(db))
