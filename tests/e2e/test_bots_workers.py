"""Two Telegram bots bound to different agents on three workers (`antler serve` × 3 on one
PostgreSQL and one Redis, one fake Telegram serving both tokens): each bot's one receiving
connection is held by one worker, and every chat of each bot is answered once, by its own bot,
with its own agent, whichever worker runs it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.hands_helpers import system_text
from tests.e2e.service_process import wait_until
from tests.e2e.workers import PARTITIONS, Worker, own_database, running
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
    bus = {**redis_bus, "redis": {**redis_bus["redis"], "partitions": PARTITIONS}}
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
                Worker(home, fake_openai.base_url, {"telegram": tg}, storage=storage, bus=bus,
                       agents=AGENTS, agent={"title": {"enabled": False},
                                             "memory": {"enabled": False}})
            )  # fmt: skip
        with running(found):
            yield found


def holders(group: list[Worker], channel: str) -> int:
    return sum(w.health()["channels"][channel]["connection"] == "held" for w in group)


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
