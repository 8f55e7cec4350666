"""Long-term memory per person: a store (SQLite or PostgreSQL), a debounced LLM extraction pass,
injection."""

from agent.memory.records import Fact
from agent.memory.service import MemoryService, MemoryView
from agent.memory.sqlite import SqliteMemoryStore
from agent.memory.store import MemoryStore

__all__ = ["Fact", "MemoryService", "MemoryStore", "MemoryView", "SqliteMemoryStore"]
