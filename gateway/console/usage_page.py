"""Usage: tokens, calls and cost per person, chat and model over a chosen range of UTC days,
charts over the days (uPlot, as the Metrics page draws them; the chart polls
`/console/usage/data`), and the same report as CSV (`/console/usage.csv`). The figures are
`/api/usage`'s (gateway/api/usage.py `report_of`): the console adds no second way to sum."""

from __future__ import annotations

import datetime as dt
from typing import Any
from urllib.parse import urlencode

from aiohttp import web
from pydantic import ValidationError

from bot.i18n import N_
from bot.i18n import text as _
from bot.usage.gate import UsageGate, money
from gateway.api.usage import UsageParams, UsageReport, csv_response, report_of
from gateway.console.web import Ctx, Pages
from gateway.errors import ApiError

pages = Pages()
FILTERS = ("since", "until", "person", "chat", "model")
DEFAULT_DAYS = 30
MAX_DAYS = 366
TABLES = (("person", N_("Per person")), ("chat", N_("Per chat")), ("model", N_("Per model")))


def _gate(ctx: Ctx) -> UsageGate:
    gate = ctx.services.usage
    if gate is None or gate.meter.store is None:
        raise ApiError(409, _("Usage is not counted on this service."))
    return gate


def _day(value: str) -> dt.date:
    return dt.date.fromisoformat(value)


def asked(ctx: Ctx, group_by: str) -> tuple[UsageParams, dict[str, str]]:
    """The range and filters of the query (empty fields dropped; by default the last 30 days
    to today, UTC), validated as `/api/usage` validates them: a 422 naming the field."""
    given = {k: ctx.request.query.get(k, "").strip() for k in FILTERS}
    shown = {k: v for k, v in given.items() if v}
    today = dt.datetime.now(dt.UTC).date()
    shown.setdefault("until", (today + dt.timedelta(days=1)).isoformat())
    try:
        shown.setdefault(
            "since", (_day(shown["until"]) - dt.timedelta(days=DEFAULT_DAYS)).isoformat()
        )
        q = UsageParams.model_validate({**shown, "group_by": group_by})
        span = (_day(shown["until"]) - _day(shown["since"])).days
    except (ValidationError, ValueError) as exc:
        raise ApiError(422, _problem(exc)) from None
    if not 0 < span <= MAX_DAYS:
        raise ApiError(
            422, _("until: 1 to {most} days after since (not {span})", most=MAX_DAYS, span=span)
        )
    return q, shown


def _problem(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        return f"{where}: {first['msg']} (a day is YYYY-MM-DD, UTC)"
    return f"until: not a day ({exc})"


def _rows(report: UsageReport, column: str) -> list[dict[str, Any]]:
    return [
        {"name": item.key[column] or "—", **item.model_dump(exclude={"key"})}
        for item in sorted(report.items, key=lambda i: -i.total_tokens)
    ]


@pages.get("/console/usage")
async def usage(ctx: Ctx) -> web.StreamResponse:
    gate = _gate(ctx)
    q, shown = asked(ctx, "person")
    tables = []
    for column, caption in TABLES:
        part = await report_of(gate, q.model_copy(update={"group_by": column}))
        tables.append((column, _(caption), _rows(part, column)))
    total = (await report_of(gate, q)).total
    query = urlencode(shown)
    return ctx.render(
        "usage.html",
        page="usage",
        title=_("Usage"),
        form={k: shown.get(k, "") for k in FILTERS},
        money=money,
        total=total,
        currency=gate.config().currency,
        tables=tables,
        data_url=f"/console/usage/data?{query}",
        csv_url=f"/console/usage.csv?{query}",
    )


@pages.get("/console/usage/data")
async def data(ctx: Ctx) -> web.StreamResponse:
    """The chart's series: one point a UTC day of the range (0 on a day without calls)."""
    gate = _gate(ctx)
    q = asked(ctx, "day")[0]
    by_day = {item.key["day"]: item for item in (await report_of(gate, q)).items}
    first, last = _day(q.since or ""), _day(q.until or "")
    series: dict[str, list[float]] = {"t": [], "prompt": [], "completion": [], "cost": []}
    for n in range((last - first).days):
        day = first + dt.timedelta(days=n)
        item = by_day.get(day.isoformat())
        stamp = dt.datetime.combine(day, dt.time(), dt.UTC).timestamp()
        series["t"].append(stamp)
        series["prompt"].append(item.prompt_tokens if item else 0)
        series["completion"].append(item.completion_tokens if item else 0)
        series["cost"].append(round(item.cost, 8) if item else 0.0)
    return web.json_response({"currency": gate.config().currency, "series": series})


@pages.get("/console/usage.csv")
async def usage_csv(ctx: Ctx) -> web.StreamResponse:
    """The range as CSV, a row per day, person, chat and model."""
    q = asked(ctx, "day,person,chat,model")[0]
    return csv_response(await report_of(_gate(ctx), q))
