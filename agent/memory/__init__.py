"""Long-term memory per person: a SQLite store, a debounced LLM extraction pass, injection."""

from agent.memory.service import MemoryService, MemoryView
from agent.memory.store import Fact, MemoryStore

__all__ = ["Fact", "MemoryService", "MemoryStore", "MemoryView"]
