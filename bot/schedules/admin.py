"""Schedule operations for the admin API: the same rules as the chat commands, with errors as
(status, message) for the API to answer. The creator is whoever the API call names."""

from __future__ import annotations

from bot.schedules.config import MissedPolicy
from bot.schedules.parse import ScheduleSyntaxError, When, parse_when
from bot.schedules.recurrence import next_fire, valid_zone
from bot.schedules.service import Schedules
from bot.stores.schedules import NewSchedule, Run, Schedule, ScheduleState
from channels.base import ChatRef, UserRef

LIVE_RUNS = ("claimed", "queued")


class ScheduleError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class ScheduleAdmin:
    def __init__(self, schedules: Schedules, channels: set[str]) -> None:
        self.schedules = schedules
        self.store = schedules.store
        self.channels = channels

    async def create(
        self,
        chat: ChatRef,
        creator: UserRef,
        when: str,
        prompt: str,
        *,
        tz: str | None = None,
        fresh_thread: bool = False,
        missed: MissedPolicy | None = None,
    ) -> Schedule:
        if chat.channel not in self.channels:
            raise ScheduleError(422, f"channel {chat.channel!r} is not running")
        if not prompt.strip():
            raise ScheduleError(422, "prompt is empty")
        zone = _zone(tz) if tz else await self.schedules.timezone_for(chat)
        parsed = self.when(when, zone)
        limit = await self.schedules.over_limit(chat, creator)
        if limit:
            raise ScheduleError(409, limit)
        config = self.schedules.config
        schedule = await self.store.add(
            NewSchedule(
                chat=chat,
                creator=creator,
                prompt=prompt.strip(),
                kind=parsed.kind,
                tz=zone,
                label=parsed.label,
                first_run=parsed.first_run,
                expr=parsed.expr,
                missed=missed or config.missed_policy,
                fresh_thread=fresh_thread,
            )
        )
        self.schedules.scheduler.poke()
        return schedule

    async def get(self, schedule_id: int) -> Schedule:
        schedule = await self.store.get(schedule_id)
        if schedule is None:
            raise ScheduleError(404, f"scheduled task {schedule_id} not found")
        return schedule

    async def update(
        self,
        schedule_id: int,
        *,
        prompt: str | None = None,
        when: str | None = None,
        tz: str | None = None,
        fresh_thread: bool | None = None,
        missed: MissedPolicy | None = None,
    ) -> Schedule:
        schedule = await self._live(schedule_id)
        fields: dict[str, object] = {}
        if prompt is not None:
            if not prompt.strip():
                raise ScheduleError(422, "prompt is empty")
            fields["prompt"] = prompt.strip()
        zone = _zone(tz) if tz else schedule.tz
        if when is not None:
            parsed = self.when(when, zone)
            fields.update(
                kind=parsed.kind, expr=parsed.expr, label=parsed.label, next_run=parsed.first_run
            )
        elif tz and schedule.kind == "cron" and schedule.state == "active":
            fields["next_run"] = next_fire(schedule.expr, zone, self.schedules.clock.now())
        if tz:
            fields["tz"] = zone
        if fresh_thread is not None:
            fields["fresh_thread"] = int(fresh_thread)
        if missed is not None:
            fields["missed"] = missed
        updated = await self.store.update(schedule_id, **fields)
        assert updated is not None
        self.schedules.scheduler.poke()
        return updated

    async def set_state(self, schedule_id: int, state: ScheduleState) -> Schedule:
        schedule = await self._live(schedule_id)
        next_run = None
        if state == "active" and schedule.kind == "cron":
            next_run = next_fire(schedule.expr, schedule.tz, self.schedules.clock.now())
        updated = await self.store.set_state(schedule_id, state, "", next_run)
        assert updated is not None
        if state == "active":
            self.schedules.scheduler.poke()
        return updated

    async def trigger(self, schedule_id: int) -> Run:
        """Run the task now, besides its schedule; 409 while one of its runs is under way."""
        schedule = await self._live(schedule_id)
        if any(r.state in LIVE_RUNS for r in await self.store.runs_of(schedule.id, 5)):
            raise ScheduleError(409, f"a run of scheduled task {schedule.id} is under way")
        due = float(int(self.schedules.clock.now()))
        if not await self.store.add_run(schedule.id, due, due):
            raise ScheduleError(409, f"scheduled task {schedule.id} was just triggered")
        self.schedules.scheduler.poke()
        return Run(schedule.id, due, "claimed")

    async def _live(self, schedule_id: int) -> Schedule:
        schedule = await self.get(schedule_id)
        if schedule.state not in ("active", "paused"):
            raise ScheduleError(409, f"scheduled task {schedule_id} is {schedule.state}")
        return schedule

    def when(self, text: str, tz: str) -> When:
        """A time expression read in `tz` (ScheduleError 422 when it cannot be)."""
        try:
            parsed, rest = parse_when(text.strip(), tz, self.schedules.clock.now())
        except ScheduleSyntaxError as exc:
            raise ScheduleError(422, str(exc)) from None
        if rest.strip():
            raise ScheduleError(422, f"could not read {rest.strip()!r} as part of the time")
        return parsed


def _zone(name: str) -> str:
    if not valid_zone(name):
        raise ScheduleError(422, f"unknown time zone {name!r}")
    return name
