"""Threads the API knows: those created over the API (`GatewayRecords`, bot/stores/gateway)
and those chats created (the conversations), shown with their channel, chat and title."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from bot.stores.conversations import Conversation, ConversationStore
from bot.stores.gateway import GatewayRecords, ThreadRecord


@dataclass(frozen=True)
class ThreadRow(ThreadRecord):
    """A thread as the API shows it: its record, and the chat that owns it, if one does."""

    conversation: str | None = None  # the chat's key when a chat owns the thread


class ThreadStore:
    def __init__(self, records: GatewayRecords, conversations: ConversationStore) -> None:
        self.records = records
        self.conversations = conversations

    async def get(self, thread_id: str) -> ThreadRow | None:
        row = await self.records.thread(thread_id)
        conv = await self.conversations.by_thread(thread_id)
        if row is None and conv is None:
            return None
        return _merge(row, conv)

    async def create(self, thread_id: str, metadata: dict[str, Any]) -> ThreadRow:
        await self.records.create_thread(thread_id, metadata)
        found = await self.get(thread_id)
        assert found is not None
        return found

    async def patch(self, thread_id: str, metadata: dict[str, Any]) -> ThreadRow:
        current = await self.get(thread_id)
        if current is None:
            raise KeyError(thread_id)
        own = await self.records.thread(thread_id)
        merged = {**(own.metadata if own else {}), **metadata}
        await self.records.put_thread(thread_id, merged, current.created_at)
        found = await self.get(thread_id)
        assert found is not None
        return found

    async def delete(self, thread_id: str) -> None:
        """The thread's record and its runs' records."""
        await self.records.delete_thread(thread_id)

    async def all(self) -> list[ThreadRow]:
        """Every thread, newest first (chats and API threads)."""
        by_id = {r.thread_id: r for r in await self.records.threads()}
        out = []
        for conv in await self.conversations.all(limit=100_000):
            out.append(_merge(by_id.pop(conv.thread_id, None), conv))
        out.extend(_merge(row, None) for row in by_id.values())
        out.sort(key=lambda t: t.updated_at, reverse=True)
        return out


def _merge(row: ThreadRecord | None, conv: Conversation | None) -> ThreadRow:
    metadata = dict(row.metadata) if row else {}
    created = row.created_at if row else (conv.created_at if conv else time.time())
    updated = row.updated_at if row else created
    if conv is not None:
        metadata = {
            **metadata,
            "channel": conv.channel,
            "chat_id": conv.chat_id,
            "title": conv.title,
            "conversation": conv.key,
        }
        created = min(created, conv.created_at) if row else conv.created_at
    return ThreadRow(
        conv.thread_id if conv else row.thread_id if row else "",
        created,
        updated,
        metadata,
        conv.key if conv else None,
    )
