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
DOWN_SECONDS = 3
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


def restart(server: pg_server.Throwaway | redis_server.Throwaway) -> None:
    """Stop `server`, keep it down DOWN_SECONDS (messages arrive meanwhile), start it again."""
    server.halt()
    time.sleep(DOWN_SECONDS)
    server.start()


def stop_all(group: list[Worker]) -> None:
    for w in group:
        w.stop()


@pytest.mark.parametrize("fault", ["postgres", "redis-kept", "redis-lost"])
def test_restarted_mid_traffic(
    tmp_path: Path,
    fake_openai: FakeOpenAI,
    telegram: FakeTelegram,
    own_pg: pg_server.Throwaway,
    fault: str,
) -> None:
    """PostgreSQL restarted; Redis restarted with its append-only file, or empty."""
    redis = redis_server.Throwaway(persistent=fault == "redis-kept").start()
    with own_database(own_pg.address) as dsn:
        group = cluster(tmp_path, fake_openai, telegram, dsn, redis.address)
        try:
            traffic = Traffic(telegram, CHATS)
            ended = during(traffic, lambda: restart(own_pg if fault == "postgres" else redis))
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
    report(f"{fault} restart", traffic, recovered, down_seconds=DOWN_SECONDS)
