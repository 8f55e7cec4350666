"""What DeerFlow's web UI reads about a thread besides its state, from the thread's
checkpointed messages: `GET /api/threads/{id}/messages/page` (DeerFlow's backward pages,
`{data, has_more, next_before_seq}`; a message's `seq` is its position in the thread) and
`GET /api/threads/{id}/token-usage` (the usage the model provider reported on the answers;
exact counting of every model call is issue 31)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from gateway.errors import ApiError
from gateway.langgraph.schemas import Strict
from gateway.langgraph.serialize import jsonable
from gateway.registry import Call, Registry
from gateway.service import Gateway

api = Registry()
TAG = "threads"
TID = "/api/threads/{thread_id}"
CALLER = "lead_agent"


class PageQuery(Strict):
    limit: int = Field(default=50, ge=1, le=200)
    before_seq: int | None = Field(default=None, ge=1)


class MessagesPage(BaseModel):
    data: list[dict[str, Any]]
    has_more: bool
    next_before_seq: int | None = None


class ModelUsage(BaseModel):
    tokens: int = 0
    runs: int = 0


class CallerUsage(BaseModel):
    lead_agent: int = 0
    subagent: int = 0
    middleware: int = 0


class ContextUsage(BaseModel):
    token_count: int = 0
    max_context_tokens: int | None = None
    percentage: float | None = None


class TokenUsageResponse(BaseModel):
    thread_id: str
    total_tokens: int
    total_input_tokens: int
    total_output_tokens: int
    total_runs: int
    by_model: dict[str, ModelUsage]
    by_caller: CallerUsage
    context_usage: ContextUsage | None = None
    counted: str = "usage the model provider reported on the thread's answers"


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


@api.route(
    "GET",
    TID + "/messages/page",
    summary="The thread's messages, newest page first (DeerFlow's history page)",
    tag=TAG,
    query=PageQuery,
    response=MessagesPage,
    errors=(404, 422),
)
async def messages_page(call: Call) -> MessagesPage:
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


@api.route(
    "GET",
    TID + "/token-usage",
    summary="Tokens the provider reported on the thread's answers",
    tag=TAG,
    response=TokenUsageResponse,
    errors=(404, 422),
)
async def token_usage(call: Call) -> TokenUsageResponse:
    messages, _ = await _messages(call)
    answers = [m for m in messages if m.get("type") == "ai"]
    reported = [m for m in answers if isinstance(m.get("usage_metadata"), dict)]
    if answers and not reported:
        raise ApiError(
            404,
            "no token usage is known for this thread: its model provider reported none "
            "(counting every model call is issue 31)",
        )
    by_model: dict[str, ModelUsage] = {}
    total_in = total_out = total = 0
    for m in reported:
        usage = m["usage_metadata"]
        tokens = int(usage.get("total_tokens") or 0)
        total_in += int(usage.get("input_tokens") or 0)
        total_out += int(usage.get("output_tokens") or 0)
        total += tokens
        name = str((m.get("response_metadata") or {}).get("model_name") or "unknown")
        entry = by_model.setdefault(name, ModelUsage())
        entry.tokens += tokens
        entry.runs += 1
    last = reported[-1]["usage_metadata"] if reported else {}
    return TokenUsageResponse(
        thread_id=call.path["thread_id"],
        total_tokens=total,
        total_input_tokens=total_in,
        total_output_tokens=total_out,
        total_runs=sum(m.get("type") == "human" for m in messages),
        by_model=by_model,
        by_caller=CallerUsage(lead_agent=total),
        context_usage=ContextUsage(token_count=int(last.get("total_tokens") or 0)),
    )
