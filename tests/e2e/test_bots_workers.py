"""Two bots of a platform bound to different agents on three workers (`antler serve` × 3 on one
PostgreSQL and one Redis): two Telegram bots (one fake Telegram serving both tokens), two Discord
bots (one fake Discord serving both). Each bot's one receiving connection is held by one worker,
and every chat of each bot is answered once, by its own bot, with its own agent, whichever worker
runs it."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.hands_helpers import system_text
from tests.e2e.service_process import wait_until
from tests.e2e.workers import PARTITIONS, Worker, own_database, start_all
from tests.fakes.discord_payloads import user_payload
from tests.fakes.discord_server import FakeDiscord
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.telegram_server import TOKEN, FakeTelegram

SUPPORT_TOKEN = "222222:SUPPORT-token"
AGENTS = [
    {"name": "eng", "system_prompt": "You are the eng agent."},
    {"name": "support", "system_prompt": "You are support."},
]


@pytest.fixture
def bots() -> Iterator[tuple[FakeTelegram, FakeTelegram]]:
    server = FakeTelegram().start()
    yield server, server.add_bot(SUPPORT_TOKEN, bot_id=222222, username="support_bot")
    server.stop()


@contextlib.contextmanager
def three_workers(
    tmp_path: Path,
    fake_openai: FakeOpenAI,
    channels: dict[str, Any],
    pg_server: str,
    redis_bus: dict[str, Any],
    **redis: Any,
) -> Iterator[list[Worker]]:
    platform = next(iter(channels))
    bus = {**redis_bus, "redis": {**redis_bus["redis"], "partitions": PARTITIONS, **redis}}
    with own_database(pg_server) as dsn:
        storage = {
            "data_dir": str(tmp_path / "data"),
            "backend": "postgres",
            "postgres": {"dsn": dsn},
        }
        found = []
        for i in range(3):
            home = tmp_path / f"w{i}"
            home.mkdir()
            found.append(
                Worker(home, fake_openai.base_url, channels, storage=storage, bus=bus,
                       agents=AGENTS, agent={"title": {"enabled": False},
                                             "memory": {"enabled": False}})
            )  # fmt: skip
        try:
            start_all(found, platform)
            yield found
        finally:
            for w in found:
                w.stop()


@pytest.fixture
def group(
    tmp_path: Path,
    fake_openai: FakeOpenAI,
    bots: tuple[FakeTelegram, FakeTelegram],
    pg_server: str,
    redis_bus: dict[str, Any],
) -> Iterator[list[Worker]]:
    support = {"name": "support", "bot_token": SUPPORT_TOKEN, "agent": "support"}
    tg = {"enabled": True, "bot_token": TOKEN, "api_base": bots[0].api_base, "poll_timeout": 1,
          "agent": "eng", "bots": [support]}  # fmt: skip
    with three_workers(tmp_path, fake_openai, {"telegram": tg}, pg_server, redis_bus) as found:
        yield found


def holders(group: list[Worker], channel: str) -> int:
    return sum(w.holds_connection(channel) for w in group)


def test_two_bots_on_three_workers_answer_as_their_agents(
    group: list[Worker], bots: tuple[FakeTelegram, FakeTelegram], fake_openai: FakeOpenAI
) -> None:
    main, support = bots
    wait_until(lambda: holders(group, "telegram.support") == 1, 30, "one support connection")
    assert holders(group, "telegram") == 1
    for chat in range(301, 309):
        main.push_message(chat, f"to eng from {chat}", user_id=chat)
        support.push_message(chat, f"to support from {chat}", user_id=chat)
    for bot, who in ((main, "eng"), (support, "support")):
        for chat in range(301, 309):
            want = f"echo: to {who} from {chat}"
            wait_until(lambda b=bot, c=chat, w=want: w in b.sent_texts(c), 30, want)  # type: ignore[misc]
    asked = {fake_openai.user_texts(r)[-1]: system_text(r) for r in fake_openai.requests}
    assert len(fake_openai.requests) == 16  # each message answered once
    for chat in range(301, 309):
        assert "You are the eng agent." in asked[f"to eng from {chat}"]
        assert "You are support." in asked[f"to support from {chat}"]
        assert all("support" not in t for t in main.sent_texts(chat))  # never the other bot


@pytest.fixture
def discord_bots() -> Iterator[tuple[FakeDiscord, FakeDiscord]]:
    server = FakeDiscord().start()
    yield server, server.add_bot(bot_id=5252, app_id=5253)
    server.stop()


def test_two_discord_bots_on_three_workers_answer_as_their_agents(
    tmp_path: Path,
    fake_openai: FakeOpenAI,
    discord_bots: tuple[FakeDiscord, FakeDiscord],
    pg_server: str,
    redis_bus: dict[str, Any],
) -> None:
    """Each Discord bot's one gateway session is held by one worker; every DM of each bot is
    answered once, by that bot, with its own agent."""
    main, support = discord_bots
    named = {"name": "support", "bot_token": support.token, "agent": "support"}
    section = {"enabled": True, "bot_token": main.token, "api_base": main.api_base,
               "agent": "eng", "bots": [named]}  # fmt: skip
    channels = {"discord": section}
    # Discord never delivers a gateway event twice: one pushed to a holder whose lease lapsed
    # (a worker stalled past 2 s on this loaded machine) is gone, so the lease is longer here
    lease = {"lease_seconds": 10}
    with three_workers(tmp_path, fake_openai, channels, pg_server, redis_bus, **lease) as group:
        for channel in ("discord", "discord.support"):  # (a loaded machine may hand one over)
            wait_until(lambda c=channel: holders(group, c) == 1, 30, f"one {channel} session")  # type: ignore[misc]
        for chat in range(301, 309):
            for bot, who in ((main, "eng"), (support, "support")):
                author = user_payload(chat, f"user{chat}")
                bot.push_message(bot.message_payload(chat, f"to {who} from {chat}", author=author))
        for bot, who in ((main, "eng"), (support, "support")):
            for chat in range(301, 309):
                want = f"echo: to {who} from {chat}"
                shown = lambda b=bot, c=chat: [m["content"] for m in b.bot_messages(c)]  # noqa: E731
                wait_until(lambda s=shown, w=want: w in s(), 30, want)  # type: ignore[misc]
    asked = {fake_openai.user_texts(r)[-1]: system_text(r) for r in fake_openai.requests}
    assert len(fake_openai.requests) == 16  # each message answered once
    for chat in range(301, 309):
        assert "You are the eng agent." in asked[f"to eng from {chat}"]
        assert "You are support." in asked[f"to support from {chat}"]
