"""`/api/approvals`: tool calls waiting for a person's yes (bot/approvals.py), and an operator's
decision on one. A decision is sent through the service's bus as a press in the request's chat,
so the paused reply resumes there as after any press (docs/access.md, "Approvals")."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from bot.approvals import Approvals
from gateway.api.config import _who
from gateway.errors import ApiError, present
from gateway.registry import Call, Registry

TAG = "access"
api = Registry(tag=TAG)


class PendingApproval(BaseModel):
    id: str
    channel: str
    chat: str
    thread_id: str
    calls: list[str] = Field(description="each call with its arguments, secrets redacted")
    requester: str
    approvers: list[str] = Field(description="roles named by the policy; [] for may_approve")
    first_use: bool
    requested_at: float | None
    expires_at: float | None


class ApprovalList(BaseModel):
    approvals: list[PendingApproval]


class Decision(BaseModel):
    model_config = ConfigDict(extra="forbid")
    decision: Literal["approve", "approve_conversation", "deny"]


class DecisionSent(BaseModel):
    id: str
    decision: str
    status: Literal["sent"] = "sent"


def approvals_of(call: Call) -> Approvals:
    return present(call.gw.service.approvals, "approvals are not set up on this service")


@api.route("GET", "/api/approvals", errors=(409,))
async def list_approvals(call: Call) -> ApprovalList:
    """Tool calls waiting for approval, oldest first"""
    waiting: list[dict[str, Any]] = await approvals_of(call).waiting()
    return ApprovalList(approvals=[PendingApproval.model_validate(w) for w in waiting])


@api.route(
    "POST", "/api/approvals/{approval_id}", body=Decision, status=202, errors=(404, 409, 422)
)
async def decide(call: Call) -> DecisionSent:
    """Approve or deny a waiting tool call"""
    body: Decision = call.body
    short = call.path["approval_id"]
    if not await approvals_of(call).send_decision(short, body.decision, _who(call)):
        raise ApiError(404, f"no approval {short!r} is waiting (unknown or already answered)")
    return DecisionSent(id=short, decision=body.decision)
