"""Antler's per-person fact routes: list (numbered as `/memory` shows them) and forget one.

A person is a platform-qualified user id (`telegram:42`); a linked account answers for the
person it is linked to. Facts are deleted by their `id` (stable), not by the `/memory` number.
"""

from __future__ import annotations

from pydantic import BaseModel

from agent.memory.records import Fact
from gateway.api.memory import TAG, service
from gateway.errors import ApiError
from gateway.registry import Call, Registry

api = Registry(tag=TAG)
PEOPLE = "/api/memory/people/{person}/facts"


class FactInfo(BaseModel):
    id: int
    number: int  # as `/memory` shows it (1-based)
    content: str
    category: str
    confidence: float
    source: str
    created_at: float


class PersonFacts(BaseModel):
    person: str
    contexts: dict[str, str]
    facts: list[FactInfo]


def fact_info(fact: Fact, number: int) -> FactInfo:
    return FactInfo(
        id=fact.id,
        number=number,
        content=fact.content,
        category=fact.category,
        confidence=fact.confidence,
        source=fact.source,
        created_at=fact.created_at,
    )


@api.route("GET", PEOPLE, errors=(422,))
async def get_person_facts(call: Call) -> PersonFacts:
    """What is remembered about a person"""
    memory = service(call)
    person = call.path["person"]
    view = await memory.listing(person)
    return PersonFacts(
        person=await memory.store.person(person),
        contexts=view.contexts,
        facts=[fact_info(f, n) for n, f in enumerate(view.facts, 1)],
    )


@api.route("DELETE", PEOPLE + "/{fact_id}", errors=(404, 422))
async def delete_person_fact(call: Call) -> FactInfo:
    """Forget one fact"""
    memory = service(call)
    person, fact_id = call.path["person"], int(call.path["fact_id"])
    view = await memory.listing(person)
    found = [(n, f) for n, f in enumerate(view.facts, 1) if f.id == fact_id]
    if not found:
        raise ApiError(404, f"fact {fact_id} of {person} not found")
    number, fact = found[0]
    if not await memory.store.forget(await memory.store.person(person), fact_id):
        raise ApiError(404, f"fact {fact_id} of {person} not found")
    return fact_info(fact, number)
