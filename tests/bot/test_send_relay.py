"""The send relay (bot/cluster/send_relay.py) on a real Redis: a worker without the connection
sends through the holder, in order per chat, each key run once; no holder means a bounded wait
and a retryable failure (and the send is never run later); a holder dying mid-send makes a push
fail as OutcomeUnknown (never posted twice) and a stream frame run again on the next holder."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import pytest
import redis.asyncio as aioredis

from bot.cluster.send_relay import RedisRelay
from channels.errors import ChannelError
from channels.relay import OutcomeUnknown, Payload


@pytest.fixture
async def client(redis_bus: dict[str, dict[str, object]]) -> AsyncIterator[aioredis.Redis]:
    redis = aioredis.Redis.from_url(str(redis_bus["redis"]["url"]), decode_responses=True)
    yield redis
    await redis.aclose()


def relay(client: aioredis.Redis, prefix: object, worker: str, wait: float = 5.0) -> RedisRelay:
    base = f"{prefix}:relay:wecom:bot"
    return RedisRelay(lambda: client, base, lambda: worker, lambda: True, wait=wait, repost=0.3)


class Platform:
    """The holder's connection: what it was asked to send, in order."""

    def __init__(self) -> None:
        self.sent: list[Payload] = []
        self.hold = asyncio.Event()
        self.hold.set()

    async def handler(self, send: Payload) -> Payload:
        self.sent.append(send)
        await self.hold.wait()
        return {"ok": {"n": len(self.sent)}, "echo": send["text"]}


@contextlib.asynccontextmanager
async def serving(holder: RedisRelay) -> AsyncIterator[Platform]:
    """`holder` runs the relayed sends on a platform of its own while the block runs."""
    platform = Platform()
    holder.serve(platform.handler)
    try:
        yield platform
    finally:
        await holder.stop_serving()


async def test_sends_reach_the_holder_in_order_per_chat_with_their_answers(
    client: aioredis.Redis, redis_bus: dict[str, dict[str, object]]
) -> None:
    prefix = redis_bus["redis"]["key_prefix"]
    sender = relay(client, prefix, "w2")
    async with serving(relay(client, prefix, "w1")) as platform:

        async def chat(name: str) -> list[str]:
            answers = []
            for i in range(5):
                send = {"text": f"{name}{i}"}
                answer = await sender.call(send, key=f"{name}-{i}", order=name, idempotent=False)
                answers.append(answer["echo"])
            return answers

        got = await asyncio.gather(*(chat(name) for name in "abc"))
        assert got == [[f"{name}{i}" for i in range(5)] for name in "abc"]
        for name in "abc":
            texts = [s["text"] for s in platform.sent if s["text"].startswith(name)]
            assert texts == [f"{name}{i}" for i in range(5)]
        again = await sender.call({"text": "a0"}, key="a-0", order="a", idempotent=False)
        assert again["echo"] == "a0"
        assert len(platform.sent) == 15  # the key ran once: the answer was kept


async def test_no_holder_fails_retryable_and_the_send_never_runs_later(
    client: aioredis.Redis, redis_bus: dict[str, dict[str, object]]
) -> None:
    prefix = redis_bus["redis"]["key_prefix"]
    sender = relay(client, prefix, "w2", wait=0.8)
    with pytest.raises(ChannelError) as caught:
        await sender.call({"text": "late"}, key="k1", order="a", idempotent=False)
    assert caught.value.retryable
    async with serving(relay(client, prefix, "w1")) as platform:
        answer = await sender.call({"text": "next"}, key="k2", order="a", idempotent=False)
        assert answer["echo"] == "next"
        assert [s["text"] for s in platform.sent] == ["next"]  # "late" was abandoned


async def test_a_holder_dying_mid_send_is_never_posted_twice(
    client: aioredis.Redis, redis_bus: dict[str, dict[str, object]]
) -> None:
    prefix = redis_bus["redis"]["key_prefix"]
    sender = relay(client, prefix, "w3")
    first, platform = relay(client, prefix, "w1"), Platform()
    platform.hold.clear()  # the first holder hangs in both sends, then dies
    first.serve(platform.handler)
    push = asyncio.create_task(sender.call({"text": "p"}, key="p", order="a", idempotent=False))
    frame = asyncio.create_task(sender.call({"text": "f"}, key="f", order="b", idempotent=True))
    while len(platform.sent) < 2:
        await asyncio.sleep(0.05)
    for task in {first._task, *first._running}:  # SIGKILL: no answer, no cleanup
        assert task is not None
        task.cancel()
    async with serving(relay(client, prefix, "w2")) as after:
        with pytest.raises(OutcomeUnknown) as caught:
            await push
        assert not caught.value.retryable
        assert (await frame)["echo"] == "f"  # a stream frame only replaces text: run again
        assert [s["text"] for s in after.sent] == ["f"]


async def test_a_worker_whose_lease_lapsed_leaves_the_queue_to_the_holder(
    client: aioredis.Redis, redis_bus: dict[str, dict[str, object]]
) -> None:
    prefix = redis_bus["redis"]["key_prefix"]
    base = f"{prefix}:relay:wecom:bot"
    stale = RedisRelay(lambda: client, base, lambda: "w1", lambda: False, wait=5, repost=0.3)
    sender = relay(client, prefix, "w3")
    async with serving(stale) as stale_platform:
        call = asyncio.create_task(sender.call({"text": "x"}, key="x", order="a", idempotent=False))
        await asyncio.sleep(0.5)  # (the stale worker pops it meanwhile and puts it back)
        async with serving(relay(client, prefix, "w2")) as platform:
            assert (await call)["echo"] == "x"
        assert stale_platform.sent == []
        assert [s["text"] for s in platform.sent] == ["x"]
