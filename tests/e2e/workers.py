"""`antler serve` workers as subprocesses on one PostgreSQL, one Redis and the fake Telegram."""

from __future__ import annotations

import contextlib
import json
import re
import urllib.request
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import psycopg
import pytest

from bot.cluster.partitions import partition_of
from tests.e2e.service_process import ServiceProcess, wait_until
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.telegram_server import TOKEN, FakeTelegram

PARTITIONS = 8
RUNS = 100  # run slots per worker: a turn holds its slot while its chat's interval passes, so
# with the default 16 the 1,000 messages wait on the pool, not on the workers being measured


class Worker(ServiceProcess):
    """One worker; its admin port is read from its log (`/health` tells its share)."""

    def health(self) -> dict[str, Any]:
        port = re.findall(r"admin server on http://127\.0\.0\.1:(\d+)", self.logs[-1].read_text())
        with urllib.request.urlopen(f"http://127.0.0.1:{port[-1]}/health", timeout=5) as resp:
            data: dict[str, Any] = json.loads(resp.read())
        return data

    def ready(self) -> bool:
        return "admin server on" in self.logs[-1].read_text()

    def holds_connection(self, channel: str = "telegram") -> bool:
        return bool(self.health()["channels"][channel]["connection"] == "held")

    def partitions(self) -> list[int]:
        return list(self.health()["bus"]["partitions"])


def workers(
    tmp_path: Path,
    openai_base: str,
    telegram: FakeTelegram,
    pg_dsn: str,
    bus: dict[str, Any],
    count: int,
    **extra: Any,
) -> list[Worker]:
    """`count` workers; `extra` adds config sections (e.g. `usage`)."""
    tg = {
        "enabled": True,
        "bot_token": TOKEN,
        "api_base": telegram.api_base,
        "poll_timeout": 1,
        "messages_per_second": telegram.messages_per_second,  # the budget the fake holds it to
    }
    bus = {**bus, "redis": {**bus["redis"], "partitions": PARTITIONS}}
    storage = {
        "data_dir": str(tmp_path / "data"),
        "backend": "postgres",
        "postgres": {"dsn": pg_dsn},
    }
    found = []
    for i in range(count):
        home = tmp_path / f"w{i}"
        home.mkdir()
        found.append(
            Worker(
                home,
                openai_base,
                {"telegram": tg, "max_concurrent_runs": RUNS},
                storage=storage,
                bus=bus,
                **{"agent": {"title": {"enabled": False}, "memory": {"enabled": False}}, **extra},
            )
        )
    return found


def start_all(group: list[Worker], channel: str = "telegram") -> None:
    for w in group:
        w.start()
    for w in group:
        wait_until(w.ready, 60, "a worker to start")
    wait_until(
        lambda: sum(w.holds_connection(channel) for w in group) == 1,
        30,
        f"one worker to hold the {channel} connection",
    )
    shared_out(group, PARTITIONS)


def shared_out(group: Sequence[Worker], partitions: int) -> None:
    """Wait until every partition has an owner and every worker owns some."""
    wait_until(
        lambda: (
            sorted(p for w in group for p in w.partitions()) == list(range(partitions))
            and all(w.partitions() for w in group)
        ),
        30,
        "the partitions shared out",
    )


def chat_owned_by(owner: Worker, chats: range) -> int:
    """A group chat id whose conversation's partition `owner` holds."""
    mine = set(owner.partitions())
    return next(c for c in chats if partition_of(f"telegram:{c}", PARTITIONS) in mine)


@contextlib.contextmanager
def own_database(server: str) -> Iterator[str]:
    """A database of its own on `server` (dropped after): LangGraph's checkpoint setup (CREATE
    INDEX CONCURRENTLY) then waits for no other test's transactions."""
    name = f"antler_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    try:
        yield psycopg.conninfo.make_conninfo(server, dbname=name)
    finally:
        with psycopg.connect(server, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@contextlib.contextmanager
def running(group: list[Worker], channel: str = "telegram") -> Iterator[list[Worker]]:
    """`group` started (one holds the `channel` connection, the partitions shared out); stopped
    after."""
    try:
        start_all(group, channel)
        yield group
    finally:
        for w in group:
            w.stop()


def worker_group(count: int = 3, bus: dict[str, Any] | None = None, **extra: Any) -> Any:
    """The pytest fixture `group`: `count` started workers on a database of their own, Redis
    (`bus`: more of its settings) and the fake Telegram; `extra` adds config sections (e.g.
    `access`, `agent`); stopped after."""

    def group(
        tmp_path: Path,
        fake_openai: FakeOpenAI,
        telegram: FakeTelegram,
        pg_server: str,
        redis_bus: dict[str, Any],
    ) -> Iterator[list[Worker]]:
        settings = {**redis_bus, "redis": {**redis_bus["redis"], **(bus or {})}}
        with own_database(pg_server) as dsn:
            found = workers(tmp_path, fake_openai.base_url, telegram, dsn, settings, count, **extra)
            with running(found):
                yield found

    return pytest.fixture(group, name="group")
