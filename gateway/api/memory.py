"""Memory in DeerFlow's shapes: the memory document, fact create/edit/delete, export/import,
config, status and reload; plus Antler's per-person fact listing.

A person is a platform-qualified user id (`telegram:42`), chosen with `?person=`; a linked
account answers for the person it is linked to. Without `?person=` every route acts on the
Gateway caller's own person, `api` (the person Gateway runs speak as: whoever holds the admin
token, or anyone on loopback without one), so DeerFlow's memory page, which sends no person,
reads and edits that person's memory and never another's; its document also lists who is
remembered (`people`, with no one's content).
Pending exchanges are not part of the document; `GET /api/memory/status` counts them.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from agent.memory import MemoryService
from agent.memory.records import NewFact
from gateway.api.memory_document import (
    MemoryDocument,
    aggregate_document,
    dump,
    imported,
    person_document,
)
from gateway.errors import ApiError
from gateway.langgraph.schemas import Strict
from gateway.registry import PATH_PARAMS, Call, Registry
from gateway.service import CALLER_PERSON

TAG = "memory"
api = Registry(tag=TAG)
BASE = "/api/memory"
FACT = BASE + "/facts/{fact_id}"


class PersonQuery(Strict):
    person: str | None = Field(default=None, pattern=PATH_PARAMS["person"])


class FactCreate(Strict):
    content: str = Field(min_length=1, max_length=4000)
    category: str = Field(default="context", min_length=1, max_length=64)
    confidence: float = Field(default=0.5, ge=0, le=1)


class FactPatch(Strict):
    content: str | None = Field(default=None, min_length=1, max_length=4000)
    category: str | None = Field(default=None, min_length=1, max_length=64)
    confidence: float | None = Field(default=None, ge=0, le=1)


class MemoryConfigResponse(BaseModel):
    enabled: bool
    mode: str
    injection_enabled: bool
    shutdown_flush_timeout_seconds: float
    manager_class: str
    backend_config: dict[str, Any]


class MemoryCounts(BaseModel):
    people: int
    facts: int
    pending: int
    flush_scheduled: bool
    flushes: int


class MemoryStatusResponse(BaseModel):
    config: MemoryConfigResponse
    data: MemoryDocument
    counts: MemoryCounts


def service(call: Call) -> MemoryService:
    memory: MemoryService = call.gw.service.runner.memory
    return memory


async def person_of(call: Call) -> str:
    """The person named with `?person=` (a linked account: its person), else the caller's."""
    q: PersonQuery = call.query
    return await service(call).store.person(q.person or CALLER_PERSON)


async def document(call: Call) -> dict[str, Any]:
    store = service(call).store
    doc = await person_document(store, await person_of(call))
    if call.query.person is None:  # DeerFlow's page: the caller's memory, and who is remembered
        doc.people = (await aggregate_document(store)).people
    return dump(doc)


def config_response(memory: MemoryService) -> MemoryConfigResponse:
    return MemoryConfigResponse(
        enabled=memory.enabled,
        mode="middleware",
        injection_enabled=memory.enabled,
        shutdown_flush_timeout_seconds=0.0,  # pending exchanges are kept for the next start
        manager_class="antler",
        backend_config=memory.config.model_dump(mode="json"),
    )


def opts(**extra: Any) -> dict[str, Any]:
    return {"tag": TAG, "query": PersonQuery, "response": MemoryDocument, "errors": (422,), **extra}


@api.route("GET", BASE, **opts())
async def get_memory(call: Call) -> dict[str, Any]:
    """A memory document (?person=; else the caller's)"""
    return await document(call)


@api.route("DELETE", BASE, **opts())
async def clear_memory(call: Call) -> dict[str, Any]:
    """Forget everything about a person"""
    person = await person_of(call)
    await service(call).store.clear(person or "")
    return await document(call)


@api.route("POST", BASE + "/reload", **opts())
async def reload_memory(call: Call) -> dict[str, Any]:
    """Reopen the memory database; the document"""
    service(call).reload()
    return await document(call)


@api.route("GET", BASE + "/export", **opts())
async def export_memory(call: Call) -> dict[str, Any]:
    """Export the memory document"""
    return await document(call)


@api.route("POST", BASE + "/import", body=MemoryDocument, **opts())
async def import_memory(call: Call) -> dict[str, Any]:
    """Replace a person's memory with a document"""
    person = await person_of(call)
    doc: MemoryDocument = call.body  # `people` (a listing without content) is ignored
    contexts, facts = imported(doc)
    await service(call).store.replace(person, contexts, facts, source="import")
    return await document(call)


@api.route("POST", BASE + "/facts", body=FactCreate, **opts(errors=(409, 422)))
async def create_fact(call: Call) -> dict[str, Any]:
    """Remember a fact about a person"""
    person = await person_of(call)
    body: FactCreate = call.body
    fact = NewFact(body.content, body.category, body.confidence)
    if await service(call).store.add_fact(person, fact, source="api") is None:
        raise ApiError(409, "A fact with the same content already exists.")
    return await document(call)


@api.route("PATCH", FACT, body=FactPatch, **opts(errors=(404, 422)))
async def edit_fact(call: Call) -> dict[str, Any]:
    """Edit a fact of a person"""
    person = await person_of(call)
    body: FactPatch = call.body
    fact_id = int(call.path["fact_id"])
    changed = await service(call).store.edit_fact(
        person, fact_id, body.content, body.category, body.confidence
    )
    if not changed:
        raise ApiError(404, f"Memory fact '{fact_id}' not found.")
    return await document(call)


@api.route("DELETE", FACT, **opts(errors=(404, 422)))
async def delete_fact(call: Call) -> dict[str, Any]:
    """Forget a fact of a person"""
    person = await person_of(call)
    fact_id = int(call.path["fact_id"])
    if not await service(call).store.forget(person, fact_id):
        raise ApiError(404, f"Memory fact '{fact_id}' not found.")
    return await document(call)


@api.route("GET", BASE + "/config")
async def get_memory_config(call: Call) -> MemoryConfigResponse:
    """The memory settings (DeerFlow's shape)"""
    return config_response(service(call))


@api.route("GET", BASE + "/status", **opts(response=MemoryStatusResponse))
async def get_memory_status(call: Call) -> dict[str, Any]:
    """Config, the document and counts"""
    memory = service(call)
    people, facts, pending = await memory.store.counts()
    counts = MemoryCounts(
        people=people,
        facts=facts,
        pending=pending,
        flush_scheduled=memory.flush_scheduled,
        flushes=memory.flushes,
    )
    return {
        "config": config_response(memory).model_dump(mode="json"),
        "data": await document(call),
        "counts": counts.model_dump(mode="json"),
    }
