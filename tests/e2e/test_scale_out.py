"""Two Antler processes (two whole Apps) on one PostgreSQL database and one shared data_dir:
a redelivered event is answered once, and a conversation goes on whichever process takes it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest

from channels.base import PublishResult
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.recording_channel import RecordingChannel
from tests.harness import ServiceHarness

pytestmark = pytest.mark.usefixtures("test_channel_registered")


NewProcess = Callable[[], ServiceHarness]


@pytest.fixture
def new_process(tmp_path: Path, fake_openai: FakeOpenAI, pg_dsn: str) -> NewProcess:
    """Makes a process of the service (to start) on the test's one PostgreSQL database."""
    storage = {"backend": "postgres", "postgres": {"dsn": pg_dsn}}
    return lambda: ServiceHarness(
        tmp_path, fake_openai, {"test": {"enabled": True}}, storage=storage
    )


def chan(svc: ServiceHarness) -> RecordingChannel:
    channel = svc.channel("test")
    assert isinstance(channel, RecordingChannel)
    return channel


async def test_two_apps_answer_a_redelivered_event_once(
    new_process: NewProcess, fake_openai: FakeOpenAI
) -> None:
    async with (
        new_process() as one,
        new_process() as two,
    ):
        a, b = chan(one), chan(two)
        assert await a.inject("hello", event_id="evt-1") is PublishResult.accepted
        await one.idle()
        assert await b.inject("hello", event_id="evt-1") is PublishResult.duplicate
        # the platform delivers the next event to both at the same moment
        both = await asyncio.gather(
            a.inject("again", event_id="evt-2"), b.inject("again", event_id="evt-2")
        )
        assert sorted(both) == sorted([PublishResult.accepted, PublishResult.duplicate])
        await one.idle()
        await two.idle()
    assert len(fake_openai.requests) == 2
    assert len(a.of("finish")) + len(b.of("finish")) == 2


async def test_processes_starting_together_on_a_fresh_database_all_start(
    tmp_path: Path, fake_openai: FakeOpenAI, pg_dsn: str
) -> None:
    storage = {"backend": "postgres", "postgres": {"dsn": pg_dsn, "statement_timeout_seconds": 3}}
    apps = [
        ServiceHarness(tmp_path, fake_openai, {"test": {"enabled": True}}, storage=storage)
        for _ in range(3)
    ]
    await asyncio.gather(*(app.start() for app in apps))  # one creates the tables, all start
    try:
        for n, app in enumerate(apps):
            await chan(app).inject(f"hello {n}", event_id=f"start-{n}")
            await app.idle()
            assert chan(app).texts() == [f"echo: hello {n}"]
    finally:
        await asyncio.gather(*(app.stop() for app in apps))


async def test_conversation_goes_on_in_the_other_process(
    new_process: NewProcess, tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    async with (
        new_process() as one,
        new_process() as two,
    ):
        # (each recording channel numbers its events from e1: give them ids of their own)
        await chan(one).inject("remember the word kumquat", event_id="p1-1")
        await one.idle()
        await chan(one).inject("/models smart", event_id="p1-2")
        await one.idle()
        await chan(two).inject("what word?", event_id="p2-1")
        await two.idle()
    second = fake_openai.requests[1]
    assert any("kumquat" in t for t in FakeOpenAI.user_texts(second))  # checkpoints shared
    assert second.model == "fake-smart"  # the setting made in the other process
    assert not (tmp_path / "checkpoints.db").exists()  # LangGraph's tables are on PostgreSQL


async def test_lost_database_connections_are_taken_again(
    new_process: NewProcess, fake_openai: FakeOpenAI, pg_dsn: str
) -> None:
    app_name = psycopg.conninfo.conninfo_to_dict(pg_dsn)["application_name"]
    async with new_process() as svc:
        ch = chan(svc)
        await ch.inject("remember the word kumquat")
        await svc.idle()
        with psycopg.connect(pg_dsn, autocommit=True, application_name="killer") as conn:
            killed = conn.execute(  # what a database restart or a network cut does to them
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                " WHERE application_name = %s",
                (app_name,),
            ).fetchone()
        assert killed is not None
        assert killed[0] >= 2
        await ch.inject("what word?")
        await svc.idle()
    assert ch.texts() == ["echo: remember the word kumquat", "echo: what word?"]
    assert any("kumquat" in t for t in FakeOpenAI.user_texts(fake_openai.requests[1]))


async def test_health_reports_the_database(
    new_process: NewProcess, fake_openai: FakeOpenAI
) -> None:
    async with new_process() as svc:
        assert svc.app is not None
        app = svc.app
        database = app.health()["database"]
        assert (database["backend"], database["reachable"]) == ("postgres", True)
        assert database["pool"]["pool_size"] >= 2  # pool_min connections are open
        stores: Any = app.stores
        await stores.pool.close()  # what a lost server looks like to the periodic ping
        await stores.check()
        health = app.health()
        assert health["status"] == "degraded"
        assert health["database"]["reachable"] is False
        assert health["database"]["error"].startswith("storage.postgres.dsn: cannot use")


async def test_a_starting_process_leaves_running_answers_alone_and_takes_up_dead_ones(
    new_process: NewProcess, fake_openai: FakeOpenAI
) -> None:
    from tests.fakes.openai_wire import Reply

    fake_openai.script(Reply(text="never finished " * 10, stall_after=2))
    one = new_process()
    await one.start()
    a = chan(one)
    await a.inject("important question", event_id="evt-9")
    await a.wait_for("update")  # `one` is answering it
    async with new_process() as two:
        b = chan(two)
        await two.idle()
        assert b.calls == []  # started next to `one`: not answered twice
        await one.stop()  # grace (2 s) runs out while the model stalls: `one` is gone
        fake_openai.release()
        assert two.app is not None
        assert await two.app.stores.take_over() == 1  # what its periodic check does
        await two.idle()
        assert b.texts() == ["echo: important question"]
    assert a.of("finish")[0].doc is not None
