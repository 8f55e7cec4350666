"""Scheduled tasks in DeerFlow's shapes: `/api/scheduled-tasks` (list, create, get, patch,
delete, pause, resume, trigger, runs) and `/api/threads/{thread_id}/scheduled-tasks`.

The rules are the chat's (bot/schedules/admin.py): the same time expressions, limits and time
zones. DELETE cancels the task (it stays listed with state `cancelled`).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from bot.schedules.admin import ScheduleAdmin, ScheduleError
from bot.schedules.store import Run, Schedule, ScheduleState
from channels.base import ChatRef, UserRef
from gateway.errors import ApiError
from gateway.registry import PATH_PARAMS, Call, Registry

api = Registry()
TAG = "scheduled-tasks"
BASE = "/api/scheduled-tasks"
PATH_PARAMS.setdefault("task_id", r"^[1-9][0-9]{0,15}$")

Missed = Literal["run_once", "skip"]


class ChatSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    channel: str = Field(min_length=1, max_length=64)
    chat_id: str = Field(min_length=1, max_length=256)
    chat_type: Literal["dm", "group"] = "dm"
    workspace: str = Field(default="", max_length=256)
    topic_id: str | None = Field(default=None, max_length=256)


class Creator(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, max_length=256)
    name: str = Field(default="", max_length=256)


class TaskCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    chat: ChatSpec
    creator: Creator
    schedule: str = Field(
        min_length=1,
        max_length=200,
        description="when, as in /schedule: 'every weekday 09:00', 'in 2h'",
    )
    prompt: str = Field(min_length=1, max_length=8000)
    timezone: str | None = Field(default=None, max_length=64)
    fresh_thread: bool = False
    missed_policy: Missed | None = None


class TaskPatch(BaseModel):
    model_config = ConfigDict(extra="forbid")

    schedule: str | None = Field(default=None, min_length=1, max_length=200)
    prompt: str | None = Field(default=None, min_length=1, max_length=8000)
    timezone: str | None = Field(default=None, max_length=64)
    fresh_thread: bool | None = None
    missed_policy: Missed | None = None


class TaskResponse(BaseModel):
    id: int
    chat: ChatSpec
    conversation_key: str
    creator: Creator
    prompt: str
    schedule: str
    kind: Literal["once", "cron"]
    cron: str | None
    timezone: str
    state: Literal["active", "paused", "done", "cancelled"]
    reason: str
    next_run_at: str | None
    last_run_at: str | None
    missed_policy: Missed
    fresh_thread: bool
    created_at: str


class TasksResponse(BaseModel):
    tasks: list[TaskResponse]


class RunResponse(BaseModel):
    task_id: int
    due_at: str
    event_id: str
    state: Literal["claimed", "queued", "delivered", "failed", "skipped"]
    late: bool
    reason: str


class RunsResponse(BaseModel):
    runs: list[RunResponse]


def _iso(epoch: float | None) -> str | None:
    return datetime.fromtimestamp(epoch, UTC).isoformat() if epoch is not None else None


def task_response(s: Schedule) -> TaskResponse:
    chat = s.chat
    return TaskResponse(
        id=s.id,
        chat=ChatSpec(
            channel=chat.channel,
            chat_id=chat.chat_id,
            chat_type=chat.chat_type,
            workspace=chat.workspace,
            topic_id=chat.topic_id,
        ),
        conversation_key=chat.key,
        creator=Creator(id=s.creator.id, name=s.creator.name),
        prompt=s.prompt,
        schedule=s.label,
        kind=s.kind,
        cron=s.expr or None,
        timezone=s.tz,
        state=s.state,
        reason=s.reason,
        next_run_at=_iso(s.next_run),
        last_run_at=_iso(s.last_run),
        missed_policy=s.missed,
        fresh_thread=s.fresh_thread,
        created_at=_iso(s.created_at) or "",
    )


def run_response(run: Run) -> RunResponse:
    return RunResponse(
        task_id=run.schedule_id,
        due_at=_iso(run.due_at) or "",
        event_id=f"schedule:{run.schedule_id}:{int(run.due_at)}",
        state=run.state,
        late=run.late,
        reason=run.reason,
    )


def admin(call: Call) -> ScheduleAdmin:
    service = call.gw.service
    return ScheduleAdmin(service.schedules, set(service.channel_states()))


def task_id(call: Call) -> int:
    return int(call.path["task_id"])


async def _do(coro):
    try:
        return await coro
    except ScheduleError as exc:
        raise ApiError(exc.status, exc.message) from None


@api.route("GET", BASE, summary="List scheduled tasks", tag=TAG, response=TasksResponse)
async def list_tasks(call: Call) -> TasksResponse:
    tasks = await call.gw.service.schedules.store.all(500)
    return TasksResponse(tasks=[task_response(s) for s in tasks])


@api.route(
    "POST",
    BASE,
    summary="Create a scheduled task",
    tag=TAG,
    body=TaskCreate,
    response=TaskResponse,
    status=201,
    errors=(409, 422),
)
async def create_task(call: Call) -> TaskResponse:
    body: TaskCreate = call.body
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
    return task_response(schedule)


@api.route(
    "GET",
    BASE + "/{task_id}",
    summary="Get a scheduled task",
    tag=TAG,
    response=TaskResponse,
    errors=(404, 422),
)
async def get_task(call: Call) -> TaskResponse:
    return task_response(await _do(admin(call).get(task_id(call))))


@api.route(
    "PATCH",
    BASE + "/{task_id}",
    summary="Change a scheduled task",
    tag=TAG,
    body=TaskPatch,
    response=TaskResponse,
    errors=(404, 409, 422),
)
async def patch_task(call: Call) -> TaskResponse:
    body: TaskPatch = call.body
    schedule = await _do(
        admin(call).update(
            task_id(call),
            prompt=body.prompt,
            when=body.schedule,
            tz=body.timezone,
            fresh_thread=body.fresh_thread,
            missed=body.missed_policy,
        )
    )
    return task_response(schedule)


@api.route(
    "DELETE",
    BASE + "/{task_id}",
    summary="Cancel a scheduled task",
    tag=TAG,
    status=204,
    errors=(404, 409, 422),
)
async def delete_task(call: Call) -> None:
    await _do(admin(call).set_state(task_id(call), "cancelled"))


def _state_route(action: str, summary: str, state: ScheduleState) -> None:
    """`POST /api/schedules/tasks/{task_id}/<action>`: the task's state becomes `state`."""

    async def change(call: Call) -> TaskResponse:
        return task_response(await _do(admin(call).set_state(task_id(call), state)))

    change.__name__ = f"{action}_task"  # the operationId
    api.route(
        "POST",
        BASE + "/{task_id}/" + action,
        summary=summary,
        tag=TAG,
        response=TaskResponse,
        errors=(404, 409, 422),
    )(change)


_state_route("pause", "Pause a scheduled task", "paused")
_state_route("resume", "Resume a paused scheduled task", "active")


@api.route(
    "POST",
    BASE + "/{task_id}/trigger",
    summary="Run a scheduled task now",
    tag=TAG,
    response=RunResponse,
    status=202,
    errors=(404, 409, 422),
)
async def trigger_task(call: Call) -> RunResponse:
    return run_response(await _do(admin(call).trigger(task_id(call))))


@api.route(
    "GET",
    BASE + "/{task_id}/runs",
    summary="A scheduled task's recent runs",
    tag=TAG,
    response=RunsResponse,
    errors=(404, 422),
)
async def task_runs(call: Call) -> RunsResponse:
    schedule = await _do(admin(call).get(task_id(call)))
    runs = await call.gw.service.schedules.store.runs_of(schedule.id, 50)
    return RunsResponse(runs=[run_response(r) for r in runs])


@api.route(
    "GET",
    "/api/threads/{thread_id}/scheduled-tasks",
    summary="Scheduled tasks of the conversation on this thread",
    tag=TAG,
    response=TasksResponse,
    errors=(404, 422),
)
async def thread_tasks(call: Call) -> TasksResponse:
    conv = await call.gw.service.conversations.by_thread(call.path["thread_id"])
    if conv is None:
        raise ApiError(404, f"thread {call.path['thread_id']} has no chat conversation")
    tasks = await call.gw.service.schedules.store.for_conversation(conv.key)
    return TasksResponse(tasks=[task_response(s) for s in tasks])
