"""Which agent thread each chat (or topic) talks to, and its per-conversation settings.

`ConversationStore` is the interface (async, so a database server fits behind it) and its
rules, once over a dialect (agent/sql.py). The SQLite backend
(sqlite.py) keeps a small LRU of hot conversations, so 10,000 idle conversations cost disk, not
RAM (one process owns the file, so the cache cannot go stale); the PostgreSQL one (postgres.py)
caches nothing, since another process may change a conversation at any time.
"""

from __future__ import annotations

import time
import uuid
from collections import OrderedDict
from dataclasses import dataclass, fields

from agent.sql import Sql
from channels.base import ChatRef

TABLE = """
    key TEXT PRIMARY KEY,
    thread_id TEXT NOT NULL,
    channel TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    model TEXT,
    thinking $bool NOT NULL DEFAULT $false,
    plan_mode $bool NOT NULL DEFAULT $false,
    title TEXT NOT NULL DEFAULT '',
    created_at $real NOT NULL,
    updated_at $real NOT NULL"""  # the conversations' columns (bot/stores/schema.py)
# added later by each backend's migration: the agent profile a conversation talks to
ADD_AGENT = "ALTER TABLE {table} ADD COLUMN agent TEXT"
_COLUMNS = "key, thread_id, channel, chat_id, model, thinking, plan_mode, title, created_at, agent"


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
    agent: str | None = None  # the agent profile; None: lead_agent (agent/profiles.py)


SETTABLE = {f.name for f in fields(Conversation)} - {"key", "channel", "chat_id", "created_at"}


async def chat_defaults(store: ConversationStore, chat: ChatRef) -> tuple[str | None, str | None]:
    """The model and agent a new thread or topic of `chat` starts with: the chat-level
    settings (what /models and /agent set in the main chat, docs/channels/README.md "Scope")."""
    if chat.topic_id is None:
        return None, None
    parent = await store.get(chat.with_topic(None).key)
    return (parent.model, parent.agent) if parent else (None, None)


def check_settable(changes: dict[str, object]) -> None:
    unknown = set(changes) - SETTABLE
    if unknown:
        raise ValueError(f"not settable: {sorted(unknown)}")


class ConversationStore:
    """The conversations' interface and rules over a dialect (`Sql`); the backends name the
    table and say whether reads may be cached (`cache_size`: only where one process owns the
    rows)."""

    table = "conversations"

    def __init__(self, sql: Sql, cache_size: int = 0) -> None:
        self.sql = sql
        self._cache: OrderedDict[str, Conversation] = OrderedDict()
        self._cache_size = cache_size

    async def get(self, key: str) -> Conversation | None:
        if key in self._cache:
            self._cache.move_to_end(key)
            return self._cache[key]
        row = await self.sql.one(f"SELECT {_COLUMNS} FROM {self.table} WHERE key = ?", (key,))
        return self._remember(conversation_from_row(row)) if row else None

    async def get_or_create(self, chat: ChatRef) -> Conversation:
        """Created with `INSERT … ON CONFLICT DO NOTHING`, then whichever row won is read
        back: two processes creating the same chat's conversation at once end with one."""
        found = await self.get(chat.key)
        if found is not None:
            return found
        now = time.time()
        model, agent = await chat_defaults(self, chat)
        row = await self.sql.one(
            f"INSERT INTO {self.table}(key, thread_id, channel, chat_id, model, agent,"
            " created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (key)"
            f" DO NOTHING RETURNING {_COLUMNS}",
            (chat.key, new_thread_id(), chat.channel, chat.chat_id, model, agent, now, now),
        )
        if row is not None:
            return self._remember(conversation_from_row(row))
        found = await self.get(chat.key)  # another process created it a moment ago
        assert found is not None
        return found

    async def by_thread(self, thread_id: str) -> Conversation | None:
        row = await self.sql.one(
            f"SELECT {_COLUMNS} FROM {self.table} WHERE thread_id = ? LIMIT 1", (thread_id,)
        )
        return conversation_from_row(row) if row else None

    async def new_thread(self, chat: ChatRef) -> Conversation:
        """Point the conversation at a fresh thread, keeping its settings."""
        current = await self.get_or_create(chat)
        return await self.update(current.key, thread_id=new_thread_id())

    async def update(self, key: str, **changes: object) -> Conversation:
        """Change settable fields (KeyError for an unknown conversation, ValueError for a
        field that cannot be set)."""
        check_settable(changes)
        sets = "".join(f"{name} = ?, " for name in changes)
        row = await self.sql.one(
            f"UPDATE {self.table} SET {sets}updated_at = ? WHERE key = ? RETURNING {_COLUMNS}",
            (*changes.values(), time.time(), key),
        )
        if row is None:
            self._cache.pop(key, None)
            raise KeyError(key)
        return self._remember(conversation_from_row(row))

    async def count(self) -> int:
        row = await self.sql.one(f"SELECT COUNT(*) FROM {self.table}")
        return int(row[0]) if row else 0

    async def all(self, limit: int = 1000, offset: int = 0) -> list[Conversation]:
        """Most recently updated first."""
        rows = await self.sql.all(
            f"SELECT {_COLUMNS} FROM {self.table} ORDER BY updated_at DESC LIMIT ? OFFSET ?",
            (limit, offset),
        )
        return [conversation_from_row(row) for row in rows]

    def _remember(self, conv: Conversation) -> Conversation:
        if not self._cache_size:
            return conv
        self._cache[conv.key] = conv
        self._cache.move_to_end(conv.key)
        while len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return conv


def conversation_from_row(row: tuple[object, ...]) -> Conversation:
    key, thread_id, channel, chat_id, model, thinking, plan_mode, title, created, agent = row
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
        agent=str(agent) if agent else None,
    )


def new_thread_id() -> str:
    return str(uuid.uuid4())
