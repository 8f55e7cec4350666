"""Messages held while Redis is away (bot/cluster/outage.py): appended in order once it answers;
handed to the other workers through the journal once it has failed this worker for a lease
time (a cut-off connection holder's messages are not left waiting for its line)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from bot.cluster.outage import HeldMessages
from channels.base import InboundMessage
from tests.bot.test_journal import message


class Line:
    """Redis as the worker sees it: cut (every append fails) or mended."""

    def __init__(self) -> None:
        self.cut = True
        self.appended: list[str] = []
        self.handed: list[str] = []

    async def append(self, msg: InboundMessage) -> None:
        if self.cut:
            raise OSError("timed out")
        self.appended.append(msg.event_id)

    async def hand_over(self, msgs: list[InboundMessage]) -> int:
        self.handed += [m.event_id for m in msgs]
        return len(msgs)


async def settled(check: Callable[[], object], seconds: float = 5.0) -> None:
    async with asyncio.timeout(seconds):
        while not check():
            await asyncio.sleep(0.01)


async def test_a_short_outage_keeps_them_and_appends_them_in_order() -> None:
    line = Line()
    held = HeldMessages(line.append, 10, line.hand_over, hand_over_after=60.0)
    for i in range(3):
        assert held.hold(message(f"e{i}"), "timed out")
    await asyncio.sleep(0.3)  # a few failed rounds, well within the lease
    assert line.handed == []
    assert len(held) == 3
    line.cut = False
    await settled(lambda: len(held) == 0)
    assert line.appended == ["e0", "e1", "e2"]
    await held.close()


async def test_past_a_lease_of_failures_they_go_to_the_other_workers() -> None:
    line = Line()
    held = HeldMessages(line.append, 10, line.hand_over, hand_over_after=0.05)
    for i in range(3):
        held.hold(message(f"e{i}"), "timed out")
    await settled(lambda: line.handed == ["e0", "e1", "e2"])
    assert len(held) == 0
    held.hold(message("e3"), "timed out")  # still cut: handed over at its first failure
    await settled(lambda: line.handed[-1:] == ["e3"])
    assert line.appended == []
    await held.close()


async def test_an_append_that_goes_through_starts_the_count_again() -> None:
    line = Line()
    held = HeldMessages(line.append, 10, line.hand_over, hand_over_after=0.2)
    held.hold(message("e0"), "timed out")
    line.cut = False
    await settled(lambda: len(held) == 0)
    assert held.failing_since is None
    line.cut = True
    held.hold(message("e1"), "timed out")
    await asyncio.sleep(0.1)  # failing, but not for long yet
    assert line.handed == []
    await settled(lambda: line.handed == ["e1"])
    await held.close()
