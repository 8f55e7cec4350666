"""Budgets wider than a conversation shared by the workers of one bot (through a real Redis):
one pooled bucket, so a worker alone gets the whole budget and the workers together never more;
split evenly among the live workers while Redis cannot be reached; and a 429's block on a wide
scope seen by every worker."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable

import pytest
import redis.asyncio as aioredis

from bot.cluster.shared_budgets import SharedPacing
from channels.base import ChatRef, RateBudget, RateLimited
from channels.pacing import Key, Pacer, Pooled
from tests.fakes.clock import VirtualClock

DM = ChatRef(channel="t", chat_id="1")
OTHER = ChatRef(channel="t", chat_id="2")
BOT_WIDE = RateBudget(scope="bot", method="message", per_second=30.0, burst=30)
PER_CHAT = RateBudget(scope="chat", method="message", per_second=1.0, burst=1)


class TwoProcesses:
    """Two processes whose pool cannot be reached."""

    def __init__(self) -> None:
        self.count = 2
        self.told: list[tuple[Key, float]] = []

    def processes(self) -> int:
        return self.count

    async def take(self, buckets: tuple[Pooled, ...]) -> float | None:
        return None

    def blocked(self, key: Key, seconds: float) -> None:
        self.told.append((key, seconds))


async def test_without_the_pool_a_bot_wide_budget_is_split_among_the_workers() -> None:
    clock = VirtualClock()
    p = Pacer(clock=clock, sleep=clock.sleep)
    shared = TwoProcesses()
    p.shared = shared
    start = clock.now()
    for i in range(15):  # the burst of one worker: half of the bot's
        await p.acquire(ChatRef(channel="t", chat_id=str(i)), (BOT_WIDE,))
    assert clock.now() == start
    await p.acquire(OTHER, (BOT_WIDE,))
    assert clock.now() - start == pytest.approx(1 / 15)  # 15 a second here, 15 on the other
    await p.acquire(DM, (PER_CHAT,))
    await p.acquire(DM, (PER_CHAT,))  # a chat's budget is not split: one worker answers a chat
    assert clock.now() - start == pytest.approx(1 / 15 + 1.0)
    shared.count = 1  # the other worker is gone: the whole budget is this one's again
    start = clock.now()
    for i in range(29):
        await p.acquire(ChatRef(channel="t", chat_id=f"x{i}"), (BOT_WIDE,))
    # the 15 tokens it had, then 14 at the bot's whole rate
    assert clock.now() - start == pytest.approx(14 / 30)


async def test_only_wide_blocks_are_told_to_the_others() -> None:
    clock = VirtualClock()
    p = Pacer(clock=clock, sleep=clock.sleep)
    p.shared = shared = TwoProcesses()
    p.block_for(RateLimited(3.0, scope="chat"), DM)
    assert shared.told == []
    p.block_for(RateLimited(5.0, scope="bot"), DM)
    assert shared.told == [(("", "bot"), 5.0)]


def _named(worker: str) -> Callable[[], str]:
    return lambda: worker


@pytest.fixture
async def redis_client(redis_bus: dict[str, object]) -> AsyncIterator[aioredis.Redis]:
    url = redis_bus["redis"]["url"]  # type: ignore[index]
    client = aioredis.Redis.from_url(str(url), decode_responses=True)
    yield client
    await client.aclose()


async def test_a_429_on_one_worker_blocks_the_scope_on_every_worker(
    redis_client: aioredis.Redis, redis_bus: dict[str, object]
) -> None:
    prefix = redis_bus["redis"]["key_prefix"]  # type: ignore[index]
    workers = [
        SharedPacing(lambda: redis_client, str(prefix), _named(w), lambda: 2) for w in ("w1", "w2")
    ]
    pacers = [Pacer(), Pacer()]
    for shared, pacer in zip(workers, pacers, strict=True):
        shared.attach("telegram", pacer)
        shared.listen()
    try:
        for _ in range(200):  # until the other worker has subscribed and heard it (load)
            pacers[0].block_for(RateLimited(30.0, scope="bot"), DM)
            await asyncio.sleep(0.05)
            if pacers[1].blocked_for(OTHER) > 0:
                break
        assert 25 < pacers[1].blocked_for(OTHER) <= 30  # the other worker holds back too
        # a chat's block stays local: longer than the bot's, it would show on the other worker
        pacers[1].block_for(RateLimited(60.0, scope="chat"), DM)
        await asyncio.sleep(0.2)
        assert pacers[1].blocked_for(DM) > 55
        assert pacers[0].blocked_for(DM) == pytest.approx(pacers[0].blocked_for(OTHER), abs=1)
    finally:
        for shared in workers:
            await shared.close()


def _pooled(
    client: aioredis.Redis, prefix: str, clock: VirtualClock, worker: str
) -> tuple[SharedPacing, Pacer]:
    shared = SharedPacing(lambda: client, prefix, _named(worker), lambda: 2, clock=clock)
    pacer = Pacer(clock=clock, sleep=clock.sleep)
    shared.attach("telegram", pacer)
    return shared, pacer


def _chat(i: int) -> ChatRef:
    return ChatRef(channel="t", chat_id=str(i))


async def test_one_pool_a_worker_alone_gets_the_whole_budget_together_never_more(
    redis_client: aioredis.Redis, redis_bus: dict[str, object]
) -> None:
    prefix = str(redis_bus["redis"]["key_prefix"])  # type: ignore[index]
    clock = VirtualClock()
    (_, busy), (_, idle) = (_pooled(redis_client, prefix, clock, w) for w in ("w1", "w2"))
    start = clock.now()
    for i in range(60):  # the other worker sends nothing: its part is this one's
        await busy.acquire(_chat(i), (BOT_WIDE,))
    assert clock.now() - start == pytest.approx(1.0)  # 30 at once, 30 at 30 a second
    clock.advance(10)  # the bucket full again (30)
    clock.hold()  # no time passes: what both take now is what the bucket holds
    taken = {"w1": 0, "w2": 0}

    async def send(name: str, pacer: Pacer) -> None:
        for i in range(40):
            await pacer.acquire(_chat(100 + i), (BOT_WIDE,))
            taken[name] += 1

    tasks = [asyncio.create_task(send(n, p)) for n, p in (("w1", busy), ("w2", idle))]
    for _ in range(500):
        if len(clock.sleeps) >= 2 and sum(taken.values()) >= 30:
            break
        await asyncio.sleep(0.01)
    assert len(clock.sleeps) >= 2  # both wait for the pool
    assert sum(taken.values()) == 30  # the burst, once, between the two
    assert min(taken.values()) > 0
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def test_while_redis_is_unreachable_each_keeps_its_even_share(
    redis_bus: dict[str, object], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="bot.cluster.budgets")
    dead = aioredis.Redis.from_url("redis://127.0.0.1:1/0", socket_connect_timeout=0.5)
    clock = VirtualClock()
    shared, pacer = _pooled(dead, "x", clock, "w1")
    start = clock.now()
    for i in range(16):
        await pacer.acquire(_chat(i), (BOT_WIDE,))
    assert clock.now() - start == pytest.approx(1 / 15)  # half the burst, then half the rate
    assert shared.pool_down
    warnings = [r for r in caplog.records if "even share" in r.getMessage()]
    assert len(warnings) == 1  # said once, not per send
    await dead.aclose()
