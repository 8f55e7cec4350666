"""Metrics: first-visible latency p50/p99, answers and 429s per minute, run durations; the
numbers are served in the page, the charts poll `/console/metrics/data` (JSON)."""

from __future__ import annotations

from aiohttp import web

from bot.i18n import text as _
from gateway.console.metrics_history import WINDOW
from gateway.console.web import Ctx, Pages

pages = Pages()


@pages.get("/console/metrics")
async def metrics(ctx: Ctx) -> web.StreamResponse:
    history = ctx.services.history
    return ctx.render(
        "metrics.html",
        page="metrics",
        title=_("Metrics"),
        totals=history.totals(),
        step=history.step,
        span=history.span,
    )


@pages.get("/console/metrics/data")
async def data(ctx: Ctx) -> web.StreamResponse:
    history = ctx.services.history
    history.sample()
    series = history.series()
    return web.json_response(
        {
            "step": history.step,
            "window": WINDOW,  # each point covers this many seconds before it
            "span": history.span,  # the seconds the kept points can cover
            "collecting": all(v is None for v in series["answers"]),
            "series": series,
        }
    )
