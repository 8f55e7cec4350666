"""What DeerFlow's web UI reads about a thread besides its state, from the thread's
checkpointed messages: `GET /api/threads/{id}/messages/page` (DeerFlow's backward pages,
`{data, has_more, next_before_seq}`; a message's `seq` is its position in the thread). A
thread's token usage is gateway/api/usage.py's (the usage store counts every model call)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from gateway.errors import ApiError
from gateway.langgraph.schemas import Strict
from gateway.langgraph.serialize import jsonable
from gateway.registry import Call, Registry
from gateway.service import Gateway

TAG = "threads"
api = Registry(tag=TAG)
TID = "/api/threads/{thread_id}"
CALLER = "lead_agent"


class PageQuery(Strict):
    limit: int = Field(default=50, ge=1, le=200)
    before_seq: int | None = Field(default=None, ge=1, le=2**63 - 1)


class MessagesPage(BaseModel):
    data: list[dict[str, Any]]
    has_more: bool
    next_before_seq: int | None = None


async def _messages(call: Call) -> tuple[list[dict[str, Any]], str]:
    """The thread's checkpointed messages as dicts, and when the checkpoint was written."""
    gw: Gateway = call.gw
    thread_id = call.path["thread_id"]
    await gw.thread(thread_id)
    tup = await gw.service.runner.checkpoint(thread_id)
    if tup is None:
        return [], ""
    found = jsonable(tup.checkpoint.get("channel_values", {}).get("messages") or [])
    return [m for m in found if isinstance(m, dict)], str(tup.checkpoint.get("ts") or "")


@api.route("GET", TID + "/messages/page", query=PageQuery, errors=(404, 422))
async def messages_page(call: Call) -> MessagesPage:
    """The thread's messages, newest page first (DeerFlow's history page)"""
    if "after_seq" in call.request.query:
        raise ApiError(422, "after_seq is not supported by this backward-only endpoint")
    q: PageQuery = call.query
    messages, at = await _messages(call)
    rows, turn = [], 0
    for seq, message in enumerate(messages, start=1):
        turn += message.get("type") == "human"
        rows.append(
            {
                "run_id": f"turn-{turn}",  # the turn a message belongs to (DeerFlow: its run)
                "seq": seq,
                "content": message,
                "metadata": {"caller": CALLER},
                "created_at": at,
            }
        )
    end = len(rows) if q.before_seq is None else min(q.before_seq - 1, len(rows))
    start = max(0, end - q.limit)
    has_more = start > 0
    data = rows[start:end]
    return MessagesPage(
        data=data, has_more=has_more, next_before_seq=data[0]["seq"] if has_more else None
    )
