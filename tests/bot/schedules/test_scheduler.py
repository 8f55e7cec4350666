"""The scheduler against the real SQLite store and delivery journal, on a virtual clock."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from agent.tools.schedules import ScheduleRequest
from bot import texts
from bot.config.schema import ConfigError, settings_from_dict
from bot.db import open_db
from bot.schedules import SchedulesConfig, build_schedules
from bot.schedules.admin import ScheduleAdmin
from bot.schedules.service import Schedules
from bot.stores.conversations import Conversation
from bot.stores.journal.sqlite import SqliteJournal
from bot.stores.schedules.sqlite import SqliteScheduleStore
from channels.base import ChannelError, ChatRef, InboundMessage, PublishResult, UserRef
from tests.fakes.clock import VirtualClock

CHAT = ChatRef(channel="test", chat_id="c1", chat_type="group")
ANN = UserRef(id="ann", name="Ann")
BOB = UserRef(id="bob", name="Bob")
START = 1_800_000_000.0  # 2027-01-15 08:00 UTC, a Friday


@dataclass
class Node:
    """One service process: its own database connection, journal and schedules."""

    db: sqlite3.Connection
    clock: VirtualClock
    config: SchedulesConfig = field(default_factory=SchedulesConfig)
    published: list[InboundMessage] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    chat_gone: bool = False

    def __post_init__(self) -> None:
        self.journal = SqliteJournal(self.db, 24)
        self.schedules: Schedules = build_schedules(
            SqliteScheduleStore(self.db),
            self.config,
            publish=self.publish,
            notify=self.notify,
            outcome=self.journal.entry,
            clock=self.clock,
        )

    async def publish(self, msg: InboundMessage) -> PublishResult:
        if not await self.journal.accept(msg):
            return PublishResult.duplicate
        self.published.append(msg)
        return PublishResult.accepted

    async def notify(self, owner: InboundMessage, text: Callable[[], str]) -> None:
        if self.chat_gone:
            raise ChannelError("chat not found")
        self.notices.append(text())

    async def tick(self) -> None:
        await self.schedules.scheduler.tick()

    async def answer_all(self) -> None:
        """What the dispatcher would do: answer (or fail to deliver) each published run."""
        for msg in self.published:
            if self.chat_gone:
                await self.journal.failed(msg, "chat not found", told=False)
            else:
                await self.journal.delivered(msg)


def node(tmp_path: Path, clock: VirtualClock, **config: object) -> Node:
    return Node(open_db(tmp_path), clock, SchedulesConfig(**config))


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock(START, sleep_moves=False)


async def test_a_due_run_is_published_once_at_its_time(tmp_path: Path, clock: VirtualClock) -> None:
    n = node(tmp_path, clock)
    reply = await n.schedules.create(CHAT, ANN, "in 2h call Ann")
    assert reply.startswith("Scheduled #1: once, ")
    await n.tick()
    assert n.published == []
    clock.advance(2 * 3600 - 1)
    await n.tick()
    assert n.published == []
    clock.advance(1)
    await n.tick()
    await n.tick()
    assert [m.text for m in n.published] == ["call Ann"]
    msg = n.published[0]
    assert msg.event_id == f"schedule:1:{int(START + 7200)}"
    assert (msg.chat, msg.sender.id, msg.message_id) == (CHAT, "ann", None)
    assert "scheduled task #1" in (msg.quoted_text or "")
    schedule = await n.schedules.store.get(1)
    assert schedule is not None
    assert schedule.state == "done"


async def test_recurring_runs_move_on(tmp_path: Path, clock: VirtualClock) -> None:
    n = node(tmp_path, clock)
    await n.schedules.create(CHAT, ANN, "every 15 minutes ping")
    for _ in range(4):
        clock.advance(15 * 60)
        await n.tick()
    assert len(n.published) == 4
    assert len({m.event_id for m in n.published}) == 4


async def test_two_processes_never_run_the_same_due_run_twice(
    tmp_path: Path, clock: VirtualClock
) -> None:
    a, b = node(tmp_path, clock), node(tmp_path, clock)
    await a.schedules.create(CHAT, ANN, "every day 09:00 report")
    clock.advance(3600)
    await a.tick()
    await b.tick()
    await a.tick()
    assert len(a.published) + len(b.published) == 1


async def stretch_due(tmp_path: Path, clock: VirtualClock) -> Node:
    """A node whose "stretch" task (in 1 h) is due now."""
    first = node(tmp_path, clock)
    await first.schedules.create(CHAT, ANN, "in 1h stretch")
    clock.advance(3600)
    return first


async def test_a_claim_that_was_not_published_is_published_after_restart(
    tmp_path: Path, clock: VirtualClock
) -> None:
    first = await stretch_due(tmp_path, clock)

    async def crash(msg: InboundMessage) -> PublishResult:
        raise RuntimeError("process died")

    first.schedules.scheduler.publish = crash
    with pytest.raises(RuntimeError):
        await first.tick()
    first.db.close()
    second = node(tmp_path, clock)
    await second.tick()
    await second.tick()
    assert [m.text for m in second.published] == ["stretch"]


async def test_published_but_not_recorded_is_not_run_again(
    tmp_path: Path, clock: VirtualClock
) -> None:
    """Crash after the journal accepted the run but before the store noted it: a duplicate."""
    first = await stretch_due(tmp_path, clock)
    store = first.schedules.store
    set_run = store.set_run

    async def crash(*args: object, **kwargs: object) -> None:
        raise RuntimeError("process died")

    store.set_run = crash  # type: ignore[method-assign]
    with pytest.raises(RuntimeError):
        await first.tick()
    store.set_run = set_run  # type: ignore[method-assign]
    assert len(first.published) == 1
    second = node(tmp_path, clock)
    await second.tick()
    assert second.published == []
    assert [r.state for r in await second.schedules.store.runs_of(1)] == ["queued"]


async def test_missed_runs_run_once_at_start_by_default(
    tmp_path: Path, clock: VirtualClock
) -> None:
    n = node(tmp_path, clock)
    await n.schedules.create(CHAT, ANN, "every hour ping")
    clock.advance(5 * 3600 + 600)  # the service was down through five runs
    await n.tick()
    await n.tick()
    assert [m.text for m in n.published] == ["ping"]
    assert "running it now" in n.notices[0]
    assert "running late" in (n.published[0].quoted_text or "")
    schedule = await n.schedules.store.get(1)
    assert schedule is not None
    assert schedule.next_run == START + 6 * 3600


async def test_missed_runs_can_be_skipped(tmp_path: Path, clock: VirtualClock) -> None:
    n = node(tmp_path, clock)
    await n.schedules.create(CHAT, ANN, "every hour --skip-missed ping")
    clock.advance(3 * 3600 + 600)
    await n.tick()
    assert n.published == []
    assert "was skipped" in n.notices[0]
    assert [r.state for r in await n.schedules.store.runs_of(1)] == ["skipped"]
    clock.advance(3000)
    await n.tick()
    assert [m.text for m in n.published] == ["ping"]


async def test_config_can_make_skip_the_default(tmp_path: Path, clock: VirtualClock) -> None:
    n = node(tmp_path, clock, missed_policy="skip")
    reply = await n.schedules.create(CHAT, ANN, "in 1h ping")
    assert "skipped" in reply
    clock.advance(7200)
    await n.tick()
    assert n.published == []


async def test_a_chat_that_is_gone_pauses_the_schedule(tmp_path: Path, clock: VirtualClock) -> None:
    n = node(tmp_path, clock)
    await n.schedules.create(CHAT, ANN, "every hour ping")
    clock.advance(3600)
    await n.tick()
    n.chat_gone = True
    await n.answer_all()
    await n.tick()
    schedule = await n.schedules.store.get(1)
    assert schedule is not None
    assert schedule.state == "paused"
    assert "could not be reached" in schedule.reason
    listing = await n.schedules.listing(CHAT)
    assert "paused: the chat could not be reached (chat not found)" in listing.text
    clock.advance(3600)
    await n.tick()
    assert len(n.published) == 1


async def test_limits_per_person_and_per_chat(tmp_path: Path, clock: VirtualClock) -> None:
    n = node(tmp_path, clock, max_per_person=2, max_per_chat=3)
    assert (await n.schedules.create(CHAT, ANN, "in 1h a")).startswith("Scheduled")
    assert (await n.schedules.create(CHAT, ANN, "in 1h b")).startswith("Scheduled")
    refused = await n.schedules.create(CHAT, ANN, "in 1h c")
    assert refused.startswith("You can't add more: you have 2")
    assert (await n.schedules.create(CHAT, BOB, "in 1h d")).startswith("Scheduled")
    refused = await n.schedules.create(CHAT, BOB, "in 1h e")
    assert refused.startswith("You can't add more: this chat has 3")
    await n.schedules.change(CHAT, ANN, "cancel", "1")
    assert (await n.schedules.create(CHAT, ANN, "in 1h c")).startswith("Scheduled")


async def test_only_the_creator_or_an_admin_may_change(tmp_path: Path, clock: VirtualClock) -> None:
    n = node(tmp_path, clock, admins=["test:boss"])
    await n.schedules.create(CHAT, ANN, "every day 9:00 report")
    assert "Only the person who created #1" in await n.schedules.change(CHAT, BOB, "cancel", "1")
    boss = UserRef(id="boss")
    assert await n.schedules.change(CHAT, boss, "pause", "1") == "Scheduled task #1 paused."
    assert await n.schedules.change(CHAT, ANN, "resume", "1") == "Scheduled task #1 resumed."
    other = ChatRef(channel="test", chat_id="c2")
    assert "no scheduled task #1 in this chat" in await n.schedules.change(
        other, ANN, "cancel", "1"
    )
    assert await n.schedules.change(CHAT, ANN, "cancel", "1") == "Scheduled task #1 cancelled."
    assert (await n.schedules.listing(CHAT)).text.startswith("No scheduled tasks")


async def test_paused_schedules_do_not_run(tmp_path: Path, clock: VirtualClock) -> None:
    n = node(tmp_path, clock)
    await n.schedules.create(CHAT, ANN, "every hour ping")
    await n.schedules.change(CHAT, ANN, "pause", "1")
    clock.advance(3 * 3600)
    await n.tick()
    assert n.published == []
    await n.schedules.change(CHAT, ANN, "resume", "1")
    clock.advance(3600)
    await n.tick()
    assert len(n.published) == 1
    assert n.notices == []  # resumed schedules start from now: nothing counts as missed


async def test_timezone_per_conversation(tmp_path: Path, clock: VirtualClock) -> None:
    n = node(tmp_path, clock, default_timezone="Europe/Berlin")
    assert "Europe/Berlin" in await n.schedules.timezone_command(CHAT, "")
    assert "not a time zone" in await n.schedules.timezone_command(CHAT, "Mars/Olympus")
    assert "not a time zone" in await n.schedules.timezone_command(CHAT, "America")
    assert "not a time zone" in await n.schedules.timezone_command(CHAT, "../../etc/passwd")
    assert await n.schedules.timezone_command(CHAT, "Asia/Tokyo") == (
        "Time zone set to Asia/Tokyo. New scheduled tasks here use it."
    )
    reply = await n.schedules.create(CHAT, ANN, "tomorrow 9:00 x")
    assert "Sat 2027-01-16 09:00 (Asia/Tokyo)" in reply
    other = ChatRef(channel="test", chat_id="c2")
    assert "Europe/Berlin" in await n.schedules.timezone_command(other, "")


async def test_the_loop_sleeps_until_the_next_run_and_wakes_for_a_new_task(
    tmp_path: Path, clock: VirtualClock
) -> None:
    n = node(tmp_path, clock, poll_seconds=30)
    loop = asyncio.create_task(n.schedules.scheduler.run())
    try:
        await _until(lambda: clock.sleeps == [30])  # nothing scheduled: the poll interval
        await n.schedules.create(CHAT, ANN, "in 10 minutes x")  # pokes the loop
        await _until(lambda: len(clock.sleeps) == 2)
        clock.advance(590)
        await n.schedules.create(CHAT, ANN, "in 1h y")
        await _until(lambda: len(clock.sleeps) == 3)
    finally:
        loop.cancel()
        await asyncio.gather(loop, return_exceptions=True)
    assert clock.sleeps == [30, 30, 10]  # the next due run is 10 s away: it sleeps just that


async def test_a_trigger_during_a_pass_runs_at_once(tmp_path: Path, clock: VirtualClock) -> None:
    """A poke arriving while a pass runs is not lost: the next pass starts when it ends, not
    after the poll (the virtual clock's sleep never ends by itself here)."""
    n = node(tmp_path, clock, poll_seconds=30)
    admin = ScheduleAdmin(n.schedules, {"test"})
    await n.schedules.create(CHAT, ANN, "every day 09:00 first")
    await n.schedules.create(CHAT, ANN, "every day 09:00 second")
    publish = n.publish

    async def publish_and_trigger(msg: InboundMessage) -> PublishResult:
        result = await publish(msg)
        if msg.text == "first":  # the pass already read its claimed runs: this one is new
            await admin.trigger(2)
        return result

    n.schedules.scheduler.publish = publish_and_trigger
    loop = asyncio.create_task(n.schedules.scheduler.run())
    try:
        await _until(lambda: len(clock.sleeps) == 1)
        await admin.trigger(1)
        await _until(lambda: len(n.published) == 2)
    finally:
        loop.cancel()
        await asyncio.gather(loop, return_exceptions=True)
    assert [m.text for m in n.published] == ["first", "second"]
    assert clock.now() == START  # no time passed: nothing waited for the poll


async def _until(check: Callable[[], bool]) -> None:
    for _ in range(1000):
        if check():
            return
        await asyncio.sleep(0)
    raise AssertionError("condition not reached")


async def test_the_agent_tool_only_schedules_for_a_running_turn(
    tmp_path: Path, clock: VirtualClock
) -> None:
    n = node(tmp_path, clock)
    request = ScheduleRequest(thread_id="t1", user_id="test:ann", when="in 2h", task="call Ann")
    assert await n.schedules.schedule(request) == texts.SCHEDULE_FROM_UNKNOWN_CHAT
    msg = InboundMessage(event_id="e1", chat=CHAT, sender=ANN, text="remind me")
    conv = Conversation(key=CHAT.key, thread_id="t1", channel="test", chat_id="c1")
    assert n.schedules.thread_for(msg, conv) is conv
    other = ScheduleRequest(thread_id="t1", user_id="test:bob", when="in 2h", task="x")
    assert await n.schedules.schedule(other) == texts.SCHEDULE_FROM_UNKNOWN_CHAT
    assert (await n.schedules.schedule(request)).startswith("Scheduled #1: once, ")
    bad = ScheduleRequest(thread_id="t1", user_id="test:ann", when="sometime", task="x")
    assert (await n.schedules.schedule(bad)).startswith("Not scheduled: I could not read")


def test_an_unknown_default_zone_stops_start_up() -> None:
    with pytest.raises(ConfigError, match=r"schedules.default_timezone: .*unknown time zone"):
        settings_from_dict({"schedules": {"default_timezone": "Mars/Olympus"}})
