"""A running reply, watched live: `GET /console/conversations/{thread_id}/live` streams the
reply's document (text, tool steps, status) as server-sent events while it is being written on
this worker, then `end`.

Each change is one `reply` event with the whole document (as the platforms get it), written and
flushed on its own; the headers keep a compressing or buffering proxy from holding events back
(`no-transform`, `X-Accel-Buffering: no`). A comment line every `HEARTBEAT` seconds keeps idle
connections open. The console's conversation page (static/conversation.js) shows it.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from aiohttp import web

from bot.i18n import text as _
from channels.base import ReplyDoc
from gateway.console.conversations_page import find
from gateway.console.web import Ctx, Pages, not_found

pages = Pages()
LIVE_HEADERS = {
    "Content-Type": "text/event-stream; charset=utf-8",
    "Cache-Control": "no-cache, no-transform",
    "X-Accel-Buffering": "no",
}
POLL = 0.2  # how often the reply's document is looked at (seconds)
HEARTBEAT = 15.0


def event(name: str, data: Any) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


def shown(doc: ReplyDoc) -> dict[str, Any]:
    """What the page shows of a reply: its text, tool steps and status."""
    return {
        "text": doc.text,
        "steps": [{"label": s.label, "state": s.state} for s in doc.progress],
        "status": doc.status,
        "note": doc.note,
    }


@pages.get("/console/conversations/{thread_id}/live")
async def live(ctx: Ctx) -> web.StreamResponse:
    conv = await find(ctx)
    if conv is None:
        return not_found(ctx, _("that conversation"))
    service = ctx.services.conversations
    response = web.StreamResponse(headers=LIVE_HEADERS)
    await response.prepare(ctx.request)
    last: dict[str, Any] | None = None
    quiet = 0.0
    try:
        while service.is_running(conv.key):
            doc = service.live(conv.key)
            now = shown(doc) if doc is not None else None
            if now is not None and now != last:
                await response.write(event("reply", now))
                last, quiet = now, 0.0
            elif quiet >= HEARTBEAT:
                await response.write(b": heartbeat\n\n")
                quiet = 0.0
            await asyncio.sleep(POLL)
            quiet += POLL
        await response.write(event("end", {}))
    except ConnectionError:  # the page went away
        return response
    await response.write_eof()
    return response
