"""Several bots per platform: each platform's section also takes `bots:`, a list of named bot
accounts, each with its own credentials and the agent profile it talks as (validated by
`ChannelConfig`, channels/base.py; Telegram runs them for now).

A bot is its section with its own keys on top (`{name, agent, bot_token, ...}`): it inherits
everything it does not set. Each bot is a channel of its own, named `<platform>.<bot>`
(`telegram.support`): its conversations, delivery journal, budgets, receiving lease, metrics
and `/api/channels` entry are its own. People are the platform's: an account is
`<platform>:<user id>` whichever bot they write to (`platform_of`).
"""

from __future__ import annotations

import re

BOT_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,31}$")


def bot_channel(platform: str, bot: str) -> str:
    """The channel name of a platform's named bot."""
    return f"{platform}.{bot}"


def platform_of(channel: str) -> str:
    """The platform of a channel name (`telegram.support` → `telegram`)."""
    return channel.split(".", 1)[0]
