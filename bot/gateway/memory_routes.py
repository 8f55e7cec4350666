"""Memory: a summary, the config, the status, reload, and one person's facts (list, delete).

A person is a platform-qualified user id (`telegram:42`); a linked account answers for the
person it is linked to. Facts are deleted by their `id` (stable), not by the `/memory` number.
"""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import BaseModel

from agent.memory import Fact, MemoryService
from bot.gateway.errors import ApiError
from bot.gateway.registry import Call, Registry

api = Registry()
TAG = "memory"
BASE = "/api/memory"


class MemorySummary(BaseModel):
    enabled: bool
    people: int
    facts: int
    pending: int


class MemoryStatus(MemorySummary):
    flush_scheduled: bool
    flushes: int


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


def service(call: Call) -> MemoryService:
    memory: MemoryService = call.gw.app.runner.memory
    return memory


def fact_info(fact: Fact, number: int) -> FactInfo:
    return FactInfo(id=fact.id, number=number, content=fact.content, category=fact.category,
                    confidence=fact.confidence, source=fact.source, created_at=fact.created_at)


async def summary(memory: MemoryService) -> MemorySummary:
    people, facts, pending = await asyncio.to_thread(memory.store.counts)
    return MemorySummary(enabled=memory.enabled, people=people, facts=facts, pending=pending)


@api.route("GET", BASE, summary="How much is remembered", tag=TAG, response=MemorySummary)
async def get_memory(call: Call) -> MemorySummary:
    return await summary(service(call))


@api.route("GET", BASE + "/config", summary="The memory settings", tag=TAG,
           response=dict[str, Any])
async def get_memory_config(call: Call) -> dict[str, Any]:
    config: dict[str, Any] = service(call).config.model_dump(mode="json")
    return config


@api.route("GET", BASE + "/status", summary="The summary plus the extraction pass's state",
           tag=TAG, response=MemoryStatus)
async def get_memory_status(call: Call) -> MemoryStatus:
    memory = service(call)
    base = await summary(memory)
    return MemoryStatus(**base.model_dump(), flush_scheduled=memory.flush_scheduled,
                        flushes=memory.flushes)


@api.route("POST", BASE + "/reload", summary="Reopen the memory database", tag=TAG,
           response=MemorySummary)
async def reload_memory(call: Call) -> MemorySummary:
    memory = service(call)
    memory.reload()
    return await summary(memory)


@api.route("GET", BASE + "/people/{person}/facts", summary="What is remembered about a person",
           tag=TAG, response=PersonFacts, errors=(422,))
async def get_person_facts(call: Call) -> PersonFacts:
    memory = service(call)
    person = call.path["person"]
    view = await asyncio.to_thread(memory.listing, person)
    return PersonFacts(person=memory.store.person(person), contexts=view.contexts,
                       facts=[fact_info(f, n) for n, f in enumerate(view.facts, 1)])


@api.route("DELETE", BASE + "/people/{person}/facts/{fact_id}", summary="Forget one fact",
           tag=TAG, response=FactInfo, errors=(404, 422))
async def delete_person_fact(call: Call) -> FactInfo:
    memory = service(call)
    person, fact_id = call.path["person"], int(call.path["fact_id"])
    view = await asyncio.to_thread(memory.listing, person)
    found = [(n, f) for n, f in enumerate(view.facts, 1) if f.id == fact_id]
    if not found:
        raise ApiError(404, f"fact {fact_id} of {person} not found")
    number, fact = found[0]
    if not await asyncio.to_thread(memory.store.forget, memory.store.person(person), fact_id):
        raise ApiError(404, f"fact {fact_id} of {person} not found")
    return fact_info(fact, number)
