"""Run and thread records outlive the process, on both backends, seen through the official
langgraph-sdk client: after a restart `runs.get`, `runs.list`, `runs.join` and `threads.search`
answer as before; a run cut off by a stop reads `interrupted`; on one PostgreSQL database a run
of one process is visible, and joinable, from another."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply
from tests.gateway.conftest import Api, make_harness, served_api
from tests.gateway.test_sdk import HUMAN, client
from tests.harness import ServiceHarness

pytestmark = pytest.mark.usefixtures("test_channel_registered")


@asynccontextmanager
async def sdk_of(svc: ServiceHarness) -> AsyncIterator[Any]:
    async with aiohttp.ClientSession() as session:
        yield client(Api(svc, session))


async def test_runs_and_threads_answer_after_a_restart(
    tmp_path: Path, fake_openai: FakeOpenAI, storage: dict[str, Any]
) -> None:
    fake_openai.script(Reply(text="first answer"), Reply(status=401, error="bad key"))
    svc = make_harness(tmp_path, fake_openai, storage=storage)
    await svc.start()
    try:
        async with sdk_of(svc) as sdk:
            tid = (await sdk.threads.create(metadata={"project": "kumquat"}))["thread_id"]
            waited = await sdk.runs.wait(tid, "lead_agent", input=HUMAN)
            with pytest.raises(Exception, match="401"):
                await sdk.runs.wait(tid, "lead_agent", input=HUMAN)
            before = await sdk.runs.list(tid)
            thread_before = await sdk.threads.get(tid)
        assert [r["status"] for r in before] == ["error", "success"]
        await svc.restart()
        async with sdk_of(svc) as sdk:
            assert await sdk.runs.list(tid) == before
            ok, failed = before[1]["run_id"], before[0]["run_id"]
            assert await sdk.runs.get(tid, ok) == before[1]
            assert await sdk.runs.list(tid, status="success") == [before[1]]
            assert await sdk.runs.join(tid, ok) == waited  # its final values were kept
            assert waited["messages"][-1]["content"] == "first answer"
            joined = await sdk.runs.join(tid, failed)
            assert "401" in joined["__error__"]["message"]
            events = [p async for p in sdk.runs.join_stream(tid, ok)]
            assert [p.event for p in events] == ["values", "end"]
            assert events[0].data == waited
            found = await sdk.threads.search(metadata={"project": "kumquat"})
            assert [t["thread_id"] for t in found] == [tid]
            thread = await sdk.threads.get(tid)
            assert thread["status"] == "error"  # its newest run failed, before and after
            assert (thread["metadata"], thread["created_at"]) == (
                thread_before["metadata"],
                thread_before["created_at"],
            )
            await sdk.threads.delete(tid)  # the thread goes with its runs
        async with sdk_of(svc) as sdk:
            assert await svc_runs(svc, tid) == []
    finally:
        await svc.stop()


async def svc_runs(svc: ServiceHarness, thread_id: str) -> list[Any]:
    assert svc.app is not None
    return await svc.app.stores.gateway.runs(thread_id)


async def test_a_run_cut_off_by_a_stop_reads_interrupted_after_it(
    tmp_path: Path, fake_openai: FakeOpenAI, storage: dict[str, Any]
) -> None:
    fake_openai.script(Reply(text="slow slow slow slow", stall_after=1), Reply(text="again"))
    svc = make_harness(tmp_path, fake_openai, storage=storage)
    await svc.start()
    try:
        async with sdk_of(svc) as sdk:
            tid = (await sdk.threads.create())["thread_id"]
            run = await sdk.runs.create(tid, "lead_agent", input=HUMAN)
            await fake_openai.wait_requests(1)
            assert (await sdk.runs.get(tid, run["run_id"]))["status"] == "running"
        await svc.stop()
        fake_openai.release()
        await svc.start()
        async with sdk_of(svc) as sdk:
            assert (await sdk.runs.get(tid, run["run_id"]))["status"] == "interrupted"
            assert (await sdk.threads.get(tid))["status"] == "idle"
            result = await sdk.runs.wait(tid, "lead_agent", input=HUMAN)
            assert result["messages"][-1]["content"] == "again"
    finally:
        await svc.stop()


async def test_a_run_of_another_process_is_seen_and_joined(
    tmp_path: Path, fake_openai: FakeOpenAI, pg_dsn: str
) -> None:
    storage = {"backend": "postgres", "postgres": {"dsn": pg_dsn}}
    fake_openai.script(Reply(text="from process one", stall_after=1))
    async with (
        make_harness(tmp_path, fake_openai, storage=storage) as one,
        make_harness(tmp_path, fake_openai, storage=storage) as two,
        sdk_of(one) as sdk_one,
        sdk_of(two) as sdk_two,
    ):
        tid = (await sdk_one.threads.create(metadata={"owner": "ops"}))["thread_id"]
        run = await sdk_one.runs.create(tid, "lead_agent", input=HUMAN)
        await fake_openai.wait_requests(1)
        seen = await sdk_two.runs.get(tid, run["run_id"])
        assert seen["status"] == "running"
        assert (await sdk_two.threads.get(tid))["status"] == "busy"
        assert [
            t["thread_id"] for t in await sdk_two.threads.search(metadata={"owner": "ops"})
        ] == [tid]
        joiner = asyncio.create_task(sdk_two.runs.join(tid, run["run_id"]))
        streamer = asyncio.create_task(_events(sdk_two.runs.join_stream(tid, run["run_id"])))
        fake_openai.release()
        joined = await asyncio.wait_for(joiner, 15)
        assert joined["messages"][-1]["content"] == "from process one"
        assert (await asyncio.wait_for(streamer, 15))[-2:] == ["values", "end"]
        assert (await sdk_two.runs.get(tid, run["run_id"]))["status"] == "success"
        assert (await sdk_two.threads.get(tid))["status"] == "idle"
    assert not list(tmp_path.glob("*.db"))  # on PostgreSQL, no state is in SQLite files


async def _events(stream: Any) -> list[str]:
    return [p.event async for p in stream]


async def test_a_run_ends_for_its_clients_when_the_database_goes_away(
    tmp_path: Path, fake_openai: FakeOpenAI, pg_dsn: str, caplog: pytest.LogCaptureFixture
) -> None:
    storage = {"backend": "postgres", "postgres": {"dsn": pg_dsn}}
    fake_openai.script(Reply(text="never saved", stall_after=1))
    async with served_api(tmp_path, fake_openai, storage=storage) as api:
        sdk = client(api)
        tid = (await sdk.threads.create())["thread_id"]
        waiting = asyncio.create_task(sdk.runs.wait(tid, "lead_agent", input=HUMAN))
        await fake_openai.wait_requests(1)
        await api.app.stores.pool.close()  # the database is gone when the run ends
        fake_openai.release()
        with pytest.raises(Exception, match="Something went wrong"):  # its checkpoint failed
            await asyncio.wait_for(waiting, 15)  # ... and the client is answered, not left hanging
        [rec] = api.gw.runs._runs.values()
        assert rec.status == "error"
        assert not api.gw.runs.is_busy(tid)  # the thread is free for the next run
    assert f"API run {rec.run_id}: its end was not recorded" in caplog.text
