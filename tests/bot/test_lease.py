"""The one lease (bot/cluster/lease.py) on a real Redis: one holder at a time, taken over after
expiry, and a holder that was paused past it can neither renew nor release the new one's."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
import redis.asyncio as aioredis

from bot.cluster.lease import Lease


@pytest.fixture
async def client(redis_bus: dict[str, dict[str, object]]) -> AsyncIterator[aioredis.Redis]:
    redis = aioredis.Redis.from_url(str(redis_bus["redis"]["url"]), decode_responses=True)
    yield redis
    await redis.aclose()


async def test_one_holder_then_a_takeover_after_expiry_and_the_old_holder_fenced(
    client: aioredis.Redis, redis_bus: dict[str, dict[str, object]]
) -> None:
    key = f"{redis_bus['redis']['key_prefix']}:lease"
    first, second = Lease(client, key, 0.3, "w1"), Lease(client, key, 0.3, "w2")
    assert await first.acquire()
    assert not await second.acquire()
    assert (await client.get(key) or "").split(":", 1)[1] == "w1"  # the holder in Redis
    assert await first.renew()
    await asyncio.sleep(0.5)  # `first` paused past its lease
    assert not first.held
    assert await second.acquire()
    assert await first.renew() is False  # its token is not the one in Redis any more
    assert first.token is None
    await first.release()  # nothing to release: the new holder keeps the lease
    stale = Lease(client, key, 0.3, "w1")
    stale.token = "1:w1"
    await stale.release()
    assert await client.get(key) == second.token
    assert second.token is not None
    assert int(second.token.split(":")[0]) > 1  # fencing tokens only grow
    await second.release()
    assert await client.get(key) is None
