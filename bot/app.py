"""The composition root: builds the service from Settings; starts in order, stops in reverse."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from agent.hands import Hands
from agent.runner import AgentRunner
from bot.bus import MessageBus
from bot.config import Settings
from bot.context import ServiceContext
from bot.conversations import ConversationStore
from bot.db import open_db
from bot.dispatcher import Dispatcher
from bot.gateway.routes import DynamicRoutes
from bot.gateway.server import GatewayServer, build_app
from bot.ledger import Ledger
from bot.metrics import Metrics, gauge_value
from bot.pacing import Pacer
from bot.turns import TurnRunner
from channels import channel_class, config_model
from channels.base import Channel, ChannelConfig, InboundMessage

log = logging.getLogger("bot.app")

BUSY_TEXT = "I'm handling too many messages right now; please send that again in a minute."
BOT_NAME = "Antler"


class App:
    def __init__(self, settings: Settings, *, only: list[str] | None = None,
                 channel_kwargs: dict[str, dict[str, Any]] | None = None) -> None:
        self.settings = settings
        self.data_dir = settings.storage.data_dir
        self.db = open_db(self.data_dir)
        ch = settings.channels
        self.ledger = Ledger(self.db, ch.dedupe_window_hours)
        self.conversations = ConversationStore(self.db)
        self.metrics = Metrics()
        self.bus = MessageBus(self.ledger, ch.inbound_queue_size, self._tell_busy, self.metrics)
        self.metrics.queue_depth.read = lambda: gauge_value(self.bus.depth)
        self.routes = DynamicRoutes()
        self.pacer = Pacer()
        self.hands = Hands(settings.agent)
        self.runner = AgentRunner(models=settings.models, default_model=settings.default_model,
                                  config=settings.agent, data_dir=self.data_dir,
                                  tool_providers=[self.hands.tools],
                                  middleware_providers=[self.hands.middlewares])
        self.contexts: dict[str, ServiceContext] = {}
        self.channels: dict[str, Channel] = {}
        self._channel_specs: dict[str, tuple[ChannelConfig, dict[str, Any]]] = {}
        enabled = ch.enabled()
        for name in only if only is not None else list(enabled):
            cfg = enabled.get(name) or ch.platform(name) or config_model(name)(enabled=True)
            self._add_channel(name, cfg, (channel_kwargs or {}).get(name, {}))
        self.turns = TurnRunner(runner=self.runner, conversations=self.conversations,
                                ledger=self.ledger, pacer=self.pacer,
                                max_upload_bytes=int(ch.max_upload_mb * 1024 * 1024),
                                metrics=self.metrics)
        self.dispatcher = Dispatcher(channels=self.channels, turns=self.turns,
                                     conversations=self.conversations,
                                     max_concurrent_runs=ch.max_concurrent_runs,
                                     busy_policy=ch.busy_policy_for, bot_name=BOT_NAME)
        self.turns.chat_commands = self.hands.is_skill
        self.dispatcher.status_notes = self.hands.status_notes
        self.gateway: GatewayServer | None = None
        self.started_at = 0.0
        self._consumer: asyncio.Task[None] | None = None

    def _add_channel(self, name: str, cfg: ChannelConfig, kwargs: dict[str, Any]) -> None:
        ctx = ServiceContext(name, bus=self.bus, routes=self.routes, data_dir=self.data_dir,
                             bot_name=BOT_NAME)
        self.contexts[name] = ctx
        self._channel_specs[name] = (cfg, kwargs)
        self.channels[name] = channel_class(name)(cfg, ctx, **kwargs)

    # ---------------------------------------------------------------- lifecycle

    async def start(self, *, gateway: bool = True) -> None:
        self.started_at = time.time()
        self.ledger.prune()
        await self.runner.start()
        self._consumer = asyncio.create_task(self._consume(), name="dispatcher")
        if gateway and self.settings.gateway.enabled:
            gw = self.settings.gateway
            token = gw.auth_token.get_secret_value() if gw.auth_token else None
            web_app = build_app(self.health, self.routes, service=self, auth_token=token)
            self.gateway = GatewayServer(web_app, gw.host, gw.port, has_token=bool(token))
            await self.gateway.start()
        for name, channel in self.channels.items():
            await self._start_channel(name, channel)
        self._replay_pending()

    async def _start_channel(self, name: str, channel: Channel) -> None:
        state = self.contexts[name].state
        try:
            await channel.start()
        except Exception as exc:
            state.running, state.last_error = False, f"start failed: {exc}"
            log.error("channel %s: failed to start: %s", name, exc)
            return
        state.running = True
        log.info("channel %s: running", name)

    async def restart_channel(self, name: str) -> bool:
        """Stop the channel and start a fresh instance of it; False if it failed to start."""
        old = self.channels[name]
        state = self.contexts[name].state
        try:
            await old.stop()
        except Exception as exc:
            log.warning("channel %s: stop before restart failed: %s", name, exc)
        state.running = state.connected = False
        cfg, kwargs = self._channel_specs[name]
        channel = channel_class(name)(cfg, self.contexts[name], **kwargs)
        self.channels[name] = channel
        state.last_error = None
        await self._start_channel(name, channel)
        return state.running

    def _replay_pending(self) -> None:
        """Answer messages that were accepted but not answered before the last stop."""
        for msg in self.ledger.pending():
            if msg.chat.channel in self.channels:
                log.info("answering %s:%s accepted before restart", msg.chat.channel, msg.event_id)
                try:
                    self.bus.requeue(msg)
                except asyncio.QueueFull:
                    log.warning("queue full; %s stays pending until next start", msg.event_id)
                    return
            else:
                log.warning("pending message for disabled channel %s dropped", msg.chat.channel)
                self.ledger.done(msg)

    async def _consume(self) -> None:
        while True:
            msg = await self.bus.get()
            try:
                await self.dispatcher.dispatch(msg)
            except Exception:
                log.exception("dispatch of %s failed", msg.event_id)

    async def stop(self) -> None:
        """Stop intake, let running replies finish within the grace period, then shut down."""
        self.bus.close()
        await self.dispatcher.shutdown(self.settings.channels.shutdown_grace_seconds)
        if self._consumer is not None:
            self._consumer.cancel()
            await asyncio.gather(self._consumer, return_exceptions=True)
        for name, channel in reversed(self.channels.items()):
            try:
                await channel.stop()
            except Exception as exc:
                log.warning("channel %s: stop failed: %s", name, exc)
            self.contexts[name].state.running = False
        if self.gateway is not None:
            await self.gateway.stop()
        await self.runner.stop()
        self.db.close()

    async def _tell_busy(self, msg: InboundMessage) -> None:
        channel = self.channels.get(msg.chat.channel)
        if channel is not None:
            try:
                await channel.send_text(msg.chat, BUSY_TEXT, reply_to=msg.message_id)
            except Exception as exc:
                log.warning("busy notice on %s failed: %s", msg.chat.channel, exc)

    # ---------------------------------------------------------------- state

    def health(self) -> dict[str, Any]:
        return {
            "status": "ok",
            "uptime_seconds": round(time.time() - self.started_at, 1),
            "channels": {name: ctx.state.as_dict() for name, ctx in self.contexts.items()},
            "queue_depth": self.bus.depth,
            "active_runs": self.dispatcher.active_runs,
        }
