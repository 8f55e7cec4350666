"""Gateway runs on several workers (one PostgreSQL, one Redis bus): a run executing on one
worker is cancelled through another, with the answers of a local cancel, seen through the
official langgraph-sdk client; a stream joined on another worker with `cancel_on_disconnect`
cancels the run when its client leaves, and gets the run's deltas live through Redis (only the
end when the running worker cannot reach Redis)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from langgraph_sdk.errors import ConflictError

from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply
from tests.gateway.conftest import AUTH, Api, make_harness
from tests.gateway.test_durable_runs import sdk_of
from tests.gateway.test_sdk import HUMAN
from tests.harness import ServiceHarness

pytestmark = pytest.mark.usefixtures("test_channel_registered")


Worker = Callable[[], ServiceHarness]


@pytest.fixture
def new_worker(
    tmp_path: Path, fake_openai: FakeOpenAI, pg_dsn: str, redis_bus: dict[str, Any]
) -> Worker:
    """Makes a worker (to start) on the test's one PostgreSQL database and one Redis bus."""
    storage = {"backend": "postgres", "postgres": {"dsn": pg_dsn}}
    return lambda: make_harness(tmp_path, fake_openai, storage=storage, bus=redis_bus)


@asynccontextmanager
async def two_workers(
    new_worker: Worker,
) -> AsyncIterator[tuple[ServiceHarness, ServiceHarness, Any, Any]]:
    """Two workers on one database and one bus, and an SDK client of each."""
    async with (
        new_worker() as one,
        new_worker() as two,
        sdk_of(one) as sdk_one,
        sdk_of(two) as sdk_two,
    ):
        yield one, two, sdk_one, sdk_two


async def test_a_run_on_one_worker_is_cancelled_through_another(
    fake_openai: FakeOpenAI, new_worker: Worker
) -> None:
    fake_openai.script(Reply(text="slow slow slow slow", stall_after=1), Reply(text="again"))
    async with two_workers(new_worker) as (_one, two, sdk_one, sdk_two):
        assert two.app is not None
        assert two.app.topology.run_cancels is not None
        tid = (await sdk_one.threads.create())["thread_id"]
        run = await sdk_one.runs.create(tid, "lead_agent", input=HUMAN)
        await fake_openai.wait_requests(1)  # running on worker one, its model stalled
        assert (await sdk_two.threads.get(tid))["status"] == "busy"
        await sdk_two.runs.cancel(tid, run["run_id"], wait=True)  # 204 once it ended
        assert (await sdk_one.runs.get(tid, run["run_id"]))["status"] == "interrupted"
        assert (await sdk_two.runs.get(tid, run["run_id"]))["status"] == "interrupted"
        assert (await sdk_two.threads.get(tid))["status"] == "idle"
        with pytest.raises(ConflictError, match="is not cancellable"):  # too late: it ended
            await sdk_two.runs.cancel(tid, run["run_id"])
        waited = await sdk_two.runs.wait(tid, "lead_agent", input=HUMAN)  # the thread is free
        assert waited["messages"][-1]["content"] == "again"
        # no live worker runs it: every worker answers no, at once
        assert await two.app.topology.run_cancels.cancel_elsewhere("no-such-run") is False


async def test_a_stream_joined_on_another_worker_cancels_the_run_when_its_client_leaves(
    fake_openai: FakeOpenAI, new_worker: Worker
) -> None:
    fake_openai.script(Reply(text="slow slow slow slow", stall_after=1))
    async with (
        new_worker() as one,
        new_worker() as two,
        sdk_of(one) as sdk_one,
        aiohttp.ClientSession(headers=AUTH) as session,
    ):
        tid = (await sdk_one.threads.create())["thread_id"]
        run = await sdk_one.runs.create(tid, "lead_agent", input=HUMAN)
        await fake_openai.wait_requests(1)
        Api(two, session).gw.runs.heartbeat_seconds = 0.05  # a write notices a gone client
        url = f"{two.gateway_url}/api/threads/{tid}/runs/{run['run_id']}/stream"
        async with session.get(url, params={"cancel_on_disconnect": "true"}) as resp:
            seen = b""  # joined on worker two, which does not run it; its client leaves
            while b": heartbeat" not in seen:
                seen += await asyncio.wait_for(resp.content.readany(), 5)
        joined = await asyncio.wait_for(sdk_one.runs.join(tid, run["run_id"]), 15)
        assert "slow slow slow slow" not in str(joined)  # cut off, not finished
        assert (await sdk_one.runs.get(tid, run["run_id"]))["status"] == "interrupted"


async def test_a_stream_joined_on_another_worker_gets_the_runs_deltas_live(
    fake_openai: FakeOpenAI, new_worker: Worker
) -> None:
    fake_openai.script(Reply(text="alpha beta gamma delta", stall_after=1))
    async with two_workers(new_worker) as (_one, _two, sdk_one, sdk_two):
        tid = (await sdk_one.threads.create())["thread_id"]
        modes = ["values", "messages-tuple"]
        run = await sdk_one.runs.create(tid, "lead_agent", input=HUMAN, stream_mode=modes)
        await fake_openai.wait_requests(1)
        parts: list[Any] = []
        first_delta = asyncio.Event()

        async def read() -> None:  # from the start (Last-Event-ID 0), then live
            async for part in sdk_two.runs.join_stream(tid, run["run_id"], last_event_id="0"):
                parts.append(part)
                if part.event == "messages":
                    first_delta.set()

        reader = asyncio.create_task(read())
        await asyncio.wait_for(first_delta.wait(), 15)  # while worker one's model stalls
        assert (await sdk_two.runs.get(tid, run["run_id"]))["status"] == "running"
        fake_openai.release()
        await asyncio.wait_for(reader, 15)
    events = [p.event for p in parts]
    assert events[0] == "metadata"
    assert events[-1] == "end"
    deltas = "".join(p.data[0]["content"] for p in parts if p.event == "messages")
    assert deltas == "alpha beta gamma delta"


async def test_without_redis_for_its_events_a_joiner_elsewhere_still_gets_the_end(
    fake_openai: FakeOpenAI, new_worker: Worker
) -> None:
    fake_openai.script(Reply(text="alpha beta", stall_after=1))
    async with two_workers(new_worker) as (one, _two, sdk_one, sdk_two):
        assert one.app is not None
        assert one.app.topology.run_events is not None
        one.app.topology.run_events.client = lambda: (
            None
        )  # worker one cannot reach Redis for events
        tid = (await sdk_one.threads.create())["thread_id"]
        modes = ["values", "messages-tuple"]
        run = await sdk_one.runs.create(tid, "lead_agent", input=HUMAN, stream_mode=modes)
        await fake_openai.wait_requests(1)
        reader = asyncio.create_task(_events(sdk_two.runs.join_stream(tid, run["run_id"])))
        fake_openai.release()
        events = await asyncio.wait_for(reader, 15)
    assert events[-2:] == ["values", "end"]  # from the run's record: no deltas, but the end
    assert "messages" not in events


async def _events(stream: Any) -> list[str]:
    return [p.event async for p in stream]
