"""Approvals: the tool calls waiting for a person's yes, and the operator's Approve / Deny.

The decision is the one `POST /api/approvals/{id}` sends (bot/approvals.py `send_decision`): a
press in the request's chat, through the bus, settled in the one place a chat press is (exactly
once, whoever presses first), the card updated and the run resumed in its conversation. The
audit names the console as the approver.
"""

from __future__ import annotations

from aiohttp import web

from bot.approvals import Approvals
from bot.i18n import N_
from bot.i18n import text as _
from gateway.console.web import Ctx, Pages
from gateway.errors import ApiError

pages = Pages()
HERE = "/console/approvals"
SAID = {
    "approve": N_("Request {id} approved: its conversation goes on."),
    "approve_conversation": N_("Request {id} approved: its conversation goes on."),
    "deny": N_("Request {id} denied: its conversation goes on."),
}


def _approvals(ctx: Ctx) -> Approvals:
    approvals = ctx.services.approvals
    if approvals is None:
        raise ApiError(409, _("approvals are not set up on this service"))
    return approvals


@pages.get(HERE)
async def approvals_page(ctx: Ctx) -> web.StreamResponse:
    waiting = await _approvals(ctx).waiting()
    return ctx.render("approvals.html", page="approvals", title=_("Approvals"), waiting=waiting)


@pages.post(HERE + "/{approval_id:[A-Za-z0-9]{1,24}}/{decision:approve|approve_conversation|deny}")
async def decide(ctx: Ctx) -> web.StreamResponse:
    short, decision = ctx.request.match_info["approval_id"], ctx.request.match_info["decision"]
    by = f"console ({ctx.request.remote or '?'})"
    if not await _approvals(ctx).send_decision(short, decision, by):
        return ctx.back(HERE, _("Request {id} is no longer waiting.", id=short), "error")
    await _approvals(ctx).decided(short)  # the list drawn next shows it gone (bounded wait)
    return ctx.back(HERE, _(SAID[decision], id=short))
