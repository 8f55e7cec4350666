"""The channel contract run again for each platform's second bot (`channels.<platform>.bots`):
the same tests as test_contract.py, the user talking to a named bot (its own credentials)
served next to the section's own bot, as the platform serves a second app
(`Driver.named_bot`)."""

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


@pytest.fixture(params=sorted(DRIVERS))
def driver(request: pytest.FixtureRequest) -> Iterator[Driver[Any]]:
    second = SecondBot(request.param)
    yield second.bot
    second.stop()
