"""Server-sent events for runs: `event:`/`data:`/`id:` frames, a `: heartbeat` comment when idle,
and what happens when the client goes away (`on_disconnect=cancel` stops the run)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from aiohttp import web

from gateway.langgraph.run_record import Event, RunRecord

SSE_HEADERS = {
    "Content-Type": "text/event-stream",
    "Cache-Control": "no-cache, no-transform",  # no proxy may compress or hold it
    "Connection": "keep-alive",
    "X-Accel-Buffering": "no",
}


def frame(seq: int | None, event: str, data: Any) -> bytes:
    payload = json.dumps(data, ensure_ascii=False, default=str)
    ident = "" if seq is None else f"id: {seq}\n"
    return f"event: {event}\ndata: {payload}\n{ident}\n".encode()


def run_location(rec: RunRecord) -> str:
    return f"/api/threads/{rec.thread_id}/runs/{rec.run_id}"


async def stream_run(
    request: web.Request,
    rec: RunRecord,
    queue: asyncio.Queue[Event],
    *,
    heartbeat: float,
    on_disconnect: Callable[[], object] | None = None,
) -> web.StreamResponse:
    """Send the run's events from `queue` until `end`; call `on_disconnect` if the client left."""
    response = web.StreamResponse(headers={**SSE_HEADERS, "Content-Location": run_location(rec)})
    try:
        await response.prepare(request)
        while True:
            try:
                seq, event, data = await asyncio.wait_for(queue.get(), heartbeat)
            except TimeoutError:
                await response.write(b": heartbeat\n\n")
                continue
            if event == "gap":  # the events asked for are gone: no id, and no `end`
                await response.write(frame(None, event, data))
                break
            await response.write(frame(seq, event, data))
            if event == "end":
                break
    except (ConnectionError, asyncio.CancelledError) as exc:
        if on_disconnect is not None:
            on_disconnect()
        if isinstance(exc, asyncio.CancelledError):
            raise
        return response
    finally:
        rec.unsubscribe(queue)
    await response.write_eof()
    return response
