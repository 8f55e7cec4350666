"""The one rate-limit mechanism (channels/pacing.py), on a virtual clock."""

from __future__ import annotations

import asyncio

import pytest

from channels.base import ChannelError, ChatRef, RateBudget, RateLimited
from channels.pacing import Pacer
from tests.fakes.clock import VirtualClock

DM = ChatRef(channel="t", chat_id="1")
OTHER = ChatRef(channel="t", chat_id="2")
MESSAGE = RateBudget(scope="chat", method="message", per_second=1.0, serial=True)
DRAFT = RateBudget(scope="chat", method="draft", per_second=1.0, serial=True)


def pacer() -> tuple[Pacer, VirtualClock]:
    clock = VirtualClock()
    return Pacer(clock=clock, sleep=clock.sleep), clock


async def test_methods_have_buckets_of_their_own() -> None:
    p, clock = pacer()
    async with p.slot(DM, (DRAFT,)):
        pass
    start = clock.now()
    async with p.slot(DM, (MESSAGE,)):  # a draft just went out: the message is not held
        pass
    assert clock.now() == start
    async with p.slot(DM, (MESSAGE,)):  # a second message is
        pass
    assert clock.now() - start == pytest.approx(1.0)


async def test_serial_interval_counts_from_the_end_of_the_call() -> None:
    p, clock = pacer()
    async with p.slot(DM, (MESSAGE,)):
        clock.advance(5.0)  # a slow call
    ended = clock.now()
    async with p.slot(DM, (MESSAGE,)):
        pass
    assert clock.now() - ended == pytest.approx(1.0)


async def test_a_block_holds_its_scope_and_only_its_method_when_named() -> None:
    p, clock = pacer()
    p.block("chat", DM, "", 3.0, method="draft")
    assert p.blocked_for(DM) == 0  # messages are not blocked
    assert p.blocked_for(DM, methods=("draft",)) == pytest.approx(3.0)
    p.block_for(RateLimited(2.0, scope="bot"), DM)
    assert p.blocked_for(OTHER) == pytest.approx(2.0)  # the whole bot
    start = clock.now()
    await p.acquire(OTHER, ())
    assert clock.now() - start >= 2.0


async def test_a_rate_limited_call_blocks_and_a_refused_one_gives_its_token_back() -> None:
    p, _clock = pacer()
    with pytest.raises(ChannelError):
        async with p.slot(DM, (MESSAGE,)):
            raise ChannelError("refused outright")
    assert p.wait_time(DM, (MESSAGE,)) == 0  # nothing was shown: no budget spent
    with pytest.raises(RateLimited):
        async with p.slot(DM, (MESSAGE,)):
            raise RateLimited(4.0, scope="chat")
    assert p.blocked_for(DM) == pytest.approx(4.0)


async def test_after_a_block_one_call_goes_first_and_the_others_wait_for_its_answer() -> None:
    p, _clock = pacer()
    p.block("bot", DM, "", 1.0)
    order: list[str] = []
    release = asyncio.Event()

    async def call(name: str, chat: ChatRef) -> None:
        async with p.slot(chat, ()):
            order.append(name)
            if name == "probe":
                await release.wait()

    probe = asyncio.create_task(call("probe", DM))
    await asyncio.sleep(0)
    others = [asyncio.create_task(call(f"c{i}", OTHER)) for i in range(3)]
    for _ in range(5):
        await asyncio.sleep(0)
    assert order == ["probe"]  # the others wait while the probe is on its way
    release.set()
    await asyncio.gather(probe, *others)
    assert sorted(order[1:]) == ["c0", "c1", "c2"]


async def test_waiting_callers_go_before_try_take() -> None:
    p, _clock = pacer()
    budget = (RateBudget(scope="workspace", method="m", per_second=1.0),)
    assert p.try_take(DM, budget)
    waiter = asyncio.create_task(p.acquire(DM, budget))
    await asyncio.sleep(0)
    assert not p.try_take(DM, budget)  # someone is waiting: it goes first
    await waiter
