"""The channel contract run again for a platform's second bot (`channels.<platform>.bots`): the
tests of test_contract.py, the user talking to a named bot (its own credentials) served next to
the section's own bot, as the platform serves a second app (`Driver.named_bot`). Telegram runs
the whole suite; every platform runs the conversations that use the bot's own credentials and
state (a streamed reply, a file in and out, a button press)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.channels.contract.conftest import DRIVERS
from tests.channels.contract.driver import Driver
from tests.channels.contract.test_contract import *  # noqa: F403 (the same tests, collected here)


class SecondBot:
    """The named bot's driver, its `config()` the whole section with the bot in `bots:`."""

    def __init__(self, platform: str) -> None:
        self.section = DRIVERS[platform]()
        self.section.start()
        self.bot = self.section.named_bot()
        entry = self.section.as_section({"second": self.bot})
        self.bot.config = lambda: entry  # type: ignore[method-assign]

    def stop(self) -> None:
        assert self.section.shown() == []  # every answer came from the named bot
        self.bot.stop()
        self.section.stop()


EVERY_PLATFORM = {
    "test_a_reply_opens_streams_and_finishes",
    "test_a_file_in_reaches_the_agent",
    "test_a_file_out_follows_the_answer",
    "test_buttons_are_shown_and_a_press_answers",
}


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    every = metafunc.function.__name__ in EVERY_PLATFORM
    metafunc.parametrize("platform", sorted(DRIVERS) if every else ["telegram"])


@pytest.fixture
def driver(platform: str) -> Iterator[Driver[Any]]:
    second = SecondBot(platform)
    yield second.bot
    second.stop()
