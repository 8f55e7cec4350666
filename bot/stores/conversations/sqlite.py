"""Conversations in the service's SQLite file (table `conversations`, bot/db.py), with an LRU
of hot ones: one process owns the file, so a cached conversation cannot go stale."""

from __future__ import annotations

import sqlite3

from agent.sql import SqliteSql
from bot.stores.conversations import ConversationStore


class SqliteConversationStore(ConversationStore):
    table = "conversations"

    def __init__(self, db: sqlite3.Connection, cache_size: int = 512) -> None:
        super().__init__(SqliteSql(db), cache_size)
