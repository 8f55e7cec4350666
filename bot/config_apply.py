"""Applies a validated configuration change to the running service.

`live` keys each have an applier in `LIVE_APPLIERS` (tests/bot/test_config_boundary.py checks
that every live key of the boundary has one): the agent's settings reach the next run, the
access keys of a channel the next message. A channel whose `channel` keys changed is restarted
alone, after its running and queued replies finish (at most `channels.shutdown_grace_seconds`):
enabling starts it, disabling stops it, new credentials reconnect it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from agent.hands import Hands
from bot.config import Settings, is_loopback
from bot.config_boundary import kind_of
from bot.config_changes import ChangeLog
from bot.config_live import Applied, LiveConfig
from bot.logs import RedactSecrets, secrets_of

if TYPE_CHECKING:
    from bot.app import App

log = logging.getLogger("bot.config")

Applier = Callable[["App", Settings, list[str]], None]
HANDS_KEYS = (
    "agent.tools",
    "agent.sandbox",
    "agent.skills",
    "agent.extensions_config",
    "agent.subagents",
)
DRAIN_POLL = 0.05


def _agent(app: App, new: Settings, keys: list[str]) -> None:
    """Models, the default model and the agent's sections: from the next run on."""
    if any(k.startswith(HANDS_KEYS) for k in keys):
        old, hands = app.hands, Hands(new.agent)
        runner = app.runner
        runner.tool_providers = [
            hands.tools if p == old.tools else p for p in runner.tool_providers
        ]
        runner.middleware_providers = [
            hands.middlewares if p == old.middlewares else p for p in runner.middleware_providers
        ]
        app.hands = hands
    app.runner.reconfigure(models=new.models, default_model=new.default_model, config=new.agent)


def _logging(app: App, new: Settings, keys: list[str]) -> None:
    logging.getLogger().setLevel(new.logging.level.upper())


def _read_when_used(app: App, new: Settings, keys: list[str]) -> None:
    """Read from `app.settings` each time it is needed (the busy policy per message, the grace
    period at stop): replacing the settings applied it."""


def _admin_token(app: App, new: Settings, keys: list[str]) -> None:
    """Asked per request by the admin API's auth; never dropped while the server listens on a
    non-loopback address (its host changes at the next start only)."""
    token = new.gateway.auth_token.get_secret_value() if new.gateway.auth_token else ""
    if not token and app.gateway is not None and not is_loopback(app.gateway.host):
        raise ValueError(
            f"the admin server listens on {app.gateway.host}, not a loopback "
            "address: the token stays until a restart on a loopback host"
        )
    app.admin_token = token or None


def _uploads(app: App, new: Settings, keys: list[str]) -> None:
    app.turns.max_upload_bytes = int(new.channels.max_upload_mb * 1024 * 1024)


def _access(app: App, new: Settings, keys: list[str]) -> None:
    """A channel's allowlists, group trigger and busy policy: the gate reads them per message."""
    for name in {k.split(".")[1] for k in keys if k.count(".") >= 2}:
        cfg = new.channels.platform(name)
        if cfg is not None and name in app.contexts:
            app.gate.configs[name] = cfg


def _schedules(app: App, new: Settings, keys: list[str]) -> None:
    app.schedules.config = new.schedules
    app.schedules.scheduler.late_after = new.schedules.late_after_seconds
    app.schedules.scheduler.poll = new.schedules.poll_seconds


LIVE_APPLIERS: dict[str, Applier] = {
    "models": _agent,
    "default_model": _agent,
    "agent": _agent,
    "logging": _logging,
    "gateway.auth_token": _admin_token,
    "gateway.tokens": _read_when_used,  # asked per request by the API's auth
    "channels.busy_policy": _read_when_used,
    "channels.shutdown_grace_seconds": _read_when_used,
    "channels.max_upload_mb": _uploads,
    "channels.*": _access,  # the live keys of every platform's section
    "schedules": _schedules,
    "access": _read_when_used,  # roles and grants: read per message and per turn
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

    def __init__(self, app: App) -> None:
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
        return done

    async def _channel(self, name: str, new: Settings, keys: list[str], done: Applied) -> None:
        app = self.app
        cfg = new.channels.platform(name)
        grace = new.channels.shutdown_grace_seconds
        if cfg is None or not cfg.enabled:
            if name in app.channels:
                await self._drain(name, grace)
                await app.supervisor.stop(name)
                app.contexts[name].state.enabled = False
                log.info("channel %s: stopped (disabled in the configuration)", name)
                done.channels_restarted.append(name)
            done.applied += keys
            return
        app.configure_channel(name, cfg)
        app.contexts[name].state.enabled = True
        if name in app.channels:
            await self._drain(name, grace)
            ok = await app.supervisor.restart(name)
        else:
            app.channels[name] = app.supervisor.build(name)
            ok = await app.supervisor.start(name)
        done.channels_restarted.append(name)
        done.applied += keys
        if not ok:
            error = app.contexts[name].state.last_error
            done.errors.append(f"channels.{name}: start failed ({error}); retrying with backoff")

    async def _drain(self, name: str, grace: float) -> None:
        """Wait until the channel has no reply running or queued, at most `grace` seconds."""
        lanes = self.app.dispatcher.lanes
        loop = asyncio.get_running_loop()
        deadline = loop.time() + grace
        while any(key.startswith(name + ":") for key in lanes) and loop.time() < deadline:
            await asyncio.sleep(DRAIN_POLL)


def _mask_new_secrets(settings: Settings) -> None:
    """New secrets are masked in the log like those of start-up (bot/logs.py)."""
    secrets = secrets_of(settings)
    for handler in logging.getLogger().handlers:
        for filt in handler.filters:
            if isinstance(filt, RedactSecrets):
                filt.add(secrets)


def live_config(app: App) -> LiveConfig | None:
    """Watch and apply the config file the service was started from (None: started from a
    dict, as tests do; the API's config routes then answer 409)."""
    path = app.settings.config_path
    if path is None:
        return None
    live = LiveConfig(path, app.settings, ConfigApplier(app), ChangeLog(app.stores.access))
    live.start()
    return live
