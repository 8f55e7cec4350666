"""Scheduled and proactive messages: the agent posts into a chat when asked, on time, once.

parse (time expressions) · recurrence (croniter, time zones) · the store in bot/stores/schedules/
· scheduler (the loop: claim, publish through the bus, reconcile) · service (what commands and
the agent's tool do). docs/schedules.md is the user's guide.
"""

from __future__ import annotations

from bot.schedules.config import SchedulesConfig
from bot.schedules.scheduler import Clock, Notify, Outcome, Publish, Scheduler, SystemClock
from bot.schedules.service import Schedules
from bot.stores.schedules import ScheduleStore

__all__ = ["Schedules", "SchedulesConfig", "SystemClock", "build_schedules"]


def build_schedules(
    store: ScheduleStore,
    config: SchedulesConfig,
    *,
    publish: Publish,
    notify: Notify,
    outcome: Outcome,
    clock: Clock | None = None,
) -> Schedules:
    """The schedules on `store` (the backend's, from bot/stores)."""
    clock = clock or SystemClock()
    scheduler = Scheduler(
        store,
        publish=publish,
        notify=notify,
        outcome=outcome,
        clock=clock,
        late_after=config.late_after_seconds,
        poll=config.poll_seconds,
    )
    return Schedules(store, scheduler, config, clock)
