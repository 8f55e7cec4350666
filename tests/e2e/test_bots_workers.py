"""Two bots of a platform bound to different agents on three workers (`antler serve` × 3 on one
PostgreSQL and one Redis): two Telegram bots (one fake Telegram serving both tokens), two Discord
bots (one fake Discord serving both). Each bot's one receiving connection is held by one worker,
and every chat of each bot is answered once, by its own bot, with its own agent, whichever worker
runs it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.hands_helpers import system_text
from tests.e2e.service_process import wait_until
from tests.e2e.workers import PARTITIONS, Worker, own_database, running
from tests.fakes.discord_payloads import user_payload
from tests.fakes.discord_server import FakeDiscord
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.telegram_server import TOKEN, FakeTelegram

SUPPORT_TOKEN = "222222:SUPPORT-token"
AGENTS = [
    {"name": "eng", "system_prompt": "You are the eng agent."},
    {"name": "support", "system_prompt": "You are support."},
]


class TelegramPair:
    """Two Telegram bots on one fake Telegram serving both tokens."""

    lease: dict[str, Any] = {}

    def __init__(self) -> None:
        self.main = FakeTelegram().start()
        self.support = self.main.add_bot(SUPPORT_TOKEN, bot_id=222222, username="support_bot")
        self.bots = (self.main, self.support)

    def channels(self) -> dict[str, Any]:
        support = {"name": "support", "bot_token": SUPPORT_TOKEN, "agent": "support"}
        return {"telegram": {"enabled": True, "bot_token": TOKEN, "api_base": self.main.api_base,
                             "poll_timeout": 1, "agent": "eng", "bots": [support]}}  # fmt: skip

    def push(self, bot: Any, chat: int, text: str) -> None:
        bot.push_message(chat, text, user_id=chat)

    def shown(self, bot: Any, chat: int) -> list[str]:
        return bot.sent_texts(chat)


class DiscordPair:
    """Two Discord bots on one fake Discord serving both. Discord never delivers a gateway event
    twice: one pushed to a holder whose lease lapsed (a worker stalled past 2 s on a loaded
    machine) is gone, so the lease is longer here."""

    lease: dict[str, Any] = {"lease_seconds": 10}

    def __init__(self) -> None:
        self.main = FakeDiscord().start()
        self.support = self.main.add_bot(bot_id=5252, app_id=5253)
        self.bots = (self.main, self.support)

    def channels(self) -> dict[str, Any]:
        support = {"name": "support", "bot_token": self.support.token, "agent": "support"}
        return {"discord": {"enabled": True, "bot_token": self.main.token, "agent": "eng",
                            "api_base": self.main.api_base, "bots": [support]}}  # fmt: skip

    def push(self, bot: Any, chat: int, text: str) -> None:
        author = user_payload(chat, f"user{chat}")
        bot.push_message(bot.message_payload(chat, text, author=author))

    def shown(self, bot: Any, chat: int) -> list[str]:
        return [m["content"] for m in bot.bot_messages(chat)]


Pair = TelegramPair | DiscordPair


@pytest.fixture(params=[TelegramPair, DiscordPair], ids=["telegram", "discord"])
def pair(request: pytest.FixtureRequest) -> Iterator[Pair]:
    found: Pair = request.param()
    yield found
    found.main.stop()


@pytest.fixture
def group(
    tmp_path: Path,
    fake_openai: FakeOpenAI,
    pair: Pair,
    pg_server: str,
    redis_bus: dict[str, Any],
) -> Iterator[list[Worker]]:
    channels = pair.channels()
    redis = {**redis_bus["redis"], "partitions": PARTITIONS, **pair.lease}
    bus = {**redis_bus, "redis": redis}
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
        with running(found, next(iter(channels))):
            yield found


def holders(group: list[Worker], channel: str) -> int:
    return sum(w.holds_connection(channel) for w in group)


def test_two_bots_on_three_workers_answer_as_their_agents(
    group: list[Worker], pair: Pair, fake_openai: FakeOpenAI
) -> None:
    platform = next(iter(pair.channels()))
    for channel in (platform, f"{platform}.support"):  # (a loaded machine may hand one over)
        wait_until(lambda c=channel: holders(group, c) == 1, 30, f"one {channel} connection")  # type: ignore[misc]
    bots = list(zip(pair.bots, ("eng", "support"), strict=True))
    for chat in range(301, 309):
        for bot, who in bots:
            pair.push(bot, chat, f"to {who} from {chat}")
    for bot, who in bots:
        for chat in range(301, 309):
            want = f"echo: to {who} from {chat}"
            seen = lambda b=bot, c=chat, w=want: w in pair.shown(b, c)  # noqa: E731
            wait_until(seen, 30, want)
    for bot, who in bots:  # each message answered once, as the person sees it
        for chat in range(301, 309):
            assert pair.shown(bot, chat).count(f"echo: to {who} from {chat}") == 1
    asked = {fake_openai.user_texts(r)[-1]: system_text(r) for r in fake_openai.requests}
    assert len(asked) == 16  # (a model call retried under load is not an answer)
    for chat in range(301, 309):
        assert "You are the eng agent." in asked[f"to eng from {chat}"]
        assert "You are support." in asked[f"to support from {chat}"]
        shown = pair.shown(pair.main, chat)
        assert all("support" not in t for t in shown)  # never the other bot
