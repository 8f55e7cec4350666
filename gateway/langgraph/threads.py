"""LangGraph-compatible thread routes: create (idempotent), get, patch, delete, search, state,
history. Chat threads appear with their channel, chat and title in metadata."""

from __future__ import annotations

import uuid
from typing import Any

from langgraph.errors import InvalidUpdateError

from agent.runner import ThreadBusy
from gateway.errors import ApiError
from gateway.langgraph.schemas import (
    HistoryRequest,
    StateUpdate,
    StateUpdateResponse,
    SuccessResponse,
    ThreadCreate,
    ThreadPatch,
    ThreadResponse,
    ThreadSearch,
    ThreadState,
)
from gateway.langgraph.serialize import checkpoint_ref, iso, state_from_checkpoint
from gateway.langgraph.thread_store import ThreadRow
from gateway.registry import Call, Registry
from gateway.service import Gateway, chat_is_replying

TAG = "threads"
api = Registry(tag=TAG)
TID = "/api/threads/{thread_id}"


def titled(state: dict[str, Any], row: ThreadRow) -> dict[str, Any]:
    """The state with the thread's title among its values, as DeerFlow's state carries it."""
    title = row.metadata.get("title")
    if title and "title" not in state["values"]:
        state["values"]["title"] = title
    return state


async def thread_response(gw: Gateway, row: ThreadRow, *, full: bool = True) -> ThreadResponse:
    values: dict[str, Any] = {}
    if full:
        tup = await gw.service.runner.checkpoint(row.thread_id)
        values = titled(state_from_checkpoint(row.thread_id, tup), row)["values"]
    elif row.metadata.get("title"):
        values = {"title": row.metadata["title"]}
    return ThreadResponse(
        thread_id=row.thread_id,
        status=await gw.status(row.thread_id),
        created_at=iso(row.created_at),
        updated_at=iso(row.updated_at),
        metadata=row.metadata,
        values=values,
    )


@api.route("POST", "/api/threads", body=ThreadCreate, errors=(409, 422))
async def create_thread(call: Call) -> ThreadResponse:
    """Create a thread (idempotent)"""
    body: ThreadCreate = call.body
    gw: Gateway = call.gw
    thread_id = body.thread_id or str(uuid.uuid4())
    existing = await gw.threads.get(thread_id)
    if existing is not None and body.if_exists == "raise":
        raise ApiError(409, f"thread {thread_id} already exists")
    metadata = dict(body.metadata)
    if body.graph_id:
        metadata.setdefault("graph_id", body.graph_id)
    if body.assistant_id:
        metadata.setdefault("assistant_id", body.assistant_id)
    row = existing or await gw.threads.create(thread_id, metadata)
    return await thread_response(gw, row)


@api.route("GET", TID, errors=(404, 422))
async def get_thread(call: Call) -> ThreadResponse:
    """Get a thread with its current values"""
    gw: Gateway = call.gw
    return await thread_response(gw, await gw.thread(call.path["thread_id"]))


@api.route("PATCH", TID, body=ThreadPatch, errors=(404, 422))
async def patch_thread(call: Call) -> ThreadResponse:
    """Merge metadata into a thread"""
    gw: Gateway = call.gw
    thread_id = call.path["thread_id"]
    await gw.thread(thread_id)
    return await thread_response(gw, await gw.threads.patch(thread_id, call.body.metadata))


@api.route("DELETE", TID, errors=(404, 409, 422))
async def delete_thread(call: Call) -> SuccessResponse:
    """Delete a thread, its checkpoints and files"""
    gw: Gateway = call.gw
    thread_id = call.path["thread_id"]
    row = await gw.thread(thread_id)
    if row.conversation is not None:
        raise ApiError(
            409,
            f"thread {thread_id} belongs to the chat {row.conversation}; "
            "start a new conversation there with /new instead",
        )
    if gw.runs.is_busy(thread_id):
        raise ApiError(409, f"thread {thread_id} has an active run")
    try:
        await gw.service.runner.delete_thread(thread_id)
    except ThreadBusy:
        raise ApiError(409, f"thread {thread_id} has an active run") from None
    await gw.threads.delete(thread_id)  # with its runs' records
    gw.runs.forget_thread(thread_id)
    return SuccessResponse(success=True, message=f"thread {thread_id} deleted")


@api.route(
    "POST", "/api/threads/search", body=ThreadSearch, response=list[ThreadResponse], errors=(422,)
)
async def search_threads(call: Call) -> list[dict[str, Any]]:
    """Search threads by metadata and status"""
    body: ThreadSearch = call.body
    gw: Gateway = call.gw
    found = []
    for row in await gw.threads.all():
        if body.ids is not None and row.thread_id not in body.ids:
            continue
        if any(row.metadata.get(k) != v for k, v in body.metadata.items()):
            continue
        if body.status is not None and await gw.status(row.thread_id) != body.status:
            continue
        found.append(row)
    if body.sort_by in ("created_at", "thread_id"):
        found.sort(
            key=lambda r: getattr(r, body.sort_by or "updated_at"), reverse=body.sort_order != "asc"
        )
    page = found[body.offset : body.offset + body.limit]
    return [(await thread_response(gw, row, full=False)).model_dump(mode="json") for row in page]


@api.route("GET", TID + "/state", response=ThreadState, errors=(404, 422))
async def get_state(call: Call) -> dict[str, Any]:
    """The thread's current state"""
    gw: Gateway = call.gw
    thread_id = call.path["thread_id"]
    row = await gw.thread(thread_id)
    return titled(
        state_from_checkpoint(thread_id, await gw.service.runner.checkpoint(thread_id)), row
    )


@api.route("POST", TID + "/state", body=StateUpdate, errors=(400, 404, 409, 422))
async def update_state(call: Call) -> StateUpdateResponse:
    """Write values as a new checkpoint (update_state)"""
    gw: Gateway = call.gw
    body: StateUpdate = call.body
    thread_id = call.path["thread_id"]
    row = await gw.thread(thread_id)
    checkpoint_id = body.checkpoint_id or (body.checkpoint or {}).get("checkpoint_id")
    if gw.runs.is_busy(thread_id) or await chat_is_replying(gw.service, thread_id):
        raise ApiError(409, f"thread {thread_id} has an active run; try again when it is done")
    if checkpoint_id and await gw.service.runner.checkpoint(thread_id, str(checkpoint_id)) is None:
        raise ApiError(404, f"checkpoint {checkpoint_id} not found in thread {thread_id}")
    values = dict(body.values or {})
    title = values.pop("title", None)
    if title is not None and not isinstance(title, str):
        raise ApiError(422, "values.title must be a string")
    if values or body.as_node:
        try:
            config = await gw.service.runner.update_state(
                thread_id, values, body.as_node, str(checkpoint_id) if checkpoint_id else None
            )
        except ThreadBusy:
            raise ApiError(409, f"thread {thread_id} has an active run") from None
        except (InvalidUpdateError, ValueError, KeyError, TypeError, NotImplementedError) as exc:
            raise ApiError(400, f"cannot update the state: {exc}") from None
    else:
        head = await gw.service.runner.checkpoint(thread_id)
        config = head.config if head else {"configurable": {"thread_id": thread_id}}
    if title is not None:  # the title is thread metadata (the graph has no title channel)
        await gw.threads.patch(thread_id, {"title": title})
        if row.conversation is not None:
            await gw.service.conversations.update(row.conversation, title=title)
    return StateUpdateResponse(checkpoint=checkpoint_ref(config))


@api.route(
    "POST", TID + "/history", body=HistoryRequest, response=list[ThreadState], errors=(404, 422)
)
async def get_history(call: Call) -> list[dict[str, Any]]:
    """The thread's checkpoints, newest first"""
    gw: Gateway = call.gw
    body: HistoryRequest = call.body
    thread_id = call.path["thread_id"]
    row = await gw.thread(thread_id)
    before = body.before
    if isinstance(before, dict):
        before = before.get("checkpoint_id") or (before.get("configurable") or {}).get(
            "checkpoint_id"
        )
    tuples = await gw.service.runner.checkpoints(thread_id, body.limit, before or None)
    return [titled(state_from_checkpoint(thread_id, tup), row) for tup in tuples]
