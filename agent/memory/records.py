"""What the agent remembers about a person, as values. The store (its interface and rules,
`MemoryStore`) is agent/memory/store.py, over the backends in sqlite.py and postgres.py."""

from __future__ import annotations

from dataclasses import dataclass

CONTEXT_KINDS = ("work", "personal", "top_of_mind")
# the person's own profile (DeerFlow's USER.md): written by them (the API), never by extraction;
# kept in the contexts table under this kind
PROFILE_KIND = "profile"


@dataclass(frozen=True, slots=True)
class Fact:
    id: int
    content: str
    category: str
    confidence: float
    source: str = ""
    created_at: float = 0.0
    updated_at: float = 0.0


@dataclass(frozen=True, slots=True)
class NewFact:
    content: str
    category: str
    confidence: float


@dataclass(frozen=True, slots=True)
class MemoryUpdate:
    """What one extraction pass proposes: context summaries, new facts, facts to drop."""

    contexts: dict[str, str]
    facts: tuple[NewFact, ...] = ()
    remove: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class PendingExchange:
    id: int
    person: str
    thread_id: str
    user_text: str
    answer: str
