"""Scheduled tasks in DeerFlow's shapes as well as Antler's: one task object carries both
(DeerFlow's `id` (a string), `thread_id`, `title`, `schedule_type`, `schedule_spec`, `status`…,
and Antler's `chat`, `creator`, `schedule`, `state`…), so DeerFlow's web UI and Antler's API
clients read the same answer. DeerFlow's `schedule_spec` (`{cron}` or `{run_at}`) becomes one
of Antler's time expressions (bot/schedules/parse.py)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal
from zoneinfo import ZoneInfo

from pydantic import BaseModel, ConfigDict, Field

from bot.stores.schedules import Run, Schedule
from gateway.api.schedule_threads import run_id_of, thread_of
from gateway.errors import ApiError
from gateway.langgraph.serialize import iso

STATUS = {"active": "enabled", "paused": "paused", "done": "completed", "cancelled": "cancelled"}
RUN_STATUS = {
    "claimed": "queued",
    "queued": "queued",
    "delivered": "success",
    "failed": "failed",
    "skipped": "skipped",
}
API_RUN_STATUS = {"pending": "queued", "error": "failed", "timeout": "failed"}
TITLE_CHARS = 60
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


class TaskResponse(BaseModel):
    id: str
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
    # DeerFlow's ScheduledTask
    thread_id: str | None
    context_mode: Literal["fresh_thread_per_run", "reuse_thread"]
    title: str
    schedule_type: Literal["once", "cron"]
    schedule_spec: dict[str, Any]
    status: Literal["enabled", "paused", "completed", "cancelled"]
    last_run_id: str | None
    last_thread_id: str | None
    last_error: str | None
    run_count: int
    updated_at: str


class RunResponse(BaseModel):
    due_at: str
    event_id: str
    state: Literal["claimed", "queued", "delivered", "failed", "skipped"]
    late: bool
    reason: str
    # DeerFlow's ScheduledTaskRun
    id: str
    task_id: str
    thread_id: str
    run_id: str | None
    scheduled_for: str
    trigger: Literal["scheduled", "manual"]
    status: str
    error: str | None
    started_at: str | None
    finished_at: str | None
    created_at: str


class TriggerResponse(RunResponse):
    """The run started, with DeerFlow's `{id (the task's), triggered}`."""

    triggered: bool = True


class Deleted(BaseModel):
    id: str
    deleted: bool


class DeerFlowTask(BaseModel):
    """DeerFlow's `ScheduledTaskCreateRequest` fields (a task without a chat)."""

    model_config = ConfigDict(extra="forbid")

    thread_id: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_-]{1,64}$")
    context_mode: Literal["fresh_thread_per_run", "reuse_thread"] = "reuse_thread"
    title: str = Field(min_length=1, max_length=200)
    prompt: str = Field(min_length=1, max_length=8000)
    schedule_type: Literal["once", "cron"]
    schedule_spec: dict[str, Any]
    timezone: str = Field(min_length=1, max_length=64)


def when_of(kind: str, spec: dict[str, Any], tz: str) -> str:
    """DeerFlow's schedule spec as an Antler time expression (422 when unreadable)."""
    if kind == "cron":
        cron = spec.get("cron")
        if not isinstance(cron, str) or not cron.strip() or '"' in cron:
            raise ApiError(422, "cron schedule requires schedule_spec.cron")
        return f'cron "{cron.strip()}"'
    run_at = spec.get("run_at")
    try:
        at = datetime.fromisoformat(run_at) if isinstance(run_at, str) else None
        zone = ZoneInfo(tz)
    except (ValueError, KeyError):
        at = None
    if at is None:
        raise ApiError(422, "once schedule requires schedule_spec.run_at (ISO 8601)")
    local = at.astimezone(zone) if at.tzinfo else at
    return f"on {local:%Y-%m-%d %H:%M}"


def spec_of(s: Schedule) -> dict[str, Any]:
    if s.kind == "cron":
        return {"cron": s.expr}
    due = s.next_run or s.last_run
    return {"run_at": iso_or_none(due)} if due is not None else {}


def title_of(s: Schedule) -> str:
    """The prompt's first line (Antler keeps no separate title)."""
    line = s.prompt.strip().splitlines()[0] if s.prompt.strip() else ""
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1] + "…"


def deerflow_task(s: Schedule, runs: list[Run]) -> dict[str, Any]:
    last = runs[0] if runs else None
    thread = thread_of(s.chat)
    return {
        "id": str(s.id),
        "thread_id": thread,
        "context_mode": "fresh_thread_per_run" if s.fresh_thread else "reuse_thread",
        "title": title_of(s),
        "schedule_type": s.kind,
        "schedule_spec": spec_of(s),
        "status": STATUS[s.state],
        "last_run_id": run_id_of(last) if last else None,
        "last_thread_id": thread if last else None,
        "last_error": last.reason if last and last.state == "failed" else None,
        "run_count": len(runs),
        "updated_at": iso_or_none(s.last_run or s.created_at) or "",
    }


def deerflow_run(s: Schedule, run: Run, api_status: str | None) -> dict[str, Any]:
    """One run of a task; a Gateway thread's run takes its status from the API run."""
    due = iso_or_none(run.due_at) or ""
    status = RUN_STATUS[run.state]
    if api_status is not None:
        status = API_RUN_STATUS.get(api_status, api_status)
    return {
        "id": f"{s.id}-{int(run.due_at)}",
        "task_id": str(s.id),
        "thread_id": thread_of(s.chat) or "",
        "run_id": run_id_of(run),
        "scheduled_for": due,
        "trigger": "scheduled",
        "status": status,
        "error": run.reason if run.state == "failed" else None,
        "started_at": due if run.state != "claimed" else None,
        "finished_at": None,
        "created_at": due,
    }


def iso_or_none(epoch: float | None) -> str | None:
    return iso(epoch) if epoch is not None else None
