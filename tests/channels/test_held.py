"""The held update (channels/held.py), on a virtual clock."""

from __future__ import annotations

import asyncio
import logging

import pytest

from channels.base import ChannelError, RateLimited
from channels.held import Held
from tests.fakes.clock import VirtualClock


class Screen:
    """What a platform showed, and when (virtual seconds)."""

    def __init__(self, clock: VirtualClock) -> None:
        self.clock = clock
        self.shown: list[tuple[str, float]] = []
        self.gate = asyncio.Event()  # a show waits for it: cleared, a slow call
        self.gate.set()
        self.started = asyncio.Event()

    async def show(self, value: str) -> None:
        self.started.set()
        await self.gate.wait()
        self.shown.append((value, self.clock.now()))

    async def ready(self) -> None:
        await self.clock.sleep(1.0)  # the budget frees up a second later


async def settle(held: Held[str]) -> None:
    while held.waiting:
        await asyncio.sleep(0)


async def test_the_newest_held_value_is_shown_once_when_the_budget_allows() -> None:
    clock = VirtualClock()
    screen = Screen(clock)
    held: Held[str] = Held()
    clock.hold()  # the budget is not there yet
    for text in ("a", "ab", "abc"):
        held.hold(text)
        held.schedule(screen.show, screen.ready)
    await asyncio.sleep(0.01)
    assert screen.shown == []
    clock.release()
    await settle(held)
    assert screen.shown == [("abc", clock.now())]
    assert clock.sleeps == [1.0]  # one task, one wait


async def showing_slowly(value: str) -> tuple[Screen, Held[str]]:
    """`value` held and on its way to a screen that shows it once `screen.gate` is set."""
    screen = Screen(VirtualClock())
    screen.gate.clear()
    held: Held[str] = Held()
    held.hold(value)
    held.schedule(screen.show, screen.ready)
    await screen.started.wait()
    return screen, held


async def test_a_value_held_during_a_show_goes_out_after_the_next_wait() -> None:
    screen, held = await showing_slowly("a")
    held.hold("ab")  # arrives while "a" is on its way
    screen.gate.set()
    await settle(held)
    assert [v for v, _ in screen.shown] == ["a", "ab"]
    assert screen.shown[1][1] - screen.shown[0][1] == pytest.approx(1.0)


async def test_stop_waits_for_the_call_on_its_way_and_shows_nothing_after_it() -> None:
    screen, held = await showing_slowly("a")
    held.hold("ab")
    stopping = asyncio.create_task(held.stop())
    await asyncio.sleep(0.01)
    assert not stopping.done()  # the call is not cut off
    screen.gate.set()
    await stopping
    assert [v for v, _ in screen.shown] == ["a"]
    assert held.value is None
    assert not held.waiting


async def test_stop_while_waiting_for_the_budget_drops_the_value() -> None:
    clock = VirtualClock()
    screen = Screen(clock)
    held: Held[str] = Held()
    clock.hold()
    held.hold("a")
    held.schedule(screen.show, screen.ready)
    await asyncio.sleep(0.01)
    await held.stop()
    clock.release()
    await asyncio.sleep(0.01)
    assert screen.shown == []
    assert held.value is None


async def test_a_rate_limited_value_is_shown_again_unless_a_newer_one_is_held() -> None:
    clock = VirtualClock()
    shown: list[str] = []
    held: Held[str] = Held()
    limited = {"a": 1, "b": 1}

    async def show(value: str) -> None:
        if limited.get(value):
            limited[value] -= 1
            held.hold_again(value)
            if value == "b":
                held.hold("c")  # newer than the limited one: it wins
            return
        shown.append(value)

    async def ready() -> None:
        await clock.sleep(1.0)

    held.hold("a")
    held.schedule(show, ready)
    await settle(held)
    held.hold("b")
    held.schedule(show, ready)
    await settle(held)
    assert shown == ["a", "c"]


async def test_a_failed_show_ends_the_task_and_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    clock = VirtualClock()
    calls: list[str] = []

    async def show(value: str) -> None:
        calls.append(value)
        held.hold("later")
        raise RateLimited(3.0) if value == "x" else ChannelError("chat gone")

    async def ready() -> None:
        await clock.sleep(1.0)

    held: Held[str] = Held("deferred update", logging.getLogger("test.held"))
    held.hold("y")
    with caplog.at_level(logging.INFO, logger="test.held"):
        held.schedule(show, ready)
        await settle(held)
    assert calls == ["y"]
    assert "deferred update skipped: chat gone" in caplog.text
