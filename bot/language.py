"""Which language the service speaks to a message's sender, in this order:

1. the person's own choice (`/lang`), kept in the access store under the person, so it follows
   linked accounts (a choice made on an account before it was linked still counts);
2. the platform's hint, where it gives one (Telegram's `language_code`: `UserRef.locale`);
3. the channel's `locale:` (e.g. `zh-CN` for a Feishu team), else `channels.locale`;
4. English.

The dispatcher asks once per message and sets the current locale (bot/i18n.py) for everything
handling it: notices, command answers, the reply's status labels, refusals.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from bot import i18n
from bot.access.people import account_of
from channels.base import InboundMessage

if TYPE_CHECKING:
    from bot.access.people import People
    from bot.config.schema import ChannelsShared

log = logging.getLogger("bot.language")


class Languages:
    def __init__(self, people: People, channels: Callable[[], ChannelsShared]) -> None:
        self.people = people
        self.channels = channels  # the current settings: a `locale:` change applies live

    async def of(self, msg: InboundMessage) -> str:
        """The locale to answer `msg`'s sender in (a store that cannot be read skips the
        person's choice: the message is still answered)."""
        try:
            chosen = await self.chosen(msg)
        except Exception as exc:
            log.warning("the language of %s was not read: %s", msg.chat.key, exc)
            chosen = None
        return chosen or i18n.supported(msg.sender.locale) or self.of_channel(msg.chat.channel)

    def of_channel(self, name: str) -> str:
        """The channel's language for people who chose none and gave no hint."""
        shared = self.channels()
        cfg = shared.platform(name)
        asked = cfg.locale if cfg is not None and cfg.locale else shared.locale
        return i18n.supported(asked) or i18n.SOURCE

    async def chosen(self, msg: InboundMessage) -> str | None:
        """What the sender's person chose with /lang (on any of its accounts), or None."""
        person = await self.people.person_of(account_of(msg))
        for account in await self.people.accounts_of(person):
            found = i18n.supported(await self.people.store.language(account))
            if found is not None:
                return found
        return None

    async def choose(self, msg: InboundMessage, locale: str | None) -> None:
        """Remember the sender's choice for their person (None: forget it, on every account)."""
        person = await self.people.person_of(account_of(msg))
        accounts = await self.people.accounts_of(person)
        for account in accounts[1:]:  # an older choice of a linked account no longer counts
            await self.people.store.set_language(account, None)
        await self.people.store.set_language(person, locale)

    async def speak(self, msg: InboundMessage) -> None:
        """Speak the sender's language in this task (and the tasks it starts) from now on."""
        i18n.set_current(await self.of(msg))
