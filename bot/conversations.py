"""Which agent thread each chat (or topic) talks to, and its per-conversation settings.

Rows live in SQLite; a small LRU keeps hot conversations in memory, so 10,000 idle
conversations cost disk, not RAM.
"""

from __future__ import annotations

import sqlite3
import time
import uuid
from collections import OrderedDict
from dataclasses import dataclass, fields, replace

from channels.base import ChatRef

_COLUMNS = "key, thread_id, channel, chat_id, model, thinking, plan_mode, title, created_at"


@dataclass(frozen=True, slots=True)
class Conversation:
    key: str
    thread_id: str
    channel: str
    chat_id: str
    model: str | None = None
    thinking: bool = False
    plan_mode: bool = False
    title: str = ""
    created_at: float = 0.0


_SETTABLE = {f.name for f in fields(Conversation)} - {"key", "channel", "chat_id", "created_at"}


class ConversationStore:
    def __init__(self, db: sqlite3.Connection, cache_size: int = 512) -> None:
        self.db = db
        self._cache: OrderedDict[str, Conversation] = OrderedDict()
        self._cache_size = cache_size

    def get(self, key: str) -> Conversation | None:
        if key in self._cache:
            self._cache.move_to_end(key)
            return self._cache[key]
        row = self.db.execute(f"SELECT {_COLUMNS} FROM conversations WHERE key = ?", (key,))
        found = row.fetchone()
        return self._remember(_row(found)) if found else None

    def get_or_create(self, chat: ChatRef) -> Conversation:
        return self.get(chat.key) or self._insert(chat)

    def by_thread(self, thread_id: str) -> Conversation | None:
        row = self.db.execute(
            f"SELECT {_COLUMNS} FROM conversations WHERE thread_id = ?", (thread_id,)
        ).fetchone()
        return _row(row) if row else None

    def new_thread(self, chat: ChatRef) -> Conversation:
        """Point the conversation at a fresh thread, keeping its settings."""
        current = self.get_or_create(chat)
        return self.update(current.key, thread_id=_new_thread_id())

    def update(self, key: str, **changes: object) -> Conversation:
        unknown = set(changes) - _SETTABLE
        if unknown:
            raise ValueError(f"not settable: {sorted(unknown)}")
        current = self.get(key)
        if current is None:
            raise KeyError(key)
        updated = replace(current, **changes)  # type: ignore[arg-type]
        sets = ", ".join(f"{name} = ?" for name in changes)
        values = [getattr(updated, name) for name in changes]
        self.db.execute(
            f"UPDATE conversations SET {sets}, updated_at = ? WHERE key = ?",
            (*values, time.time(), key),
        )
        return self._remember(updated)

    def count(self) -> int:
        (n,) = self.db.execute("SELECT COUNT(*) FROM conversations").fetchone()
        return int(n)

    def all(self, limit: int = 1000, offset: int = 0) -> list[Conversation]:
        rows = self.db.execute(
            f"SELECT {_COLUMNS} FROM conversations ORDER BY updated_at DESC LIMIT ? OFFSET ?",
            (limit, offset),
        )
        return [_row(r) for r in rows.fetchall()]

    def _insert(self, chat: ChatRef) -> Conversation:
        now = time.time()
        conv = Conversation(
            key=chat.key,
            thread_id=_new_thread_id(),
            channel=chat.channel,
            chat_id=chat.chat_id,
            created_at=now,
        )
        self.db.execute(
            "INSERT OR IGNORE INTO conversations(key, thread_id, channel, chat_id, created_at,"
            " updated_at) VALUES (?, ?, ?, ?, ?, ?)",
            (conv.key, conv.thread_id, conv.channel, conv.chat_id, now, now),
        )
        return self.get(chat.key) or conv

    def _remember(self, conv: Conversation) -> Conversation:
        self._cache[conv.key] = conv
        self._cache.move_to_end(conv.key)
        while len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return conv


def _row(row: tuple[object, ...]) -> Conversation:
    key, thread_id, channel, chat_id, model, thinking, plan_mode, title, created = row
    return Conversation(
        key=str(key),
        thread_id=str(thread_id),
        channel=str(channel),
        chat_id=str(chat_id),
        model=str(model) if model else None,
        thinking=bool(thinking),
        plan_mode=bool(plan_mode),
        title=str(title or ""),
        created_at=float(created),  # type: ignore[arg-type]
    )


def _new_thread_id() -> str:
    return str(uuid.uuid4())
