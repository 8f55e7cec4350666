"""DeerFlow's memory document (`MemoryResponse`) for one person, and back.

Antler remembers three context summaries per person (`work`, `personal`, `top_of_mind`) and
facts; DeerFlow's document has `user.{workContext, personalContext, topOfMind}`, three
`history` sections Antler does not keep (always empty), and `facts`. Times are ISO 8601 UTC;
field names are DeerFlow's (camelCase).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agent.memory.records import Fact, NewFact
from agent.memory.store import MemoryStore
from gateway.langgraph.serialize import iso

SECTIONS = {"work": "workContext", "personal": "personalContext", "top_of_mind": "topOfMind"}


class ContextSection(BaseModel):
    summary: str = ""
    updatedAt: str = ""


class UserContext(BaseModel):
    workContext: ContextSection = Field(default_factory=ContextSection)
    personalContext: ContextSection = Field(default_factory=ContextSection)
    topOfMind: ContextSection = Field(default_factory=ContextSection)


class HistoryContext(BaseModel):
    recentMonths: ContextSection = Field(default_factory=ContextSection)
    earlierContext: ContextSection = Field(default_factory=ContextSection)
    longTermBackground: ContextSection = Field(default_factory=ContextSection)


class MemoryFact(BaseModel):
    model_config = ConfigDict(extra="ignore")
    id: str = ""
    content: str = Field(min_length=1)
    category: str = "context"
    confidence: float = Field(default=0.5, ge=0, le=1)
    createdAt: str = ""
    updatedAt: str | None = None
    source: str = "unknown"


class PersonSummary(BaseModel):
    """Antler's addition to the aggregate document: who is remembered (no content)."""

    person: str
    facts: int
    lastUpdated: str


class MemoryDocument(BaseModel):
    """DeerFlow's `MemoryResponse`; `person` (Antler's) names whose memory it is."""

    model_config = ConfigDict(extra="ignore")
    version: str = "1.0"
    lastUpdated: str = ""
    user: UserContext = Field(default_factory=UserContext)
    history: HistoryContext = Field(default_factory=HistoryContext)
    facts: list[MemoryFact] = Field(default_factory=list)
    person: str | None = None
    people: list[PersonSummary] | None = None


def fact_out(fact: Fact) -> MemoryFact:
    return MemoryFact(
        id=str(fact.id),
        content=fact.content,
        category=fact.category,
        confidence=fact.confidence,
        createdAt=iso(fact.created_at),
        updatedAt=iso(fact.updated_at or fact.created_at),
        source=fact.source or "unknown",
    )


async def person_document(store: MemoryStore, person: str) -> MemoryDocument:
    contexts = await store.context_times(person)
    facts = await store.facts(person)
    user = UserContext(
        **{
            SECTIONS[kind]: ContextSection(summary=text, updatedAt=iso(at))
            for kind, (text, at) in contexts.items()
        }
    )
    times = [at for _, at in contexts.values()] + [f.updated_at or f.created_at for f in facts]
    return MemoryDocument(
        lastUpdated=iso(max(times)) if times else "",
        user=user,
        facts=[fact_out(f) for f in facts],
        person=person,
    )


async def aggregate_document(store: MemoryStore) -> MemoryDocument:
    """Everyone at once, without anyone's content: summaries and facts stay per person."""
    people = await store.people()
    return MemoryDocument(
        lastUpdated=iso(max(t for _, _, t in people)) if people else "",
        people=[PersonSummary(person=p, facts=n, lastUpdated=iso(t)) for p, n, t in people],
    )


def imported(doc: MemoryDocument) -> tuple[dict[str, str], list[NewFact]]:
    """The contexts and facts an imported document holds (the history sections are dropped)."""
    contexts = {kind: getattr(doc.user, field).summary for kind, field in SECTIONS.items()}
    return contexts, [NewFact(f.content, f.category, f.confidence) for f in doc.facts]


def dump(doc: MemoryDocument) -> dict[str, Any]:
    """DeerFlow leaves null fields out of memory responses."""
    out: dict[str, Any] = doc.model_dump(mode="json", exclude_none=True)
    return out
