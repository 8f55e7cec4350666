"""Schedules: every scheduled task; pause, resume, run now, cancel (bot/schedules/admin.py, the
rules the chat and the API follow)."""

from __future__ import annotations

from aiohttp import web

from bot.i18n import N_
from bot.i18n import text as _
from bot.schedules.admin import ScheduleError
from gateway.console.web import Ctx, Pages

pages = Pages()
HERE = "/console/schedules"
ACTIONS = {
    "pause": N_("Task {id} paused."),
    "resume": N_("Task {id} resumed."),
    "trigger": N_("Task {id} started."),
    "delete": N_("Task {id} cancelled."),
}


@pages.get(HERE)
async def schedules(ctx: Ctx) -> web.StreamResponse:
    service = ctx.services.schedules
    tasks = await service.store.all(500) if service.enabled else []
    return ctx.render(
        "schedules.html",
        page="schedules",
        title=_("Schedules"),
        enabled=service.enabled,
        tasks=tasks,
    )


@pages.post(HERE + "/{task_id:[1-9][0-9]{0,17}}/{action:pause|resume|trigger|delete}")
async def act(ctx: Ctx) -> web.StreamResponse:
    service = ctx.services.schedules
    task_id, action = int(ctx.request.match_info["task_id"]), ctx.request.match_info["action"]
    if not service.enabled:
        return ctx.back(HERE, _("Schedules are off (schedules.enabled)."), "error")
    admin = service.admin()
    try:
        if action == "trigger":
            await admin.trigger(task_id)
        else:
            state = {"pause": "paused", "resume": "active", "delete": "cancelled"}[action]
            await admin.set_state(task_id, state)  # type: ignore[arg-type]
    except ScheduleError as exc:
        return ctx.back(HERE, _("Task {id}: {reason}", id=task_id, reason=exc.message), "error")
    return ctx.back(HERE, _(ACTIONS[action], id=task_id))
