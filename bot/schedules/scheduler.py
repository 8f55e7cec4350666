"""The scheduler loop: due runs become messages on the bus, each exactly once.

Each tick: claim the due runs (the store records the run and moves the schedule on in one
transaction, so only one process gets it), publish each claimed run as a synthetic
`InboundMessage` whose event id is `schedule:<id>:<due epoch>` (the delivery journal's atomic
accept makes a second publish of the same run a duplicate), and read back what became of earlier
runs: a run whose delivery the platform refused for good pauses its schedule with the reason.
A pass starts after the poll, when the next run is due, or at once when poked (a task created,
resumed or triggered; a scheduled run settled); a poke during a pass starts the next one.

A run found later than `late_after` seconds (the service was down) follows its schedule's
missed-run policy: run once now, or skip to the next time; several missed runs count as one.
The chat is told either way. Time comes from an injected clock, so tests never wait.

A task of a Gateway thread (its chat is `THREAD_CHANNEL`, its chat id the thread) is not a chat
message: the Gateway's `run_in_thread` hook starts it as a run in that thread; until a process
with the Gateway takes it (or while the thread is busy), the run stays claimed.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import KW_ONLY, dataclass, field
from typing import Protocol

from bot import texts
from bot.schedules.recurrence import local_text, next_fire
from bot.stores.journal import Entry, State
from bot.stores.schedules import Run, RunState, Schedule, ScheduleStore
from channels.base import ChannelError, InboundMessage, PublishResult

log = logging.getLogger("bot.schedules")

EVENT_PREFIX = "schedule:"
THREAD_CHANNEL = "api"  # a Gateway thread's tasks: ChatRef(THREAD_CHANNEL, <thread id>)

Publish = Callable[[InboundMessage], Awaitable[PublishResult]]
Notify = Callable[[InboundMessage, Callable[[], str]], Awaitable[None]]
"""A notice into a schedule's chat: the run's message (its chat, and its owner, whose language
the notice is written in) and the notice, written once that language is known."""
Outcome = Callable[[InboundMessage], Awaitable[Entry | None]]
RunInThread = Callable[[InboundMessage], Awaitable[tuple[RunState, str] | None]]
"""Start a Gateway thread's task: (the run's state, its reason), or None to try again later."""


class Clock(Protocol):
    def now(self) -> float: ...
    async def sleep(self, seconds: float) -> None: ...


class SystemClock:
    def now(self) -> float:
        return time.time()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


def run_message(
    schedule: Schedule, due: float, *, late: bool = False, now: float = 0.0
) -> InboundMessage:
    """The message a due run becomes: the task's prompt, sent by its creator, to its chat."""
    context = _context(schedule.id, schedule.label, local_text(due, schedule.tz), late)
    return InboundMessage(
        event_id=f"{EVENT_PREFIX}{schedule.id}:{int(due)}",
        chat=schedule.chat,
        sender=schedule.creator,
        text=schedule.prompt,
        quoted_text=context,
        received_at=now,
        raw={"schedule_id": schedule.id, "fresh_thread": schedule.fresh_thread},
    )


def _context(number: int, label: str, due: str, late: bool) -> str:
    """What the agent is told of a due run (a prompt: English, as the agent's prompts are; it
    answers in the chat's language)."""
    lateness = " It is running late: the service was offline at that time." if late else ""
    return (
        f"This is scheduled task #{number} ({label}), due {due}, set up earlier in this chat. "
        f"Do the task now and post the result.{lateness}"
    )


@dataclass(eq=False)
class Scheduler:
    store: ScheduleStore
    _: KW_ONLY
    publish: Publish
    notify: Notify
    outcome: Outcome
    clock: Clock
    late_after: float
    poll: float
    run_in_thread: RunInThread | None = field(default=None, init=False)  # set by the Gateway
    _wake: asyncio.Event = field(default_factory=asyncio.Event, init=False, repr=False)

    def poke(self) -> None:
        """A schedule was created, resumed or triggered: look again now instead of after the
        poll. A poke during a pass is kept: the next pass starts as soon as this one ends."""
        self._wake.set()

    def settled(self, msg: InboundMessage) -> None:
        """A message was settled in the journal: if it was a scheduled run, reconcile now, so
        the run's state follows its delivery instead of waiting for the poll."""
        if msg.event_id.startswith(EVENT_PREFIX):
            self.poke()

    async def run(self) -> None:
        while True:
            self._wake.clear()  # before the pass: a poke arriving during it is not lost
            try:
                await self.tick()
            except Exception:
                log.exception("scheduler tick failed")
            await self._sleep()

    async def _sleep(self) -> None:
        due = await self.store.next_due()
        delay = self.poll if due is None else min(self.poll, max(0.0, due - self.clock.now()))
        sleeper = asyncio.ensure_future(self.clock.sleep(delay))
        waker = asyncio.ensure_future(self._wake.wait())
        try:
            await asyncio.wait({sleeper, waker}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            sleeper.cancel()
            waker.cancel()

    async def tick(self) -> None:
        """One pass. Store calls run on the loop (microseconds each); the pass yields to the
        loop after every run, so thousands of runs due at 09:00 never stall other chats."""
        now = self.clock.now()
        for schedule in await self.store.due(now):
            await self._claim(schedule, now)
            await asyncio.sleep(0)
        for run in await self.store.runs("claimed"):
            await self._publish(run)
            await asyncio.sleep(0)
        for run in await self.store.runs("queued"):
            await self._reconcile(run)
            await asyncio.sleep(0)

    async def _claim(self, schedule: Schedule, now: float) -> None:
        due = schedule.next_run
        assert due is not None
        late = now - due > self.late_after
        skip = late and schedule.missed == "skip"
        after = now if late else due
        nxt = next_fire(schedule.expr, schedule.tz, after) if schedule.kind == "cron" else None
        if not await self.store.claim(
            schedule, nxt, run_state="skipped" if skip else "claimed", late=late, now=now
        ):
            return  # another process claimed it
        if late:

            def note() -> str:  # dates too in the owner's language
                due_text = local_text(due, schedule.tz)
                if not skip:
                    return texts.schedule_ran_late(schedule.id, due_text)
                next_text = local_text(nxt, schedule.tz) if nxt is not None else None
                return texts.schedule_skipped(schedule.id, due_text, next_text)

            await self._tell(run_message(schedule, due, late=True, now=now), note)

    async def _publish(self, run: Run) -> None:
        schedule = await self.store.get(run.schedule_id)
        if schedule is None:
            await self.store.set_run(run, "failed", "schedule deleted")
            return
        msg = run_message(schedule, run.due_at, late=run.late, now=self.clock.now())
        if schedule.chat.channel == THREAD_CHANNEL:
            started = await self.run_in_thread(msg) if self.run_in_thread else None
            if started is not None:
                await self.store.set_run(run, *started)
            return
        result = await self.publish(msg)
        if result in (PublishResult.accepted, PublishResult.duplicate):
            await self.store.set_run(run, "queued")
            log.info("schedule #%d: run due %s queued (%s)", schedule.id, run.due_at, result)
        # busy or closed: stays claimed, published on a later tick (the journal dedupes)

    async def _reconcile(self, run: Run) -> None:
        schedule = await self.store.get(run.schedule_id)
        if schedule is None:
            await self.store.set_run(run, "failed", "schedule deleted")
            return
        entry = await self.outcome(run_message(schedule, run.due_at))
        if entry is None:
            await self.store.set_run(run, "delivered", "settled (journal entry expired)")
        elif entry.state is State.delivered:
            await self.store.set_run(run, "delivered", entry.reason)
        elif entry.state is State.failed:
            await self.store.set_run(run, "failed", entry.reason)
            if not entry.told and schedule.state == "active":
                reason = texts.schedule_paused_gone(entry.reason)
                log.warning("schedule #%d %s", schedule.id, reason)
                await self.store.set_state(schedule.id, "paused", reason)

    async def _tell(self, owner: InboundMessage, text: Callable[[], str]) -> None:
        try:
            await self.notify(owner, text)
        except ChannelError as exc:
            log.warning("schedule notice to %s failed: %s", owner.chat.key, exc)
