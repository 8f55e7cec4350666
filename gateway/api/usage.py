"""Usage over the API (bot/usage/): a thread's token usage in DeerFlow's shape, and
`/api/usage`, the admins' report by person, chat, channel, model or day over a time range, as
JSON or CSV."""

from __future__ import annotations

import csv
import io
import re

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field, field_validator

from bot.stores.usage import GROUPS, Report, Totals, UsageStore
from bot.usage.gate import UsageGate
from gateway.errors import ApiError
from gateway.registry import Call, Registry

TAG = "usage"
api = Registry(tag=TAG)
DAY = r"^\d{4}-\d{2}-\d{2}$"


class ModelTokens(BaseModel):
    tokens: int = 0
    runs: int = Field(default=0, description="model calls")


class CallerTokens(BaseModel):
    lead_agent: int = Field(default=0, description="answers")
    subagent: int = 0
    middleware: int = Field(default=0, description="titles, memory passes, summaries")


class ContextUsage(BaseModel):
    token_count: int = Field(description="the prompt of the thread's last answer")
    max_context_tokens: int | None = None
    percentage: float | None = None


class ThreadTokenUsage(BaseModel):
    """DeerFlow's `GET /api/threads/{id}/token-usage`, plus cached, reasoning and cost."""

    thread_id: str
    total_input_tokens: int
    total_output_tokens: int
    total_tokens: int
    total_runs: int
    llm_call_count: int
    cached_input_tokens: int
    reasoning_tokens: int
    estimated_calls: int = Field(description="calls whose counts are estimates (no usage sent)")
    cost: float
    currency: str
    by_model: dict[str, ModelTokens]
    by_caller: CallerTokens
    context_usage: ContextUsage | None = None


def store_of(call: Call) -> UsageStore:
    gate = call.gw.service.usage
    if gate is None or gate.meter.store is None:
        raise ApiError(409, "usage is not counted on this service")
    return gate.meter.store


_CALLER = {"answer": "lead_agent", "subagent": "subagent"}


@api.route("GET", "/api/threads/{thread_id}/token-usage", errors=(409,))
async def thread_token_usage(call: Call) -> ThreadTokenUsage:
    """A thread's token usage (DeerFlow's shape)"""
    store, thread_id = store_of(call), call.path["thread_id"]
    gate = call.gw.service.usage
    assert gate is not None
    await gate.meter.flush()
    rows = await store.report(Report(group_by=("model", "purpose"), thread_id=thread_id))
    runs = await store.count_runs(thread_id)
    total = Totals()
    by_model: dict[str, ModelTokens] = {}
    by_caller = CallerTokens()
    for (model, purpose), t in rows:
        total = total + t
        seen = by_model.setdefault(model, ModelTokens())
        seen.tokens += t.tokens
        seen.runs += t.calls
        caller = _CALLER.get(purpose, "middleware")
        setattr(by_caller, caller, getattr(by_caller, caller) + t.tokens)
    return ThreadTokenUsage(
        thread_id=thread_id,
        total_input_tokens=total.prompt,
        total_output_tokens=total.completion,
        total_tokens=total.tokens,
        total_runs=runs,
        llm_call_count=total.calls,
        cached_input_tokens=total.cached,
        reasoning_tokens=total.reasoning,
        estimated_calls=total.estimated,
        cost=round(total.cost, 8),
        currency=gate.config().currency,
        by_model=by_model,
        by_caller=by_caller,
    )


class UsageParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    group_by: str = Field(
        default="person", max_length=200, description=f"comma list of {', '.join(GROUPS)}"
    )
    since: str | None = Field(default=None, pattern=DAY, description="first day (UTC)")
    until: str | None = Field(default=None, pattern=DAY, description="the day after the last")
    person: str | None = Field(default=None, max_length=256)
    chat: str | None = Field(default=None, max_length=512)
    channel: str | None = Field(default=None, max_length=64)
    model: str | None = Field(default=None, max_length=256)
    format: str = Field(default="json", pattern=r"^(json|csv)$")

    @field_validator("group_by")
    @classmethod
    def _known_groups(cls, value: str) -> str:
        for name in re.split(r"\s*,\s*", value.strip()):
            if name not in GROUPS:
                raise ValueError(f"unknown group {name!r} (one of {', '.join(GROUPS)})")
        return value

    def groups(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(re.split(r"\s*,\s*", self.group_by.strip())))


class UsageItem(BaseModel):
    key: dict[str, str]
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int
    reasoning_tokens: int
    total_tokens: int
    calls: int
    estimated_calls: int
    cost: float


class UsageReport(BaseModel):
    group_by: list[str]
    currency: str
    items: list[UsageItem]
    total: UsageItem


def _item(key: dict[str, str], t: Totals) -> UsageItem:
    return UsageItem(
        key=key,
        prompt_tokens=t.prompt,
        completion_tokens=t.completion,
        cached_tokens=t.cached,
        reasoning_tokens=t.reasoning,
        total_tokens=t.tokens,
        calls=t.calls,
        estimated_calls=t.estimated,
        cost=round(t.cost, 8),
    )


@api.route("GET", "/api/usage", query=UsageParams, response=UsageReport, errors=(409, 422))
async def usage_report(call: Call) -> UsageReport | web.Response:
    """Usage by person, chat, channel, model or day over a time range (JSON or CSV)"""
    q: UsageParams = call.query
    store_of(call)  # 409 when usage is not counted
    gate = call.gw.service.usage
    assert gate is not None
    report = await report_of(gate, q)
    return csv_response(report) if q.format == "csv" else report


async def report_of(gate: UsageGate, q: UsageParams) -> UsageReport:
    """The report `q` asks for (this worker's calls written first); the console's too."""
    assert gate.meter.store is not None
    await gate.meter.flush()
    groups = q.groups()
    query = Report(
        group_by=groups,
        since=q.since or "",
        until=q.until or "",
        person=q.person or "",
        chat=q.chat or "",
        channel=q.channel or "",
        model=q.model or "",
    )
    rows = await gate.meter.store.report(query)
    items = [_item(dict(zip(groups, key, strict=True)), t) for key, t in rows]
    total = sum((t for _, t in rows), Totals())
    return UsageReport(
        group_by=list(groups), currency=gate.config().currency, items=items, total=_item({}, total)
    )


def csv_response(report: UsageReport) -> web.Response:
    out = io.StringIO()
    writer = csv.writer(out)
    counts = [f for f in UsageItem.model_fields if f != "key"]
    writer.writerow([*report.group_by, *counts, "currency"])
    for item in report.items:
        keys = [item.key[g] for g in report.group_by]
        writer.writerow([*keys, *(getattr(item, f) for f in counts), report.currency])
    return web.Response(
        text=out.getvalue(),
        content_type="text/csv",
        headers={"Content-Disposition": 'attachment; filename="usage.csv"'},
    )
