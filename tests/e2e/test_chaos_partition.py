"""Chaos: one worker cut off from Redis (a TCP proxy that stops every byte, tests/e2e/
tcp_proxy.py) for CUT_SECONDS, under traffic, while the other worker holds the Telegram
connection. The cut worker's Redis calls hang; within three quarters of a lease it gives its
partitions up and stops writing the replies it was answering; the other worker takes them over
once the leases ran out and finishes each in the message already shown. Every message answered
once, in order, nothing else shown; when the line is mended the cut worker takes its share
again, and its calls that hung are delivered late and do nothing."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import pg_server, redis_server
from tests.e2e.chaos import Traffic, during, report
from tests.e2e.service_process import wait_until
from tests.e2e.tcp_proxy import CuttableProxy
from tests.e2e.workers import PARTITIONS, own_database, start_all, workers
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.telegram_server import FakeTelegram

LEASE_SECONDS = 3
CUT_SECONDS = 30  # what the issue asks: ten lease times (the one 30-s cut of the suite)
CHATS = list(range(601, 609))


@pytest.fixture
def engines() -> Iterator[tuple[str, redis_server.Throwaway, CuttableProxy]]:
    pg = pg_server.Throwaway().start()
    redis = redis_server.Throwaway().start()
    proxy = CuttableProxy(redis.port).start()
    try:
        with own_database(pg.address) as dsn:
            yield dsn, redis, proxy
    finally:
        proxy.stop()
        redis.stop()
        pg.stop()


def test_a_worker_cut_off_from_redis(
    tmp_path: Path,
    fake_openai: FakeOpenAI,
    telegram: FakeTelegram,
    engines: tuple[str, redis_server.Throwaway, CuttableProxy],
) -> None:
    dsn, redis, proxy = engines
    redis_cfg = {"key_prefix": "chaos", "lease_seconds": LEASE_SECONDS}
    direct = {"backend": "redis", "redis": {**redis_cfg, "url": redis.address}}
    cut = {"backend": "redis", "redis": {**redis_cfg, "url": f"redis://127.0.0.1:{proxy.port}/0"}}
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    [holder] = workers(tmp_path / "a", fake_openai.base_url, telegram, dsn, direct, 1)
    [other] = workers(tmp_path / "b", fake_openai.base_url, telegram, dsn, cut, 1)
    start_all([holder])  # it holds the Telegram connection; `other` is the one cut off
    try:
        other.start()
        wait_until(other.ready, 60, "the second worker to start")
        wait_until(
            lambda: len(other.partitions()) == len(holder.partitions()) == PARTITIONS // 2,
            30,
            "the partitions shared out",
        )
        traffic = Traffic(telegram, CHATS)

        def partition() -> None:
            proxy.cut()
            wait_until(  # the survivor took every partition over
                lambda: holder.partitions() == list(range(PARTITIONS)),
                CUT_SECONDS + 10,
                "the connected worker to take every partition",
            )
            time.sleep(max(0.0, CUT_SECONDS - 2 * LEASE_SECONDS))
            proxy.mend()

        ended = during(traffic, partition)
        recovered = traffic.settle(ended)
        wait_until(lambda: other.partitions(), 30, "the mended worker to take its share again")
        assert "Traceback" not in other.output()
    finally:
        holder.stop()
        other.stop()
    report("one worker cut off from Redis", traffic, recovered, cut_seconds=CUT_SECONDS)
