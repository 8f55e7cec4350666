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
from typing import Any

from pydantic import ValidationError

BOT_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,31}$")


def bot_channel(platform: str, bot: str) -> str:
    """The channel name of a platform's named bot."""
    return f"{platform}.{bot}"


def platform_of(channel: str) -> str:
    """The platform of a channel name (`telegram.support` → `telegram`)."""
    return channel.split(".", 1)[0]


def named_bot_configs(section: Any) -> dict[str, Any]:
    """`section.bots` as configs of the section's own model; ValueError naming the bad key
    (`bots[1].bot_token: field required`)."""
    if section.bots and not section.named_bots:
        raise ValueError("bots: not supported on this platform yet (Telegram has them)")
    base = {k: getattr(section, k) for k in type(section).model_fields if k != "bots"}
    found: dict[str, Any] = {}
    for i, entry in enumerate(section.bots):
        name = entry.get("name")
        if not isinstance(name, str) or not BOT_NAME.fullmatch(name):
            raise ValueError(
                f"bots[{i}].name: required, lower-case letters, digits, - and _ (32 at most)"
            )
        if name in found:
            raise ValueError(f"bots[{i}].name: duplicate bot name {name!r}")
        own = {k: v for k, v in entry.items() if k != "name"}
        if "bots" in own:
            raise ValueError(f"bots[{i}].bots: a bot has no bots of its own")
        try:
            found[name] = type(section).model_validate({**base, **own})
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(part) for part in err["loc"])
            message = "unknown key" if err["type"] == "extra_forbidden" else err["msg"]
            raise ValueError(f"bots[{i}].{where}: {message}") from None
    return found
