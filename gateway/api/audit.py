"""`GET /api/audit`: the one audit trail (bot/access/audit.py), newest first, filtered and paged.

Tool calls (with their argument digests, secrets redacted), denials, links and unlinks, role
changes and configuration changes. Page back with `before_id` = the response's `next_before_id`.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from bot.access.people import People
from bot.access.store import AuditQuery
from gateway.errors import present
from gateway.registry import Call, Registry

TAG = "access"
api = Registry(tag=TAG)


class AuditParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: str | None = Field(
        default=None,
        max_length=32,
        description="tool, denied, approval, link, unlink, role, config, budget, console",
    )
    person: str | None = Field(default=None, max_length=256)
    chat: str | None = Field(default=None, max_length=512)
    subject: str | None = Field(default=None, max_length=256)
    since: float | None = Field(default=None, ge=0, description="epoch seconds")
    until: float | None = Field(default=None, ge=0)
    before_id: int | None = Field(
        default=None, ge=1, le=2**63 - 1, description="paging: older than this id"
    )
    limit: int = Field(default=50, ge=1, le=500)


class AuditItem(BaseModel):
    id: int
    at: float
    kind: str
    actor: str
    person: str
    chat: str
    subject: str
    outcome: str
    duration_ms: float | None
    detail: dict[str, Any]


class AuditPage(BaseModel):
    entries: list[AuditItem]
    next_before_id: int | None = Field(description="pass as before_id for the next page")


def people_of(call: Call) -> People:
    return present(call.gw.service.people, "access is not set up on this service")


@api.route("GET", "/api/audit", query=AuditParams, errors=(409, 422))
async def list_audit(call: Call) -> AuditPage:
    """The audit trail, newest first"""
    q: AuditParams = call.query
    entries = await people_of(call).store.audit(AuditQuery(**q.model_dump()))
    more = len(entries) == q.limit
    return AuditPage(
        entries=[AuditItem.model_validate(e.as_dict()) for e in entries],
        next_before_id=entries[-1].id if entries and more else None,
    )
