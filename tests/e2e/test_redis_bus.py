"""Several Apps on one PostgreSQL and one Redis (`bus.backend: redis`): every message answered
once, in order per conversation, by the owner of its partition; a dead worker's partitions and
unacknowledged messages go to another worker once its lease ran out."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from bot.config.schema import ConfigError
from channels.base import PublishResult
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.recording_channel import RecordingChannel
from tests.harness import ServiceHarness

pytestmark = pytest.mark.usefixtures("test_channel_registered")


def worker(tmp_path: Path, fake: FakeOpenAI, dsn: str, bus: dict[str, Any]) -> ServiceHarness:
    return ServiceHarness(
        tmp_path,
        fake,
        {"test": {"enabled": True}},
        storage={"backend": "postgres", "postgres": {"dsn": dsn}},
        bus=bus,
    )


def chan(svc: ServiceHarness) -> RecordingChannel:
    channel = svc.channel("test")
    assert isinstance(channel, RecordingChannel)
    return channel


def answers(*workers: ServiceHarness) -> dict[str, list[str]]:
    """chat id → the final texts shown there, in the order they were finished."""
    calls = sorted((c for w in workers for c in chan(w).of("finish")), key=lambda c: c.at)
    found: dict[str, list[str]] = {}
    for call in calls:
        assert call.chat is not None
        assert call.doc is not None
        found.setdefault(call.chat.chat_id, []).append(call.doc.text)
    return found


async def settled(svc: ServiceHarness, count: int, timeout: float = 30) -> None:
    assert svc.app is not None
    journal = svc.app.journal
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while await journal.count("delivered") + await journal.count("failed") < count:
        assert loop.time() < deadline, "messages not settled in time"
        await asyncio.sleep(0.05)


@asynccontextmanager
async def sharing_the_partitions(
    tmp_path: Path, fake: FakeOpenAI, dsn: str, bus: dict[str, Any]
) -> AsyncIterator[tuple[ServiceHarness, ServiceHarness]]:
    """Two workers on one database and one bus, once both hold a share of the partitions (or
    after 4 s)."""
    async with worker(tmp_path, fake, dsn, bus) as one, worker(tmp_path, fake, dsn, bus) as two:
        for _ in range(40):
            if all(w.app and w.app.health()["bus"]["partitions"] for w in (one, two)):
                break
            await asyncio.sleep(0.1)
        yield one, two


async def test_two_workers_answer_every_message_once_in_order(
    tmp_path: Path, fake_openai: FakeOpenAI, pg_dsn: str, redis_bus: dict[str, Any]
) -> None:
    async with sharing_the_partitions(tmp_path, fake_openai, pg_dsn, redis_bus) as (one, two):
        assert one.app is not None
        assert two.app is not None
        a = chan(one)
        for i in range(5):
            for chat in range(8):
                await a.inject(f"c{chat} m{i}", chat_id=f"c{chat}", event_id=f"c{chat}-{i}")
        assert (await a.inject("c0 m0", chat_id="c0", event_id="c0-0")).value == "duplicate"
        await settled(one, 40)
        shown = answers(one, two)
        assert chan(two).of("finish")  # the second worker answered its share
    assert len(fake_openai.requests) == 40
    for chat in range(8):
        assert shown[f"c{chat}"] == [f"echo: c{chat} m{i}" for i in range(5)]


async def test_a_stopping_workers_reply_is_finished_by_another_in_the_same_message(
    tmp_path: Path, fake_openai: FakeOpenAI, pg_dsn: str, redis_bus: dict[str, Any]
) -> None:
    from tests.fakes.openai_wire import Reply

    fake_openai.script(Reply(text="never finished " * 10, stall_after=2))
    one = worker(tmp_path, fake_openai, pg_dsn, redis_bus)
    await one.start()
    a = chan(one)
    await a.inject("important question", event_id="evt-1")
    await a.wait_for("update")  # `one` (the only worker: every partition) is answering it
    async with worker(tmp_path, fake_openai, pg_dsn, redis_bus) as two:
        await asyncio.sleep(0.5)
        assert chan(two).calls == []  # a partition with work in flight is not handed over
        await one.stop()  # grace (2 s) runs out while the model stalls: the run is cancelled
        fake_openai.release()
        b = chan(two)
        await settled(two, 1)
        assert b.texts() == ["echo: important question"]
        (opened,) = a.of("open")
        assert {c.reply for c in b.of("finish")} == {opened.reply}  # the same message
    assert len(fake_openai.requests) == 2


async def test_unreachable_redis_names_the_setting(
    tmp_path: Path, fake_openai: FakeOpenAI, pg_dsn: str
) -> None:
    bus = {"backend": "redis", "redis": {"url": "redis://:hunter2@127.0.0.1:1/0"}}
    svc = worker(tmp_path, fake_openai, pg_dsn, bus)
    with pytest.raises(ConfigError) as caught:
        await svc.start()
    (problem,) = caught.value.problems
    assert problem.startswith("bus.redis.url: cannot use the Redis server at 127.0.0.1:1/0")
    assert "hunter2" not in problem


def test_redis_bus_needs_postgres(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    svc = ServiceHarness(
        tmp_path,
        fake_openai,
        {"test": {"enabled": True}},
        bus={"backend": "redis", "redis": {"url": "redis://127.0.0.1:6379/0"}},
    )
    with pytest.raises(ConfigError) as caught:
        svc.settings()
    assert any(
        p.startswith("bus.backend: redis needs storage.backend: postgres")
        for p in caught.value.problems
    )


async def test_stop_in_a_main_chat_stops_replies_on_every_worker(
    tmp_path: Path, fake_openai: FakeOpenAI, pg_dsn: str, redis_bus: dict[str, Any]
) -> None:
    from bot import texts
    from bot.cluster.partitions import partition_of
    from tests.fakes.openai_wire import Reply

    async with sharing_the_partitions(tmp_path, fake_openai, pg_dsn, redis_bus) as (one, two):
        assert one.app is not None
        assert two.app is not None
        owned = [set(w.app.health()["bus"]["partitions"]) for w in (one, two) if w.app]
        count = redis_bus["redis"]["partitions"]
        topics = [
            next(f"t{i}" for i in range(100) if partition_of(f"test:g1:t{i}", count) in mine)
            for mine in owned
        ]
        fake_openai.script(
            Reply(text="long " * 50, stall_after=2), Reply(text="long " * 50, stall_after=2)
        )
        a = chan(one)
        for topic in topics:  # one reply written by each worker
            await a.inject("go", chat_id="g1", topic=topic, chat_type="group", mentions_bot=True)
        for ch in (chan(one), chan(two)):
            await ch.wait_for("update")
        await a.inject("/stop all", chat_id="g1", chat_type="group", in_main_chat=True)
        shown: list[str] = []
        for _ in range(100):
            shown = chan(one).texts() + chan(two).texts()
            if texts.stopped(2) in shown:
                break
            await asyncio.sleep(0.1)
        assert texts.stopped(2) in shown
        fake_openai.release()
        await settled(one, 3)
        stopped = [
            c
            for w in (one, two)
            for c in chan(w).of("finish")
            if c.doc is not None and c.doc.status == "cancelled"
        ]
        assert len(stopped) == 2


async def test_a_message_while_redis_is_away_is_held_and_answered_once_it_is_back(
    tmp_path: Path, fake_openai: FakeOpenAI, pg_dsn: str
) -> None:
    from bot import texts
    from tests.redis_server import Throwaway

    server = Throwaway().start()
    bus = {
        "backend": "redis",
        "redis": {"url": server.address, "partitions": 2, "lease_seconds": 2},
    }
    try:
        async with worker(tmp_path, fake_openai, pg_dsn, bus) as svc:
            assert svc.app is not None
            a = chan(svc)
            await a.inject("first", event_id="evt-1")
            await settled(svc, 1)
            server.halt()  # Redis is gone
            assert await a.inject("second", event_id="evt-2") is PublishResult.accepted
            assert await a.inject("third", event_id="evt-3") is PublishResult.accepted
            assert texts.BUSY not in a.texts()
            assert await svc.app.journal.count("accepted") == 2  # held; durable in the journal
            server.start()  # back on its port, empty (it kept nothing): the bus is rebuilt
            await settled(svc, 3)
            assert a.texts() == ["echo: first", "echo: second", "echo: third"]
    finally:
        server.stop()
