"""/api/scheduled-tasks and /api/threads/{id}/scheduled-tasks against the whole service."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from tests.fakes.clock import VirtualClock
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.recording_channel import RecordingChannel
from tests.gateway.conftest import Api, make_harness, served_api

BASE = "/api/scheduled-tasks"
CHAT = {"channel": "test", "chat_id": "c1"}
ANN = {"id": "u1", "name": "Ann"}


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock(time.time(), sleep_moves=False)


@pytest.fixture
async def sapi(
    tmp_path: Path, fake_openai: FakeOpenAI, test_channel_registered: None, clock: VirtualClock
) -> AsyncIterator[Api]:
    async with served_api(tmp_path, fake_openai, schedule_clock=clock) as api:
        yield api


def channel(api: Api) -> RecordingChannel:
    ch = api.svc.channel("test")
    assert isinstance(ch, RecordingChannel)
    return ch


async def test_create_get_patch_pause_resume_delete(sapi: Api) -> None:
    body = {
        "chat": CHAT,
        "creator": ANN,
        "schedule": "every weekday 09:00",
        "prompt": "summarise the tracker",
        "timezone": "Europe/Berlin",
    }
    status, task, _ = await sapi.call("POST", BASE, json=body)
    assert status == 201, task
    assert task["id"] == "1"
    assert task["schedule"] == "every weekday at 09:00"
    assert task["cron"] == "0 9 * * 1-5"
    assert task["timezone"] == "Europe/Berlin"
    assert task["state"] == "active"
    assert task["next_run_at"].endswith("+00:00")
    assert task["conversation_key"] == "test:c1"
    status, got, _ = await sapi.call("GET", f"{BASE}/1")
    assert (status, got) == (200, task)
    status, patched, _ = await sapi.call(
        "PATCH", f"{BASE}/1", json={"schedule": "every hour", "fresh_thread": True}
    )
    assert status == 200
    assert (patched["cron"], patched["fresh_thread"]) == ("0 */1 * * *", True)
    status, paused, _ = await sapi.call("POST", f"{BASE}/1/pause")
    assert (status, paused["state"]) == (200, "paused")
    status, resumed, _ = await sapi.call("POST", f"{BASE}/1/resume")
    assert (status, resumed["state"]) == (200, "active")
    status, listing, _ = await sapi.call("GET", BASE)
    assert [t["id"] for t in listing] == ["1"]
    status, deleted, _ = await sapi.call("DELETE", f"{BASE}/1")
    assert (status, deleted) == (200, {"id": "1", "deleted": True})
    status, gone, _ = await sapi.call("GET", f"{BASE}/1")
    assert gone["state"] == "cancelled"
    status, err, _ = await sapi.call("POST", f"{BASE}/1/pause")
    assert status == 409
    assert "cancelled" in err["detail"]


async def test_bad_input_is_a_clear_4xx(sapi: Api) -> None:
    base = {"chat": CHAT, "creator": ANN, "prompt": "x"}
    cases = [
        ({**base, "schedule": "whenever"}, 422, "could not read the time"),
        ({**base, "schedule": "in 2h", "timezone": "America"}, 422, "unknown time zone"),
        ({**base, "schedule": "in 2h and then some"}, 422, "could not read"),
        ({**base, "schedule": "in 2h", "chat": {**CHAT, "channel": "nope"}}, 422, "not running"),
    ]
    for body, code, says in cases:
        status, err, _ = await sapi.call("POST", BASE, json=body)
        assert status == code, (body, err)
        assert says in str(err["detail"])
    status, _, _ = await sapi.call("GET", f"{BASE}/99")
    assert status == 404
    status, _, _ = await sapi.call("GET", f"{BASE}/abc")
    assert status == 404  # DeerFlow's ids are strings: a name that is no task is unknown
    status, _, _ = await sapi.call("GET", f"{BASE}/a.b")
    assert status == 422


async def test_limits_apply_to_the_api(
    tmp_path: Path, fake_openai: FakeOpenAI, test_channel_registered: None, clock: VirtualClock
) -> None:
    harness = make_harness(
        tmp_path, fake_openai, schedule_clock=clock, schedules={"max_per_person": 1}
    )
    async with harness as svc, aiohttp.ClientSession() as session:
        api = Api(svc, session)
        body = {"chat": CHAT, "creator": ANN, "schedule": "in 1h", "prompt": "x"}
        assert (await api.call("POST", BASE, json=body))[0] == 201
        status, err, _ = await api.call("POST", BASE, json=body)
    assert status == 409
    assert "You can't add more" in err["detail"]


async def test_trigger_runs_now_and_runs_lists_it(sapi: Api, clock: VirtualClock) -> None:
    body = {"chat": CHAT, "creator": ANN, "schedule": "every day 09:00", "prompt": "status"}
    await sapi.call("POST", BASE, json=body)
    status, run, _ = await sapi.call("POST", f"{BASE}/1/trigger")
    assert status == 202
    assert run["state"] == "claimed"
    status, _, _ = await sapi.call("POST", f"{BASE}/1/trigger")
    assert status == 409
    await sapi.app.schedules.scheduler.tick()
    await sapi.svc.idle()
    finals = channel(sapi).of("finish")
    assert len(finals) == 1
    assert finals[0].text.endswith("status")
    await sapi.app.schedules.scheduler.tick()
    status, runs, _ = await sapi.call("GET", f"{BASE}/1/runs")
    assert [(r["state"], r["event_id"]) for r in runs] == [("delivered", run["event_id"])]
    task = (await sapi.call("GET", f"{BASE}/1"))[1]
    assert task["state"] == "active"  # the schedule itself did not move


async def test_a_triggered_run_is_delivered_and_shown_so_without_waiting_for_the_poll(
    sapi: Api,
) -> None:
    """No manual tick: the trigger wakes the scheduler's loop, and the run's state leaves
    `queued` as soon as its answer is settled (the virtual clock never ends the poll's sleep)."""
    body = {"chat": CHAT, "creator": ANN, "schedule": "every day 09:00", "prompt": "status"}
    await sapi.call("POST", BASE, json=body)
    status, _, _ = await sapi.call("POST", f"{BASE}/1/trigger")
    assert status == 202
    states: list[str] = []
    for _ in range(500):
        await sapi.svc.idle()
        states = [r["state"] for r in (await sapi.call("GET", f"{BASE}/1/runs"))[1]]
        if states != ["claimed"] and states != ["queued"]:
            break
        await asyncio.sleep(0.01)
    assert len(channel(sapi).of("finish")) == 1
    assert states == ["delivered"]


async def test_thread_scheduled_tasks(sapi: Api) -> None:
    ch = channel(sapi)
    await ch.inject("/schedule in 2h call Ann")
    await ch.inject("/schedule in 3h call Bob", chat_id="c2")
    await sapi.svc.idle()
    conv = await sapi.app.conversations.get("test:c1")
    status, listing, _ = await sapi.call("GET", f"/api/threads/{conv.thread_id}/scheduled-tasks")
    assert status == 200
    assert [t["prompt"] for t in listing] == ["call Ann"]
    status, _, _ = await sapi.call("GET", "/api/threads/unknown-thread/scheduled-tasks")
    assert status == 404
