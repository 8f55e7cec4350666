"""Scale-out on Redis: turns/s with 1, 2 and 3 `antler serve` workers, and takeover after kill -9.

Workers are subprocesses on one PostgreSQL (a database of the bench's own) and one Redis (a key
prefix of its own), with the fake Telegram and the zero-latency fake model. Every worker also
runs on this machine's 2 cores, so the ratio between the worker counts is the figure to read,
not the absolute turns/s. `BENCH_SCALEOUT_MESSAGES` / `BENCH_SCALEOUT_CHATS` set the load (the
issue's 1,000 over 200 by default). The bot's Telegram budget is raised to 300 sends a second
(`BENCH_SCALEOUT_RATE`; the fake holds the bot to it): at Telegram's usual 30, one budget shared
by every worker would be the figure measured, not the workers.

Takeover: with 2 workers, the holder of the Telegram connection is killed (SIGKILL); measured
are the seconds until the other worker polls (holds the connection) and until a message sent
right after the kill is answered.
"""

from __future__ import annotations

import asyncio
import os
import re
import tempfile
import time
from pathlib import Path
from typing import Any

from tests import pg_server, redis_server
from tests.e2e.service_process import wait_until
from tests.e2e.workers import Worker, own_database, start_all, workers
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.telegram_server import FakeTelegram

LEASE_SECONDS = 10.0  # the default of bus.redis.lease_seconds
RATE = float(os.environ.get("BENCH_SCALEOUT_RATE", "300"))


async def run() -> dict[str, Any]:
    return await asyncio.to_thread(_run)


def _run() -> dict[str, Any]:
    messages = int(os.environ.get("BENCH_SCALEOUT_MESSAGES", "1000"))
    chats = int(os.environ.get("BENCH_SCALEOUT_CHATS", "200"))
    pg, pg_throwaway = pg_server.find_server()
    rd, rd_throwaway = redis_server.find_server()
    if pg is None or rd is None:
        raise SystemExit(pg_server.INSTALL_HINT if pg is None else redis_server.INSTALL_HINT)
    figures: dict[str, Any] = {
        "messages": messages,
        "conversations": chats,
        "telegram_messages_per_second": RATE,
    }
    try:
        for count in (1, 2, 3):
            figures[f"turns_per_s_{count}_workers"] = round(
                _throughput(pg, rd, count, messages, chats), 1
            )
        one = figures["turns_per_s_1_workers"]
        for count in (2, 3):
            figures[f"ratio_{count}_to_1"] = round(figures[f"turns_per_s_{count}_workers"] / one, 2)
        figures.update(_takeover(pg, rd))
    finally:
        if pg_throwaway is not None:
            pg_throwaway.stop()
        if rd_throwaway is not None:
            rd_throwaway.stop()
    return figures


class _Setup:
    def __init__(self, pg: str, rd: str, count: int, lease: float = LEASE_SECONDS) -> None:
        self.pg, self.rd, self.count, self.lease = pg, rd, count, lease

    def __enter__(self) -> tuple[list[Worker], FakeTelegram]:
        self.tmp = tempfile.TemporaryDirectory(prefix="antler-scaleout-")
        self.db = own_database(self.pg)
        dsn = self.db.__enter__()
        self.prefix = redis_server.new_prefix()
        self.openai = FakeOpenAI().start()
        self.telegram = FakeTelegram(messages_per_second=RATE).start()
        bus = {
            "backend": "redis",
            "redis": {"url": self.rd, "key_prefix": self.prefix, "lease_seconds": self.lease},
        }
        self.group = workers(
            Path(self.tmp.name), self.openai.base_url, self.telegram, dsn, bus, self.count
        )
        start_all(self.group)
        return self.group, self.telegram

    def __exit__(self, *exc: object) -> None:
        for w in self.group:
            w.stop()
        self.telegram.stop()
        self.openai.stop()
        redis_server.drop_prefix(self.rd, self.prefix)
        self.db.__exit__(None, None, None)
        self.tmp.cleanup()


def _throughput(pg: str, rd: str, count: int, messages: int, chats: int) -> float:
    with _Setup(pg, rd, count) as (_, telegram):
        per_chat = max(1, messages // chats)
        started = time.monotonic()
        for i in range(per_chat):
            for chat in range(chats):
                telegram.push_message(10_000 + chat, f"chat {chat} message {i}")
        total = per_chat * chats
        wait_until(lambda: _answered(telegram) >= total, 900, "every message answered")
        return total / (time.monotonic() - started)


def _answered(telegram: FakeTelegram) -> int:
    """Answers shown whole (a streamed part of one is not an answer)."""
    shown = list(telegram.messages.values())
    return sum(1 for text in shown if re.fullmatch(r"echo: chat \d+ message \d+", text))


def _takeover(pg: str, rd: str) -> dict[str, float]:
    with _Setup(pg, rd, 2) as (group, telegram):
        holder = next(w for w in group if w.holds_connection())
        other = next(w for w in group if w is not holder)
        killed = time.monotonic()
        holder.kill()
        telegram.push_message(20_000, "after the kill")
        wait_until(other.holds_connection, 60, "the survivor to take the connection")
        connection = time.monotonic() - killed
        wait_until(lambda: telegram.sent_texts(20_000), 60, "the message answered")
        answered = time.monotonic() - killed
    return {
        "lease_seconds": LEASE_SECONDS,
        "takeover_connection_s": round(connection, 2),
        "takeover_first_answer_s": round(answered, 2),
    }
