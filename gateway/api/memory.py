"""Memory in DeerFlow's shapes: the memory document, fact create/edit/delete, export/import,
config, status and reload; plus Antler's per-person fact listing.

A person is a platform-qualified user id (`telegram:42`), chosen with `?person=`; a linked
account answers for the person it is linked to. Without `?person=` reads answer the aggregate
document: who is remembered (`people`), with no one's summaries or facts, so nothing of one
person can end up in another's view or import. Writes need `?person=` (422 otherwise).
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

api = Registry()
TAG = "memory"
BASE = "/api/memory"
FACT = BASE + "/facts/{fact_id}"
NEED_PERSON = "name the person with ?person=<platform:user id> (GET /api/memory lists them)"


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


async def person_of(call: Call, *, required: bool = False) -> str | None:
    q: PersonQuery = call.query
    if q.person is None:
        if required:
            raise ApiError(
                422, [{"loc": ["query", "person"], "type": "missing", "msg": NEED_PERSON}]
            )
        return None
    return await service(call).store.person(q.person)


async def document(call: Call) -> dict[str, Any]:
    store = service(call).store
    person = await person_of(call)
    if person is None:
        return dump(await aggregate_document(store))
    return dump(await person_document(store, person))


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


@api.route("GET", BASE, summary="The memory document (?person=; else who is remembered)", **opts())
async def get_memory(call: Call) -> dict[str, Any]:
    return await document(call)


@api.route("DELETE", BASE, summary="Forget everything about a person (?person= required)", **opts())
async def clear_memory(call: Call) -> dict[str, Any]:
    person = await person_of(call, required=True)
    await service(call).store.clear(person or "")
    return await document(call)


@api.route("POST", BASE + "/reload", summary="Reopen the memory database; the document", **opts())
async def reload_memory(call: Call) -> dict[str, Any]:
    service(call).reload()
    return await document(call)


@api.route("GET", BASE + "/export", summary="Export the memory document", **opts())
async def export_memory(call: Call) -> dict[str, Any]:
    return await document(call)


@api.route(
    "POST",
    BASE + "/import",
    summary="Replace a person's memory with a document",
    body=MemoryDocument,
    **opts(),
)
async def import_memory(call: Call) -> dict[str, Any]:
    person = await person_of(call, required=True) or ""
    doc: MemoryDocument = call.body
    if doc.people:
        raise ApiError(422, "this is the aggregate document; import one person's document")
    contexts, facts = imported(doc)
    await service(call).store.replace(person, contexts, facts, source="import")
    return await document(call)


@api.route(
    "POST",
    BASE + "/facts",
    summary="Remember a fact about a person",
    body=FactCreate,
    **opts(errors=(409, 422)),
)
async def create_fact(call: Call) -> dict[str, Any]:
    person = await person_of(call, required=True) or ""
    body: FactCreate = call.body
    fact = NewFact(body.content, body.category, body.confidence)
    if await service(call).store.add_fact(person, fact, source="api") is None:
        raise ApiError(409, "A fact with the same content already exists.")
    return await document(call)


@api.route(
    "PATCH", FACT, summary="Edit a fact of a person", body=FactPatch, **opts(errors=(404, 422))
)
async def edit_fact(call: Call) -> dict[str, Any]:
    person = await person_of(call, required=True) or ""
    body: FactPatch = call.body
    fact_id = int(call.path["fact_id"])
    changed = await service(call).store.edit_fact(
        person, fact_id, body.content, body.category, body.confidence
    )
    if not changed:
        raise ApiError(404, f"Memory fact '{fact_id}' not found.")
    return await document(call)


@api.route("DELETE", FACT, summary="Forget a fact of a person", **opts(errors=(404, 422)))
async def delete_fact(call: Call) -> dict[str, Any]:
    person = await person_of(call, required=True) or ""
    fact_id = int(call.path["fact_id"])
    if not await service(call).store.forget(person, fact_id):
        raise ApiError(404, f"Memory fact '{fact_id}' not found.")
    return await document(call)


@api.route(
    "GET",
    BASE + "/config",
    summary="The memory settings (DeerFlow's shape)",
    tag=TAG,
    response=MemoryConfigResponse,
)
async def get_memory_config(call: Call) -> MemoryConfigResponse:
    return config_response(service(call))


@api.route(
    "GET",
    BASE + "/status",
    summary="Config, the document and counts",
    **opts(response=MemoryStatusResponse),
)
async def get_memory_status(call: Call) -> dict[str, Any]:
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
