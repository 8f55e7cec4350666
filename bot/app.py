"""The composition root: builds the service from Settings; starts in order, stops in reverse."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from agent.hands import Hands
from agent.runner import AgentRunner
from agent.tools import ToolProvider
from agent.tools.schedules import schedule_tools
from bot import texts
from bot.access import AccessGate
from bot.access.links import build_access
from bot.bus import MessageBus
from bot.cluster.connections import ConnectionLeases
from bot.cluster.control import ClusterRuns
from bot.cluster.run_events import RunEvents
from bot.cluster.settling import SettleNotifyingJournal
from bot.cluster.shared_budgets import SharedPacing
from bot.cluster.stream_bus import RedisBus
from bot.command_context import CommandService
from bot.command_registry import CommandRegistry, SkillCommand, SkillSource
from bot.commands import COMMANDS
from bot.config import BusBackend, Settings
from bot.config_apply import live_config
from bot.config_live import LiveConfig
from bot.context import ServiceContext
from bot.dispatcher import Dispatcher
from bot.gateway.facade import ServiceFacade
from bot.gateway.principals import tokens_of
from bot.gateway.routes import DynamicRoutes
from bot.gateway.server import GatewayServer, build_app
from bot.journal import Entry, Journal
from bot.metrics import Metrics
from bot.resume import resume_entries
from bot.schedules import build_schedules
from bot.schedules.scheduler import EVENT_PREFIX as SCHEDULED_RUN
from bot.schedules.scheduler import Clock
from bot.stores import build_stores
from bot.supervisor import ChannelSupervisor
from bot.turns import TurnRunner
from channels import channel_class, config_model
from channels.backoff import BackoffPolicy
from channels.base import (
    BusyPolicy,
    Channel,
    ChannelConfig,
    ChannelError,
    ChatRef,
    InboundMessage,
)
from channels.pacing import Pacer

log = logging.getLogger("bot.app")

BOT_NAME = "Antler"


class App:
    def __init__(
        self,
        settings: Settings,
        *,
        only: list[str] | None = None,
        channel_kwargs: dict[str, dict[str, Any]] | None = None,
        backoff: BackoffPolicy | None = None,
        schedule_clock: Clock | None = None,
    ) -> None:
        self.settings = settings
        self.data_dir = settings.storage.data_dir
        ch = settings.channels
        self.stores = build_stores(settings)  # the storage backend is chosen there, only there
        self.conversations = self.stores.conversations
        self.metrics = Metrics()
        self.cluster: RedisBus | None = None  # the bus when several workers share Redis
        if settings.bus.backend is BusBackend.redis:
            self.cluster = RedisBus(
                self.stores.journal,
                settings.bus.redis,
                ch.inbound_queue_size,
                self._tell_busy,
                self.metrics,
            )
            self.bus: MessageBus = self.cluster
            self.journal: Journal = SettleNotifyingJournal(
                self.stores.journal, self.cluster.settled
            )
        else:
            self.journal = self.stores.journal
            self.bus = MessageBus(
                self.journal, ch.inbound_queue_size, self._tell_busy, self.metrics
            )
        # messages of another process that died: on Redis back into the streams, where the
        # owner of each conversation's partition takes them up
        self._orphans = self.cluster.republish if self.cluster else self._resume
        self.stores.on_orphans = self._orphans
        self.routes = DynamicRoutes()
        self.pacer = Pacer()
        self.gate = AccessGate({}, self.pacer, self._tell_refused)
        self.hands = Hands(settings.agent)
        self.commands = CommandRegistry(COMMANDS, skill_commands(lambda: self.hands), BOT_NAME)
        self.schedules = build_schedules(
            self.stores.schedules,
            settings.schedules,
            publish=self.bus.publish,
            notify=self._notify,
            outcome=self.journal.entry,
            clock=schedule_clock,
        )
        tools: list[ToolProvider] = [self.hands.tools]
        if settings.schedules.enabled:
            tools.append(schedule_tools(self.schedules))
        self.runner = AgentRunner(
            models=settings.models,
            default_model=settings.default_model,
            config=settings.agent,
            data_dir=self.data_dir,
            tool_providers=tools,
            middleware_providers=[self.hands.middlewares],
            checkpoints=self.stores.checkpoints,
            memory_store=self.stores.memory,
        )
        now = lambda: self.settings  # noqa: E731 (replaced when config.yaml changes)
        access = build_access(now, self.stores.access, self.runner, self.metrics)
        self.people, self.links = access  # roles, /link, the audit (tool calls go into it)
        self.audit = self.people.audit
        self.pacing: SharedPacing | None = None  # wide budgets and 429s shared by workers
        if self.cluster is not None:
            cl = self.cluster
            self.pacing = SharedPacing(
                lambda: cl.client, settings.bus.redis.key_prefix, lambda: cl.worker, cl.live_workers
            )
        self.contexts: dict[str, ServiceContext] = {}
        self.channels: dict[str, Channel] = {}
        self._channel_specs: dict[str, tuple[ChannelConfig, dict[str, Any]]] = {}
        enabled = ch.enabled()
        for name in only if only is not None else list(enabled):
            cfg = enabled.get(name) or ch.platform(name) or config_model(name)(enabled=True)
            self._add_channel(name, cfg, (channel_kwargs or {}).get(name, {}))
        connections = None
        if self.cluster is not None:
            cluster, redis_cfg = self.cluster, settings.bus.redis
            connections = ConnectionLeases(
                lambda: cluster.client,
                redis_cfg.key_prefix,
                redis_cfg.lease_seconds,
                lambda: cluster.worker,
            )
        self.supervisor = ChannelSupervisor(
            self.channels, self.contexts, self._build_channel, backoff, connections
        )
        self.turns = TurnRunner(
            runner=self.runner,
            conversations=self.conversations,
            journal=self.journal,
            max_upload_bytes=int(ch.max_upload_mb * 1024 * 1024),
            commands=self.commands,
            metrics=self.metrics,
            thread_for=self.schedules.thread_for,
            access=self.people,
        )
        command_service = CommandService(
            conversations=self.conversations,
            agent=self.runner,
            help=self.commands,
            schedules=self.schedules if settings.schedules.enabled else None,
            status_notes=lambda: self.hands.status_notes(),
            access=self.people,
            links=self.links,
        )
        self.dispatcher = Dispatcher(
            channels=self.channels,
            turns=self.turns,
            conversations=self.conversations,
            max_concurrent_runs=ch.max_concurrent_runs,
            busy_policy=self._busy_policy,
            commands=self.commands,
            command_service=command_service,
        )
        self.runner.on_title = self._set_title
        self.metrics.read_gauges(lambda: self.bus.depth, lambda: self.dispatcher.waiting)
        self.control: ClusterRuns | None = None
        self.run_events: RunEvents | None = None
        if self.cluster is not None:
            self.cluster.on_resume = self._resume
            self.cluster.on_abandon = self.dispatcher.abandon
            self.control = ClusterRuns(
                lambda: cluster.client,
                redis_cfg.key_prefix,
                lambda: cluster.worker,
                self.dispatcher.stop_run,
            )
            self.dispatcher.elsewhere = self.control
            self.run_events = RunEvents(lambda: cluster.client, redis_cfg.key_prefix)
        self._scheduler: asyncio.Task[None] | None = None
        self.gateway: GatewayServer | None = None
        self.started_at = 0.0
        self._consumer: asyncio.Task[None] | None = None
        self.live: LiveConfig | None = None  # config.yaml watched and applied (serve)
        token = settings.gateway.auth_token
        self.admin_token = token.get_secret_value() if token else None

    def _add_channel(self, name: str, cfg: ChannelConfig, kwargs: dict[str, Any]) -> None:
        ctx = ServiceContext(
            name,
            bus=self.bus,
            routes=self.routes,
            data_dir=self.data_dir,
            bot_name=BOT_NAME,
            gate=self.gate,
            menu=self.commands.menu,
        )
        self.contexts[name] = ctx
        self.gate.configs[name] = cfg
        self._channel_specs[name] = (cfg, kwargs)
        self.channels[name] = self._build_channel(name)

    def configure_channel(self, name: str, cfg: ChannelConfig) -> None:
        """Use `cfg` for `name` from its next (re)start; a new channel gets its context."""
        if name not in self.contexts:
            self._add_channel(name, cfg, {})
            return
        self._channel_specs[name] = (cfg, self._channel_specs[name][1])
        self.gate.configs[name] = cfg

    def _busy_policy(self, name: str) -> BusyPolicy:
        return self.settings.channels.busy_policy_for(name)  # the current settings: live

    def _admin_token(self) -> str | None:
        return self.admin_token  # changed live by bot/config_apply.py

    def _build_channel(self, name: str) -> Channel:
        cfg, kwargs = self._channel_specs[name]
        channel = channel_class(name)(cfg, self.contexts[name], **kwargs)
        if self.pacing is not None:
            self.pacing.attach(name, channel.pacer)
        return channel

    # ---------------------------------------------------------------- lifecycle

    async def start(self, *, gateway: bool = True) -> None:
        self.started_at = time.time()
        await self.stores.open()  # StorageUnavailable (a ConfigError) when it cannot be reached
        if self.cluster is not None:
            try:
                await self.cluster.open()  # RedisUnavailable (a ConfigError) likewise
            except Exception:
                await self.stores.close()
                raise
        await self.journal.prune()
        await self.runner.start()
        self._consumer = asyncio.create_task(self._consume(), name="dispatcher")
        if gateway and self.settings.gateway.enabled:
            gw = self.settings.gateway
            token = self._admin_token()
            web_app = build_app(
                self.health,
                self.routes,
                service=self.facade(),
                auth_token=self._admin_token,
                named_tokens=lambda: tokens_of(self.settings.gateway),
            )  # both asked per request: live
            self.gateway = GatewayServer(web_app, gw.host, gw.port, has_token=bool(token))
            await self.gateway.start()
        for name in list(self.channels):
            await self.supervisor.start(name)  # a failed start keeps retrying in the background
        await self._resume_unsettled()
        if self.cluster is not None and self.control is not None:
            self.control.listen()
            if self.pacing is not None:
                self.pacing.listen()
            self.cluster.start_reading()
        if self.settings.schedules.enabled:
            self._scheduler = asyncio.create_task(self.schedules.scheduler.run(), name="schedules")
        if gateway:  # `antler serve`; `antler chat` runs on the file as it was
            self.live = live_config(self)

    async def restart_channel(self, name: str) -> bool:
        """Stop the channel and start a fresh instance; False if that start failed (it is then
        retried with backoff, like a failed start at launch)."""
        return await self.supervisor.restart(name)

    async def _resume_unsettled(self) -> None:
        """Take up messages the last process accepted but did not settle (see the journal)."""
        await self._orphans(await self.journal.unsettled())

    async def _resume(self, entries: list[Entry]) -> None:
        await resume_entries(
            entries, self.channels, self.bus.requeue, self.dispatcher.resume, self.turns.settle
        )

    async def _set_title(self, thread_id: str, title: str) -> None:
        conv = await self.conversations.by_thread(thread_id)
        if conv is not None:
            await self.conversations.update(conv.key, title=title[:60])

    async def _consume(self) -> None:
        while True:
            msg = await self.bus.get()
            try:
                await self.dispatcher.dispatch(msg)
            except Exception:
                log.exception("dispatch of %s failed", msg.event_id)

    async def stop(self) -> None:
        """Stop intake, let running replies finish within the grace period, then shut down."""
        if self.live is not None:
            await self.live.stop()
        if self._scheduler is not None:
            self._scheduler.cancel()
            await asyncio.gather(self._scheduler, return_exceptions=True)
        self.bus.close()
        await self.dispatcher.shutdown(self.settings.channels.shutdown_grace_seconds)
        if self.control is not None:
            await self.control.close()
        if self.pacing is not None:
            await self.pacing.close()
        if self._consumer is not None:
            self._consumer.cancel()
            await asyncio.gather(self._consumer, return_exceptions=True)
        await self.supervisor.stop_all()  # (hands the platform connections over)
        if self.cluster is not None:  # what did not settle goes to the partitions' next owners
            await self.cluster.shutdown()
        if self.gateway is not None:
            await self.gateway.stop()
        await self.runner.stop()
        await self.stores.close()

    async def _notify(self, chat: ChatRef, text: str) -> None:
        """A notice from the scheduler (a run late or skipped) into the schedule's chat."""
        channel = self.channels.get(chat.channel)
        if channel is None:
            raise ChannelError(f"channel {chat.channel} is not running")
        await channel.send_text(chat, text)

    async def _tell_busy(self, msg: InboundMessage) -> None:
        if msg.event_id.startswith(SCHEDULED_RUN):
            return  # nobody sent it: the scheduler publishes the run again on its next tick
        channel = self.channels.get(msg.chat.channel)
        if channel is not None:
            try:
                await channel.send_text(msg.chat, texts.BUSY, reply_to=msg.message_id)
            except Exception as exc:
                log.warning("busy notice on %s failed: %s", msg.chat.channel, exc)

    async def _tell_refused(self, msg: InboundMessage) -> None:
        channel = self.channels.get(msg.chat.channel)
        if channel is not None:
            try:
                await channel.send_text(msg.chat, texts.NOT_ALLOWED, reply_to=msg.message_id)
            except Exception as exc:
                log.warning("refusal notice on %s failed: %s", msg.chat.channel, exc)

    # ---------------------------------------------------------------- state

    def facade(self) -> ServiceFacade:
        """What the admin API and the console may read and ask of the service."""
        return ServiceFacade(
            runner=self.runner,
            conversations=self.conversations,
            schedules=self.schedules,
            skills=lambda: self.hands.skills,
            agent_config=lambda: self.settings.agent,
            data_dir=self.data_dir,
            records=self.stores.gateway,
            metrics=self.metrics,
            channel_states=lambda: {name: ctx.state for name, ctx in self.contexts.items()},
            restart_channel=self.restart_channel,
            health=self.health,
            channel_enabled=lambda name: name in self.channels,
            live_config=lambda: self.live,
            has_admin_token=lambda: bool(self._admin_token()),
            is_replying=self.dispatcher.is_running,
            intake_open=lambda: not self.bus.closed,
            journal=self.journal,
            queued=self.dispatcher.queued,
            stop_run=self.dispatcher.stop_run,
            run_cancels=self.control,
            run_events=self.run_events,
            people=self.people,
            links=self.links,
        )

    def health(self) -> dict[str, Any]:
        database = self.stores.status()
        return {
            "status": "ok" if database.get("reachable") else "degraded",
            "database": database,
            "uptime_seconds": round(time.time() - self.started_at, 1),
            "channels": {name: ctx.state.as_dict() for name, ctx in self.contexts.items()},
            "queue_depth": self.bus.depth,
            "active_runs": self.dispatcher.active_runs,
            **({"bus": self.cluster.status()} if self.cluster else {}),
        }


def skill_commands(hands: Callable[[], Hands]) -> SkillSource:
    """The enabled skills as commands, read afresh each time (skills are enabled at runtime,
    and the hands are rebuilt when the agent's settings change)."""

    def current() -> list[SkillCommand]:
        return [SkillCommand(s.name, _summary(s.description)) for s in hands().skills.enabled()]

    return current


def _summary(description: str, limit: int = 100) -> str:
    line = description.strip().splitlines()[0] if description.strip() else "run this skill"
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"
