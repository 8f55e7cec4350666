"""Scheduled tasks in DeerFlow's shapes: `/api/scheduled-tasks` (list, create, get, patch,
delete, pause, resume, trigger, runs) and `/api/threads/{thread_id}/scheduled-tasks`.

A task posts into a chat (Antler's `{chat, creator, schedule}`) or, created without a chat
(DeerFlow's `{title, prompt, schedule_type, schedule_spec, timezone, thread_id?}`), runs in a
Gateway thread (schedule_threads.py). Answers carry both models' fields (schedule_shapes.py).
The rules are the chat's (bot/schedules/admin.py): the same time expressions, limits and time
zones. DELETE cancels the task (it stays listed with state `cancelled`).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from bot.schedules.admin import ScheduleAdmin, ScheduleError
from bot.schedules.recurrence import valid_zone
from bot.schedules.scheduler import THREAD_CHANNEL
from bot.stores.schedules import Run, Schedule, ScheduleState
from channels.base import ChatRef, UserRef
from gateway.api.schedule_shapes import (
    ChatSpec,
    Creator,
    DeerFlowTask,
    Deleted,
    Missed,
    RunResponse,
    TaskResponse,
    TriggerResponse,
    deerflow_run,
    deerflow_task,
    iso_or_none,
    when_of,
)
from gateway.api.schedule_threads import CREATOR, run_id_of, task_thread, thread_chat
from gateway.errors import ApiError
from gateway.registry import PATH_PARAMS, Call, Registry

TAG = "scheduled-tasks"
api = Registry(tag=TAG)
BASE = "/api/scheduled-tasks"
PATH_PARAMS.setdefault("task_id", r"^[A-Za-z0-9_-]{1,64}$")  # DeerFlow's ids; ours are numbers


class TaskCreate(BaseModel):
    """Antler's task in a chat (`chat`, `creator`, `schedule`), or DeerFlow's in a Gateway
    thread (`title`, `schedule_type`, `schedule_spec`, `timezone`, `thread_id?`)."""

    model_config = ConfigDict(extra="forbid")

    chat: ChatSpec | None = None
    creator: Creator | None = None
    schedule: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description="when, as in /schedule: 'every weekday 09:00', 'in 2h'",
    )
    prompt: str = Field(min_length=1, max_length=8000)
    timezone: str | None = Field(default=None, max_length=64)
    fresh_thread: bool = False
    missed_policy: Missed | None = None
    thread_id: str | None = None
    context_mode: str | None = None
    title: str | None = None
    schedule_type: str | None = None
    schedule_spec: dict[str, Any] | None = None


class TaskPatch(BaseModel):
    model_config = ConfigDict(extra="forbid")

    schedule: str | None = Field(default=None, min_length=1, max_length=200)
    prompt: str | None = Field(default=None, min_length=1, max_length=8000)
    timezone: str | None = Field(default=None, max_length=64)
    fresh_thread: bool | None = None
    missed_policy: Missed | None = None
    schedule_spec: dict[str, Any] | None = None  # DeerFlow's; `title`, `context_mode` ignored
    title: str | None = Field(default=None, max_length=200)
    context_mode: str | None = None


async def task_response(call: Call, s: Schedule) -> TaskResponse:
    chat = s.chat
    runs = await call.gw.service.schedules.store.runs_of(s.id, 50)
    return TaskResponse(
        **deerflow_task(s, runs),
        chat=ChatSpec.model_validate(chat, from_attributes=True),
        conversation_key=chat.key,
        creator=Creator(id=s.creator.id, name=s.creator.name),
        prompt=s.prompt,
        schedule=s.label,
        kind=s.kind,
        cron=s.expr or None,
        timezone=s.tz,
        state=s.state,
        reason=s.reason,
        next_run_at=iso_or_none(s.next_run),
        last_run_at=iso_or_none(s.last_run),
        missed_policy=s.missed,
        fresh_thread=s.fresh_thread,
        created_at=iso_or_none(s.created_at) or "",
    )


async def run_response(call: Call, s: Schedule, run: Run) -> dict[str, Any]:
    api_status = None
    run_id = run_id_of(run)
    if run_id is not None:  # a Gateway thread's run: its status is the API run's
        rec = await call.gw.runs.get(s.chat.chat_id, run_id)
        api_status = rec.status if rec is not None else None
    return RunResponse(
        **deerflow_run(s, run, api_status),
        due_at=iso_or_none(run.due_at) or "",
        event_id=f"schedule:{run.schedule_id}:{int(run.due_at)}",
        state=run.state,
        late=run.late,
        reason=run.reason,
    ).model_dump(mode="json")


async def tasks_response(call: Call, tasks: list[Schedule]) -> list[dict[str, Any]]:
    return [(await task_response(call, s)).model_dump(mode="json") for s in tasks]


def admin(call: Call) -> ScheduleAdmin:
    service = call.gw.service
    return ScheduleAdmin(service.schedules, set(service.channel_states()))


def task_id(call: Call) -> int:
    raw = call.path["task_id"]
    if not raw.isdigit() or len(raw) > 15 or int(raw) < 1:
        raise ApiError(404, f"scheduled task {raw} not found")
    return int(raw)


async def _do(coro):
    try:
        return await coro
    except ScheduleError as exc:
        raise ApiError(exc.status, exc.message) from None


@api.route("GET", BASE, response=list[TaskResponse])
async def list_tasks(call: Call) -> list[dict[str, Any]]:
    """List scheduled tasks"""
    return await tasks_response(call, await call.gw.service.schedules.store.all(500))


@api.route("POST", BASE, body=TaskCreate, status=201, errors=(409, 422))
async def create_task(call: Call) -> TaskResponse:
    """Create a scheduled task"""
    body: TaskCreate = call.body
    if body.chat is None:
        return await _create_in_thread(call, body)
    if body.creator is None or body.schedule is None:
        raise ApiError(422, "a task in a chat needs `creator` and `schedule`")
    chat = ChatRef(**body.chat.model_dump())
    creator = UserRef(id=body.creator.id, name=body.creator.name)
    schedule = await _do(
        admin(call).create(
            chat,
            creator,
            body.schedule,
            body.prompt,
            tz=body.timezone,
            fresh_thread=body.fresh_thread,
            missed=body.missed_policy,
        )
    )
    return await task_response(call, schedule)


async def _create_in_thread(call: Call, body: TaskCreate) -> TaskResponse:
    """DeerFlow's task: it runs in the thread it names, else in a thread made for it."""
    fields = body.model_dump(exclude_unset=True, exclude={"fresh_thread", "missed_policy"})
    task = DeerFlowTask.model_validate(fields)
    if not valid_zone(task.timezone):
        raise ApiError(422, f"unknown time zone {task.timezone!r}")
    when = when_of(task.schedule_type, task.schedule_spec, task.timezone)
    ops = admin(call)
    ops.channels.add(THREAD_CHANNEL)
    try:
        ops.when(when, task.timezone)  # a bad time is a 422 before a thread is made
    except ScheduleError as exc:
        raise ApiError(exc.status, exc.message) from None
    thread_id = await task_thread(call.gw, task.thread_id, task.title)
    schedule = await _do(
        ops.create(
            thread_chat(thread_id),
            CREATOR,
            when,
            task.prompt,
            tz=task.timezone,
            missed=body.missed_policy,
        )
    )
    return await task_response(call, schedule)


@api.route("GET", BASE + "/{task_id}", errors=(404, 422))
async def get_task(call: Call) -> TaskResponse:
    """Get a scheduled task"""
    return await task_response(call, await _do(admin(call).get(task_id(call))))


@api.route("PATCH", BASE + "/{task_id}", body=TaskPatch, errors=(404, 409, 422))
async def patch_task(call: Call) -> TaskResponse:
    """Change a scheduled task"""
    body: TaskPatch = call.body
    number = task_id(call)
    when = body.schedule
    if when is None and body.schedule_spec is not None:  # DeerFlow's spec, in the task's kind
        current = await _do(admin(call).get(number))
        when = when_of(current.kind, body.schedule_spec, body.timezone or current.tz)
    schedule = await _do(
        admin(call).update(
            number,
            prompt=body.prompt,
            when=when,
            tz=body.timezone,
            fresh_thread=body.fresh_thread,
            missed=body.missed_policy,
        )
    )
    return await task_response(call, schedule)


@api.route("DELETE", BASE + "/{task_id}", errors=(404, 409, 422))
async def delete_task(call: Call) -> Deleted:
    """Cancel a scheduled task"""
    await _do(admin(call).set_state(task_id(call), "cancelled"))
    return Deleted(id=call.path["task_id"], deleted=True)


def _state_route(action: str, summary: str, state: ScheduleState) -> None:
    """`POST /api/schedules/tasks/{task_id}/<action>`: the task's state becomes `state`."""

    async def change(call: Call) -> TaskResponse:
        return await task_response(call, await _do(admin(call).set_state(task_id(call), state)))

    change.__name__ = f"{action}_task"  # the operationId
    api.route(
        "POST",
        BASE + "/{task_id}/" + action,
        summary,
        response=TaskResponse,
        errors=(404, 409, 422),
    )(change)


_state_route("pause", "Pause a scheduled task", "paused")
_state_route("resume", "Resume a paused scheduled task", "active")


@api.route(
    "POST",
    BASE + "/{task_id}/trigger",
    response=TriggerResponse,
    status=202,
    errors=(404, 409, 422),
)
async def trigger_task(call: Call) -> dict[str, Any]:
    """Run a scheduled task now"""
    ops = admin(call)
    run = await _do(ops.trigger(task_id(call)))
    out = await run_response(call, await _do(ops.get(run.schedule_id)), run)
    return {**out, "id": str(run.schedule_id), "trigger": "manual", "triggered": True}


@api.route("GET", BASE + "/{task_id}/runs", response=list[RunResponse], errors=(404, 422))
async def task_runs(call: Call) -> list[dict[str, Any]]:
    """A scheduled task's recent runs"""
    schedule = await _do(admin(call).get(task_id(call)))
    runs = await call.gw.service.schedules.store.runs_of(schedule.id, 50)
    return [await run_response(call, schedule, r) for r in runs]


@api.route(
    "GET",
    "/api/threads/{thread_id}/scheduled-tasks",
    response=list[TaskResponse],
    errors=(404, 422),
)
async def thread_tasks(call: Call) -> list[dict[str, Any]]:
    """Scheduled tasks that run in this thread (or its chat)"""
    row = await call.gw.thread(call.path["thread_id"])
    key = row.conversation or thread_chat(row.thread_id).key
    return await tasks_response(call, await call.gw.service.schedules.store.for_conversation(key))
