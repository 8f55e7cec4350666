"""Applies a validated configuration change to the running service.

`live` keys each have an applier in `LIVE_APPLIERS` (tests/bot/test_config_boundary.py checks
that every live key of the boundary has one): the agent's settings reach the next run, the
access keys of a channel the next message. A channel whose `channel` keys changed is restarted
alone: enabling starts it, disabling stops it, new credentials reconnect it. A fresh instance
takes over at once; the replies the old one writes finish on it in the background, without
holding the caller (bot/channel_restarts.py).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, MutableMapping
from typing import TYPE_CHECKING, Protocol

from bot.config.boundary import kind_of
from bot.config.changes import ChangeLog
from bot.config.live import Applied, LiveConfig
from bot.config.schema import Settings, is_loopback
from bot.logs import RedactSecrets, secrets_of
from channels.bots import bot_channel

if TYPE_CHECKING:
    from bot.access.store import AccessStore
    from bot.channel_restarts import ChannelRestarts
    from bot.context import ServiceContext
    from channels.base import Channel, ChannelConfig

log = logging.getLogger("bot.config")


class Front(Protocol):
    host: str


class Stores(Protocol):
    @property
    def access(self) -> AccessStore:
        """Where configuration changes are recorded (the audit trail)."""


class Service(Protocol):
    """What applying a change may read and change of the running service (bot.app.App is one)."""

    settings: Settings
    admin_token: str | None

    @property
    def stores(self) -> Stores: ...
    @property
    def gateway(self) -> Front | None: ...
    @property
    def contexts(self) -> Mapping[str, ServiceContext]: ...
    @property
    def channels(self) -> MutableMapping[str, Channel]: ...
    @property
    def restarts(self) -> ChannelRestarts: ...

    def use_agent_settings(self, new: Settings, tools_changed: bool) -> None: ...
    def use_upload_limit(self, max_bytes: int) -> None: ...
    def use_access(self, name: str, cfg: ChannelConfig) -> None: ...
    def use_schedules(self, new: Settings) -> None: ...
    def configure_channel(self, name: str, cfg: ChannelConfig) -> None: ...


Applier = Callable[[Service, Settings, list[str]], None]
HANDS_KEYS = (
    "agent.tools",
    "agent.sandbox",
    "agent.skills",
    "agent.extensions_config",
    "agent.subagents",
)


def _agent(app: Service, new: Settings, keys: list[str]) -> None:
    """Models, the default model and the agent's sections: from the next run on."""
    app.use_agent_settings(new, any(k.startswith(HANDS_KEYS) for k in keys))


def _logging(app: Service, new: Settings, keys: list[str]) -> None:
    logging.getLogger().setLevel(new.logging.level.upper())


def _read_when_used(app: Service, new: Settings, keys: list[str]) -> None:
    """Read from `app.settings` each time it is needed (the busy policy per message, the grace
    period at stop): replacing the settings applied it."""


def _admin_token(app: Service, new: Settings, keys: list[str]) -> None:
    """Asked per request by the admin API's auth; never dropped while the server listens on a
    non-loopback address (its host changes at the next start only)."""
    token = new.gateway.auth_token.get_secret_value() if new.gateway.auth_token else ""
    if not token and app.gateway is not None and not is_loopback(app.gateway.host):
        raise ValueError(
            f"the admin server listens on {app.gateway.host}, not a loopback "
            "address: the token stays until a restart on a loopback host"
        )
    app.admin_token = token or None


def _uploads(app: Service, new: Settings, keys: list[str]) -> None:
    app.use_upload_limit(int(new.channels.max_upload_mb * 1024 * 1024))


def _access(app: Service, new: Settings, keys: list[str]) -> None:
    """A channel's allowlists, group trigger and busy policy: the gate reads them per message."""
    for name in {k.split(".")[1] for k in keys if k.count(".") >= 2}:
        cfg = new.channels.platform(name)
        bots = cfg.bot_configs() if cfg is not None else {}  # the section's bots inherit it
        for channel, each in [(name, cfg), *((bot_channel(name, b), c) for b, c in bots.items())]:
            if each is not None and channel in app.contexts:
                app.use_access(channel, each)


def _schedules(app: Service, new: Settings, keys: list[str]) -> None:
    app.use_schedules(new)


LIVE_APPLIERS: dict[str, Applier] = {
    "models": _agent,
    "default_model": _agent,
    "agent": _agent,
    "agents": _agent,  # agent profiles: the next run of each chat uses the new ones
    "logging": _logging,
    "gateway.auth_token": _admin_token,
    "gateway.tokens": _read_when_used,  # asked per request by the API's auth
    "channels.busy_policy": _read_when_used,
    "channels.locale": _read_when_used,
    "channels.shutdown_grace_seconds": _read_when_used,
    "channels.max_upload_mb": _uploads,
    "channels.*": _access,  # the live keys of every platform's section
    "schedules": _schedules,
    "access": _read_when_used,  # roles and grants: read per message and per turn
    "usage": _read_when_used,  # budgets, the footer, prices: read per run and per call
}


def applier_for(key: str) -> Applier | None:
    parts = key.split("[", 1)[0].split(".")
    if len(parts) >= 3 and parts[0] == "channels":
        return LIVE_APPLIERS["channels.*"]
    while parts:
        found = LIVE_APPLIERS.get(".".join(parts))
        if found is not None:
            return found
        parts.pop()
    return None


class ConfigApplier:
    """`LiveConfig`'s `apply`: given the old and new settings and the changed live and channel
    keys, changes the running service and says what it did."""

    def __init__(self, app: Service) -> None:
        self.app = app

    async def __call__(self, old: Settings, new: Settings, keys: list[str]) -> Applied:
        self.app.settings = new
        _mask_new_secrets(new)
        done = Applied()
        live = [k for k in keys if kind_of(k) == "live"]
        appliers: dict[Applier, list[str]] = {}
        for key in live:
            fn = applier_for(key)
            if fn is None:
                done.errors.append(f"{key}: no applier; takes effect after a restart")
                continue
            appliers.setdefault(fn, []).append(key)
        for fn, fn_keys in appliers.items():
            try:
                fn(self.app, new, fn_keys)
                done.applied += fn_keys
            except Exception as exc:
                log.exception("applying %s failed", ", ".join(fn_keys))
                done.errors.append(f"{', '.join(fn_keys)}: not applied ({exc})")
        channel_keys = [k for k in keys if kind_of(k) == "channel"]
        for name in sorted({k.split(".")[1] for k in channel_keys}):
            mine = [k for k in channel_keys if k.split(".")[1] == name]
            await self._channel(name, new, mine, done)
            for bot in _bots(old, name) | _bots(new, name):  # the section's bots go with it
                await self._channel(bot, new, [], done)
        return done

    async def _channel(self, name: str, new: Settings, keys: list[str], done: Applied) -> None:
        app = self.app
        cfg = new.channels.platform(name)
        if cfg is None or not cfg.enabled:
            if name in app.channels:
                await app.restarts.stop(name)
                app.contexts[name].state.enabled = False
                log.info("channel %s: stopped (disabled in the configuration)", name)
                done.channels_restarted.append(name)
            done.applied += keys
            return
        app.configure_channel(name, cfg)
        app.contexts[name].state.enabled = True
        if name in app.channels:
            ok = await app.restarts.restart(name)
        else:
            ok = await app.restarts.start(name)
        done.channels_restarted.append(name)
        done.applied += keys
        if not ok:
            error = app.contexts[name].state.last_error
            done.errors.append(f"channels.{name}: start failed ({error}); retrying with backoff")


def _bots(settings: Settings, platform: str) -> set[str]:
    section = settings.channels.platform(platform)
    return {bot_channel(platform, b) for b in (section.bot_configs() if section else {})}


def _mask_new_secrets(settings: Settings) -> None:
    """New secrets are masked in the log like those of start-up (bot/logs.py)."""
    secrets = secrets_of(settings)
    for handler in logging.getLogger().handlers:
        for filt in handler.filters:
            if isinstance(filt, RedactSecrets):
                filt.add(secrets)


def live_config(app: Service) -> LiveConfig | None:
    """Watch and apply the config file the service was started from (None: started from a
    dict, as tests do; the API's config routes then answer 409)."""
    path = app.settings.config_path
    if path is None:
        return None
    live = LiveConfig(path, app.settings, ConfigApplier(app), ChangeLog(app.stores.access))
    live.start()
    return live
