"""The storage backends side by side: the whole service on SQLite, then on PostgreSQL.

(a) publish → first agent event p50/p99 and (b) turns/s over 1,000 conversations with the
in-process zero-latency model (title and memory calls off), the same runs as spine_bench's, once
per backend, and the ratio postgres / sqlite. PostgreSQL is the server at ANTLER_BENCH_PG_DSN
(default: ANTLER_TEST_PG_DSN, then the machine's server; a throwaway one when none answers), in a
schema of its own that is dropped afterwards. On this machine the server shares the 2 cores.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from bench.spine_bench import ECHO, dispatcher_overhead, throughput

FIGURES = ("publish_to_first_event_p50_ms", "publish_to_first_event_p99_ms", "turns_per_s",
           "cpu_ms_per_turn")


async def _backend(storage: Callable[[], dict[str, Any]]) -> dict[str, float]:
    """Both runs, each on fresh storage (the recording channel numbers its events from e1 in
    every App: on one database the second run's events would be duplicates of the first's)."""
    figures = await dispatcher_overhead(storage=storage())
    figures.update(await throughput([ECHO], storage=storage()))
    return {k: v for k, v in figures.items() if k in FIGURES}


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
    figures.update({f"ratio_{k}": round(postgres[k] / sqlite[k], 2)
                    for k in FIGURES if sqlite.get(k)})
    return figures
