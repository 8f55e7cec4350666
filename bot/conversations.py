"""Which agent thread each chat (or topic) talks to, and its per-conversation settings.

`ConversationStore` is the interface (async, so a database server fits behind it).
`SqliteConversationStore` keeps the rows in the service's SQLite file with a small LRU of hot
conversations, so 10,000 idle conversations cost disk, not RAM (one process owns the file, so
the cache cannot go stale). The Postgres store is in bot/stores/pg_conversations.py.
"""

from __future__ import annotations

import sqlite3
import time
import uuid
from collections import OrderedDict
from dataclasses import dataclass, fields, replace
from typing import Protocol

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


SETTABLE = {f.name for f in fields(Conversation)} - {"key", "channel", "chat_id", "created_at"}


class ConversationStore(Protocol):
    async def get(self, key: str) -> Conversation | None: ...

    async def get_or_create(self, chat: ChatRef) -> Conversation:
        """The chat's conversation; created once even when several processes ask at once."""
        ...

    async def by_thread(self, thread_id: str) -> Conversation | None: ...

    async def new_thread(self, chat: ChatRef) -> Conversation:
        """Point the conversation at a fresh thread, keeping its settings."""
        ...

    async def update(self, key: str, **changes: object) -> Conversation:
        """Change settable fields (KeyError for an unknown conversation, ValueError for a
        field that cannot be set)."""
        ...

    async def count(self) -> int: ...

    async def all(self, limit: int = 1000, offset: int = 0) -> list[Conversation]:
        """Most recently updated first."""
        ...


async def chat_default_model(store: ConversationStore, chat: ChatRef) -> str | None:
    """The model a new thread or topic of `chat` starts with: the chat-level setting (what
    /models set in the main chat, docs/channels/README.md "Scope")."""
    if chat.topic_id is None:
        return None
    parent = await store.get(chat.with_topic(None).key)
    return parent.model if parent else None


def check_settable(changes: dict[str, object]) -> None:
    unknown = set(changes) - SETTABLE
    if unknown:
        raise ValueError(f"not settable: {sorted(unknown)}")


class SqliteConversationStore:
    def __init__(self, db: sqlite3.Connection, cache_size: int = 512) -> None:
        self.db = db
        self._cache: OrderedDict[str, Conversation] = OrderedDict()
        self._cache_size = cache_size

    async def get(self, key: str) -> Conversation | None:
        if key in self._cache:
            self._cache.move_to_end(key)
            return self._cache[key]
        row = self.db.execute(f"SELECT {_COLUMNS} FROM conversations WHERE key = ?", (key,))
        found = row.fetchone()
        return self._remember(conversation_from_row(found)) if found else None

    async def get_or_create(self, chat: ChatRef) -> Conversation:
        return await self.get(chat.key) or await self._insert(chat)

    async def by_thread(self, thread_id: str) -> Conversation | None:
        row = self.db.execute(
            f"SELECT {_COLUMNS} FROM conversations WHERE thread_id = ?", (thread_id,)
        ).fetchone()
        return conversation_from_row(row) if row else None

    async def new_thread(self, chat: ChatRef) -> Conversation:
        """Point the conversation at a fresh thread, keeping its settings."""
        current = await self.get_or_create(chat)
        return await self.update(current.key, thread_id=new_thread_id())

    async def update(self, key: str, **changes: object) -> Conversation:
        check_settable(changes)
        current = await self.get(key)
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

    async def count(self) -> int:
        (n,) = self.db.execute("SELECT COUNT(*) FROM conversations").fetchone()
        return int(n)

    async def all(self, limit: int = 1000, offset: int = 0) -> list[Conversation]:
        rows = self.db.execute(
            f"SELECT {_COLUMNS} FROM conversations ORDER BY updated_at DESC LIMIT ? OFFSET ?",
            (limit, offset),
        )
        return [conversation_from_row(r) for r in rows.fetchall()]

    async def _insert(self, chat: ChatRef) -> Conversation:
        now = time.time()
        conv = Conversation(
            key=chat.key,
            thread_id=new_thread_id(),
            channel=chat.channel,
            chat_id=chat.chat_id,
            model=await chat_default_model(self, chat),
            created_at=now,
        )
        self.db.execute(
            "INSERT OR IGNORE INTO conversations(key, thread_id, channel, chat_id, model,"
            " created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (conv.key, conv.thread_id, conv.channel, conv.chat_id, conv.model, now, now),
        )
        return await self.get(chat.key) or conv

    def _remember(self, conv: Conversation) -> Conversation:
        self._cache[conv.key] = conv
        self._cache.move_to_end(conv.key)
        while len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return conv


def conversation_from_row(row: tuple[object, ...]) -> Conversation:
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


def new_thread_id() -> str:
    return str(uuid.uuid4())
