"""Several bots per platform: each platform's section also takes `bots:`, a list of named bot
accounts (Telegram bots, Slack apps, Feishu apps, DingTalk robots, Discord bots, WeCom bots),
each with its own credentials and the agent profile it talks as (validated by `ChannelConfig`,
channels/base.py).

A bot is its section with its own keys on top (`{name, agent, bot_token, ...}`): it inherits
everything it does not set but its credentials (the config's `credentials`, which each bot
sets itself, and `own_keys`, which it never inherits), and its webhook route (`route_keys`:
`<the section's path>/<bot name>` unless the bot sets its own). Each bot is a channel of its
own, named `<platform>.<bot>` (`slack.support`): its conversations, delivery journal, budgets,
receiving lease, metrics and `/api/channels` entry are its own. People are the platform's: an
account is `<platform>:<user id>` whichever bot they write to (`platform_of`).
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import SecretStr, ValidationError

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
        raise ValueError("bots: this channel has no named bots")
    model = type(section)
    skipped = {"bots", *model.own_keys}
    base = {k: getattr(section, k) for k in model.model_fields if k not in skipped}
    found: dict[str, Any] = {}
    for i, entry in enumerate(section.bots):
        name = _name(i, entry, found)
        own = {k: v for k, v in entry.items() if k != "name"}
        if "bots" in own:
            raise ValueError(f"bots[{i}].bots: a bot has no bots of its own")
        routes = {k: f"{getattr(section, k).rstrip('/')}/{name}" for k in model.route_keys}
        try:
            found[name] = model.model_validate({**base, **routes, **own})
        except ValidationError as exc:
            raise ValueError(f"bots[{i}].{_problem(exc)}") from None
        _own_credentials(i, entry, section, found)
        for key in model.shared_keys:
            if getattr(found[name], key) != getattr(section, key):
                raise ValueError(f"bots[{i}].{key}: one for every bot (set it on the section)")
        _own_routes(i, name, section, found)
    return found


def _own_routes(i: int, name: str, section: Any, found: dict[str, Any]) -> None:
    """A bot's webhook path is its own (the section's or another bot's would take its events)."""
    for key in type(section).route_keys:
        others = {"the section's own bot": section, **{f"bot {n!r}": c for n, c in found.items()}}
        others.pop(f"bot {name!r}")
        for who, cfg in others.items():
            if getattr(cfg, key) == getattr(found[name], key):
                raise ValueError(f"bots[{i}].{key}: already the route of {who}")


def _name(i: int, entry: dict[str, Any], found: dict[str, Any]) -> str:
    name = entry.get("name")
    if not isinstance(name, str) or not BOT_NAME.fullmatch(name):
        rule = "required, lower-case letters, digits, - and _ (32 at most)"
        raise ValueError(f"bots[{i}].name: {rule}")
    if name in found:
        raise ValueError(f"bots[{i}].name: duplicate bot name {name!r}")
    return name


def _problem(exc: ValidationError) -> str:
    """`key: what is wrong` of a bot's first problem (a model check names its key itself)."""
    err = exc.errors()[0]
    if err["type"] == "extra_forbidden":
        return f"{'.'.join(str(p) for p in err['loc'])}: unknown key"
    message = str(err["msg"]).removeprefix("Value error, ")
    return f"{'.'.join(str(p) for p in err['loc'])}: {message}" if err["loc"] else message


def _own_credentials(i: int, entry: dict[str, Any], section: Any, found: dict[str, Any]) -> None:
    """Each bot is an account of its own: it sets its credentials, and no other bot of the
    section (nor the section's own bot) is the same account (the first credential names it)."""
    keys = type(section).credentials
    for key in keys:
        if not _plain(entry.get(key)):
            raise ValueError(f"bots[{i}].{key}: required (each bot has its own credentials)")
    if not keys:
        return
    others = {"the section's own bot": section, **found}
    others.pop(str(entry["name"]))
    for who, cfg in others.items():
        if _plain(getattr(cfg, keys[0])) == _plain(entry[keys[0]]):
            shown = who if who.startswith("the ") else f"bot {who!r}"
            raise ValueError(f"bots[{i}].{keys[0]}: the same account as {shown}")


def _plain(value: object) -> str:
    return value.get_secret_value() if isinstance(value, SecretStr) else str(value or "")
