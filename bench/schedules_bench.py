"""The scheduler's own cost, on the real SQLite store and delivery journal (no agent):

(a) creating 5,000 tasks through the service (parse, limits, insert), ms per task
(b) one tick with 5,000 runs due at the same minute (claim, publish into the journal): wall
    time and the loop lag meanwhile, p50/p99/max (other chats must not stall at 09:00)
(c) the next tick, reading back what became of 5,000 runs the journal has settled
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from bench.support import LoopLag, summary, temp_dir
from bot.db import open_db
from bot.schedules import SchedulesConfig, build_schedules
from bot.stores.journal.sqlite import SqliteJournal
from bot.stores.schedules.sqlite import SqliteScheduleStore
from channels.base import ChatRef, InboundMessage, PublishResult, UserRef
from tests.fakes.clock import VirtualClock

TASKS = 5_000


async def run() -> dict[str, Any]:
    db = open_db(temp_dir())
    journal = SqliteJournal(db, 24)
    clock = VirtualClock(1_800_000_000.0, sleep_moves=False)  # the bench ticks itself
    published: list[InboundMessage] = []

    async def publish(msg: InboundMessage) -> PublishResult:
        if not await journal.accept(msg):
            return PublishResult.duplicate
        published.append(msg)
        return PublishResult.accepted

    async def notify(owner: InboundMessage, text: Callable[[], str]) -> None:
        return None

    config = SchedulesConfig(max_per_person=TASKS, max_per_chat=TASKS)
    schedules = build_schedules(
        SqliteScheduleStore(db),
        config,
        publish=publish,
        notify=notify,
        outcome=journal.entry,
        clock=clock,
    )
    started = time.perf_counter()
    for i in range(TASKS):
        await schedules.create(
            ChatRef(channel="bench", chat_id=f"c{i}"),
            UserRef(id=f"u{i}"),
            "every hour post the status",
        )
    create_ms = (time.perf_counter() - started) * 1000 / TASKS
    clock.t += 3600
    with LoopLag() as lag:
        started = time.perf_counter()
        await schedules.scheduler.tick()
        tick_s = time.perf_counter() - started
    for msg in published:
        await journal.delivered(msg)
    started = time.perf_counter()
    await schedules.scheduler.tick()
    reconcile_s = time.perf_counter() - started
    db.close()
    return {
        "tasks": TASKS,
        "create_ms_per_task": round(create_ms, 3),
        "runs_published": len(published),
        "tick_due_all_s": round(tick_s, 2),
        **summary("tick_loop_lag", lag.lags),
        "tick_loop_lag_max_ms": round(max(lag.lags, default=0.0) * 1000, 1),
        "tick_reconcile_all_s": round(reconcile_s, 2),
    }
