"""Budgets wider than a conversation shared by the workers of one bot: split among the live
workers, and a 429's block on a wide scope seen by every worker (through a real Redis)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import pytest
import redis.asyncio as aioredis

from bot.cluster.shared_budgets import SharedPacing
from channels.base import ChatRef, RateBudget, RateLimited
from channels.pacing import Key, Pacer
from tests.fakes.clock import VirtualClock

DM = ChatRef(channel="t", chat_id="1")
OTHER = ChatRef(channel="t", chat_id="2")
BOT_WIDE = RateBudget(scope="bot", method="message", per_second=30.0, burst=30)
PER_CHAT = RateBudget(scope="chat", method="message", per_second=1.0, burst=1)


class TwoProcesses:
    def __init__(self) -> None:
        self.count = 2
        self.told: list[tuple[Key, float]] = []

    def processes(self) -> int:
        return self.count

    def blocked(self, key: Key, seconds: float) -> None:
        self.told.append((key, seconds))


async def test_a_bot_wide_budget_is_split_among_the_workers() -> None:
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
        await asyncio.sleep(0.2)  # both subscribed
        pacers[0].block_for(RateLimited(30.0, scope="bot"), DM)
        for _ in range(100):
            if pacers[1].blocked_for(OTHER) > 0:
                break
            await asyncio.sleep(0.02)
        assert 25 < pacers[1].blocked_for(OTHER) <= 30  # the other worker holds back too
        pacers[1].block_for(RateLimited(2.0, scope="chat"), DM)  # a chat's block stays local
        await asyncio.sleep(0.2)
        assert pacers[0].blocked_for(DM) == pytest.approx(pacers[0].blocked_for(OTHER))
    finally:
        for shared in workers:
            await shared.close()
