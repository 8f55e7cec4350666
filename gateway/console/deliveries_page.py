"""Deliveries: the journal's recent entries and those that failed or were given up, with the
reason (`Journal.recent`, the same read on SQLite and PostgreSQL)."""

from __future__ import annotations

from dataclasses import dataclass

from aiohttp import web

from bot.i18n import text as _
from bot.stores.journal import Entry
from gateway.console.web import Ctx, Pages

pages = Pages()
RECENT = 50


@dataclass(frozen=True)
class Delivery:
    channel: str
    event: str
    state: str
    attempts: int
    reason: str
    told: bool
    received_at: float
    updated_at: float
    preview: str


def delivery(entry: Entry) -> Delivery:
    channel, _sep, event = entry.key.partition(":")
    text = entry.msg.text if entry.msg is not None else ""
    return Delivery(
        channel=channel,
        event=event,
        state=entry.state.value,
        attempts=entry.attempts,
        reason=entry.reason,
        told=entry.told,
        received_at=entry.received_at,
        updated_at=entry.updated_at,
        preview=text[:80] + ("…" if len(text) > 80 else ""),
    )


@pages.get("/console/deliveries")
async def deliveries(ctx: Ctx) -> web.StreamResponse:
    service = ctx.services.deliveries
    failed = [delivery(e) for e in await service.recent(RECENT, "failed")]
    recent = [delivery(e) for e in await service.recent(RECENT)]
    return ctx.render(
        "deliveries.html",
        page="deliveries",
        title=_("Deliveries"),
        counts=await service.counts(),
        failed=failed,
        recent=recent,
    )
