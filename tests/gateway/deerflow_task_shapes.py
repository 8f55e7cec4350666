"""DeerFlow's scheduled-task shapes (the web UI's TypeScript types), as deerflow_shapes.py
writes the others."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import StrictInt, StrictStr

from tests.gateway.deerflow_shapes import Shape

# ---------------------------------------------------------------- scheduled tasks
# (frontend/src/core/scheduled-tasks/types.ts)


class ScheduledTask(Shape):
    id: StrictStr
    thread_id: StrictStr | None
    context_mode: Literal["fresh_thread_per_run", "reuse_thread"]
    title: StrictStr
    prompt: StrictStr
    schedule_type: Literal["once", "cron"]
    schedule_spec: dict[str, Any]
    timezone: StrictStr
    status: Literal["enabled", "paused", "running", "completed", "failed", "cancelled"]
    next_run_at: StrictStr | None
    last_run_at: StrictStr | None
    last_run_id: StrictStr | None
    last_thread_id: StrictStr | None
    last_error: StrictStr | None
    run_count: StrictInt
    created_at: StrictStr
    updated_at: StrictStr


class ScheduledTaskRun(Shape):
    id: StrictStr
    task_id: StrictStr
    thread_id: StrictStr
    run_id: StrictStr | None
    scheduled_for: StrictStr
    trigger: Literal["scheduled", "manual"]
    status: Literal["queued", "running", "success", "failed", "skipped", "interrupted"]
    error: StrictStr | None
    started_at: StrictStr | None
    finished_at: StrictStr | None
    created_at: StrictStr
