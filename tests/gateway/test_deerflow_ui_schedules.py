"""DeerFlow's scheduled-tasks page against Antler, replayed over raw HTTP as the UI calls it: a
task created without a chat runs in its Gateway thread (the UI shows its runs there), every
task route takes the ids the UI got, and a thread lists its tasks. Answers are validated
against DeerFlow's shapes (deerflow_shapes.py)."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.clock import VirtualClock
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply
from tests.gateway import deerflow_shapes as df
from tests.gateway import deerflow_task_shapes as dft
from tests.gateway.conftest import Api, served_api
from tests.gateway.test_deerflow_ui import LG, check, ok
from tests.gateway.test_deerflow_ui_pages import until

BASE = "/api/scheduled-tasks"
DIGEST: dict[str, Any] = {
    "context_mode": "reuse_thread",
    "title": "Daily digest",
    "prompt": "summarise the news",
    "schedule_type": "cron",
    "schedule_spec": {"cron": "0 9 * * *"},
    "timezone": "Europe/Berlin",
}


@pytest.fixture
async def sapi(
    tmp_path: Path, fake_openai: FakeOpenAI, test_channel_registered: None
) -> AsyncIterator[Api]:
    clock = VirtualClock(time.time(), sleep_moves=False)
    async with served_api(tmp_path, fake_openai, schedule_clock=clock) as api:
        yield api


async def create(api: Api, body: dict[str, Any]) -> dict[str, Any]:
    status, task, _ = await api.call("POST", BASE, json=body)
    assert status in (200, 201), task
    check(dft.ScheduledTask, task)
    return task


async def test_a_task_without_a_chat_runs_in_its_gateway_thread(
    sapi: Api, fake_openai: FakeOpenAI
) -> None:
    api = sapi
    fake_openai.script(Reply(text="Nothing new today."))
    task = await create(api, DIGEST)
    tid, task_id = str(task["thread_id"]), str(task["id"])
    assert (task["status"], task["schedule_spec"]) == ("enabled", {"cron": "0 9 * * *"})
    thread = await ok(api, "GET", f"{LG}/threads/{tid}", df.ThreadResponse)
    assert thread["metadata"]["title"] == "Daily digest"
    listed = await ok(api, "GET", BASE, list[dft.ScheduledTask])
    assert [t["id"] for t in listed] == [task_id]
    in_thread = await ok(api, "GET", f"/api/threads/{tid}/scheduled-tasks", list[dft.ScheduledTask])
    assert [t["id"] for t in in_thread] == [task_id]
    # "Run now": the run starts in the task's thread, where the UI shows it
    status, triggered, _ = await api.call("POST", f"{BASE}/{task_id}/trigger")
    assert status in (200, 202), triggered
    assert (triggered["id"], triggered["triggered"]) == (task_id, True)
    await api.app.schedules.scheduler.tick()

    async def finished() -> list[dict[str, object]]:
        runs = await ok(api, "GET", f"{LG}/threads/{tid}/runs", list[df.RunResponse])
        return [r for r in runs if r["status"] == "success"]

    run = (await until(finished, "the task's run in its thread"))[0]
    state = await ok(api, "GET", f"{LG}/threads/{tid}/state", df.ThreadState)
    assert state["values"]["messages"][-1]["content"] == "Nothing new today."
    assert "summarise the news" in df.text_of(state["values"]["messages"][0])
    runs = await ok(api, "GET", f"{BASE}/{task_id}/runs", list[dft.ScheduledTaskRun])
    assert [(r["run_id"], r["thread_id"], r["status"]) for r in runs] == [
        (run["run_id"], tid, "success")
    ]
    task = await ok(api, "GET", f"{BASE}/{task_id}", dft.ScheduledTask)
    assert (task["last_run_id"], task["run_count"]) == (run["run_id"], 1)
    # edit, pause, resume, delete: each with the id the UI got
    patch = {"title": "Digest", "prompt": "the news", "schedule_spec": {"cron": "30 8 * * 1-5"}}
    task = await ok(api, "PATCH", f"{BASE}/{task_id}", dft.ScheduledTask, json=patch)
    assert (task["prompt"], task["schedule_spec"]) == ("the news", {"cron": "30 8 * * 1-5"})
    paused = await ok(api, "POST", f"{BASE}/{task_id}/pause", dft.ScheduledTask)
    assert paused["status"] == "paused"
    resumed = await ok(api, "POST", f"{BASE}/{task_id}/resume", dft.ScheduledTask)
    assert resumed["status"] == "enabled"
    status, deleted, _ = await api.call("DELETE", f"{BASE}/{task_id}")
    assert (status, deleted) == (200, {"id": task_id, "deleted": True})


async def test_a_once_task_in_a_named_thread_and_bad_input(sapi: Api) -> None:
    api = sapi
    tid = (await api.call("POST", f"{LG}/threads", json={}))[1]["thread_id"]
    once = {
        **DIGEST,
        "thread_id": tid,
        "schedule_type": "once",
        "schedule_spec": {"run_at": "2099-05-01T09:30:00"},
    }
    task = await create(api, once)
    assert task["thread_id"] == tid
    assert task["schedule_spec"] == {"run_at": "2099-05-01T07:30:00+00:00"}  # 09:30 in Berlin
    in_thread = await ok(api, "GET", f"/api/threads/{tid}/scheduled-tasks", list[dft.ScheduledTask])
    assert [t["id"] for t in in_thread] == [task["id"]]
    empty = (await api.call("POST", f"{LG}/threads", json={}))[1]["thread_id"]
    assert (
        await ok(api, "GET", f"/api/threads/{empty}/scheduled-tasks", list[dft.ScheduledTask]) == []
    )
    threads_before = len(await api.gw.threads.all())
    for bad, code in (
        ({**DIGEST, "schedule_spec": {}}, 422),
        ({**DIGEST, "schedule_spec": {"cron": "every day"}}, 422),
        ({**once, "schedule_spec": {"run_at": "soon"}}, 422),
        ({**DIGEST, "timezone": "Mars/Base"}, 422),
        ({**DIGEST, "thread_id": "no-such-thread"}, 404),
        ({**DIGEST, "schedule_type": "weekly"}, 422),
    ):
        status, body, _ = await api.call("POST", BASE, json=bad)
        assert status == code, (bad, body)
    assert len(await api.gw.threads.all()) == threads_before  # no thread left behind
    for path in (f"{BASE}/7c9e6679-7425-40de-944b-e07fc1f90ae7", f"{BASE}/task_1/runs"):
        assert (await api.call("GET", path))[0] == 404  # an id the UI could send: unknown
    assert (await api.call("GET", "/api/threads/no-such-thread/scheduled-tasks"))[0] == 404
