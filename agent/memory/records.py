"""What the agent remembers about a person, as values, and the `MemoryStore` interface every
store implements (async, so a database server fits behind it): `SqliteMemoryStore` in
agent/memory/store.py, `PostgresMemoryStore` in agent/memory/pg_store.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

CONTEXT_KINDS = ("work", "personal", "top_of_mind")


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


class MemoryStore(Protocol):
    async def person(self, user_id: str) -> str:
        """The person `user_id` counts as (itself unless linked)."""
        ...

    async def link(self, user_id: str, person: str) -> None: ...

    async def unlink(self, user_id: str) -> bool:
        """`user_id` counts as itself again; False when it was not linked."""
        ...

    async def accounts(self, person: str) -> list[str]:
        """The accounts linked to `person` (itself not included unless linked), by id."""
        ...

    async def linked(self, query: str, limit: int) -> list[tuple[str, str]]:
        """(account, person) links whose account or person contains `query`."""
        ...

    async def facts(self, person: str) -> list[Fact]: ...

    async def contexts(self, person: str) -> dict[str, str]: ...

    async def context_times(self, person: str) -> dict[str, tuple[str, float]]:
        """Each context summary with the time it was last written."""
        ...

    async def people(self) -> list[tuple[str, int, float]]:
        """(person, facts, last change) for everyone remembered, most recent first."""
        ...

    async def counts(self) -> tuple[int, int, int]:
        """(people remembered, facts, exchanges waiting for extraction)."""
        ...

    async def apply(
        self,
        person: str,
        update: MemoryUpdate,
        *,
        source: str,
        max_facts: int,
        threshold: float,
        done: list[int] | None = None,
    ) -> None:
        """Merge an update in one transaction (see SqliteMemoryStore.apply)."""
        ...

    async def add_fact(self, person: str, fact: NewFact, *, source: str) -> Fact | None:
        """Remember one fact as given (an admin's edit); None when it is already known."""
        ...

    async def edit_fact(
        self,
        person: str,
        fact_id: int,
        content: str | None = None,
        category: str | None = None,
        confidence: float | None = None,
    ) -> bool:
        """Change a fact of `person`; False when the person has no such fact."""
        ...

    async def replace(
        self, person: str, contexts: dict[str, str], facts: list[NewFact], *, source: str
    ) -> None:
        """Make `contexts` and `facts` all that is remembered of `person` (one transaction)."""
        ...

    async def forget(self, person: str, fact_id: int) -> bool: ...

    async def clear(self, person: str) -> int: ...

    async def add_pending(
        self, person: str, thread_id: str, user_text: str, answer: str
    ) -> None: ...

    async def has_pending(self) -> bool: ...

    async def pending(self) -> list[PendingExchange]: ...

    async def failed_pending(self, ids: list[int], max_attempts: int = 3) -> None: ...

    def close(self) -> None: ...
