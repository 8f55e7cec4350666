"""The channel contract run again for a platform's second bot (`channels.telegram.bots`): the
same tests as test_contract.py, the user talking to a named bot served next to the section's
own bot by one fake Telegram server (each with its own token)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.channels.contract.driver import Driver
from tests.channels.contract.telegram import TelegramDriver
from tests.channels.contract.test_contract import *  # noqa: F403 (the same tests, collected here)
from tests.fakes.telegram_server import FakeTelegram

SECOND_TOKEN = "333333:SECOND-token"


class SecondBotDriver(TelegramDriver):
    """Drives `telegram.second`; the section's own bot runs beside it, untouched."""

    def __init__(self) -> None:
        super().__init__()
        self.section_bot: FakeTelegram = self.fake

    def start(self) -> None:
        self.section_bot.start()
        self.fake = self.section_bot.add_bot(SECOND_TOKEN, bot_id=333333, username="second_bot")

    def stop(self) -> None:
        self.section_bot.stop()

    def config(self) -> dict[str, Any]:
        return self.section_bot.channel_config(bots=[{"name": "second", "bot_token": SECOND_TOKEN}])


@pytest.fixture
def driver() -> Iterator[Driver]:
    second = SecondBotDriver()
    second.start()
    yield second
    assert second.section_bot.calls_of("sendMessage") == []  # every answer came from the bot
    second.stop()
