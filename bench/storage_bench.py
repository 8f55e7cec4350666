"""The storage backends side by side: the whole service on SQLite, then on PostgreSQL.

(a) publish → first agent event p50/p99 and (b) turns/s over 1,000 conversations with the
in-process zero-latency model (title and memory calls off), the same runs as spine_bench's, once
per backend, and the ratio postgres / sqlite; then (c) the Gateway's run records: a run's four
writes (created, running, ended with its values, thread touched) for 500 runs, ms per run, and
(d) one scheduler tick with 1,000 runs due at once (claim, publish into the journal), on each
backend's stores with no agent. PostgreSQL is the server at ANTLER_BENCH_PG_DSN
(default: ANTLER_TEST_PG_DSN, then the machine's server; a throwaway one when none answers), in a
schema of its own that is dropped afterwards. On this machine the server shares the 2 cores.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from bench.spine_bench import ECHO, dispatcher_overhead, throughput
from bench.support import temp_dir
from bot.config.schema import settings_from_dict
from bot.schedules import SchedulesConfig, build_schedules
from bot.stores.build import Stores, build_stores
from bot.stores.gateway import RunRow
from channels.base import ChatRef, InboundMessage, PublishResult, UserRef
from tests.fakes.clock import VirtualClock

FIGURES = (
    "publish_to_first_event_p50_ms",
    "publish_to_first_event_p99_ms",
    "turns_per_s",
    "cpu_ms_per_turn",
    "run_records_ms_per_run",
    "schedule_tick_1000_due_s",
)
RUNS, DUE = 500, 1_000


async def _backend(storage: Callable[[], dict[str, Any]]) -> dict[str, float]:
    """Both runs, each on fresh storage (the recording channel numbers its events from e1 in
    every App: on one database the second run's events would be duplicates of the first's)."""
    figures = await dispatcher_overhead(storage=storage())
    figures.update(await throughput([ECHO], storage=storage()))
    stores = build_stores(
        settings_from_dict(
            {
                "storage": {"data_dir": str(temp_dir()), **storage()},
                "models": [
                    {"name": "m", "model": "m", "api_key": "sk", "base_url": "http://127.0.0.1:9"}
                ],
            }
        )
    )
    await stores.open()
    try:
        figures["run_records_ms_per_run"] = await _run_records(stores)
        figures["schedule_tick_1000_due_s"] = await _schedule_tick(stores)
    finally:
        await stores.close()
    return {k: v for k, v in figures.items() if k in FIGURES}


async def _run_records(stores: Stores) -> float:
    """(c) What the Gateway writes for each run, as RunManager writes it."""
    records = stores.gateway
    await records.create_thread("bench", {})
    values = {"messages": [{"type": "human", "content": "hi"}, {"type": "ai", "content": "yo"}]}
    started = time.perf_counter()
    for i in range(RUNS):
        now = time.time()
        await records.add_run(
            RunRow(
                run_id=f"r{i}",
                thread_id="bench",
                assistant_id="lead_agent",
                status="pending",
                created_at=now,
                updated_at=now,
                modes=["values"],
            )
        )
        await records.set_run(f"r{i}", "running")
        await records.set_run(f"r{i}", "success", values=values)
        await records.touch_thread("bench")
    return round((time.perf_counter() - started) * 1000 / RUNS, 3)


async def _schedule_tick(stores: Stores) -> float:
    """(d) One tick with DUE runs due at the same minute."""
    clock = VirtualClock(1_800_000_000.0, sleep_moves=False)  # the bench ticks itself

    async def publish(msg: InboundMessage) -> PublishResult:
        accepted = await stores.journal.accept(msg)
        return PublishResult.accepted if accepted else PublishResult.duplicate

    async def notify(owner: InboundMessage, text: Callable[[], str]) -> None:
        return None

    schedules = build_schedules(
        stores.schedules,
        SchedulesConfig(max_per_person=DUE, max_per_chat=DUE),
        publish=publish,
        notify=notify,
        outcome=stores.journal.entry,
        clock=clock,
    )
    for i in range(DUE):
        await schedules.create(
            ChatRef(channel="bench", chat_id=f"c{i}"),
            UserRef(id=f"u{i}"),
            "every hour post the status",
        )
    clock.t += 3600
    started = time.perf_counter()
    await schedules.scheduler.tick()
    return round(time.perf_counter() - started, 2)


async def run() -> dict[str, object]:
    from tests import pg_server

    if "ANTLER_BENCH_PG_DSN" in os.environ:
        os.environ["ANTLER_TEST_PG_DSN"] = os.environ["ANTLER_BENCH_PG_DSN"]
    server, throwaway = pg_server.find_server()
    if server is None:
        raise SystemExit(pg_server.INSTALL_HINT)
    schemas: list[str] = []

    def fresh_schema() -> dict[str, Any]:
        name, dsn = pg_server.new_schema(server)
        schemas.append(name)
        return {"backend": "postgres", "postgres": {"dsn": dsn}}

    try:
        sqlite = await _backend(lambda: {"backend": "sqlite"})
        postgres = await _backend(fresh_schema)
    finally:
        for name in schemas:
            pg_server.drop_schema(server, name)
        if throwaway is not None:
            throwaway.stop()
    figures: dict[str, object] = {f"sqlite_{k}": v for k, v in sqlite.items()}
    figures.update({f"postgres_{k}": v for k, v in postgres.items()})
    figures.update(
        {f"ratio_{k}": round(postgres[k] / sqlite[k], 2) for k in FIGURES if sqlite.get(k)}
    )
    return figures
