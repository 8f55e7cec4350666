"""Chaos with the real engines: two workers (`antler serve` subprocesses) on a PostgreSQL and a
Redis of the test's own, the fake Telegram sending messages all along, while the database
restarts, or Redis restarts with its data kept (append-only file) or lost. Each time: every
message answered once, nothing else shown (no stray notice), the last answer within
RECOVERY_BOUND of the fault's end (docs/scale-out.md has the figures)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import pg_server, redis_server
from tests.e2e.chaos import Traffic, during, report
from tests.e2e.service_process import wait_until
from tests.e2e.workers import Worker, own_database, start_all, workers
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.telegram_server import FakeTelegram

LEASE_SECONDS = 3
CHATS = list(range(501, 509))


@pytest.fixture(scope="module")
def own_pg() -> Iterator[pg_server.Throwaway]:
    server = pg_server.Throwaway().start()
    try:
        yield server
    finally:
        server.stop()


def cluster(
    tmp_path: Path,
    fake_openai: FakeOpenAI,
    telegram: FakeTelegram,
    dsn: str,
    redis_url: str,
) -> list[Worker]:
    bus = {
        "backend": "redis",
        "redis": {"url": redis_url, "key_prefix": "chaos", "lease_seconds": LEASE_SECONDS},
    }
    group = workers(tmp_path, fake_openai.base_url, telegram, dsn, bus, 2)
    start_all(group)
    return group


def stop_all(group: list[Worker]) -> None:
    for w in group:
        w.stop()


def test_postgres_restarted_mid_traffic(
    tmp_path: Path, fake_openai: FakeOpenAI, telegram: FakeTelegram, own_pg: pg_server.Throwaway
) -> None:
    redis = redis_server.Throwaway().start()
    with own_database(own_pg.dsn) as dsn:
        group = cluster(tmp_path, fake_openai, telegram, dsn, redis.url)
        try:
            traffic = Traffic(telegram, CHATS)

            def restart() -> None:
                own_pg.halt()
                time.sleep(3)  # down for 3 s: messages arrive meanwhile
                own_pg.start()

            ended = during(traffic, restart)
            recovered = traffic.settle(ended)
        finally:
            stop_all(group)
            redis.stop()
    report("postgres restart", traffic, recovered, down_seconds=3)


@pytest.mark.parametrize("persistent", [True, False], ids=["kept", "lost"])
def test_redis_restarted_mid_traffic(
    tmp_path: Path,
    fake_openai: FakeOpenAI,
    telegram: FakeTelegram,
    own_pg: pg_server.Throwaway,
    persistent: bool,
) -> None:
    redis = redis_server.Throwaway(persistent=persistent).start()
    with own_database(own_pg.dsn) as dsn:
        group = cluster(tmp_path, fake_openai, telegram, dsn, redis.url)
        try:
            traffic = Traffic(telegram, CHATS)

            def restart() -> None:
                redis.halt()
                time.sleep(3)
                redis.start()

            ended = during(traffic, restart)
            recovered = traffic.settle(ended)
            wait_until(  # the partitions shared out again, every entry acknowledged
                lambda: (
                    sorted(p for w in group for p in w.partitions()) == list(range(8))
                    and all(w.health()["bus"]["in_flight"] == 0 for w in group)
                ),
                30,
                "the bus settled",
            )
        finally:
            stop_all(group)
            redis.stop()
    report(f"redis restart, data {'kept' if persistent else 'lost'}", traffic, recovered)
