"""Long-term memory per person: a store (SQLite or PostgreSQL), a debounced LLM extraction pass,
injection."""

from agent.memory.records import Fact, MemoryStore
from agent.memory.service import MemoryService, MemoryView
from agent.memory.sqlite import SqliteMemoryStore

__all__ = ["Fact", "MemoryService", "MemoryStore", "MemoryView", "SqliteMemoryStore"]
